import { RateLimiter } from "@effect/experimental"
import { Context, Duration, Effect } from "effect"
import { RateLimited } from "../../domain/platform/Errors.js"
import { letThroughOnStoreError } from "../../services/platform/RateLimits.js"

/**
 * Rate limits on the authorization server, so that a misbehaving agent (or a password guesser) cannot
 * flood it: registration per source, the token endpoint per authenticated client and per source, the sign-in
 * and sign-up forms per source, and authorization requests that name their client by a metadata document's URL
 * (each may make Ribbon fetch that URL) per source. A source is the peer address, IPv6 by its /64 (`clientSource` in
 * src/http/AuthFailures.ts, which also slows down repeated authentication failures). Fixed windows in the
 * RateLimiter's store: Redis when REDIS_URL is set (shared by every instance), memory otherwise; when the
 * store is down the request goes through. The limits are a Reference, so tests can set their own.
 */

export interface Rule {
  readonly limit: number
  readonly window: Duration.DurationInput
}

export class AuthRateLimits extends Context.Reference<AuthRateLimits>()("ribbon/AuthRateLimits", {
  defaultValue: () => ({
    registerPerIp: { limit: 20, window: "1 hour" } as Rule,
    tokenPerClient: { limit: 60, window: "1 minute" } as Rule,
    tokenPerIp: { limit: 300, window: "1 minute" } as Rule,
    signInPerIp: { limit: 30, window: "5 minutes" } as Rule,
    clientDocumentPerIp: { limit: 60, window: "1 minute" } as Rule
  })
}) {}

/** Takes one request from `key`'s window under `rule`, or fails with a 429 that says when to retry. */
export const consume = (key: string, rule: Rule) =>
  Effect.flatMap(RateLimiter.RateLimiter, (limiter) =>
    limiter.consume({ algorithm: "fixed-window", key: `oauth:${key}`, limit: rule.limit, window: rule.window })
  ).pipe(
    Effect.asVoid,
    Effect.catchAll((e) =>
      e.reason === "Exceeded"
        ? Effect.fail(
            new RateLimited({
              message: "Too many requests; retry later.",
              retryAfterSeconds: Math.max(1, Math.ceil(Duration.toSeconds(e.retryAfter)))
            })
          )
        : // The store (Redis) is down: let the request through, as the company API's limits do.
          letThroughOnStoreError(e.cause)
    )
  )
