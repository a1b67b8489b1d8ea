import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Option, TestClock } from "effect"
import fc from "fast-check"
import {
  convertUsd,
  formatMoney,
  isAvailable,
  type LandedInput,
  landedAmounts,
  landedInput,
  Pricing,
  priceFor,
  usdRangeFor
} from "../../../src/services/catalog/Pricing.js"
import { Seed } from "../../../src/services/catalog/Seed.js"
import { TestDatabase } from "../../support/database.js"
import { eventually } from "../../support/eventually.js"

const TestLayer = Layer.mergeAll(Pricing.Default, Seed.Default).pipe(
  Layer.provideMerge(TestDatabase),
  Layer.merge(Logger.minimumLogLevel(LogLevel.None))
)

const fee = { rateBps: 500, minUsd: 199, maxUsd: 2499 }

describe("convertUsd", () => {
  it("rounds half-up to the destination's minor unit, exactly", () => {
    expect(convertUsd(4000, "151.50", 0)).toBe(6060)
    expect(convertUsd(2899, "151.50", 0)).toBe(4392) // 4391.985
    expect(convertUsd(199, "151.50", 0)).toBe(301) // 301.485
    expect(convertUsd(1, "0.5", 2)).toBe(1) // 0.5 → 1 (half-up)
    expect(convertUsd(1, "0.49", 2)).toBe(0)
    expect(convertUsd(100, "1345", 0)).toBe(1345) // KRW, zero-decimal
    expect(convertUsd(12345, "3.6725", 2)).toBe(45337) // 453.370125
  })
})

describe("worked examples (pure core, docs/pricing.md)", () => {
  it("a $40 mug from the US warehouse to Japan, under the de-minimis: ¥10,755", () => {
    const amounts = landedAmounts({
      itemUsd: 4000,
      isDigital: false,
      shippingUsd: 2899, // US → asia_pacific, medium
      dutyBps: 1400, // drinkware 4 % + Japan 10 %
      domestic: false,
      deMinimis: 10_000,
      fee,
      fxRate: "151.50",
      digits: 0
    })
    expect(amounts).toEqual({ item: 6060, shipping: 4392, duties: 0, serviceFee: 303, total: 10_755 })
    expect(formatMoney(amounts.total, "JPY", "ja-JP").display).toBe("￥10,755")
  })

  it("a $50 e-gift card to Germany: no shipping, no duties, €48.30", () => {
    const amounts = landedAmounts({
      itemUsd: 5000,
      isDigital: true,
      shippingUsd: 0,
      dutyBps: 1900,
      domestic: false,
      deMinimis: 15_000,
      fee,
      fxRate: "0.92",
      digits: 2
    })
    expect(amounts).toEqual({ item: 4600, shipping: 0, duties: 0, serviceFee: 230, total: 4830 })
    expect(formatMoney(4830, "EUR", "de-DE").display).toBe("48,30\u00a0€")
  })

  it("$199 headphones from the US to the UK, over the de-minimis: duties and the fee, £217.04", () => {
    const amounts = landedAmounts({
      itemUsd: 19_900,
      isDigital: false,
      shippingUsd: 2599, // US → europe_other, medium
      dutyBps: 2000, // tech 0 % + UK VAT 20 %
      domestic: false,
      deMinimis: 13_500,
      fee,
      fxRate: "0.79",
      digits: 2
    })
    expect(amounts).toEqual({ item: 15_721, shipping: 2053, duties: 3144, serviceFee: 786, total: 21_704 })
    expect(formatMoney(amounts.total, "GBP", "en-GB").display).toBe("£217.04")
  })

  it("the fee is clamped to its minimum and maximum; domestic shipments pay no duties", () => {
    const base: LandedInput = {
      itemUsd: 1000,
      isDigital: false,
      shippingUsd: 499,
      dutyBps: 2100,
      domestic: true,
      deMinimis: 0,
      fee,
      fxRate: "1",
      digits: 2
    }
    expect(landedAmounts(base)).toEqual({ item: 1000, shipping: 499, duties: 0, serviceFee: 199, total: 1698 })
    expect(landedAmounts({ ...base, itemUsd: 100_000 }).serviceFee).toBe(2499)
    expect(landedAmounts({ ...base, domestic: false }).duties).toBe(210)
  })
})

const arbitraryInput: fc.Arbitrary<LandedInput> = fc.record({
  itemUsd: fc.integer({ min: 1, max: 5_000_000 }),
  isDigital: fc.boolean(),
  shippingUsd: fc.integer({ min: 0, max: 20_000 }),
  dutyBps: fc.integer({ min: 0, max: 5000 }),
  domestic: fc.boolean(),
  deMinimis: fc.integer({ min: 0, max: 2_000_000 }),
  fee: fc
    .record({ rateBps: fc.integer({ min: 0, max: 2000 }), minUsd: fc.integer({ min: 0, max: 1000 }) })
    .chain(({ rateBps, minUsd }) =>
      fc.integer({ min: minUsd, max: minUsd + 10_000 }).map((maxUsd) => ({ rateBps, minUsd, maxUsd }))
    ),
  fxRate: fc.constantFrom("1", "0.79", "0.92", "151.50", "1345", "3.6725", "83.30", "10.45"),
  digits: fc.constantFrom(0, 2, 3)
})

describe("properties of the pure core", () => {
  it("total is the sum of its parts; every amount is a non-negative integer", () => {
    fc.assert(
      fc.property(arbitraryInput, (input) => {
        const a = landedAmounts(input)
        for (const v of Object.values(a)) expect(Number.isSafeInteger(v) && v >= 0).toBe(true)
        expect(a.total).toBe(a.item + a.shipping + a.duties + a.serviceFee)
      }),
      { numRuns: 2000 }
    )
  })

  it("digital items have zero shipping and duties", () => {
    fc.assert(
      fc.property(arbitraryInput, (input) => {
        const a = landedAmounts({ ...input, isDigital: true })
        expect(a.shipping).toBe(0)
        expect(a.duties).toBe(0)
      })
    )
  })

  it("the total is monotonic in the item price", () => {
    fc.assert(
      fc.property(arbitraryInput, fc.integer({ min: 0, max: 1_000_000 }), (input, more) => {
        const lower = landedAmounts(input)
        const higher = landedAmounts({ ...input, itemUsd: input.itemUsd + more })
        expect(higher.item).toBeGreaterThanOrEqual(lower.item)
        expect(higher.total).toBeGreaterThanOrEqual(lower.total)
      }),
      { numRuns: 2000 }
    )
  })
})

describe("usdRangeFor", () => {
  it("gives exactly the USD amounts whose conversion lies in the range", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5_000_000 }),
        fc.constantFrom("1", "0.79", "0.92", "151.50", "1345", "3.6725", "83.30", "10.45"),
        fc.constantFrom(0, 2, 3),
        // Bounds around the converted amount, where an off-by-one would show.
        fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }),
        fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }),
        (usd, fxRate, digits, minOffset, maxOffset) => {
          const local = convertUsd(usd, fxRate, digits)
          const min = minOffset === undefined ? undefined : Math.max(0, local + minOffset)
          const max = maxOffset === undefined ? undefined : Math.max(0, local + maxOffset)
          const inLocal = (min === undefined || local >= min) && (max === undefined || local <= max)
          const bounds = usdRangeFor({ min, max }, fxRate, digits)
          const inUsd =
            (bounds.min === undefined || usd >= bounds.min) && (bounds.max === undefined || usd <= bounds.max)
          expect(inUsd).toBe(inLocal)
        }
      ),
      { numRuns: 5000 }
    )
    // At the edges: 1 JPY is 0.66 cents at 151.50, so ¥1–¥2 is 1 cent (¥2 rounds from 1.515).
    expect(usdRangeFor({ min: 1, max: 2 }, "151.50", 0)).toEqual({ min: 1, max: 1 })
    expect(usdRangeFor({ min: 0, max: 0 }, "151.50", 0)).toEqual({ min: 0, max: 0 })
  })
})

layer(TestLayer, { timeout: 120_000 })("Pricing on the seeded catalog", (it) => {
  it.effect(
    "an expired copy of the reference data is served inside a transaction while a background read replaces it",
    () =>
      Effect.gen(function* () {
        const pricing = yield* Pricing
        const sql = yield* SqlClient.SqlClient
        yield* pricing.invalidateReference
        const first = yield* pricing.reference()
        yield* TestClock.adjust("2 minutes")
        // The transaction holds the pool's one connection: the copy is served, not read again behind it.
        expect(yield* sql.withTransaction(pricing.reference())).toBe(first)
        const clock = yield* Effect.clock
        yield* eventually(
          Effect.withClock(pricing.reference(), clock),
          (reference) => reference !== first,
          "the background read"
        )
      })
  )

  const seeded = Effect.flatMap(Seed, (seed) => seed.ensureDemoCatalog())

  const variantOf = (title: string, position = 0) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ id: string }>`
        SELECT v.id FROM variants v JOIN products p ON p.id = v.product_id
        WHERE p.title = ${title} AND v.position = ${position}`
      return rows[0]!.id
    })

  it.effect("quote: the $40 mug to JP and a $50 gift card to DE, through the database", () =>
    Effect.gen(function* () {
      yield* seeded
      const pricing = yield* Pricing
      const mug = yield* pricing.quote(yield* variantOf("Ceramic Coffee Mug"), "jp")
      expect(mug.countryCode).toBe("JP")
      expect(mug.breakdown.item).toMatchObject({ amount: 6060, currency: "JPY", display: "￥6,060" })
      expect(mug.breakdown.shipping.amount).toBe(4392)
      expect(mug.breakdown.duties.amount).toBe(0)
      expect(mug.breakdown.serviceFee.amount).toBe(303)
      expect(mug.price).toEqual(mug.breakdown.total)
      expect(mug.price).toMatchObject({ amount: 10_755, display: "￥10,755" })

      // "Marketplace E-Gift Card": $25, $50, $100; position 1 is $50.
      const card = yield* pricing.quote(yield* variantOf("Marketplace E-Gift Card", 1), "DE")
      expect(card.available).toBe(true)
      expect(card.breakdown.item.amount).toBe(4600)
      expect(card.breakdown.shipping.amount).toBe(0)
      expect(card.breakdown.duties.amount).toBe(0)
      expect(card.price).toMatchObject({ amount: 4830, currency: "EUR", display: "48,30\u00a0€" })
    })
  )

  it.effect("availability: in stock AND ships there; unknown variants and countries fail", () =>
    Effect.gen(function* () {
      yield* seeded
      const pricing = yield* Pricing
      const sql = yield* SqlClient.SqlClient
      const all = yield* pricing.availability(yield* variantOf("Ceramic Coffee Mug"))
      const countries = yield* pricing.countries()
      expect(all.map((a) => a.countryCode)).toEqual(countries.map((c) => c.code))

      const [outOfStock] = yield* sql<{ variantId: string }>`
        SELECT variant_id FROM variant_locations WHERE stock = 0 LIMIT 1`
      const none = yield* pricing.availability(outOfStock.variantId)
      expect(none.every((a) => !a.available)).toBe(true)

      // Bouquets ship only inside their warehouse's customs area.
      const [bouquet] = yield* sql<{ variantId: string; shipsTo: Array<string> }>`
        SELECT l.variant_id, l.ships_to FROM variant_locations l
        JOIN variants v ON v.id = l.variant_id JOIN products p ON p.id = v.product_id
        WHERE p.title = 'Seasonal Bouquet' AND l.stock > 0 LIMIT 1`
      const entries = yield* pricing.availability(bouquet.variantId, ["US", "JP"])
      expect(entries.map((e) => [e.countryCode, e.available])).toEqual([
        ["US", bouquet.shipsTo.includes("US")],
        ["JP", false]
      ])

      const missing = yield* Effect.flip(pricing.quote("ffffffffffffffffffffffff", "US"))
      expect(missing._tag).toBe("NotFound")
      const unsupported = yield* Effect.flip(pricing.availability(bouquet.variantId, ["ZZ"]))
      expect(unsupported._tag).toBe("InvalidRequest")
    })
  )

  it.effect("every seeded variant × every country: sum of parts, integers, digital rules, availability", () =>
    Effect.gen(function* () {
      yield* seeded
      const pricing = yield* Pricing
      const reference = yield* pricing.reference()
      const variants = yield* pricing.variants(Option.none())
      expect(variants.length).toBeGreaterThan(600)
      // Collected rather than asserted one by one: ~25 000 entries, and `expect` is slow in a hot loop.
      const problems: Array<string> = []
      const check = (ok: boolean, what: string) => {
        if (!ok && problems.length < 20) problems.push(what)
      }
      let checked = 0
      for (const variant of variants) {
        const { priceUsd } = variant
        check(priceUsd !== null, `${variant.variantId} has no price`)
        if (priceUsd === null) continue
        for (const country of reference.countries) {
          const at = `${variant.variantId} → ${country.code}`
          const entry = priceFor(reference, { ...variant, priceUsd }, country)
          const b = entry.breakdown
          for (const m of [b.item, b.shipping, b.duties, b.serviceFee, b.total]) {
            check(Number.isSafeInteger(m.amount) && m.amount >= 0, `${at}: amount ${m.amount}`)
            check(m.currency === country.currency, `${at}: currency ${m.currency}`)
          }
          check(
            b.total.amount === b.item.amount + b.shipping.amount + b.duties.amount + b.serviceFee.amount,
            `${at}: total is not the sum`
          )
          check(entry.price === b.total, `${at}: price is not the total`)
          if (variant.isDigital) check(b.shipping.amount === 0 && b.duties.amount === 0, `${at}: digital charged`)
          else check(b.shipping.amount > 0, `${at}: free shipping`)
          if (landedInput(reference, { ...variant, priceUsd }, country).domestic) {
            check(b.duties.amount === 0, `${at}: domestic duties`)
          }
          check(entry.available === isAvailable(variant, country.code), `${at}: availability`)
          checked++
        }
      }
      expect(problems).toEqual([])
      expect(checked).toBe(variants.length * reference.countries.length)

      // And the service agrees with the pure core for a sample.
      const sample = variants.filter((_, i) => i % 97 === 0)
      for (const variant of sample) {
        const viaService = yield* pricing.availability(variant.variantId)
        expect(viaService).toEqual(
          reference.countries.map((c) => priceFor(reference, { ...variant, priceUsd: variant.priceUsd! }, c))
        )
      }
    })
  )

  it.effect("monotonic in the item price for seeded variants and countries (fast-check over the catalog)", () =>
    Effect.gen(function* () {
      yield* seeded
      const pricing = yield* Pricing
      const reference = yield* pricing.reference()
      const variants = yield* pricing.variants(Option.none())
      fc.assert(
        fc.property(
          fc.constantFrom(...variants),
          fc.constantFrom(...reference.countries),
          fc.integer({ min: 0, max: 100_000 }),
          (variant, country, more) => {
            const at = (priceUsd: number) => priceFor(reference, { ...variant, priceUsd }, country).price.amount
            expect(at(variant.priceUsd! + more)).toBeGreaterThanOrEqual(at(variant.priceUsd!))
          }
        ),
        { numRuns: 3000 }
      )
    })
  )
})
