import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { personalizationRequired } from "../../../src/domain/catalog/Personalization.js"
import { Seed } from "../../../src/services/catalog/Seed.js"
import { curatedProducts, generatedProduct, swagProducts } from "../../../src/services/catalog/seed/build.js"
import { TestDatabase } from "../../support/database.js"

/** The swag catalog (docs/catalog.md, "Swag"): its base products, personalization, and how the seed adds them. */

const TestLayer = Seed.Default.pipe(
  Layer.provideMerge(TestDatabase),
  Layer.merge(Logger.minimumLogLevel(LogLevel.None))
)

const imprintFields = (required: boolean) => [
  { name: "logoPlacement", label: "Logo placement", type: "choice", required, choices: expect.any(Array) },
  { name: "imprintColour", label: "Imprint colour", type: "choice", required, choices: expect.any(Array) },
  { name: "textLine", label: "Text line", type: "text", required: false, maxLength: expect.any(Number) }
]

describe("the swag base products (pure)", () => {
  it("are branded apparel, drinkware, bags and stationery in the swag catalog, each variant taking a logo", () => {
    const swag = swagProducts()
    expect(swag).toHaveLength(20)
    expect(JSON.stringify(swagProducts())).toEqual(JSON.stringify(swag))
    const categories = new Set(swag.map((p) => p.facts.category))
    expect([...categories].sort()).toEqual(["apparel-swag", "drinkware", "outdoor", "stationery"])
    for (const built of swag) {
      expect(built.product.catalog).toBe("swag")
      expect(built.product.brand_id).toMatch(/^[0-9a-f]{24}$/)
      expect(built.product.min_price_usd).toBeGreaterThan(0)
      for (const variant of built.variants) {
        expect(variant.personalization).toEqual({ fields: imprintFields(true) })
        expect(variant.personalization_required).toBe(true)
        expect(variant.price_usd).toBeGreaterThan(0)
      }
      expect(built.locations.every((l) => l.ships_to.length > 0)).toBe(true)
    }
    const ids = [...curatedProducts(), ...swag].flatMap((p) => [p.product.id, ...p.variants.map((v) => v.id)])
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("personalization says exactly when it is required, on curated and generated variants alike", () => {
    const all = [...curatedProducts(), ...Array.from({ length: 200 }, (_, i) => generatedProduct(i))]
    const variants = all.flatMap((p) => p.variants.map((v) => ({ v, catalog: p.product.catalog })))
    for (const { v, catalog } of variants) {
      expect(v.personalization_required, v.sku).toBe(personalizationRequired(v.personalization))
      // The ready-for-your-logo items of the curated catalog take a logo, but are sold blank too.
      if (catalog === "swag") expect(v.personalization, v.sku).toEqual({ fields: imprintFields(false) })
      else if (v.personalization_required) {
        expect(v.personalization, v.sku).toEqual({
          fields: [{ name: "engraving", label: "Engraving", type: "text", required: true, maxLength: 20 }]
        })
      } else expect(v.personalization, v.sku).toBeNull()
    }
    expect(variants.some(({ v }) => v.personalization_required)).toBe(true)
  })
})

layer(TestLayer, { timeout: 120_000 })("Seed: the swag catalog", (it) => {
  const swagIds = swagProducts().map((p) => p.product.id)

  const state = Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{
      swagMarker: number | null
      swagProducts: number
      products: number
      personalized: number
    }>`
      SELECT (SELECT products FROM catalog_seeds WHERE name = 'swag') AS swag_marker,
             (SELECT count(*)::int FROM products WHERE id IN ${sql.in(swagIds)}) AS swag_products,
             (SELECT count(*)::int FROM products) AS products,
             (SELECT count(*)::int FROM variants WHERE personalization IS NOT NULL) AS personalized`
    return row!
  })

  it.effect("seeds the swag base products with the curated catalog once, stored with their personalization", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const sql = yield* SqlClient.SqlClient
      const first = yield* seed.ensureDemoCatalog()
      expect(first.seeded).toBe(true)
      expect(first.products).toBe(curatedProducts().length + 20)
      const seeded = yield* state
      expect(seeded).toMatchObject({ swagMarker: 20, swagProducts: 20 })
      const again = yield* seed.ensureDemoCatalog()
      expect(again.seeded).toBe(false)
      expect(yield* state).toEqual(seeded)
      const built = swagProducts().flatMap((p) => p.variants)
      const stored = yield* sql<{ id: string; personalization: unknown; personalizationRequired: boolean }>`
        SELECT id, personalization, personalization_required FROM variants WHERE id IN ${sql.in(built.map((v) => v.id))}`
      expect(stored).toHaveLength(built.length)
      for (const row of stored) {
        const variant = built.find((v) => v.id === row.id)!
        expect(row.personalization).toEqual(variant.personalization)
        expect(row.personalizationRequired).toBe(true)
      }
    })
  )

  it.effect("adds them, and the curated variants' personalization, to a database seeded before them; once", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const sql = yield* SqlClient.SqlClient
      yield* seed.ensureDemoCatalog()
      const seeded = yield* state
      // A database as an earlier version left it: the curated catalog, no swag base products, no personalization.
      yield* sql`DELETE FROM products WHERE id IN ${sql.in(swagIds)}`
      yield* sql`DELETE FROM catalog_seeds WHERE name = 'swag'`
      yield* sql`UPDATE variants SET personalization = NULL`
      expect(yield* state).toMatchObject({ swagMarker: null, swagProducts: 0, personalized: 0 })

      const [a, b] = yield* Effect.all([seed.ensureDemoCatalog(), seed.ensureDemoCatalog()], { concurrency: 2 })
      expect([a.seeded, b.seeded].filter(Boolean)).toHaveLength(1)
      expect(yield* state).toEqual(seeded)
      const curated = curatedProducts().flatMap((p) => p.variants.filter((v) => v.personalization !== null))
      const restored = yield* sql<{ id: string; personalization: unknown }>`
        SELECT id, personalization FROM variants WHERE id IN ${sql.in(curated.map((v) => v.id))}`
      expect(new Map(restored.map((r) => [r.id, r.personalization]))).toEqual(
        new Map(curated.map((v) => [v.id, v.personalization]))
      )
      expect((yield* seed.ensureDemoCatalog()).seeded).toBe(false)
    })
  )
})
