import { RateLimiter } from "@effect/experimental"
import { describe, expect, it } from "@effect/vitest"
import { Config, Effect, Layer, Option, TestClock } from "effect"
import { type Attempt, AuthFailureLimits, makeAuthFailures, sourceOf } from "../../src/http/AuthFailures.js"
import { RateLimiterMemoryLive, redisRateLimiterStore } from "../../src/layers/Redis.js"

/**
 * The backoff after failed authentications (src/http/AuthFailures.ts): free failures, then a wait that
 * doubles up to a cap, per source (IPv6 by /64) and per account; on the memory store driven by TestClock,
 * and on Redis (REDIS_URL) shared by two limiters as two instances would.
 */

const limits: AuthFailureLimits["Type"] = {
  perSource: { free: 3, window: "1 minute", firstWait: "10 seconds", maxWait: "40 seconds" },
  perAccount: { free: 2, window: "1 minute", firstWait: "5 seconds", maxWait: "20 seconds" }
}

const failures = makeAuthFailures.pipe(Effect.provideService(AuthFailureLimits, limits))

/** One attempt with a wrong credential: "refused" with its Retry-After, or "failed" once checked. */
const wrong = (guard: Effect.Effect.Success<typeof failures>["guard"], attempt: Attempt) =>
  guard(attempt, Effect.fail("wrong credential" as const), () => true).pipe(
    Effect.flip,
    Effect.map((error) => (typeof error === "string" ? "failed" : `refused ${error.retryAfterSeconds}`))
  )

describe("sourceOf", () => {
  it("keeps an IPv4 address, unwraps an IPv4-mapped one, and groups IPv6 by its /64", () => {
    expect(sourceOf("203.0.113.7")).toBe("203.0.113.7")
    expect(sourceOf("::ffff:203.0.113.7")).toBe("203.0.113.7")
    expect(sourceOf("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64")
    expect(sourceOf("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64")
    expect(sourceOf("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64")
    expect(sourceOf("2001:db8::")).toBe("2001:db8:0:0::/64")
    expect(sourceOf("::1")).toBe("0:0:0:0::/64")
    expect(sourceOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64")
    expect(sourceOf("64:ff9b::192.0.2.1")).toBe("64:ff9b:0:0::/64")
    expect(sourceOf("unknown")).toBe("unknown")
  })
})

describe("backoff after failed authentications, memory store", () => {
  it.layer(RateLimiterMemoryLive)((it) => {
    it.effect(
      "free failures, then waits of 10, 20, 40, 40 s; other sources and good attempts after the wait pass",
      () =>
        Effect.gen(function* () {
          const { guard } = yield* failures
          const attacker = { kind: "api-key", source: "198.51.100.1" } as const
          for (let i = 0; i < 4; i++) expect(yield* wrong(guard, attacker)).toBe("failed")
          // The fourth failure was one beyond the three free ones: the next attempt waits, whatever it brings.
          expect(yield* wrong(guard, attacker)).toBe("refused 10")
          const good = guard(attacker, Effect.succeed("let in"), () => true).pipe(
            Effect.catchTag("RateLimited", (e) => Effect.succeed(`refused ${e.retryAfterSeconds}`))
          )
          expect(yield* good).toBe("refused 10")
          // Another source, and the attacker's other kind of credential, are counted apart.
          expect(yield* wrong(guard, { kind: "api-key", source: "198.51.100.2" })).toBe("failed")
          expect(yield* wrong(guard, { ...attacker, kind: "oauth-client" })).toBe("failed")
          yield* TestClock.adjust("9 seconds")
          expect(yield* wrong(guard, attacker)).toBe("refused 1")

          // Each further failure doubles the wait, up to the cap.
          yield* TestClock.adjust("1 second")
          expect(yield* good).toBe("let in")
          expect(yield* wrong(guard, attacker)).toBe("failed")
          expect(yield* wrong(guard, attacker)).toBe("refused 20")
          yield* TestClock.adjust("20 seconds")
          expect(yield* wrong(guard, attacker)).toBe("failed")
          expect(yield* wrong(guard, attacker)).toBe("refused 40")
          yield* TestClock.adjust("40 seconds")
          expect(yield* wrong(guard, attacker)).toBe("failed")
          expect(yield* wrong(guard, attacker)).toBe("refused 40")

          // Failures that do not count (here: none of them) start nothing.
          const other = { kind: "sign-in", source: "198.51.100.3" } as const
          for (let i = 0; i < 6; i++) {
            expect(yield* guard(other, Effect.fail("typo"), () => false).pipe(Effect.flip)).toBe("typo")
          }
        })
    )

    it.effect("an account's failures count from every source, whatever the e-mail's case", () =>
      Effect.gen(function* () {
        const { guard } = yield* failures
        const from = (source: string, account: string) => ({ kind: "sign-in", source, account }) as const
        expect(yield* wrong(guard, from("192.0.2.1", "owner@example.com"))).toBe("failed")
        expect(yield* wrong(guard, from("192.0.2.2", "Owner@Example.com "))).toBe("failed")
        expect(yield* wrong(guard, from("2001:db8::/64", "owner@example.com"))).toBe("failed")
        // The third failure is one beyond the account's two free ones: every source waits 5 s for it.
        expect(yield* wrong(guard, from("192.0.2.9", "OWNER@example.com"))).toBe("refused 5")
        expect(yield* wrong(guard, from("192.0.2.9", "someone.else@example.com"))).toBe("failed")
        yield* TestClock.adjust("5 seconds")
        const right = guard(from("192.0.2.9", "owner@example.com"), Effect.succeed("signed in"), () => true)
        expect(yield* right).toBe("signed in")
      })
    )
  })
})

const redisUrl = Effect.runSync(Config.option(Config.string("REDIS_URL")))

describe.skipIf(Option.isNone(redisUrl))("backoff after failed authentications, Redis store", () => {
  it.live("two instances, each with its own Redis connection, share the failure count and the wait", () =>
    Effect.gen(function* () {
      const prefix = `ribbon:test:${Date.now().toString(36)}:${Math.random().toString(36).slice(2, 8)}:`
      const instance = Effect.flatMap(
        Layer.build(
          RateLimiter.layer.pipe(
            Layer.provideMerge(redisRateLimiterStore({ url: Option.getOrElse(redisUrl, () => ""), prefix }))
          )
        ),
        (context) => Effect.provide(failures, context)
      )
      const one = yield* instance
      const two = yield* instance
      const attacker = { kind: "api-key", source: "2001:db8:7:7::/64" } as const
      expect(yield* wrong(one.guard, attacker)).toBe("failed")
      expect(yield* wrong(two.guard, attacker)).toBe("failed")
      expect(yield* wrong(one.guard, attacker)).toBe("failed")
      expect(yield* wrong(two.guard, attacker)).toBe("failed")
      // Four failures over both instances: each of them makes the source wait (Redis time, so about 10 s).
      for (const guard of [one.guard, two.guard]) {
        const refused = yield* wrong(guard, attacker)
        expect(refused).toMatch(/^refused (9|10)$/)
      }
      expect(yield* wrong(two.guard, { kind: "api-key", source: "203.0.113.50" })).toBe("failed")
    }).pipe(Effect.scoped)
  )
})
