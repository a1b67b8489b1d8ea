import { createHash } from "node:crypto"
import { isIPv6 } from "node:net"
import { RateLimiter } from "@effect/experimental"
import { HttpServerRequest } from "@effect/platform"
import { Context, Duration, Effect, Option } from "effect"
import { RateLimited } from "../domain/platform/Errors.js"
import { letThroughOnStoreError } from "../services/platform/RateLimits.js"

/**
 * Backoff after repeated authentication failures: bad `X-Api-Key`s on the company API, bad client
 * credentials at `/oauth/token`, `/oauth/revoke` and `/oauth/introspect`, and failed sign-ins (docs/oauth.md,
 * docs/company-api.md). Failures are counted per source (the peer address, IPv6 by its /64), never per key,
 * so nobody elsewhere can make a key's owner wait; failed sign-ins and second factors are also counted per
 * account. Past the free failures, each further one makes the next attempt wait, twice as long as the one
 * before, up to a cap: 429 with `Retry-After`, before the credential is even looked at.
 *
 * The counts live in the layers' RateLimiter store (Redis with REDIS_URL, shared by every instance; memory
 * otherwise). When the store is down, attempts go through. The limits are a Reference, so tests set their own.
 */

export interface Backoff {
  /** Failures that cost nothing. */
  readonly free: number
  /**
   * How long `free` failures are remembered: each failure adds `window / free` to the count's lifetime (the
   * RateLimiter's fixed window), and the count starts over once that runs out.
   */
  readonly window: Duration.DurationInput
  /** The wait after the first failure beyond the free ones; it doubles with each further failure. */
  readonly firstWait: Duration.DurationInput
  readonly maxWait: Duration.DurationInput
}

export class AuthFailureLimits extends Context.Reference<AuthFailureLimits>()("ribbon/AuthFailureLimits", {
  // Each failure is remembered for as long as the longest wait (window / free = maxWait), so whoever sits
  // out every wait never starts over; a client failing now and then (less than once per maxWait) never waits.
  defaultValue: () => ({
    /** Per source and kind of credential: more than a client with a stale or mistyped secret fails in a burst. */
    perSource: { free: 20, window: "100 minutes", firstWait: "1 second", maxWait: "5 minutes" } as Backoff,
    /** Per account, for sign-ins: a person gets 10 tries; a guesser on many addresses, then 4 an hour. */
    perAccount: { free: 10, window: "150 minutes", firstWait: "1 second", maxWait: "15 minutes" } as Backoff
  })
}) {}

/**
 * The source a request counts against: its peer address (forwarding headers are not trusted), an IPv4
 * address as it is, an IPv6 one by its /64, the block one subscriber usually holds whole.
 */
export const sourceOf = (address: string): string => {
  const bare = address.replace(/%.*$/, "")
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(bare)
  if (mapped !== null) return mapped[1]!
  if (!isIPv6(bare)) return bare
  // An embedded IPv4 address only ever fills the last 32 bits, outside the /64.
  const groups = (part: string) =>
    part === "" ? [] : part.split(":").flatMap((group) => (group.includes(".") ? ["0", "0"] : [group]))
  const [head = "", tail] = bare.split("::")
  const left = groups(head)
  const right = tail === undefined ? [] : groups(tail)
  const all = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
  return `${all
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`
}

/** The source of the request being served (see `sourceOf`). */
export const clientSource = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
  sourceOf(Option.getOrElse(request.remoteAddress, () => "unknown"))
)

/**
 * Whose failures an attempt counts toward: its source, for one kind of credential, and for sign-ins the
 * account. A second factor (`two-factor`, src/services/identity/TwoFactor.ts) counts per source and per user.
 */
export interface Attempt {
  readonly kind: "api-key" | "oauth-client" | "sign-in" | "two-factor"
  readonly source: string
  /** The e-mail address signed in with (the user's id for a second factor); kept in the store only as a hash. */
  readonly account?: string
}

/** The backoff on the layers' RateLimiter, with the limits of `AuthFailureLimits`. */
export const makeAuthFailures = Effect.gen(function* () {
  const limiter = yield* RateLimiter.RateLimiter
  const store = yield* RateLimiter.RateLimiterStore
  const limits = yield* AuthFailureLimits

  /** The store (Redis) is down: the attempt goes through, as with every other limit. */
  const storeDown = <A>(fallback: A) =>
    Effect.catchAll((error: RateLimiter.RateLimiterError) =>
      Effect.as(letThroughOnStoreError(error.reason === "StoreError" ? error.cause : error), fallback)
    )

  /**
   * A key's wait is the lifetime of a fixed window, `auth-wait:key`. A wait of n ms adds n ms to it (with no
   * limit, the window only counts); `waitLeft` reads it as the lifetime a refused take of 1 reports.
   * Where there is no wait, that take succeeds and leaves a window of 1 ms (the store has no read without a
   * write), which is why 1 ms is taken off what it reports.
   */
  const addWait = (key: string, millis: number) =>
    limiter.consume({
      algorithm: "fixed-window",
      onExceeded: "delay",
      key: `auth-wait:${key}`,
      limit: 1,
      window: Duration.millis(millis)
    })

  /**
   * Whole seconds `key` must still wait (0: none). The take of 1 goes to the store itself: a refused take
   * through `limiter.consume` builds a `RateLimitExceeded` (a validated schema error with a stack), and every
   * request of a busy source within the same millisecond is refused one (~150 µs each).
   */
  const waitLeft = (key: string) =>
    store.fixedWindow({ key: `auth-wait:${key}`, tokens: 1, refillRate: oneMillisecond, limit: 1 }).pipe(
      Effect.map(([count, ttl]) => (count > 1 ? Math.ceil(Math.max(0, ttl - 1) / 1000) : 0)),
      storeDown(0)
    )

  /** Counts a failure of `key`; beyond the free ones it starts a wait, twice the previous one, up to the cap. */
  const countFailure = (key: string, rule: Backoff) =>
    Effect.gen(function* () {
      // With onExceeded "delay" the fixed window counts past its limit: `remaining` goes negative.
      const counted = yield* limiter.consume({
        algorithm: "fixed-window",
        onExceeded: "delay",
        key: `auth-failures:${key}`,
        limit: rule.free,
        window: rule.window
      })
      const beyond = -counted.remaining
      if (beyond < 1) return
      yield* addWait(
        key,
        Math.min(Duration.toMillis(rule.maxWait), Duration.toMillis(rule.firstWait) * 2 ** (beyond - 1))
      )
    }).pipe(storeDown(undefined))

  const hashed = (email: string) => createHash("sha256").update(email.trim().toLowerCase()).digest("hex")

  /** The keys an attempt is counted under, each with its rule. */
  const keysOf = (attempt: Attempt): ReadonlyArray<readonly [string, Backoff]> => {
    const bySource = [`${attempt.kind}:${attempt.source}`, limits.perSource] as const
    if (attempt.account === undefined) return [bySource]
    return [bySource, [`${attempt.kind}:account:${hashed(attempt.account)}`, limits.perAccount]]
  }

  /**
   * Runs `authenticate` unless the attempt's source (or account) must still wait, which is a 429 with
   * `Retry-After`; a failure `isFailure` picks is counted against each of them.
   */
  const guard = <A, E, R>(attempt: Attempt, authenticate: Effect.Effect<A, E, R>, isFailure: (error: E) => boolean) =>
    Effect.gen(function* () {
      const keys = keysOf(attempt)
      // As many fibers as keys: one key (every attempt but a sign-in) runs in this fiber, without the fork
      // and join an unbounded `forEach` pays even for one element (~80 µs a request).
      const waits = yield* Effect.forEach(keys, ([key]) => waitLeft(key), { concurrency: keys.length })
      const wait = Math.max(0, ...waits)
      if (wait > 0) {
        return yield* new RateLimited({
          message: `Too many failed authentication attempts; retry after ${wait} s.`,
          retryAfterSeconds: wait
        })
      }
      return yield* authenticate.pipe(
        Effect.tapError((error) =>
          isFailure(error)
            ? Effect.forEach(keys, ([key, rule]) => countFailure(key, rule), {
                concurrency: "unbounded",
                discard: true
              })
            : Effect.void
        )
      )
    })

  return { guard } as const
})

const oneMillisecond = Duration.millis(1)

export type AuthFailures = Effect.Effect.Success<typeof makeAuthFailures>
