import { createHash } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Data, Effect, Option } from "effect"
import { IdempotencyInFlight, IdempotencyKeyReused } from "../../domain/platform/Errors.js"
import { IdempotencyRepo } from "./IdempotencyRepo.js"

/**
 * Idempotent creation (docs/decisions/0035-idempotency.md), for every line that takes an idempotency key: v1 checkouts
 * today, v3 orders and v2 gifts next. The scope is (owner, key); the request is fingerprinted by the caller
 * (SHA-256 over the canonical body).
 *
 * `make` runs first, with no lookup: a new key is the common case. When it fails (a check refused it, the
 * key's lock was held, or a concurrent request won the unique index), what the key made before wins over
 * the failure:
 *
 * - the key already made something with the same fingerprint: that is replayed (`replayed: true`);
 * - with another fingerprint: 422 `IdempotencyKeyReused`;
 * - nothing yet and a request with the key is still running: 409 `IdempotencyInFlight` (`Retry-After: 1`).
 *   `make` takes the key's lock inside its own transaction (`claimKey`), held until that transaction ends;
 * - nothing the caller can see, though the key is taken (`KeyTaken`): it was used for something out of the
 *   caller's reach (`find` looks only within it), so for this caller a different request: 422 too;
 * - nothing yet: the failure stands.
 *
 * A replay therefore runs `make`'s checks and a transaction that rolls back before it is answered: it writes
 * nothing, and a request with a new key saves the lookup.
 */

/**
 * The fingerprint of a decoded request: SHA-256 over its JSON. Decoding builds every object in its schema's
 * field order, so two requests that mean the same have the same fingerprint however their bodies were written.
 */
export const fingerprintOf = (request: unknown): string =>
  createHash("sha256").update(JSON.stringify(request)).digest("hex")

/** What a key made before: the fingerprint it was made with and the result to replay. */
export interface Made<A> {
  readonly fingerprint: string | null
  readonly result: A
}

export interface IdempotentRequest<A, R> {
  /** The owner of the key (a user, a company): keys of two owners never meet. */
  readonly scope: string
  /** None: the request is not idempotent and is simply made. */
  readonly key: string | null
  readonly fingerprint: string
  /** What is made, in words for the error messages ("checkout", "order"). */
  readonly noun: string
  /** What the key made so far, if anything, among what the caller may see. */
  readonly find: Effect.Effect<Option.Option<Made<A>>, never, R>
}

/** `make` lost the race for the key to a concurrent request: replay what that one made. */
export class KeyTaken extends Data.TaggedError("KeyTaken") {}

const isKeyTaken = (failure: unknown): failure is KeyTaken => failure instanceof KeyTaken

export const withIdempotency = <A, E, R, R2>(
  request: IdempotentRequest<A, R>,
  make: (claimKey: Effect.Effect<void, IdempotencyInFlight>) => Effect.Effect<A, E | KeyTaken, R2>
): Effect.Effect<
  { readonly result: A; readonly replayed: boolean },
  E | IdempotencyKeyReused | IdempotencyInFlight,
  R | R2 | SqlClient.SqlClient
> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reused = () =>
      new IdempotencyKeyReused({
        message: `This idempotencyKey was used with a different request; use a new key for a new ${request.noun}.`
      })
    const replay = (made: Made<A>) =>
      made.fingerprint === request.fingerprint
        ? Effect.succeed({ result: made.result, replayed: true })
        : Effect.fail(reused())
    // Held until the transaction that takes it ends: a second request with the key meanwhile is told to retry.
    const lockKey = `${request.scope}:${request.key}`
    const claimKey = IdempotencyRepo.tryLock(sql, lockKey).pipe(
      Effect.flatMap((locked) =>
        locked
          ? Effect.void
          : Effect.fail(
              new IdempotencyInFlight({
                message: `A ${request.noun} with this idempotencyKey is still being created; retry in a second.`,
                retryAfterSeconds: 1
              })
            )
      )
    )
    return yield* make(request.key === null ? Effect.void : claimKey).pipe(
      Effect.map((result) => ({ result, replayed: false })),
      Effect.catchAll((failure) =>
        Effect.gen(function* () {
          const earlier = request.key === null ? Option.none<Made<A>>() : yield* request.find
          if (Option.isSome(earlier)) return yield* replay(earlier.value)
          if (isKeyTaken(failure)) return yield* reused()
          return yield* Effect.fail(failure)
        })
      )
    )
  }).pipe(Effect.withSpan("Idempotency.withIdempotency", { attributes: { scope: request.noun } }))
