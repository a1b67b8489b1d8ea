import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { Effect } from "effect"

/**
 * A new embedded data directory, made by a child process (docs/performance.md, "Embedded memory").
 *
 * PGlite's own first start runs initdb in a second PGlite instance beside the one it returns, keeps a
 * 128 MB snapshot of that instance's WebAssembly heap, and copies the result into the data directory
 * through an in-memory tarball: 400–500 MB that is garbage once initdb is done, yet stays resident until
 * a major GC (an idle server may not run one for minutes), and part of it for good in the allocator's
 * arenas. Here a short-lived `node` process runs PGlite in memory (initdb writes straight into its
 * in-memory files, no tarball), closes it (a clean shutdown checkpoint), copies the files to
 * `<pgdata>.init` and exits, which returns all of its memory to the system; `<pgdata>.init` is then
 * renamed to `pgdata`, and the server opens it as on every later start. An interrupted first start
 * leaves no half-made `pgdata` behind.
 *
 * The child runs CommonJS source given with `node -e`, so the one-file bundle of `npm start` needs no
 * second entry point; it loads PGlite's CommonJS build from node_modules, and its settings arrive as JSON
 * in its last argument.
 */
const initSource = `
const Fs = require("node:fs")
const Path = require("node:path")
const options = JSON.parse(process.argv[process.argv.length - 1])
const { PGlite } = require(options.pglite)
const copy = (FS, from, to) => {
  if (FS.isDir(FS.stat(from).mode)) {
    Fs.mkdirSync(to, { mode: 0o700 })
    for (const name of FS.readdir(from)) {
      if (name !== "." && name !== "..") copy(FS, from + "/" + name, Path.join(to, name))
    }
  } else {
    Fs.writeFileSync(to, FS.readFile(from), { mode: 0o600 })
  }
}
PGlite.create({ startParams: options.startParams, initDbStartParams: options.initDbStartParams }).then(async (db) => {
  const FS = db.Module.FS
  await db.close()
  copy(FS, "/pglite/data", options.target)
})
`

const require = createRequire(import.meta.url)

/** Whether `dir` is missing or an empty directory (anything else is left to PGlite, as before). */
const missingOrEmpty = (dir: string) => !Fs.existsSync(dir) || Fs.readdirSync(dir).length === 0

/**
 * Runs initdb for `pgdata` in a child process when it holds no database yet; a no-op otherwise.
 * `startParams` and `initDbStartParams` are PGlite's options of the same names.
 */
export const initializeDataDir = (
  pgdata: string,
  settings: { readonly startParams: ReadonlyArray<string>; readonly initDbStartParams: ReadonlyArray<string> }
) =>
  Effect.suspend(() => {
    if (!missingOrEmpty(pgdata)) return Effect.void
    const target = `${pgdata}.init`
    Fs.rmSync(target, { recursive: true, force: true })
    Fs.mkdirSync(Path.dirname(pgdata), { recursive: true })
    const options = {
      pglite: require.resolve("@electric-sql/pglite"),
      startParams: settings.startParams,
      initDbStartParams: settings.initDbStartParams,
      target
    }
    return Effect.async<void>((resume) => {
      // stderr stays the server's, so that a failing initdb says why.
      const child = spawn(process.execPath, ["-e", initSource, JSON.stringify(options)], {
        stdio: ["ignore", "ignore", "inherit"]
      })
      let settled = false
      const fail = (error: unknown) => {
        if (settled) return
        settled = true
        Fs.rmSync(target, { recursive: true, force: true })
        resume(Effect.die(error))
      }
      child.once("error", fail)
      child.once("exit", (code, signal) => {
        if (code !== 0) return fail(new Error(`initdb for ${pgdata} exited with ${signal ?? `code ${code}`}`))
        if (settled) return
        try {
          Fs.rmSync(pgdata, { recursive: true, force: true })
          Fs.renameSync(target, pgdata)
        } catch (error) {
          return fail(error)
        }
        settled = true
        resume(Effect.void)
      })
      return Effect.sync(() => child.kill())
    })
  }).pipe(Effect.withSpan("Database.initializeDataDir", { attributes: { pgdata } }))
