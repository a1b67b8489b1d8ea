import { SqlClient } from "@effect/sql"
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { embedded, postgres } from "../../src/layers/Database.js"
import { MigrationsLive } from "../../src/layers/Migrations.js"

/**
 * A fresh, migrated database for one test file: in-memory PGlite by default, or a new database on the
 * Postgres server named by DATABASE_URL (created for the file and dropped after it).
 */
export const TestDatabase = Layer.unwrapEffect(
  Effect.map(Config.option(Config.redacted("DATABASE_URL")), (url) =>
    Option.match(url, {
      onNone: () => embedded({ dataDir: Option.none(), exposeSocket: false }),
      onSome: freshPostgresDatabase
    })
  )
).pipe((db) => Layer.provideMerge(MigrationsLive, db))

function freshPostgresDatabase(serverUrl: Redacted.Redacted<string>) {
  return Layer.unwrapScoped(
    Effect.gen(function* () {
      const name = `ribbon_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
      const admin = yield* Layer.build(postgres(serverUrl, { maxConnections: 1 })).pipe(
        Effect.map(Context.get(SqlClient.SqlClient))
      )
      yield* Effect.acquireRelease(admin`CREATE DATABASE ${admin(name)}`, () =>
        admin`DROP DATABASE IF EXISTS ${admin(name)} WITH (FORCE)`.pipe(Effect.orDie)
      ).pipe(Effect.orDie)
      const url = new URL(Redacted.value(serverUrl))
      url.pathname = `/${name}`
      return postgres(Redacted.make(url.toString()))
    })
  )
}
