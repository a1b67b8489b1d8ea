// Regenerates docs/permissions.md from the API definition: `npx tsx scripts/permissions-doc.ts`.
import * as Fs from "node:fs"
import { Api } from "../src/http/Api.js"
import { permissionsDoc } from "../src/http/company/ApiKeyAuth.js"

Fs.writeFileSync(new URL("../docs/permissions.md", import.meta.url), permissionsDoc(Api))
