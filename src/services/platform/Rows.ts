import type { SqlError } from "@effect/sql"
import { Effect, Schema } from "effect"

/**
 * Decodes a statement's rows with a record's schema: `yield* rowsOf(UserRow)(sql\`SELECT …\`)`. For statements
 * that stay inline in a service (a conditional update, an insert returning its row); lookups use `SqlSchema`.
 * A row that does not decode is a defect, like any unexpected database error.
 */
export const rowsOf = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(Schema.Array(schema))
  return <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>): Effect.Effect<ReadonlyArray<A>, E, R> =>
    Effect.flatMap(statement, (rows) => Effect.orDie(decode(rows)))
}

/** Whether a statement failed on a unique index (Postgres `23505`): a rule the database holds, such as one per company. */
export const isUniqueViolation = (error: SqlError.SqlError) =>
  (error.cause as { code?: string } | undefined)?.code === "23505"
