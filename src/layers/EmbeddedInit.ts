import { type ChildProcess, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"

/**
 * A new embedded data directory (docs/performance.md, "Embedded memory"): copied from a template that
 * `scripts/build.mjs` made beside the bundle, or else made by initdb in a child process.
 *
 * PGlite's own first start runs initdb in a second PGlite instance beside the one it returns, keeps a
 * 128 MB snapshot of that instance's WebAssembly heap, and copies the result into the data directory
 * through an in-memory tarball: 400–500 MB that is garbage once initdb is done, yet stays resident until
 * a major GC (an idle server may not run one for minutes), and part of it for good in the allocator's
 * arenas. Here a short-lived `node` process runs PGlite in memory (initdb writes straight into its
 * in-memory files, no tarball), closes it (a clean shutdown checkpoint), copies the files to a directory
 * and exits, which returns all of its memory to the system. Its peak (about 570 MB) is the largest of a
 * first start, so the build runs it once into `dist/pgdata-template/`, and `npm start` only copies that.
 *
 * Either way the files go to `<pgdata>.init`, which is then renamed to `pgdata`, and the server opens it
 * as on every later start: an interrupted first start leaves no half-made `pgdata` behind.
 *
 * This module is also bundled on its own for the build (with the parts of Effect it uses), which calls
 * `writeTemplate`.
 */

/**
 * Server settings of the embedded database, passed on its command line (they override postgresql.conf, so
 * a data directory made by an older version gets them too). Postgres allocates its shared memory inside
 * PGlite's WebAssembly heap, which zero-fills it, and that heap never shrinks: the stock 128 MB of
 * `shared_buffers` would be resident for the life of the process, and so would every size a `CREATE INDEX`
 * grew the heap to under the stock 64 MB of `maintenance_work_mem`. The demo catalog's database is 14 MB,
 * and a buffer miss reads the page from the OS page cache (docs/performance.md, "Embedded memory").
 */
const embeddedSettings = ["-c", "shared_buffers=16MB", "-c", "maintenance_work_mem=16MB"]
export const startParams: ReadonlyArray<string> = [...PGlite.defaultStartParams, ...embeddedSettings]
/** initdb writes them into postgresql.conf, and bootstraps with them rather than with 128 MB of buffers. */
export const initDbStartParams: ReadonlyArray<string> = embeddedSettings

/**
 * initdb, as CommonJS source given to `node -e`, so the one-file bundle of `npm start` needs no second
 * entry point. It loads PGlite's CommonJS build from node_modules; its settings arrive as JSON in its last
 * argument.
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

/**
 * Runs initdb into `target` (which must not exist) in a child process; `done` is called once, with the
 * error if it failed. Kill the returned process to stop it.
 */
const runInitdb = (target: string, done: (error?: unknown) => void): ChildProcess => {
  const options = { pglite: require.resolve("@electric-sql/pglite"), startParams, initDbStartParams, target }
  // stderr stays the parent's, so that a failing initdb says why.
  const child = spawn(process.execPath, ["-e", initSource, JSON.stringify(options)], {
    stdio: ["ignore", "ignore", "inherit"]
  })
  let settled = false
  const settle = (error?: unknown) => {
    if (settled) return
    settled = true
    done(error)
  }
  child.once("error", settle)
  child.once("exit", (code, signal) =>
    settle(code === 0 ? undefined : new Error(`initdb into ${target} exited with ${signal ?? `code ${code}`}`))
  )
  return child
}

/** PGlite's version, from its package.json (which its exports do not list). */
const pgliteVersion = () => {
  let dir = Path.dirname(require.resolve("@electric-sql/pglite"))
  for (;;) {
    const file = Path.join(dir, "package.json")
    if (Fs.existsSync(file)) {
      const manifest = JSON.parse(Fs.readFileSync(file, "utf8"))
      if (manifest.name === "@electric-sql/pglite") return String(manifest.version)
    }
    const parent = Path.dirname(dir)
    if (parent === dir) return "unknown"
    dir = parent
  }
}

/**
 * What a template is made with: a template whose stamp differs (another PGlite, other settings, another
 * initdb) is made again by the build, and not used by the server.
 */
const templateStamp = () =>
  JSON.stringify({
    pglite: pgliteVersion(),
    startParams,
    initDbStartParams,
    initdb: createHash("sha256").update(initSource).digest("hex").slice(0, 16)
  })

/** The template beside the bundle: `dist/pgdata-template/`, holding `stamp.json` and `pgdata/`. */
export const templateDir = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "pgdata-template")

const templateReady = (dir: string) => {
  try {
    return (
      Fs.readFileSync(Path.join(dir, "stamp.json"), "utf8") === templateStamp() &&
      Fs.statSync(Path.join(dir, "pgdata")).isDirectory()
    )
  } catch {
    return false
  }
}

/**
 * Makes the template in `dir` unless it is there with the current stamp; resolves to whether it made it.
 * It is made in a directory of its own and renamed into place, so a server never sees half of one.
 */
export const writeTemplate = async (dir: string = templateDir): Promise<boolean> => {
  if (templateReady(dir)) return false
  const work = `${dir}.${process.pid}`
  Fs.rmSync(work, { recursive: true, force: true })
  Fs.mkdirSync(work, { recursive: true })
  try {
    await new Promise<void>((resolve, reject) =>
      runInitdb(Path.join(work, "pgdata"), (error) => (error === undefined ? resolve() : reject(error)))
    )
    Fs.writeFileSync(Path.join(work, "stamp.json"), templateStamp())
    Fs.rmSync(dir, { recursive: true, force: true })
    try {
      Fs.renameSync(work, dir)
    } catch (error) {
      // Another build made it meanwhile.
      if (!templateReady(dir)) throw error
    }
    return true
  } finally {
    Fs.rmSync(work, { recursive: true, force: true })
  }
}

/** Whether `dir` is missing or an empty directory (anything else is left to PGlite, as before). */
const missingOrEmpty = (dir: string) => !Fs.existsSync(dir) || Fs.readdirSync(dir).length === 0

/** Copies the template's data directory to `target`; false (and nothing left) when there is none or it fails. */
const copyTemplate = (dir: string, target: string) => {
  if (!templateReady(dir)) return false
  try {
    Fs.cpSync(Path.join(dir, "pgdata"), target, { recursive: true, errorOnExist: true, force: false })
    return true
  } catch {
    // A build replacing the template meanwhile: initdb instead.
    Fs.rmSync(target, { recursive: true, force: true })
    return false
  }
}

/**
 * Makes `pgdata` when it holds no database yet, from the template in `template` when it matches, by
 * initdb in a child process otherwise; a no-op when it holds one.
 */
export const initializeDataDir = (pgdata: string, template: string = templateDir) =>
  Effect.suspend(() => {
    if (!missingOrEmpty(pgdata)) return Effect.void
    const target = `${pgdata}.init`
    const install = () => {
      Fs.rmSync(pgdata, { recursive: true, force: true })
      Fs.renameSync(target, pgdata)
    }
    Fs.rmSync(target, { recursive: true, force: true })
    Fs.mkdirSync(Path.dirname(pgdata), { recursive: true })
    if (copyTemplate(template, target)) {
      install()
      return Effect.annotateCurrentSpan("from", "template")
    }
    return Effect.async<void>((resume) => {
      const child = runInitdb(target, (error) => {
        try {
          if (error !== undefined) throw error
          install()
          resume(Effect.void)
        } catch (error) {
          Fs.rmSync(target, { recursive: true, force: true })
          resume(Effect.die(error))
        }
      })
      return Effect.sync(() => child.kill())
    }).pipe(Effect.zipLeft(Effect.annotateCurrentSpan("from", "initdb")))
  }).pipe(Effect.withSpan("Database.initializeDataDir", { attributes: { pgdata } }))
