import { createServer } from "node:http"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Config, Context, Effect, Layer, Logger, Metric, Option } from "effect"
import { Redis } from "ioredis"
import type { RateLimitOverrides } from "../../../src/domain/company/Company.js"
import { redisRateLimiterStore } from "../../../src/layers/Redis.js"
import { serveApi } from "../../../src/layers/Server.js"
import { Companies } from "../../../src/services/company/Companies.js"
import { RateLimits, storeErrors } from "../../../src/services/platform/RateLimits.js"
import { CompanyServicesLive, createCompany, getWith, keyHeaders, postWith } from "../../support/company.js"
import { FixtureCompanyLive, rateLimitsOn, serveFixture } from "../../support/companyFixture.js"
import { TestDatabase } from "../../support/database.js"
import { testMaxBodyBytes } from "../../support/http.js"

/**
 * Per-company rate limits on Redis (REDIS_URL; skipped without it), in real time since the store reads
 * the time from Redis: the memory suite's checks, and two servers sharing one Redis.
 */

const products = "/public-api/v3/fixture/products"
const keysWrite = "/public-api/v3/fixture/keys"

const setLimits = (companyId: string, overrides: RateLimitOverrides) =>
  Effect.flatMap(Companies, (c) => c.setRateLimits(companyId, overrides)).pipe(
    Effect.provide(CompanyServicesLive),
    Effect.orDie
  )

/** Sends `n` requests one after another; the statuses in order. */
const burst = (n: number, send: () => Effect.Effect<{ status: number }, unknown, any>) =>
  Effect.forEach(Array.from({ length: n }), () => Effect.map(send(), (r) => r.status))

const count = (statuses: ReadonlyArray<number>, status: number) => statuses.filter((s) => s === status).length

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

      it.effect("with Redis unreachable the limiter fails open, logging a warning", () =>
        Effect.gen(function* () {
          const down = rateLimitsOn(redisRateLimiterStore({ url: "redis://127.0.0.1:1", prefix }))
          const before = (yield* Metric.value(storeErrors)).count
          const logs: Array<string> = []
          const capture = Logger.replace(
            Logger.defaultLogger,
            Logger.make(({ logLevel, message }) => logs.push(`${logLevel.label} ${String(message)}`))
          )
          const decision = yield* Effect.flatMap(RateLimits, (r) =>
            r.consume("somecompany", "marketplace:read", {})
          ).pipe(Effect.provide(down), Effect.provide(capture))
          expect(decision.allowed).toBe(true)
          expect(logs).toContain("WARN Rate-limit store unavailable; letting the request through")
          expect((yield* Metric.value(storeErrors)).count - before).toBe(2)
        })
      )
    }
  )
})
