import { createHash } from "node:crypto"
import { Clock, Effect, Exit } from "effect"
import { IdempotencyInFlight, IdempotencyKeyReused } from "../../domain/platform/Errors.js"
import { AcpIdempotencyRepo } from "./AcpSessionsRepo.js"

/**
 * The agent protocols' idempotency: the Agentic Commerce Protocol's (its RFC §6; docs/decisions/0078-agentic-commerce-protocol.md),
 * where every POST carries a key, and the Universal Commerce Protocol's `Idempotency-Key` on `/ucp` writes and its
 * MCP tools (docs/decisions/0086-ucp-idempotency-payment-and-mcp.md). A key is scoped to the signed-in user and the
 * endpoint (method and path, so a `/ucp` key never meets an `/acp` one). Unlike `/v1` (src/services/platform/Idempotency.ts),
 * where what a key made is found in the table of what was made, the protocol replays any answer, an update's or a
 * 4xx's included, so the answer itself is kept, in `acp_idempotency_keys`:
 *
 * - the key is claimed first (a row with the body's fingerprint and no answer yet), then the request runs, then its
 *   answer (status and body) is stored; a 5xx or a defect releases the claim, so a retry runs afresh (§6.5);
 * - a second request meanwhile finds the claim: another body is a 422 `idempotency_conflict`, the same body a
 *   409 `idempotency_in_flight` with `Retry-After: 1`, and once answered the same body gets the stored answer;
 * - a key is kept 24 hours (§6.6; UCP's minimum too), after which it is new again; a claim left without an answer
 *   for a minute (its server stopped mid-request) may be taken over;
 * - a key that cannot be claimed or answered for a database error refuses the request with a 503 (UCP: "fail
 *   closed"), so that nothing runs unguarded.
 */

/** How long an answered key is kept: the protocol's minimum. */
export const KEY_RETENTION_MS = 24 * 60 * 60 * 1000
/** After this long without an answer, a claim is taken to be abandoned. */
export const ABANDONED_CLAIM_MS = 60 * 1000

/** JSON with object keys sorted at every level (RFC 8785's ordering, enough for bodies parsed by JSON.parse). */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonical(inner)}`).join(",")}}`
  }
  return JSON.stringify(value)
}

/**
 * The fingerprint of a request body (§6.2): SHA-256 over its canonical JSON. Key order does not count, `1.0` and `1`
 * are one number (JSON.parse reads both as 1), `null` and an absent key differ, and array order counts.
 */
export const bodyFingerprint = (body: unknown): string => createHash("sha256").update(canonical(body)).digest("hex")

/** A response as stored and replayed. */
export interface Answer {
  readonly status: number
  readonly body: unknown
}

export interface KeyedRequest {
  readonly userId: string
  /** The method and path, e.g. `POST /acp/checkout_sessions/abc/complete`. */
  readonly endpoint: string
  readonly key: string
  readonly fingerprint: string
}

export class AcpIdempotency extends Effect.Service<AcpIdempotency>()("AcpIdempotency", {
  dependencies: [AcpIdempotencyRepo.Default],
  effect: Effect.gen(function* () {
    const repo = yield* AcpIdempotencyRepo

    /**
     * Runs `answer` once per key: the stored answer when the key was already answered for the same body. `answer`
     * renders its own 4xx outcomes as answers, to be stored; what it fails with is not stored. Another body is
     * `IdempotencyKeyReused`, which each protocol presents as its own conflict.
     */
    const run = <E, R>(request: KeyedRequest, answer: Effect.Effect<Answer, E, R>) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const key = { userId: request.userId, endpoint: request.endpoint, key: request.key }
        const claimed = yield* repo.claim({
          ...key,
          fingerprint: request.fingerprint,
          at: new Date(now),
          expiredBefore: new Date(now - KEY_RETENTION_MS),
          abandonedBefore: new Date(now - ABANDONED_CLAIM_MS)
        })
        if (!claimed) {
          const earlier = yield* repo.find(key)
          if (earlier !== undefined && earlier.fingerprint !== request.fingerprint) {
            return yield* new IdempotencyKeyReused({
              message: "Idempotency-Key has already been used with a different request body"
            })
          }
          if (earlier === undefined || earlier.status === null) {
            return yield* new IdempotencyInFlight({
              message: "A request with this Idempotency-Key is currently being processed",
              retryAfterSeconds: 1
            })
          }
          return { status: earlier.status, body: earlier.response, replayed: true }
        }
        const answered = yield* answer.pipe(
          Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : repo.release(key)))
        )
        yield* repo.answer(key, answered.status, answered.body)
        return { ...answered, replayed: false }
      }).pipe(Effect.withSpan("AcpIdempotency.run", { attributes: { endpoint: request.endpoint } }))

    /** Deletes the keys past their retention (the hourly purge): their stored answers with them. */
    const purgeExpired = Effect.fn("AcpIdempotency.purgeExpired")(function* () {
      const purged = yield* repo.purge(new Date((yield* Clock.currentTimeMillis) - KEY_RETENTION_MS))
      yield* Effect.annotateCurrentSpan({ purged })
      return purged
    })

    return { run, purgeExpired } as const
  })
}) {}
