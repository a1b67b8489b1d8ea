import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestDatabase } from "../support/database.js"

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
  })
})
