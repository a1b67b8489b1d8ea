import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { TokenBuckets } from "../../../src/services/platform/RateLimits.js"
import { createCompany, getWith, keyHeaders, postWith } from "../../support/company.js"
import { serveFixture } from "../../support/companyFixture.js"
import { TestDatabase } from "../../support/database.js"
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
 * Per-company rate limits (docs/decisions/0034-company-rate-limits.md) through the API-key middleware, on the memory
 * store driven by TestClock (rateLimitsRedis.test.ts runs them on Redis).
 */

const productsV2 = "/public-api/v2/fixture/products"

describe("rate limits, memory store", () => {
  it.layer(serveFixture(TokenBuckets.layerMemory).pipe(Layer.provideMerge(TestDatabase)), { timeout: 120_000 })(
    (it) => {
      it.effect("200 requests pass at once, the 201st is a 429 with Retry-After; refill is 25 per second", () =>
        Effect.gen(function* () {
          const company = yield* createCompany()
          const headers = keyHeaders(company.apiKey)
          const first = yield* getWith(products, headers)
          expect(first.status).toBe(200)
          expect(first.headers.ratelimit).toBe('"global";r=199;t=1')
          expect(first.headers["ratelimit-policy"]).toBe('"global";q=200;w=8, "marketplace:read";q=200;w=8')
          const statuses = yield* burst(199, () => getWith(products, headers))
          expect(count(statuses, 200)).toBe(199)

          const refused = yield* getWith(products, headers)
          expect(refused.status).toBe(429)
          expect(refused.body).toEqual({ status: 429, message: expect.any(String) })
          expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1)
          expect(refused.headers["ratelimit-policy"]).toContain('"global";q=200;w=8')
          expect(refused.headers.ratelimit).toMatch(/;r=0;/)
          const v2 = yield* getWith(productsV2, headers)
          expect(v2.status).toBe(429)
          expect(v2.body).toEqual({ status: 429, message: expect.any(String) })

          yield* TestClock.adjust("1 second")
          const refilled = yield* burst(26, () => getWith(products, headers))
          expect(count(refilled, 200)).toBe(25)
          expect(refilled.at(-1)).toBe(429)
        })
      )

      it.effect("the authentication write class (5/s, burst 10) bites before the global bucket", () =>
        Effect.gen(function* () {
          const company = yield* createCompany()
          const headers = keyHeaders(company.apiKey)
          const statuses = yield* burst(11, () => postWith(keysWrite, {}, headers))
          expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200))
          const refused = yield* postWith(keysWrite, {}, headers)
          expect(refused.status).toBe(429)
          expect(refused.headers.ratelimit).toMatch(/^"authentication:write";r=0;t=\d+$/)
          expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1)
          // The global bucket still has room: reads of another class pass.
          expect((yield* getWith(products, headers)).status).toBe(200)
          yield* TestClock.adjust("1 second")
          const refilled = yield* burst(6, () => postWith(keysWrite, {}, headers))
          expect(count(refilled, 200)).toBe(5)
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

      it.effect("two companies do not share buckets; a company's override raises its limits", () =>
        Effect.gen(function* () {
          const a = yield* createCompany()
          const b = yield* createCompany()
          expect(count(yield* burst(201, () => getWith(products, keyHeaders(a.apiKey))), 429)).toBe(1)
          expect((yield* getWith(products, keyHeaders(b.apiKey))).status).toBe(200)

          const raised = yield* createCompany()
          yield* setLimits(raised.companyId, {
            global: { rate: 100, burst: 300 },
            "marketplace:read": { rate: 100, burst: 300 }
          })
          const statuses = yield* burst(301, () => getWith(products, keyHeaders(raised.apiKey)))
          expect(count(statuses, 200)).toBe(300)
          expect(statuses.at(-1)).toBe(429)
        })
      )
    }
  )
})
