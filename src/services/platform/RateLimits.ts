import type { RateLimiter } from "@effect/experimental"
import { Clock, Context, Effect, Either, Layer, Metric } from "effect"
import { globalValue } from "effect/GlobalValue"
import {
  defaultRateLimits,
  type RateLimit,
  type RateLimitOverrides,
  type RateScope
} from "../../domain/company/Company.js"

/**
 * Per-company rate limits (docs/decisions/0034-company-rate-limits.md, docs/company-api.md): every request takes one
 * token from the company's global bucket and one from its class bucket, or none at all: the buckets are decided
 * together in one atomic step of the store (`TokenBuckets`: memory, or one Lua script on Redis shared by every
 * instance), so a refused request spends no token anywhere and concurrent requests never pass more than a burst.
 *
 * When the store fails (Redis down) the request is let through (`letThroughOnStoreError`): refusing every
 * request because the limiter is unavailable would turn a Redis outage into an API outage.
 */

export interface BucketState {
  readonly scope: RateScope
  readonly limit: RateLimit
  /** Tokens left after this request (0 when refused). */
  readonly remaining: number
  /** Seconds until the bucket is full again. */
  readonly resetSeconds: number
}

export interface Decision {
  readonly allowed: boolean
  /** Seconds to wait before retrying (≥ 1), when refused. */
  readonly retryAfterSeconds: number
  /** Every bucket the request is subject to, for `RateLimit-Policy`. */
  readonly policies: ReadonlyArray<{ readonly scope: RateScope; readonly limit: RateLimit }>
  /** The bucket the `RateLimit` header reports: the refusing one, or the one with the fewest tokens left. */
  readonly binding: BucketState
}

/** A token bucket in the store: `limit` tokens when full, one more every `refillMillis`. */
export interface TokenBucket {
  readonly key: string
  readonly limit: number
  readonly refillMillis: number
}

/**
 * Where the token buckets live. `take` refills the buckets, then takes one token from each if every one
 * has a token, and none otherwise, in one atomic step; it returns each bucket's tokens before the take.
 */
export class TokenBuckets extends Context.Tag("ribbon/TokenBuckets")<
  TokenBuckets,
  {
    readonly take: (
      buckets: ReadonlyArray<TokenBucket>
    ) => Effect.Effect<ReadonlyArray<number>, RateLimiter.RateLimitStoreError>
  }
>() {
  /** In this process's memory (one instance, tests), on the Clock. */
  static readonly layerMemory = Layer.sync(TokenBuckets, () => {
    const buckets = new Map<string, { tokens: number; last: number }>()
    return TokenBuckets.of({
      take: (specs) =>
        Effect.clockWith((clock) =>
          // Synchronous, so no other request sees the buckets between the decision and the take.
          Effect.sync(() => {
            const now = clock.unsafeCurrentTimeMillis()
            const states = specs.map((spec) => refilled(buckets.get(spec.key), spec, now))
            const take = states.every((state) => state.tokens >= 1) ? 1 : 0
            for (const [i, spec] of specs.entries()) {
              buckets.set(spec.key, { tokens: states[i]!.tokens - take, last: states[i]!.last })
            }
            return states.map((state) => state.tokens)
          })
        )
    })
  })
}

/**
 * A bucket brought up to `now`: whole tokens added for the time passed, at most `limit`. A full bucket
 * starts counting from now. The Redis script (src/layers/Redis.ts) does the same in Lua.
 */
const refilled = (state: { tokens: number; last: number } | undefined, spec: TokenBucket, now: number) => {
  let tokens = state?.tokens ?? spec.limit
  let last = state?.last ?? now
  const added = Math.floor((now - last) / spec.refillMillis)
  if (added > 0) {
    tokens += added
    last += added * spec.refillMillis
  }
  if (tokens >= spec.limit) {
    tokens = spec.limit
    last = now
  }
  return { tokens, last }
}

export const storeErrors = Metric.counter("ribbon_rate_limit_store_errors_total", {
  description: "Rate-limit checks that could not reach the store (Redis) and let the request through",
  incremental: true
})

export const failingOpen = Metric.gauge("ribbon_rate_limit_failing_open", {
  description: "1 while the rate-limit store (Redis) is unavailable and requests go through unlimited, else 0"
})

/** How often a continuing store outage is logged: one line per interval, not one per request. */
const outageLogIntervalMillis = 60_000

/**
 * The store outage under way in this process, if any. One per process, like the store's connection: every
 * limiter reports into it, the connection's events start and end it, and `/ready` reads it.
 */
interface Outage {
  readonly since: number
  /** Checks let through during the outage. */
  letThrough: number
  /** … and since its last log line. */
  letThroughSinceLine: number
  lineAt: number
}

const outage = globalValue("ribbon/rateLimitStoreOutage", () => ({ current: undefined as Outage | undefined }))

const begin = (now: number, letThrough: number) => {
  outage.current = { since: now, letThrough, letThroughSinceLine: 0, lineAt: now }
  return Metric.set(failingOpen, 1)
}

const causeOf = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/**
 * A rate-limit check could not reach the store, and the request goes through unlimited (fail open). Every
 * limiter calls it (the company API's buckets, the OAuth windows, the backoff after failed authentication;
 * a request may make more than one check). The first failure of an outage is logged at once; after that
 * one line per minute at most, with the number of checks let through since the previous line.
 * `ribbon_rate_limit_store_errors_total` counts every such check.
 */
export const letThroughOnStoreError = (cause: unknown): Effect.Effect<void> =>
  Effect.gen(function* () {
    yield* Metric.increment(storeErrors)
    const now = yield* Clock.currentTimeMillis
    const current = outage.current
    if (current === undefined) {
      yield* begin(now, 1)
      return yield* Effect.logWarning(
        "Rate-limit store unavailable; rate limits fail open (logged once a minute while it lasts)"
      ).pipe(Effect.annotateLogs("cause", causeOf(cause)))
    }
    current.letThrough++
    current.letThroughSinceLine++
    if (now - current.lineAt < outageLogIntervalMillis) return
    const count = current.letThroughSinceLine
    current.letThroughSinceLine = 0
    current.lineAt = now
    yield* Effect.logWarning(
      `Rate-limit store still unavailable; ${count} checks let through since the last line`
    ).pipe(
      Effect.annotateLogs({
        checksLetThrough: count,
        unavailableSeconds: Math.round((now - current.since) / 1000),
        cause: causeOf(cause)
      })
    )
  })

/** The store reports that it cannot be reached (e.g. its connection failed): logs `message` once per outage. */
export const rateLimitStoreUnavailable = (message: string, cause: unknown): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (outage.current !== undefined) return
    yield* begin(yield* Clock.currentTimeMillis, 0)
    yield* Effect.logWarning(message).pipe(Effect.annotateLogs("cause", causeOf(cause)))
  })

/** The store answers again: ends the outage, if there was one, with one line saying what it let through. */
export const rateLimitStoreAvailable = (message: string): Effect.Effect<void> =>
  Effect.suspend(() => {
    const ended = outage.current
    if (ended === undefined) return Effect.void
    outage.current = undefined
    return Effect.gen(function* () {
      yield* Metric.set(failingOpen, 0)
      const now = yield* Clock.currentTimeMillis
      yield* Effect.logInfo(message).pipe(
        Effect.annotateLogs({
          checksLetThrough: ended.letThrough,
          unavailableSeconds: Math.round((now - ended.since) / 1000)
        })
      )
    })
  })

/** Whether rate limits are enforced now, or failing open since when and for how many checks (`/ready`). */
export type RateLimitsStatus =
  | { readonly status: "enforced" }
  | { readonly status: "failing_open"; readonly since: Date; readonly checksLetThrough: number }

export const rateLimitsStatus: Effect.Effect<RateLimitsStatus> = Effect.sync(() => {
  const current = outage.current
  return current === undefined
    ? { status: "enforced" }
    : { status: "failing_open", since: new Date(current.since), checksLetThrough: current.letThrough }
})

export const limitFor = (overrides: RateLimitOverrides, scope: RateScope): RateLimit =>
  overrides[scope] ?? defaultRateLimits[scope]

const seconds = (millis: number) => Math.max(1, Math.ceil(millis / 1000))

/** `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers): every bucket's policy, the binding one's state. */
export const rateLimitHeaders = (decision: Decision): Record<string, string> => ({
  "ratelimit-policy": decision.policies
    .map((b) => `"${b.scope}";q=${b.limit.burst};w=${Math.max(1, Math.round(b.limit.burst / b.limit.rate))}`)
    .join(", "),
  ratelimit: `"${decision.binding.scope}";r=${decision.binding.remaining};t=${decision.binding.resetSeconds}`
})

export class RateLimits extends Effect.Service<RateLimits>()("RateLimits", {
  effect: Effect.gen(function* () {
    const store = yield* TokenBuckets

    /** Takes one token from the company's global bucket and one from `scope`'s, or none when either is empty. */
    const consume = Effect.fn("RateLimits.consume")(function* (
      companyId: string,
      scope: RateScope,
      overrides: RateLimitOverrides
    ) {
      const scopes: ReadonlyArray<RateScope> = scope === "global" ? ["global"] : ["global", scope]
      const policies = scopes.map((s) => ({ scope: s, limit: limitFor(overrides, s) }))
      // `rate` tokens per second: one every 1000 / rate ms.
      const buckets = policies.map(({ limit, scope: s }) => ({
        scope: s,
        limit,
        key: `${companyId}:${s}`,
        refillMillis: 1000 / limit.rate
      }))
      const taken = yield* Effect.either(
        store.take(buckets.map(({ key, limit, refillMillis }) => ({ key, limit: limit.burst, refillMillis })))
      )
      if (Either.isLeft(taken)) {
        yield* letThroughOnStoreError(taken.left.cause ?? taken.left)
        const { limit, scope: s } = buckets[0]!
        const binding = { scope: s, limit, remaining: limit.burst, resetSeconds: 0 }
        return { allowed: true, retryAfterSeconds: 0, policies, binding } satisfies Decision
      }
      yield* rateLimitStoreAvailable("Rate-limit store answers again; rate limits apply again")
      const states = buckets.map((bucket, i) => ({ ...bucket, tokens: taken.right[i]! }))
      const refused = states.filter((bucket) => bucket.tokens < 1)
      if (refused.length > 0) {
        // The empty bucket that takes longest to give a token reports, and says when to retry.
        const wait = (bucket: (typeof refused)[number]) => bucket.refillMillis * (1 - bucket.tokens)
        const refusing = refused.reduce((a, b) => (wait(b) > wait(a) ? b : a))
        const { limit } = refusing
        const binding = {
          scope: refusing.scope,
          limit,
          remaining: 0,
          resetSeconds: Math.ceil(limit.burst / limit.rate)
        }
        return { allowed: false, retryAfterSeconds: seconds(wait(refusing)), policies, binding } satisfies Decision
      }
      const after = states.map(
        ({ limit, scope: s, tokens, refillMillis }): BucketState => ({
          scope: s,
          limit,
          remaining: tokens - 1,
          resetSeconds: seconds(refillMillis * (limit.burst - tokens + 1))
        })
      )
      const binding = after.reduce((a, b) => (b.remaining < a.remaining ? b : a))
      return { allowed: true, retryAfterSeconds: 0, policies, binding } satisfies Decision
    })

    return { consume } as const
  })
}) {}
