import type { SqlClient, SqlError } from "@effect/sql"
import { Effect, Schema, String as Str } from "effect"

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

/**
 * A row of `from` as one json object keyed by `record`'s field names, for a record read beside other rows
 * (`row_to_json` would key it by the snake_case column names, and json keys are not turned when read).
 */
export const jsonRecordOf = (
  sql: SqlClient.SqlClient,
  record: { readonly fields: Schema.Struct.Fields },
  from: string
) => {
  const pairs = Object.keys(record.fields).map(
    (field) => sql`${field}::text, ${sql(from)}.${sql(Str.camelToSnake(field))}`
  )
  return sql`json_build_object(${sql.join(", ", false)(pairs)})`
}
