import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

/**
 * The import boundaries of docs/architecture.md, as `biome.json` states them (`noRestrictedImports`), shown
 * failing: each rule is run on a small source that breaks it, at a path inside the rule's folder, and on one
 * that keeps it.
 *
 * Biome prints no diagnostics for a source given on stdin (`--stdin-file-path` only answers the source,
 * fixed or not), so the sources are written to a scratch tree with a copy of the repository's `biome.json`
 * (its overrides match paths relative to the configuration) and linted there: one Biome process for those
 * that break a rule, one for those that keep them, at once.
 */

const root = fileURLToPath(new URL("../..", import.meta.url))
const biome = Path.join(root, "node_modules", ".bin", "biome")

interface Case {
  readonly rule: string
  /** Where the source sits, relative to the repository. */
  readonly path: string
  readonly breaks: string
  readonly keeps: string
  /** The rule's message, as `biome.json` words it. */
  readonly message: string
}

const domainOnly = "src/domain holds schemas only: it imports effect and other domain modules, nothing else."
const httpNoSql = "src/http runs no SQL: call the context's service."
const httpNoRepo = "A repository belongs to its context's services: call the service."
const otherRepo = "Another context's repository: call that context's service instead."
const servicesNoHttp = "Services know nothing of HTTP or of the wiring in src/layers."
const simulatorNoSql = "A simulator implements a port and keeps no table: the orders are the Fulfillment service's."
const handlerNoHandler =
  "A handler imports no other handler: what they share belongs in the context's presenter or service."

const cases: ReadonlyArray<Case> = [
  {
    rule: "src/domain imports no SQL",
    path: "src/domain/checkout/Probe.ts",
    breaks: `import { SqlClient } from "@effect/sql"\n\nexport const probe = SqlClient\n`,
    keeps: `import { Schema } from "effect"\nimport { Id } from "../platform/Ids.js"\nimport { CheckoutStatus } from "./Checkout.js"\n\nexport const probe = [Schema.String, Id, CheckoutStatus]\n`,
    message: domainOnly
  },
  {
    rule: "src/domain imports no service",
    path: "src/domain/checkout/Probe.ts",
    breaks: `import { Checkouts } from "../../services/checkout/Checkouts.js"\n\nexport const probe = Checkouts\n`,
    keeps: `import { Id } from "../platform/Ids.js"\n\nexport const probe = Id\n`,
    message: domainOnly
  },
  {
    rule: "src/http imports no @effect/sql",
    path: "src/http/checkout/Probe.ts",
    breaks: `import { SqlClient } from "@effect/sql"\n\nexport const probe = SqlClient\n`,
    keeps: `import { Checkouts } from "../../services/checkout/Checkouts.js"\n\nexport const probe = Checkouts\n`,
    message: httpNoSql
  },
  {
    rule: "src/http imports no @effect/sql-pg",
    path: "src/http/checkout/Probe.ts",
    breaks: `import { PgClient } from "@effect/sql-pg"\n\nexport const probe = PgClient\n`,
    keeps: `import { Effect } from "effect"\n\nexport const probe = Effect.void\n`,
    message: httpNoSql
  },
  {
    rule: "src/http imports no repository",
    path: "src/http/checkout/Probe.ts",
    breaks: `import { CheckoutsRepo } from "../../services/checkout/CheckoutsRepo.js"\n\nexport const probe = CheckoutsRepo\n`,
    keeps: `import { Checkouts } from "../../services/checkout/Checkouts.js"\n\nexport const probe = Checkouts\n`,
    message: httpNoRepo
  },
  {
    rule: "a service imports no other context's repository",
    path: "src/services/company/Probe.ts",
    breaks: `import { CheckoutsRepo } from "../checkout/CheckoutsRepo.js"\n\nexport const probe = CheckoutsRepo\n`,
    keeps: `import { Checkouts } from "../checkout/Checkouts.js"\n\nexport const probe = Checkouts\n`,
    message: otherRepo
  },
  {
    rule: "a service may import its own context's repository",
    path: "src/services/checkout/Probe.ts",
    breaks: `import { JobsRepo } from "../platform/JobsRepo.js"\n\nexport const probe = JobsRepo\n`,
    keeps: `import { CheckoutsRepo } from "./CheckoutsRepo.js"\n\nexport const probe = CheckoutsRepo\n`,
    message: otherRepo
  },
  {
    rule: "a service imports nothing of src/http",
    path: "src/services/checkout/Probe.ts",
    breaks: `import { Api } from "../../http/Api.js"\n\nexport const probe = Api\n`,
    keeps: `import { Jobs } from "../platform/Jobs.js"\n\nexport const probe = Jobs\n`,
    message: servicesNoHttp
  },
  {
    rule: "a service imports nothing of src/layers",
    path: "src/services/platform/Probe.ts",
    breaks: `import { AppConfig } from "../../layers/Config.js"\n\nexport const probe = AppConfig\n`,
    keeps: `import { Signals } from "./Signals.js"\n\nexport const probe = Signals\n`,
    message: servicesNoHttp
  },
  {
    rule: "a simulator imports no @effect/sql",
    path: "src/services/simulators/Probe.ts",
    breaks: `import { SqlClient } from "@effect/sql"\n\nexport const probe = SqlClient\n`,
    keeps: `import { FulfillmentPartner } from "../fulfillment/FulfillmentPartner.js"\n\nexport const probe = FulfillmentPartner\n`,
    message: simulatorNoSql
  },
  {
    rule: "a simulator imports no other context's repository",
    path: "src/services/simulators/Probe.ts",
    breaks: `import { OrdersRepo } from "../fulfillment/OrdersRepo.js"\n\nexport const probe = OrdersRepo\n`,
    keeps: `import { Fulfillment } from "../fulfillment/Fulfillment.js"\n\nexport const probe = Fulfillment\n`,
    message: otherRepo
  },
  {
    rule: "a handler imports no handler of its folder",
    path: "src/http/company/ProbeLive.ts",
    breaks: `import { listScope } from "./CampaignsLive.js"\n\nexport const probe = listScope\n`,
    keeps: `import { campaignV2 } from "./v2.js"\n\nexport const probe = campaignV2\n`,
    message: handlerNoHandler
  },
  {
    rule: "a handler imports no handler of another folder",
    path: "src/http/company/ProbeLive.ts",
    breaks: `import { CatalogLive } from "../catalog/CatalogLive.js"\n\nexport const probe = CatalogLive\n`,
    keeps: `import { Api } from "../Api.js"\n\nexport const probe = Api\n`,
    message: handlerNoHandler
  },
  {
    rule: "a handler still imports no @effect/sql",
    path: "src/http/company/ProbeLive.ts",
    breaks: `import { SqlClient } from "@effect/sql"\n\nexport const probe = SqlClient\n`,
    keeps: `import { Gifts } from "../../services/company/Gifts.js"\n\nexport const probe = Gifts\n`,
    message: httpNoSql
  },
  {
    rule: "a handler still imports no repository",
    path: "src/http/company/ProbeLive.ts",
    breaks: `import { QuotesRepo } from "../../services/checkout/QuotesRepo.js"\n\nexport const probe = QuotesRepo\n`,
    keeps: `import { Quotes } from "../../services/checkout/Quotes.js"\n\nexport const probe = Quotes\n`,
    message: httpNoRepo
  }
]

interface Linted {
  readonly code: number
  /** The messages of `noRestrictedImports` by file (relative to the scratch tree), one per import it refused. */
  readonly messages: ReadonlyMap<string, ReadonlyArray<string>>
  readonly output: string
}

const diagnostic = /^::error title=lint\/style\/noRestrictedImports,file=([^,]+),.*?::(.*)$/

const lint = (cwd: string, files: ReadonlyArray<string>) =>
  new Promise<Linted>((resolve, reject) => {
    execFile(
      biome,
      ["lint", "--only=style/noRestrictedImports", "--reporter=github", "--max-diagnostics=none", ...files],
      { cwd, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : undefined
        if (code === undefined) return reject(error)
        const messages = new Map<string, Array<string>>()
        for (const line of stdout.split("\n")) {
          const match = diagnostic.exec(line)
          if (match === null) continue
          const file = Path.relative(cwd, match[1]!)
          messages.set(file, [...(messages.get(file) ?? []), match[2]!])
        }
        resolve({ code, messages, output: stdout + stderr })
      }
    )
  })

let scratch: string
let breaking: Linted
let keeping: Linted
/** The files written for each case, relative to the scratch tree. */
const files = cases.map((c, index) => {
  const name = (kind: string) => Path.join(Path.dirname(c.path), `${index}${kind}${Path.basename(c.path)}`)
  return { breaks: name("Breaks"), keeps: name("Keeps") }
})

beforeAll(async () => {
  scratch = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-lint-")))
  const config = JSON.parse(Fs.readFileSync(Path.join(root, "biome.json"), "utf8"))
  delete config.$schema
  Fs.writeFileSync(Path.join(scratch, "biome.json"), JSON.stringify(config))
  cases.forEach((c, index) => {
    for (const kind of ["breaks", "keeps"] as const) {
      const file = Path.join(scratch, files[index]![kind])
      Fs.mkdirSync(Path.dirname(file), { recursive: true })
      Fs.writeFileSync(file, c[kind])
    }
  })
  ;[breaking, keeping] = await Promise.all([
    lint(
      scratch,
      files.map((file) => file.breaks)
    ),
    lint(
      scratch,
      files.map((file) => file.keeps)
    )
  ])
}, 120_000)

afterAll(() => {
  if (scratch !== undefined) Fs.rmSync(scratch, { recursive: true, force: true })
})

describe("import rules (biome.json)", () => {
  it("the sources that break a rule fail the lint; those that keep them pass", () => {
    expect(breaking.code, breaking.output).not.toBe(0)
    expect(keeping.code, keeping.output).toBe(0)
  })

  cases.forEach((c, index) => {
    it(c.rule, () => {
      expect(breaking.messages.get(files[index]!.breaks), breaking.output).toEqual([c.message])
      expect(keeping.messages.get(files[index]!.keeps), keeping.output).toBeUndefined()
    })
  })
})
