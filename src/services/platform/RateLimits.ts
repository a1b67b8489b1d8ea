import { RateLimiter } from "@effect/experimental"
import { Duration, Effect, Either, Metric } from "effect"
import {
  defaultRateLimits,
  type RateLimit,
  type RateLimitOverrides,
  type RateScope
} from "../../domain/company/Company.js"

/**
 * Per-company rate limits (DESIGN.md §4.8, docs/company-api.md): every request takes one token from the
 * company's global bucket and one from its class bucket; the most restrictive decision wins. Token buckets
 * of the `@effect/experimental` RateLimiter, on whichever RateLimiterStore the layers provide (memory, or
 * Redis shared by every instance).
 *
 * When the store fails (Redis down) the request is let through: a warning is logged and
 * `ribbon_rate_limit_store_errors_total` counts it. Refusing every request because the limiter is
 * unavailable would turn a Redis outage into an API outage.
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

export const storeErrors = Metric.counter("ribbon_rate_limit_store_errors_total", {
  description: "Rate-limit decisions that could not reach the store and let the request through",
  incremental: true
})

export const limitFor = (overrides: RateLimitOverrides, scope: RateScope): RateLimit =>
  overrides[scope] ?? defaultRateLimits[scope]

const seconds = (duration: Duration.Duration) => Math.max(1, Math.ceil(Duration.toMillis(duration) / 1000))

/** `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers): every bucket's policy, the binding one's state. */
export const rateLimitHeaders = (decision: Decision): Record<string, string> => ({
  "ratelimit-policy": decision.policies
    .map((b) => `"${b.scope}";q=${b.limit.burst};w=${Math.max(1, Math.round(b.limit.burst / b.limit.rate))}`)
    .join(", "),
  ratelimit: `"${decision.binding.scope}";r=${decision.binding.remaining};t=${decision.binding.resetSeconds}`
})

export class RateLimits extends Effect.Service<RateLimits>()("RateLimits", {
  effect: Effect.gen(function* () {
    const limiter = yield* RateLimiter.RateLimiter

    const take = (companyId: string, scope: RateScope, limit: RateLimit) =>
      limiter
        .consume({
          algorithm: "token-bucket",
          onExceeded: "fail",
          key: `${companyId}:${scope}`,
          limit: limit.burst,
          // The limiter refills `limit` tokens per `window`: burst / rate seconds gives `rate` per second.
          window: Duration.millis((limit.burst / limit.rate) * 1000)
        })
        .pipe(Effect.either)

    /** Takes one token from the company's global bucket and one from `scope`'s. */
    const consume = Effect.fn("RateLimits.consume")(function* (
      companyId: string,
      scope: RateScope,
      overrides: RateLimitOverrides
    ) {
      const scopes: ReadonlyArray<RateScope> = scope === "global" ? ["global"] : ["global", scope]
      const policies = scopes.map((s) => ({ scope: s, limit: limitFor(overrides, s) }))
      const buckets: Array<BucketState> = []
      // One bucket after the other, stopping at the first refusal: a refused request spends no token
      // from the buckets after it (with concurrent requests it would otherwise starve allowed ones).
      for (const { limit, scope: s } of policies) {
        const result = yield* take(companyId, s, limit)
        if (Either.isRight(result)) {
          buckets.push({
            scope: s,
            limit,
            remaining: result.right.remaining,
            resetSeconds: seconds(result.right.resetAfter)
          })
          continue
        }
        const error = result.left
        if (error.reason === "StoreError") {
          yield* Effect.logWarning("Rate-limit store unavailable; letting the request through").pipe(
            Effect.annotateLogs("cause", String(error.cause))
          )
          yield* Metric.increment(storeErrors)
          buckets.push({ scope: s, limit, remaining: limit.burst, resetSeconds: 0 })
          continue
        }
        const binding: BucketState = {
          scope: s,
          limit,
          remaining: 0,
          resetSeconds: Math.ceil(limit.burst / limit.rate)
        }
        return { allowed: false, retryAfterSeconds: seconds(error.retryAfter), policies, binding } satisfies Decision
      }
      const binding = buckets.reduce((a, b) => (b.remaining < a.remaining ? b : a))
      return { allowed: true, retryAfterSeconds: 0, policies, binding } satisfies Decision
    })

    return { consume } as const
  })
}) {}
