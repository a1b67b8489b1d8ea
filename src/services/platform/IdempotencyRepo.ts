import type { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { rowsOf } from "./Rows.js"

/** Rows of the key's lock statement, decoded (the decoder built once). */
const lockRows = rowsOf(Schema.Struct({ locked: Schema.Boolean }))

/**
 * The statements of `withIdempotency`. Idempotency keys have no table of their own: what a key made is found
 * by its caller (`IdempotentRequest.find`) in the table of what was made, and a key in use is held by a
 * transaction-scoped advisory lock. The combinator runs on its caller's SqlClient, inside the caller's
 * transaction, so these take that client rather than being a service of their own. Unexpected database
 * errors are defects.
 */
export const IdempotencyRepo = {
  /** Takes the key's lock until the transaction ends, unless another one holds it: whether it took it. */
  tryLock: Effect.fn("IdempotencyRepo.tryLock")(function* (sql: SqlClient.SqlClient, lockKey: string) {
    const [row] = yield* lockRows(
      sql`SELECT pg_try_advisory_xact_lock(hashtextextended(${lockKey}, 1)) AS locked`
    ).pipe(Effect.orDie)
    return row?.locked === true
  })
} as const
