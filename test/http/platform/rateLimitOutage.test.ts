import { RateLimiter } from "@effect/experimental"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Logger, Metric } from "effect"
import { redisRateLimiterStore } from "../../../src/layers/Redis.js"
import { ApiLive, ServicesLive } from "../../../src/layers/Server.js"
import { PublicUrl } from "../../../src/services/catalog/Catalog.js"
import { failingOpen, RateLimits, storeErrors } from "../../../src/services/platform/RateLimits.js"
import { Signals } from "../../../src/services/platform/Signals.js"
import { freePort } from "../../support/auth.js"
import { createCompany, getWith, keyHeaders, v3Keys } from "../../support/company.js"
import { TestDatabase } from "../../support/database.js"
import { get, originPolicyAtPublicUrl, serveForTest, TestSettingsLive, testPublicUrl } from "../../support/http.js"
import { setLimits } from "../company/rateLimitScenarios.js"

/**
 * The Ribbon API started with REDIS_URL aimed at a closed port: it says so at once, lets requests through
 * (fail open) with one log line rather than one per request, and `/ready` tells. Needs no Redis.
 * (test/http/company/rateLimitsRedis.test.ts has Redis going away and coming back.)
 */

const logged: Array<string> = []
const captureLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ logLevel, message }) => logged.push(`${logLevel.label} ${String(message)}`))
)

class RedisPort extends Context.Tag("test/RedisPort")<RedisPort, number>() {}

/** The rate limiter and the company API's limits on Redis at a port nothing listens on. */
const RateLimitsOnClosedPort = Layer.unwrapEffect(
  Effect.map(RedisPort, (port) =>
    RateLimits.Default.pipe(
      Layer.provideMerge(
        RateLimiter.layer.pipe(
          Layer.provideMerge(redisRateLimiterStore({ url: `redis://127.0.0.1:${port}`, prefix: "ribbon:test:" }))
        )
      )
    )
  )
)

const RibbonWithRedisDown = serveForTest(ApiLive).pipe(
  Layer.provide([ServicesLive, RateLimitsOnClosedPort, originPolicyAtPublicUrl()]),
  Layer.provide([Layer.succeed(PublicUrl, testPublicUrl), Signals.layerInProcess, TestSettingsLive]),
  Layer.provideMerge(TestDatabase),
  Layer.provideMerge(Layer.effect(RedisPort, freePort)),
  Layer.provide(captureLogs)
)

const rateLimitLines = () => logged.filter((line) => /Redis|Rate-limit|rate limits/.test(line))

describe("rate limits with Redis unreachable", () => {
  layer(RibbonWithRedisDown, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("the start says so at once; requests pass with no line each; /ready tells, and stays 200", () =>
      Effect.gen(function* () {
        const port = yield* RedisPort
        expect(rateLimitLines()).toEqual([`WARN Redis unreachable at 127.0.0.1:${port}; rate limits fail open`])

        const company = yield* createCompany()
        // A burst of 3: without the store, all 10 pass all the same.
        yield* setLimits(company.companyId, { "authentication:read": { rate: 0.05, burst: 3 } })
        const before = (yield* Metric.value(storeErrors)).count
        const statuses: Array<number> = []
        for (let i = 0; i < 10; i++) statuses.push((yield* getWith(v3Keys, keyHeaders(company.apiKey))).status)
        expect(statuses).toEqual(Array(10).fill(200))
        // One check or more per request (the company API's buckets, the backoff after bad keys), each counted.
        const checks = (yield* Metric.value(storeErrors)).count - before
        expect(checks).toBeGreaterThanOrEqual(10)
        expect((yield* Metric.value(failingOpen)).value).toBe(1)
        expect(rateLimitLines()).toHaveLength(1)

        const ready = yield* get("/ready")
        expect(ready.status).toBe(200)
        expect(ready.body).toEqual({
          status: "ready",
          migration: expect.any(Number),
          rateLimits: { status: "failing_open", since: expect.any(String), checksLetThrough: checks }
        })
        expect(new Date(ready.body.rateLimits.since).toISOString()).toBe(ready.body.rateLimits.since)
      })
    )
  })
})
