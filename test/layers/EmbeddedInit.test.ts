import * as Fs from "node:fs"
import * as Path from "node:path"
import { expect, it } from "@effect/vitest"
import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import { initDbStartParams, initializeDataDir, startParams, writeTemplate } from "../../src/layers/EmbeddedInit.js"
import { onPostgresRun, tempDataDir } from "../support/cli.js"

/**
 * The template of a new embedded data directory (src/layers/EmbeddedInit.ts): the build makes it once, a
 * first start copies it, and a template made with other settings or another PGlite is made again.
 */
it.live.skipIf(onPostgresRun)(
  "a template is made once, made again when its stamp differs, and copied into a new data directory",
  () =>
    Effect.gen(function* () {
      const dir = yield* tempDataDir
      const template = Path.join(dir, "pgdata-template")
      expect(yield* Effect.promise(() => writeTemplate(template))).toBe(true)
      expect(yield* Effect.promise(() => writeTemplate(template))).toBe(false)
      const stamp = Path.join(template, "stamp.json")
      const made = Fs.readFileSync(stamp, "utf8")
      expect(JSON.parse(made)).toMatchObject({ startParams, initDbStartParams })

      Fs.writeFileSync(stamp, made.replace("shared_buffers=16MB", "shared_buffers=128MB"))
      expect(yield* Effect.promise(() => writeTemplate(template))).toBe(true)
      expect(Fs.readFileSync(stamp, "utf8")).toBe(made)
      expect(Fs.readdirSync(dir).sort()).toEqual(["pgdata-template"])

      // An empty pgdata counts as none; the copy goes through pgdata.init, which is renamed.
      const pgdata = Path.join(dir, "data", "pgdata")
      Fs.mkdirSync(pgdata, { recursive: true })
      yield* initializeDataDir(pgdata, template)
      expect(Fs.readdirSync(Path.dirname(pgdata))).toEqual(["pgdata"])
      expect(Fs.readFileSync(Path.join(pgdata, "PG_VERSION"), "utf8").trim()).toMatch(/^\d+$/)

      const db = yield* Effect.acquireRelease(
        Effect.promise(() => PGlite.create({ dataDir: pgdata, startParams: [...startParams] })),
        (db) => Effect.promise(() => db.close())
      )
      const rows = yield* Effect.promise(() =>
        db.query<{ value: string }>("SELECT current_setting('shared_buffers') AS value")
      )
      expect(rows.rows[0]?.value).toBe("16MB")

      // A data directory that holds a database is left as it is.
      const before = Fs.readFileSync(Path.join(pgdata, "postgresql.conf"), "utf8")
      Fs.writeFileSync(Path.join(pgdata, "postgresql.conf"), `${before}\n# kept\n`)
      yield* initializeDataDir(pgdata, template)
      expect(Fs.readFileSync(Path.join(pgdata, "postgresql.conf"), "utf8")).toContain("# kept")
    }).pipe(Effect.scoped),
  120_000
)
