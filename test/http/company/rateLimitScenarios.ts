import { expect } from "@effect/vitest"
import { Effect } from "effect"
import type { RateLimitOverrides } from "../../../src/domain/company/Company.js"
import { Companies } from "../../../src/services/company/Companies.js"
import { CompanyServicesLive, createCompany, getWith, keyHeaders, postWith } from "../../support/company.js"

/**
 * Rate-limit checks that hold on every store, run by the memory suite (rateLimits.test.ts) and the Redis
 * one (rateLimitsRedis.test.ts). The refill is one token per 20 s, so that no token comes back while a
 * check runs in real time.
 */

export const products = "/public-api/v3/fixture/products"
export const keysWrite = "/public-api/v3/fixture/keys"

const slow = (burst: number) => ({ rate: 0.05, burst })

export const setLimits = (companyId: string, overrides: RateLimitOverrides) =>
  Effect.flatMap(Companies, (c) => c.setRateLimits(companyId, overrides)).pipe(
    Effect.provide(CompanyServicesLive),
    Effect.orDie
  )

/** Sends `n` requests one after another; the statuses in order. */
export const burst = (n: number, send: () => Effect.Effect<{ status: number }, unknown, any>) =>
  Effect.forEach(Array.from({ length: n }), () => Effect.map(send(), (r) => r.status))

export const count = (statuses: ReadonlyArray<number>, status: number) => statuses.filter((s) => s === status).length

/** Refusals by a class bucket take nothing from the global bucket: another class still gets through. */
export const classRefusalsKeepGlobalTokens = Effect.gen(function* () {
  const company = yield* createCompany()
  const headers = keyHeaders(company.apiKey)
  yield* setLimits(company.companyId, {
    global: slow(20),
    "marketplace:read": slow(5),
    "authentication:write": slow(30)
  })
  const reads = yield* burst(30, () => getWith(products, headers))
  expect(count(reads, 200)).toBe(5)
  expect(count(reads, 429)).toBe(25)
  const refused = yield* getWith(products, headers)
  expect(refused.status).toBe(429)
  expect(refused.headers.ratelimit).toMatch(/^"marketplace:read";r=0;t=\d+$/)
  expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1)
  // The global bucket gave only the 5 admitted reads' tokens, and this write's: 14 left, the fewest.
  const write = yield* postWith(keysWrite, {}, headers)
  expect(write.status).toBe(200)
  expect(write.headers.ratelimit).toMatch(/^"global";r=14;t=\d+$/)
})

/**
 * Concurrent reads and writes (class bursts 5 and 10) under a global burst of 12: exactly 12 pass, since
 * no refused request spends a global token and no two requests take the same one.
 */
export const concurrentRequestsStayWithinTheBurst = Effect.gen(function* () {
  const company = yield* createCompany()
  const headers = keyHeaders(company.apiKey)
  yield* setLimits(company.companyId, {
    global: slow(12),
    "marketplace:read": slow(5),
    "authentication:write": slow(10)
  })
  const send = (i: number) =>
    Effect.map(i % 2 === 0 ? getWith(products, headers) : postWith(keysWrite, {}, headers), (r) => ({
      read: i % 2 === 0,
      status: r.status
    }))
  const results = yield* Effect.all(
    Array.from({ length: 40 }, (_, i) => send(i)),
    { concurrency: "unbounded" }
  )
  const admitted = results.filter((r) => r.status === 200)
  expect(admitted.length).toBe(12)
  expect(results.filter((r) => r.status !== 200).every((r) => r.status === 429)).toBe(true)
  expect(admitted.filter((r) => r.read).length).toBeLessThanOrEqual(5)
  expect(admitted.filter((r) => !r.read).length).toBeLessThanOrEqual(10)
})
