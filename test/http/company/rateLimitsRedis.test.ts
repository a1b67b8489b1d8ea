import { createServer } from "node:http"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Config, Context, Effect, Layer, Logger, Metric, Option } from "effect"
import { Redis } from "ioredis"
import { redisRateLimiterStore } from "../../../src/layers/Redis.js"
import { serveApi } from "../../../src/layers/Server.js"
import { failingOpen, RateLimits, rateLimitsStatus, storeErrors } from "../../../src/services/platform/RateLimits.js"
import { CompanyServicesLive, createCompany, getWith, keyHeaders, postWith } from "../../support/company.js"
import { FixtureCompanyLive, rateLimitsOn, serveFixture } from "../../support/companyFixture.js"
import { TestDatabase } from "../../support/database.js"
import { eventually } from "../../support/eventually.js"
import { testMaxBodyBytes } from "../../support/http.js"
import { tcpRelay } from "../../support/relay.js"
import {
  burst,
  classRefusalsKeepGlobalTokens,
  concurrentRequestsStayWithinTheBurst,
  count,
  keysWrite,
  products,
  setLimits
} from "./rateLimitScenarios.js"

/**
 * Per-company rate limits on Redis (REDIS_URL; skipped without it), in real time since the store reads
 * the time from Redis: the memory suite's checks, two servers sharing one Redis, and Redis going away and
 * coming back (test/http/platform/rateLimitOutage.test.ts starts with Redis unreachable).
 */

// Redis: real time (the store reads Redis TIME), so refill is measured with slow rates and short sleeps.
const redisUrl = Effect.runSync(Config.option(Config.string("REDIS_URL")))
const prefix = `ribbon:test:${Date.now().toString(36)}:${Math.random().toString(36).slice(2, 8)}:`

describe.skipIf(Option.isNone(redisUrl))("rate limits, Redis store", () => {
  const store = redisRateLimiterStore({ url: Option.getOrElse(redisUrl, () => ""), prefix })

  layer(serveFixture(store).pipe(Layer.provideMerge(TestDatabase)), { timeout: 120_000, excludeTestServices: true })(
    (it) => {
      it.effect(
        "exactly the burst passes, then 429 with Retry-After; the class bucket bites first; buckets expire",
        () =>
          Effect.gen(function* () {
            const company = yield* createCompany()
            const headers = keyHeaders(company.apiKey)
            // A slow refill (one token per 20 s) so that only the burst passes however long the requests take.
            yield* setLimits(company.companyId, {
              global: { rate: 0.05, burst: 200 },
              "marketplace:read": { rate: 0.05, burst: 200 }
            })
            const statuses = yield* burst(201, () => getWith(products, headers))
            expect(count(statuses, 200)).toBe(200)
            const refused = yield* getWith(products, headers)
            expect(refused.status).toBe(429)
            expect(refused.body).toEqual({ status: 429, message: expect.any(String) })
            expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1)

            // The class bucket bites before the global one: authentication writes, burst 10.
            const writer = yield* createCompany()
            yield* setLimits(writer.companyId, { "authentication:write": { rate: 0.05, burst: 10 } })
            const writes = yield* burst(11, () => postWith(keysWrite, {}, keyHeaders(writer.apiKey)))
            expect(writes.slice(0, 10)).toEqual(Array(10).fill(200))
            expect(writes[10]).toBe(429)
            // Another company's buckets are its own.
            expect((yield* postWith(keysWrite, {}, headers)).status).toBe(429) // its global bucket is empty
            expect((yield* getWith(products, keyHeaders(writer.apiKey))).status).toBe(200)

            // Every bucket carries a TTL (PEXPIRE): an idle company leaves nothing behind in Redis.
            const ttl = yield* Effect.acquireUseRelease(
              Effect.sync(() => new Redis(Option.getOrThrow(redisUrl))),
              (redis) => Effect.promise(() => redis.pttl(`${prefix}${company.companyId}:global`)),
              (redis) => Effect.promise(() => redis.quit())
            )
            expect(ttl).toBeGreaterThan(0)
          })
      )

      it.effect(
        "a request refused by its class bucket spends no token of the global bucket",
        () => classRefusalsKeepGlobalTokens
      )

      it.effect(
        "concurrent requests of two classes never pass more than the global burst",
        () => concurrentRequestsStayWithinTheBurst
      )

      it.effect("tokens come back at the sustained rate (5 per second for authentication writes)", () =>
        Effect.gen(function* () {
          const limits = yield* RateLimits
          const take = limits.consume(`refill${Math.random().toString(36).slice(2)}`, "authentication:write", {})
          // Drain the bucket (burst 10; a token may come back while draining).
          let drained = 0
          while ((yield* take).allowed) drained++
          expect(drained).toBeGreaterThanOrEqual(10)
          expect(drained).toBeLessThanOrEqual(12)
          yield* Effect.sleep("1 second")
          let passed = 0
          for (let i = 0; i < 10; i++) if ((yield* take).allowed) passed++
          expect(passed).toBeGreaterThanOrEqual(5)
          expect(passed).toBeLessThanOrEqual(6)
        }).pipe(Effect.provide(rateLimitsOn(store)))
      )

      it.effect("two servers on different ports share the company's buckets through Redis", () =>
        Effect.gen(function* () {
          const company = yield* createCompany()
          yield* setLimits(company.companyId, {
            global: { rate: 0.05, burst: 40 },
            "marketplace:read": { rate: 0.05, burst: 40 }
          })
          const sql = yield* SqlClient.SqlClient
          // Each server has its own Redis connection and rate limiter, as two instances would.
          const instance = Effect.gen(function* () {
            const built = yield* Layer.build(
              serveApi(FixtureCompanyLive, { maxBodyBytes: testMaxBodyBytes, telemetry: false }).pipe(
                Layer.provide(rateLimitsOn(redisRateLimiterStore({ url: Option.getOrThrow(redisUrl), prefix }))),
                Layer.provide(CompanyServicesLive),
                Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
                Layer.provide(Layer.succeed(SqlClient.SqlClient, sql))
              )
            )
            const address = Context.get(built, HttpServer.HttpServer).address as HttpServer.TcpAddress
            return `http://127.0.0.1:${address.port}`
          })
          const [one, two] = yield* Effect.all([instance, instance])
          const client = yield* HttpClient.HttpClient
          const send = (base: string) =>
            client
              .execute(
                HttpClientRequest.get(`${base}${products}`).pipe(
                  HttpClientRequest.setHeaders(keyHeaders(company.apiKey))
                )
              )
              .pipe(Effect.map((r) => r.status))
          const statuses = yield* Effect.all(
            Array.from({ length: 60 }, (_, i) => send(i % 2 === 0 ? one! : two!)),
            { concurrency: 8 }
          )
          expect(count(statuses, 200)).toBe(40)
          expect(count(statuses, 429)).toBe(20)
        }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
      )

      const logs: Array<string> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ logLevel, message }) => logs.push(`${logLevel.label} ${String(message)}`))
      )
      it.effect("Redis going away: requests pass, one line; back: one line, limits apply again", () =>
        Effect.gen(function* () {
          const url = new URL(Option.getOrThrow(redisUrl))
          const relay = yield* tcpRelay({ host: url.hostname, port: Number(url.port || 6379) })
          url.host = `127.0.0.1:${relay.port}`
          // Built in the test's scope, so that the connection outlives this statement.
          const built = yield* Layer.build(rateLimitsOn(redisRateLimiterStore({ url: url.href, prefix })))
          const limits = Context.get(built, RateLimits)
          const take = limits.consume(`outage${Math.random().toString(36).slice(2)}`, "authentication:write", {
            global: { rate: 0.05, burst: 100 },
            "authentication:write": { rate: 0.05, burst: 3 }
          })
          expect((yield* take).allowed).toBe(true)
          expect(logs).toEqual([])

          yield* relay.cut
          const errorsBefore = (yield* Metric.value(storeErrors)).count
          const during = yield* Effect.all(Array.from({ length: 10 }, () => take))
          expect(during.every((d) => d.allowed)).toBe(true)
          expect((yield* Metric.value(storeErrors)).count - errorsBefore).toBe(10)
          expect((yield* Metric.value(failingOpen)).value).toBe(1)
          expect(logs).toHaveLength(1)
          expect(logs[0]).toMatch(
            /^WARN (Redis unreachable at 127\.0\.0\.1:\d+|Rate-limit store unavailable);.* fail open/
          )
          expect(yield* rateLimitsStatus).toMatchObject({ status: "failing_open", checksLetThrough: 10 })

          yield* relay.restore
          yield* eventually(rateLimitsStatus, (s) => s.status === "enforced", "Redis to be reachable again")
          expect(logs).toHaveLength(2)
          expect(logs[1]).toBe(`INFO Redis reachable again at 127.0.0.1:${relay.port}; rate limits apply again`)
          expect((yield* Metric.value(failingOpen)).value).toBe(0)
          // The bucket kept its state: one token taken before the outage, two left.
          const after = yield* Effect.all(Array.from({ length: 3 }, () => take))
          expect(after.map((d) => d.allowed)).toEqual([true, true, false])
        }).pipe(Effect.scoped, Effect.provide(capture))
      )
    }
  )
})
