import { SqlClient } from "@effect/sql"
import { Context, Effect, Option, Schema } from "effect"
import { ServiceUnavailable } from "../../domain/platform/Errors.js"
import { rateLimitsStatus } from "./RateLimits.js"
import { rowsOf } from "./Rows.js"

/** Rows of the inline statements below, decoded (decoders built once). */
const latestRows = rowsOf(Schema.Struct({ latest: Schema.NullOr(Schema.Number) }))

/** What a request that met a database outage answers in `Retry-After`: about one readiness probe's interval. */
export const outageRetryAfterSeconds = 5

/** Node's socket errors that mean the database cannot be reached now. */
const unreachable = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)$/
/**
 * PostgreSQL's SQLSTATEs that mean it will not serve this connection now, as opposed to a statement it
 * refused: class 08 (connection exceptions), 53300 (too many connections), 57P01–57P03 (terminated by an
 * administrator or a crash, starting up, shutting down).
 */
const refused = /^(08...|53300|57P0[123])$/
/**
 * 55000 means "not now" only when it ends the connection (severity FATAL): "database … is not currently
 * accepting connections" (`ALLOW_CONNECTIONS false`). Raised by a statement it is a refusal like any other.
 */
const refusedAtConnect = "55000"
const lostConnection = /Connection terminated|connection timeout|Client has encountered a connection error/i

/**
 * The kind of database outage an error is, e.g. `ECONNREFUSED` or `57P03`, or undefined when it is not
 * one. An `SqlError` is recognised by its tag, and classified by its cause: the driver's error, with the
 * SQLSTATE the server sent (whether it refused the connection or ended a query) or Node's socket error.
 */
export const databaseOutageOf = (error: unknown): string | undefined => {
  if ((error as { readonly _tag?: string } | null)?._tag !== "SqlError") return undefined
  const cause = (
    error as { readonly cause?: { readonly code?: unknown; readonly severity?: unknown; readonly message?: unknown } }
  ).cause
  const code = typeof cause?.code === "string" ? cause.code : undefined
  if (code !== undefined) {
    if (unreachable.test(code) || refused.test(code)) return code
    if (code === refusedAtConnect && cause?.severity === "FATAL") return code
  }
  const message = typeof cause?.message === "string" ? cause.message : ""
  return lostConnection.test(message) ? "connection lost" : undefined
}

/** The id of the newest migration this build ships; the wiring provides it. */
export class MigrationTarget extends Context.Tag("MigrationTarget")<MigrationTarget, number>() {}

/**
 * Whether this instance can serve: the database answers and every migration has been applied. It also
 * tells whether rate limits are enforced or failing open (their store, Redis, unreachable): still ready,
 * since requests are served, but worth a look.
 */
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
      return { migration: latest, rateLimits: yield* rateLimitsStatus }
    })

    return { check } as const
  })
}) {}
