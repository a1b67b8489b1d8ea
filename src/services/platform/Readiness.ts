import { SqlClient } from "@effect/sql"
import { Context, Effect, Option, Schema } from "effect"
import { ServiceUnavailable } from "../../domain/platform/Errors.js"

import { rowsOf } from "./Rows.js"

/** Rows of the inline statements below, decoded (decoders built once). */
const latestRows = rowsOf(Schema.Struct({ latest: Schema.NullOr(Schema.Number) }))

/** The id of the newest migration this build ships; the wiring provides it. */
export class MigrationTarget extends Context.Tag("MigrationTarget")<MigrationTarget, number>() {}

/** Whether this instance can serve: the database answers and every migration has been applied. */
export class Readiness extends Effect.Service<Readiness>()("Readiness", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const target = yield* MigrationTarget

    const check = Effect.fn("Readiness.check")(function* () {
      const rows = yield* latestRows(sql`
        SELECT max(migration_id) AS latest FROM effect_sql_migrations`).pipe(
        Effect.timeout("2 seconds"),
        Effect.mapError(() => new ServiceUnavailable({ message: "The database is not reachable." }))
      )
      const latest = Option.fromNullable(rows[0]?.latest).pipe(Option.getOrElse(() => 0))
      if (latest < target) {
        return yield* new ServiceUnavailable({
          message: `Migrations are not applied yet (${latest} of ${target}).`
        })
      }
      return { migration: latest }
    })

    return { check } as const
  })
}) {}
