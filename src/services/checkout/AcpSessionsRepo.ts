import { SqlClient, SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, type ParseResult, Schema } from "effect"
import { AcpIdempotencyRecord, AcpSessionRecord } from "../../domain/checkout/Acp.js"
import { ServiceUnavailable } from "../../domain/platform/Errors.js"

const jsonColumns = (row: AcpSessionRecord) => ({
  ...row,
  buyer: row.buyer === null ? null : JSON.stringify(row.buyer),
  fulfillmentDetails: row.fulfillmentDetails === null ? null : JSON.stringify(row.fulfillmentDetails),
  lines: JSON.stringify(row.lines),
  issues: JSON.stringify(row.issues),
  capabilities: JSON.stringify(row.capabilities),
  metadata: row.metadata === null ? null : JSON.stringify(row.metadata),
  gift: row.gift === null ? null : JSON.stringify(row.gift)
})

/**
 * The `acp_checkout_sessions` table: the Agentic Commerce Protocol's sessions. The AcpSessions service uses it, and
 * AcpWebhooks reads which session (and client) a checkout pays for. Unexpected database errors are defects.
 */
export class AcpSessionsRepo extends Effect.Service<AcpSessionsRepo>()("AcpSessionsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: AcpSessionRecord,
      execute: (row) => sql`INSERT INTO acp_checkout_sessions ${sql.insert(jsonColumns(row))}`
    })

    /** Writes the whole row: a session's changes are computed from it as read. */
    const save = SqlSchema.void({
      Request: AcpSessionRecord,
      execute: (row) => {
        const { id, userId, createdAt, ...rest } = jsonColumns(row)
        return sql`UPDATE acp_checkout_sessions SET ${sql.update(rest)} WHERE id = ${id}`
      }
    })

    const findForUser = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, userId: Schema.String }),
      Result: AcpSessionRecord,
      execute: ({ id, userId }) => sql`SELECT * FROM acp_checkout_sessions WHERE id = ${id} AND user_id = ${userId}`
    })

    const findByCheckout = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String, clientId: Schema.String }),
      execute: (checkoutId) => sql`SELECT id, client_id FROM acp_checkout_sessions
        WHERE checkout_id = ${checkoutId} AND client_id IS NOT NULL`
    })

    const findUcpByCheckout = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String, userId: Schema.String, ucpProfileUrl: Schema.String }),
      execute: (checkoutId) => sql`SELECT id, user_id, ucp_profile_url FROM acp_checkout_sessions
        WHERE checkout_id = ${checkoutId} AND ucp_profile_url IS NOT NULL`
    })

    const findForUserByCheckout = SqlSchema.findOne({
      Request: Schema.Struct({ checkoutId: Schema.String, userId: Schema.String }),
      Result: AcpSessionRecord,
      execute: ({ checkoutId, userId }) =>
        sql`SELECT * FROM acp_checkout_sessions WHERE checkout_id = ${checkoutId} AND user_id = ${userId}`
    })

    return {
      insert: (row: AcpSessionRecord) => Effect.orDie(insert(row)),
      /** The session a checkout pays for and the OAuth client that created it, when one did over ACP. */
      byCheckout: (checkoutId: string) => Effect.orDie(findByCheckout(checkoutId)),
      /** The session a checkout pays for, its person and its platform's profile, when it was created over UCP. */
      ucpByCheckout: (checkoutId: string) => Effect.orDie(findUcpByCheckout(checkoutId)),
      save: (row: AcpSessionRecord) => Effect.orDie(save(row)),
      findForUser: (id: string, userId: string) => Effect.orDie(findForUser({ id, userId })),
      /** The user's session paid with the Ribbon checkout `checkoutId` (its latest, so at most one). */
      findForUserByCheckout: (checkoutId: string, userId: string) =>
        Effect.orDie(findForUserByCheckout({ checkoutId, userId }))
    } as const
  })
}) {}

const KeyOf = Schema.Struct({ userId: Schema.String, endpoint: Schema.String, key: Schema.String })

/**
 * A key that cannot be read or stored refuses its request (UCP's "fail closed": 503), rather than running it
 * unguarded; a row that does not decode is still a defect.
 */
const failClosed = <A, R>(self: Effect.Effect<A, SqlError | ParseResult.ParseError, R>) =>
  self.pipe(
    Effect.catchTag(
      "SqlError",
      () =>
        new ServiceUnavailable({
          message: "The idempotency key could not be stored; the request was not run. Retry it.",
          retryAfterSeconds: 1
        })
    ),
    Effect.orDie
  )

/**
 * The `acp_idempotency_keys` table: one row per (user, endpoint, key), claimed before the request runs and
 * given its response after. Only AcpIdempotency uses it; a database error is a 503 (`failClosed`).
 */
export class AcpIdempotencyRepo extends Effect.Service<AcpIdempotencyRepo>()("AcpIdempotencyRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * Claims the key for a request: a new row, or one past `expiredBefore` (kept long enough) or a claim that
     * never got its response by `abandonedBefore` (its request died), taken over. Whether it claimed it.
     */
    const claim = SqlSchema.findAll({
      Request: Schema.Struct({
        ...KeyOf.fields,
        fingerprint: Schema.String,
        at: Schema.DateFromSelf,
        expiredBefore: Schema.DateFromSelf,
        abandonedBefore: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ key: Schema.String }),
      execute: ({ userId, endpoint, key, fingerprint, at, expiredBefore, abandonedBefore }) => sql`
        INSERT INTO acp_idempotency_keys (user_id, endpoint, key, fingerprint, status, response, created_at)
        VALUES (${userId}, ${endpoint}, ${key}, ${fingerprint}, NULL, NULL, ${at})
        ON CONFLICT (user_id, endpoint, key) DO UPDATE
          SET fingerprint = EXCLUDED.fingerprint, status = NULL, response = NULL, created_at = EXCLUDED.created_at
          WHERE acp_idempotency_keys.created_at < ${expiredBefore}
            OR (acp_idempotency_keys.status IS NULL AND acp_idempotency_keys.created_at < ${abandonedBefore})
        RETURNING key`
    })

    const find = SqlSchema.findOne({
      Request: KeyOf,
      Result: AcpIdempotencyRecord,
      execute: ({ userId, endpoint, key }) => sql`
        SELECT fingerprint, status, response, created_at FROM acp_idempotency_keys
        WHERE user_id = ${userId} AND endpoint = ${endpoint} AND key = ${key}`
    })

    const answer = SqlSchema.void({
      Request: Schema.Struct({ ...KeyOf.fields, status: Schema.Int, response: Schema.Unknown }),
      execute: ({ userId, endpoint, key, status, response }) => sql`
        UPDATE acp_idempotency_keys SET status = ${status}, response = ${JSON.stringify(response)}
        WHERE user_id = ${userId} AND endpoint = ${endpoint} AND key = ${key}`
    })

    const release = SqlSchema.void({
      Request: KeyOf,
      execute: ({ userId, endpoint, key }) => sql`
        DELETE FROM acp_idempotency_keys
        WHERE user_id = ${userId} AND endpoint = ${endpoint} AND key = ${key} AND status IS NULL`
    })

    // Answers can hold what is shown once (a vault token, a webhook secret): they go as soon as they expire.
    const purge = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: Schema.Struct({ key: Schema.String }),
      execute: (before) => sql`DELETE FROM acp_idempotency_keys WHERE created_at < ${before} RETURNING key`
    })

    return {
      claim: (request: typeof claim extends (r: infer R) => any ? R : never) =>
        Effect.map(failClosed(claim(request)), (rows) => rows.length > 0),
      find: (key: typeof KeyOf.Type) => Effect.map(failClosed(find(key)), Option.getOrUndefined),
      answer: (key: typeof KeyOf.Type, status: number, response: unknown) =>
        failClosed(answer({ ...key, status, response })),
      release: (key: typeof KeyOf.Type) => Effect.orDie(release(key)),
      /** Deletes the keys created before `before`; how many. */
      purge: (before: Date) => Effect.map(Effect.orDie(purge(before)), (rows) => rows.length)
    } as const
  })
}) {}
