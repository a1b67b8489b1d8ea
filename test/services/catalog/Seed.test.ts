import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { Seed } from "../../../src/services/catalog/Seed.js"
import { curatedCollections, curatedProducts, generatedProduct } from "../../../src/services/catalog/seed/build.js"
import { TestDatabase } from "../../support/database.js"

const TestLayer = Seed.Default.pipe(
  Layer.provideMerge(TestDatabase),
  Layer.merge(Logger.minimumLogLevel(LogLevel.None))
)

describe("the curated catalog (pure)", () => {
  it("is deterministic: same rows and ids on every build", () => {
    const a = curatedProducts()
    const b = curatedProducts()
    expect(JSON.stringify(b)).toEqual(JSON.stringify(a))
    expect(JSON.stringify(generatedProduct(41))).toEqual(JSON.stringify(generatedProduct(41)))
  })

  it("has 24-hex ids, unique across products and variants", () => {
    const products = curatedProducts()
    const ids = [...products.map((p) => p.product.id), ...products.flatMap((p) => p.variants.map((v) => v.id))]
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{24}$/)
    expect(new Set(ids).size).toBe(ids.length)
    const collections = curatedCollections(products)
    for (const c of collections.collections) expect(c.id).toMatch(/^[0-9a-f]{24}$/)
  })
})

layer(TestLayer, { timeout: 120_000 })("Seed", (it) => {
  it.effect("ensureDemoCatalog seeds a realistic catalog once; concurrent callers seed exactly once", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const sql = yield* SqlClient.SqlClient
      const [first, second] = yield* Effect.all([seed.ensureDemoCatalog(), seed.ensureDemoCatalog()], {
        concurrency: 2
      })
      expect([first.seeded, second.seeded].filter(Boolean)).toHaveLength(1)
      const third = yield* seed.ensureDemoCatalog()
      expect(third.seeded).toBe(false)
      expect(third).toMatchObject({ products: first.products, variants: first.variants })
      expect(first.products).toBeGreaterThanOrEqual(300)
      expect(first.collections).toBeGreaterThanOrEqual(25)
      expect(first.tags).toBeGreaterThanOrEqual(40)
      expect(first.countries).toBeGreaterThanOrEqual(20)

      const [facts] = yield* sql<{
        categories: number
        usedCategories: number
        currencies: number
        hasJpy: boolean
        digital: number
        multiVariant: number
        singleVariant: number
        outOfStock: number
        restricted: number
        personalized: number
        noBrand: number
        swag: number
        emptySearch: number
        collectionsWithoutProducts: number
        usedTags: number
        dutyRates: number
        shippingRates: number
        feeRules: number
      }>`
        SELECT
          (SELECT count(*)::int FROM categories) AS categories,
          (SELECT count(DISTINCT category_id)::int FROM products) AS used_categories,
          (SELECT count(DISTINCT currency)::int FROM countries) AS currencies,
          EXISTS (SELECT 1 FROM countries WHERE currency = 'JPY') AS has_jpy,
          (SELECT count(*)::int FROM variants WHERE is_digital) AS digital,
          (SELECT count(*)::int FROM (SELECT product_id FROM variants GROUP BY 1 HAVING count(*) > 1) m) AS multi_variant,
          (SELECT count(*)::int FROM (SELECT product_id FROM variants GROUP BY 1 HAVING count(*) = 1) s) AS single_variant,
          (SELECT count(*)::int FROM variant_locations WHERE stock = 0) AS out_of_stock,
          (SELECT count(*)::int FROM variant_locations
             WHERE cardinality(ships_to) < (SELECT count(*) FROM countries)) AS restricted,
          (SELECT count(*)::int FROM variants WHERE personalization_required) AS personalized,
          (SELECT count(*)::int FROM products WHERE brand_id IS NULL) AS no_brand,
          (SELECT count(*)::int FROM products WHERE catalog = 'swag') AS swag,
          (SELECT count(*)::int FROM products WHERE search_document = ''::tsvector) AS empty_search,
          (SELECT count(*)::int FROM collections c
             WHERE NOT EXISTS (SELECT 1 FROM collection_products cp WHERE cp.collection_id = c.id))
            AS collections_without_products,
          (SELECT count(DISTINCT tag_id)::int FROM product_tags) AS used_tags,
          (SELECT count(*)::int FROM duty_rates) AS duty_rates,
          (SELECT count(*)::int FROM shipping_rates) AS shipping_rates,
          (SELECT count(*)::int FROM service_fee_rules) AS fee_rules`
      expect(facts.categories).toBeGreaterThanOrEqual(12)
      expect(facts.usedCategories).toBe(facts.categories)
      expect(facts.currencies).toBeGreaterThanOrEqual(8)
      expect(facts.hasJpy).toBe(true)
      expect(facts.digital).toBeGreaterThan(0)
      expect(facts.multiVariant).toBeGreaterThan(0)
      expect(facts.singleVariant).toBeGreaterThan(0)
      expect(facts.outOfStock).toBeGreaterThan(0)
      expect(facts.restricted).toBeGreaterThan(0)
      expect(facts.personalized).toBeGreaterThan(0)
      expect(facts.noBrand).toBeGreaterThan(0)
      expect(facts.swag).toBeGreaterThan(0)
      expect(facts.emptySearch).toBe(0)
      expect(facts.collectionsWithoutProducts).toBe(0)
      expect(facts.usedTags).toBeGreaterThanOrEqual(40)
      expect(facts.dutyRates).toBe(facts.categories * first.countries)
      expect(facts.shippingRates).toBeGreaterThan(0)
      expect(facts.feeRules).toBe(1)

      // The weighted document finds a product by a title word, a brand word and a tag.
      const hits = yield* sql<{ title: string }>`
        SELECT title FROM products
        WHERE search_document @@ websearch_to_tsquery('english', 'mug')
        ORDER BY ts_rank(search_document, websearch_to_tsquery('english', 'mug')) DESC LIMIT 5`
      expect(hits.map((h) => h.title).join(" ")).toMatch(/Mug/)
      const typo = yield* sql<{ title: string }>`
        SELECT title FROM products WHERE lower(title) % 'ceramic cofee mug' ORDER BY similarity(lower(title), 'ceramic cofee mug') DESC LIMIT 1`
      expect(typo[0]?.title).toMatch(/Ceramic Coffee Mug/)
    })
  )

  it.effect("generate adds deterministic synthetic products in batches, and resumes", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const sql = yield* SqlClient.SqlClient
      const progress: Array<number> = []
      const before = yield* seed.counts
      const first = yield* seed.generate(250, (done) => Effect.sync(() => progress.push(done)), 100)
      expect(first).toEqual({ added: 250, total: 250 })
      expect(progress).toEqual([0, 100, 200, 250])
      const again = yield* seed.generate(300, () => Effect.void, 100)
      expect(again).toEqual({ added: 50, total: 300 })
      const after = yield* seed.counts
      expect(after.products).toBe(before.products + 300)
      const [row] = yield* sql<{ id: string; title: string }>`
        SELECT id, title FROM products WHERE id = ${generatedProduct(299).product.id}`
      expect(row?.title).toBe(generatedProduct(299).product.title)
    })
  )

  it.effect("writes each product's listing columns as its variants, images and tags are (migration 0020)", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const sql = yield* SqlClient.SqlClient
      yield* seed.ensureDemoCatalog()
      yield* seed.generate(120, () => Effect.void, 50)
      const counted = yield* sql<{ products: number; digital: number; imaged: number; tagged: number }>`
        SELECT count(*)::int AS products,
               count(*) FILTER (WHERE physical_variant_count = 0)::int AS digital,
               count(*) FILTER (WHERE jsonb_array_length(image_urls) > 0)::int AS imaged,
               count(*) FILTER (WHERE cardinality(tag_ids) > 0)::int AS tagged
        FROM products`
      expect(counted[0]?.products).toBeGreaterThan(120)
      expect(counted[0]?.digital).toBeGreaterThan(0)
      expect(counted[0]?.imaged).toBe(counted[0]?.products)
      expect(counted[0]?.tagged).toBe(counted[0]?.products)
      const mismatched = yield* sql<{ id: string }>`
        SELECT p.id FROM products p
        WHERE p.variant_count <> (SELECT count(*) FROM variants v WHERE v.product_id = p.id)
           OR p.physical_variant_count <> (SELECT count(*) FROM variants v WHERE v.product_id = p.id AND NOT v.is_digital)
           OR p.image_urls <> (SELECT coalesce(jsonb_agg(i.url ORDER BY i.position), '[]') FROM product_images i
                               WHERE i.product_id = p.id)
           OR NOT (p.tag_ids @> (SELECT coalesce(array_agg(t.tag_id), '{}') FROM product_tags t WHERE t.product_id = p.id)
                   AND p.tag_ids <@ (SELECT coalesce(array_agg(t.tag_id), '{}') FROM product_tags t WHERE t.product_id = p.id))`
      expect(mismatched).toEqual([])
    })
  )

  it.effect("writes where each product ships as its ships_to_mask, copied to its term rows (migration 0022)", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const sql = yield* SqlClient.SqlClient
      yield* seed.ensureDemoCatalog()
      yield* seed.generate(120, () => Effect.void, 50)
      // One bit per country, in the order of the codes.
      const bits = yield* sql<{ code: string; maskBit: number }>`SELECT code, mask_bit FROM countries ORDER BY code`
      expect(bits.map((c) => c.maskBit)).toEqual(bits.map((_, i) => i))
      const masks = yield* sql<{ everywhere: number; somewhere: number; nowhere: number }>`
        SELECT count(*) FILTER (WHERE ships_to_mask = (1 << (SELECT count(*)::int FROM countries)) - 1)::int AS everywhere,
               count(*) FILTER (WHERE ships_to_mask <> 0 AND ships_to_mask <> (1 << (SELECT count(*)::int FROM countries)) - 1)::int AS somewhere,
               count(*) FILTER (WHERE ships_to_mask = 0)::int AS nowhere
        FROM products`
      expect(masks[0]?.everywhere).toBeGreaterThan(0)
      expect(masks[0]?.somewhere).toBeGreaterThan(0)
      expect(masks[0]?.nowhere).toBe(0)
      const mismatched = yield* sql<{ id: string }>`
        SELECT p.id FROM products p
        WHERE p.ships_to_mask <> (
          SELECT coalesce(bit_or(1 << c.mask_bit), 0)
          FROM variants v JOIN variant_locations l ON l.variant_id = v.id JOIN countries c ON c.code = ANY (l.ships_to)
          WHERE v.product_id = p.id AND v.price_usd IS NOT NULL)
        UNION ALL
        SELECT t.product_id FROM search_terms t JOIN products p ON p.id = t.product_id
        WHERE t.ships_to_mask <> p.ships_to_mask`
      expect(mismatched).toEqual([])
    })
  )
})
