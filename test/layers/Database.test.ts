import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { withConnectionOptions } from "../../src/layers/Database.js"
import { TestDatabase } from "../support/database.js"

const onPostgres = process.env.DATABASE_URL !== undefined

describe("Database", () => {
  it.layer(TestDatabase)((it) => {
    it.effect("runs the migrations, with pg_trgm enabled", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ similarity: number }>`SELECT similarity('chocolate', 'chocolat') AS similarity`
        expect(row.similarity).toBeGreaterThan(0.5)
        const migrations = yield* sql<{ migrationId: number }>`SELECT migration_id FROM effect_sql_migrations`
        expect(migrations.map((m) => m.migrationId)).toContain(1)
      })
    )

    it.effect("maps snake_case columns to camelCase and back", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TEMP TABLE naming_check (created_by text)`
        yield* sql`INSERT INTO naming_check ${sql.insert({ createdBy: "ribbon" })}`
        const rows = yield* sql`SELECT * FROM naming_check`
        expect(rows).toEqual([{ createdBy: "ribbon" }])
      })
    )

    it.effect.runIf(onPostgres)("starts Postgres connections with JIT compilation off", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ jit: string }>`SHOW jit`
        expect(row?.jit).toBe("off")
      })
    )
  })

  it("adds the connection options to a DATABASE_URL, unless it names its own", () => {
    expect(withConnectionOptions("postgres://postgres@127.0.0.1:5432/ribbon")).toBe(
      "postgres://postgres@127.0.0.1:5432/ribbon?options=-c%20jit%3Doff"
    )
    expect(withConnectionOptions("postgres://postgres@localhost/ribbon?host=/var/run/postgresql")).toBe(
      "postgres://postgres@localhost/ribbon?host=/var/run/postgresql&options=-c%20jit%3Doff"
    )
    const own = "postgres://postgres@127.0.0.1/ribbon?sslmode=disable&options=-c%20jit%3Don"
    expect(withConnectionOptions(own)).toBe(own)
  })
})
