import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import type { LandedProduct } from "../../../src/domain/catalog/Landed.js"
import { PublicUrl } from "../../../src/services/catalog/Catalog.js"
import { type BudgetQuery, LandedCatalog } from "../../../src/services/catalog/LandedCatalog.js"
import { isAvailable, Pricing, priceFor } from "../../../src/services/catalog/Pricing.js"
import { Seed } from "../../../src/services/catalog/Seed.js"
import { TestDatabase } from "../../support/database.js"

/**
 * The landed budget is judged in SQL: every variant it lists, in every country tried, is priced exactly as
 * Pricing prices it, and the listing holds exactly the variants Pricing finds orderable within the budget.
 */

const TestLayer = Layer.mergeAll(LandedCatalog.Default, Pricing.Default, Seed.Default).pipe(
  Layer.provide(Layer.succeed(PublicUrl, "http://ribbon.test")),
  Layer.provideMerge(TestDatabase),
  Layer.merge(Logger.minimumLogLevel(LogLevel.None))
)

/** Every page of a budget query. */
const walk = (query: Omit<BudgetQuery, "skip" | "limit">) =>
  Effect.gen(function* () {
    const landed = yield* LandedCatalog
    const all: Array<LandedProduct> = []
    for (let skip = 0; ; skip += 100) {
      const { products } = yield* landed.products({ ...query, skip, limit: 100 })
      all.push(...products)
      if (products.length < 100) return all
    }
  })

layer(TestLayer, { timeout: 120_000 })("LandedCatalog", (it) => {
  it.effect("lists exactly the variants orderable within the budget, priced as Pricing prices them", () =>
    Effect.gen(function* () {
      yield* Effect.flatMap(Seed, (seed) => seed.ensureDemoCatalog())
      const pricing = yield* Pricing
      const reference = yield* pricing.reference()
      const variants = yield* pricing.variants()
      // USD and EUR cover the whole catalog at the top budget; JPY and KRW (no minor unit) a band of it; GB and
      // BR import from both warehouses with duties over their de-minimis.
      const cases: ReadonlyArray<readonly [string, number, number]> = [
        ["US", 1, 20_000],
        ["DE", 1, 20_000],
        ["GB", 25.5, 80.25],
        ["BR", 1, 20_000],
        ["JP", 3000, 12_000],
        ["KR", 15_000, 20_000]
      ]
      for (const [code, minBudget, budget] of cases) {
        const country = reference.country.get(code)!
        const scale = 10 ** country.digits
        const expected = new Map(
          variants.flatMap((v) => {
            if (v.priceUsd === null || !isAvailable(v, code)) return []
            const total = priceFor(reference, { ...v, priceUsd: v.priceUsd }, country).breakdown.total.amount
            return total >= minBudget * scale && total <= budget * scale ? [[v.variantId, total] as const] : []
          })
        )
        const listed = yield* walk({ budget, minBudget, country: code })
        const found = listed.flatMap((p) => p.variants)
        expect(found.length, code).toBeGreaterThan(0)
        expect(new Set(found.map((v) => v.id)).size, code).toBe(found.length)
        expect(new Set(listed.map((p) => p.id)).size, code).toBe(listed.length)
        expect(new Map(found.map((v) => [v.id, v.price?.total.amount])), code).toEqual(expected)
        for (const variant of found) {
          const v = variants.find((x) => x.variantId === variant.id)!
          const breakdown = priceFor(reference, { ...v, priceUsd: v.priceUsd! }, country).breakdown
          expect(variant.price, `${code} ${variant.id}`).toEqual({
            item: { amount: breakdown.item.amount, currency: country.currency },
            shipping: { amount: breakdown.shipping.amount, currency: country.currency },
            duties: { amount: breakdown.duties.amount, currency: country.currency },
            serviceFee: { amount: breakdown.serviceFee.amount, currency: country.currency },
            total: { amount: breakdown.total.amount, currency: country.currency }
          })
          expect(variant.availableIn, variant.id).toContain(code)
        }
      }
    })
  )
})
