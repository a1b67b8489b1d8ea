import { RateLimiter } from "@effect/experimental"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Metric, TestClock } from "effect"
import {
  failingOpen,
  RateLimits,
  rateLimitsStatus,
  storeErrors,
  TokenBuckets
} from "../../../src/services/platform/RateLimits.js"

/**
 * A rate-limit store that stops answering: requests go through, the outage is logged once a minute with
 * a count rather than once per request, and its end once. On a store a test switches off and on, on TestClock.
 */

const logged: Array<string> = []
const captureLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ logLevel, message, annotations }) =>
    logged.push(`${logLevel.label} ${String(message)} ${JSON.stringify(Object.fromEntries(annotations))}`)
  )
)

let storeUp = true

/** The memory store, failing while `storeUp` is false. */
const SwitchableStore = Layer.effect(
  TokenBuckets,
  Effect.map(Effect.provide(TokenBuckets, TokenBuckets.layerMemory), (memory) =>
    TokenBuckets.of({
      take: (buckets) =>
        storeUp
          ? memory.take(buckets)
          : Effect.fail(new RateLimiter.RateLimitStoreError({ message: "down", cause: new Error("ECONNREFUSED") }))
    })
  )
)

describe("RateLimits when the store fails", () => {
  it.layer(RateLimits.Default.pipe(Layer.provide(SwitchableStore), Layer.provide(captureLogs)))((it) => {
    it.effect("lets requests through, logs once a minute with a count, and once when the store is back", () =>
      Effect.gen(function* () {
        const limits = yield* RateLimits
        const take = limits.consume("company", "authentication:write", {
          "authentication:write": { rate: 1, burst: 2 }
        })
        expect((yield* take).allowed).toBe(true)
        expect(yield* rateLimitsStatus).toEqual({ status: "enforced" })

        storeUp = false
        const before = (yield* Metric.value(storeErrors)).count
        const decisions = yield* Effect.all(Array.from({ length: 5 }, () => take))
        expect(decisions.every((d) => d.allowed)).toBe(true)
        expect((yield* Metric.value(storeErrors)).count - before).toBe(5)
        expect((yield* Metric.value(failingOpen)).value).toBe(1)
        expect(logged).toHaveLength(1)
        expect(logged[0]).toMatch(/^WARN Rate-limit store unavailable; rate limits fail open .*"cause":"ECONNREFUSED"/)
        expect(yield* rateLimitsStatus).toEqual({ status: "failing_open", since: new Date(0), checksLetThrough: 5 })

        // Within the minute: no line; after it, one with the checks let through since the first.
        yield* TestClock.adjust("59 seconds")
        yield* take
        expect(logged).toHaveLength(1)
        yield* TestClock.adjust("1 second")
        yield* take
        expect(logged).toHaveLength(2)
        expect(logged[1]).toMatch(
          /^WARN Rate-limit store still unavailable; 6 checks let through since the last line .*"unavailableSeconds":60/
        )

        storeUp = true
        yield* TestClock.adjust("10 seconds")
        expect((yield* take).allowed).toBe(true)
        expect(logged).toHaveLength(3)
        expect(logged[2]).toMatch(
          /^INFO Rate-limit store answers again; rate limits apply again .*"checksLetThrough":7/
        )
        expect(yield* rateLimitsStatus).toEqual({ status: "enforced" })
        expect((yield* Metric.value(failingOpen)).value).toBe(0)
        // Enforced again: the full bucket's second token, then a refusal.
        expect((yield* take).allowed).toBe(true)
        expect((yield* take).allowed).toBe(false)
        expect(logged).toHaveLength(3)
      })
    )
  })
})
