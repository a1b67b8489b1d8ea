import * as Fs from "node:fs"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { inject } from "vitest"
import { openPGlite, postgres, servePGlite } from "../../src/layers/Database.js"
import { MigrationsLive } from "../../src/layers/Migrations.js"
import { Seed } from "../../src/services/catalog/Seed.js"
import {
  adminClient,
  type DatabaseTemplates,
  databaseUrl,
  ensureDemoCatalog,
  type Template
} from "./databaseTemplates.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** Made once per run by test/support/globalSetup.ts. */
    databaseTemplates: DatabaseTemplates
  }
}

/**
 * A fresh, migrated database for one test file: in-memory PGlite by default, or a new database on the
 * Postgres server named by DATABASE_URL (created for the file and dropped after it). Each starts as a copy
 * of the run's migrated template (test/support/globalSetup.ts) when there is one: a PGlite dump loaded, or
 * `CREATE DATABASE … TEMPLATE`; the migrations then find nothing to do. Without one (a file run on its own
 * config), it is made and migrated from nothing.
 */
export const TestDatabase = testDatabase("migrated")

/**
 * The same, with the demo catalog (336 curated products and 20 swag base products) seeded: a no-op of
 * `Seed.ensureDemoCatalog` on the seeded template.
 */
export const SeededTestDatabase = Layer.effectDiscard(ensureDemoCatalog).pipe(
  Layer.provide(Seed.Default),
  Layer.provideMerge(testDatabase("seeded"))
)

function testDatabase(template: Template) {
  return Layer.unwrapEffect(
    Effect.map(Config.option(Config.redacted("DATABASE_URL")), (url) =>
      Option.match(url, {
        onNone: () => pgliteDatabase(inject("databaseTemplates")?.pglite?.[template]),
        onSome: (serverUrl) => freshPostgresDatabase(serverUrl, inject("databaseTemplates")?.postgres?.[template])
      })
    )
  ).pipe((db) => Layer.provideMerge(MigrationsLive, db))
}

/** In-memory PGlite, from the dump at `dumpPath` when given. */
function pgliteDatabase(dumpPath: string | undefined) {
  return Layer.unwrapScoped(
    Effect.gen(function* () {
      const db = yield* openPGlite(dumpPath === undefined ? {} : { loadDataDir: new Blob([Fs.readFileSync(dumpPath)]) })
      return yield* servePGlite(db)
    })
  )
}

function freshPostgresDatabase(serverUrl: Redacted.Redacted<string>, template: string | undefined) {
  return Layer.unwrapScoped(
    Effect.gen(function* () {
      const name = `ribbon_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
      const admin = yield* adminClient(serverUrl)
      const from = template === undefined ? admin`` : admin`TEMPLATE ${admin(template)}`
      yield* Effect.acquireRelease(admin`CREATE DATABASE ${admin(name)} ${from}`, () =>
        admin`DROP DATABASE IF EXISTS ${admin(name)} WITH (FORCE)`.pipe(Effect.orDie)
      ).pipe(Effect.orDie)
      return postgres(Redacted.make(databaseUrl(serverUrl, name)))
    })
  )
}
