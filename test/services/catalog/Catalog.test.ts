import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Catalog, PublicUrl } from "../../../src/services/catalog/Catalog.js"
import { availableIn } from "../../../src/services/catalog/CatalogRepo.js"
import { SeededTestDatabase } from "../../support/database.js"

const TestLayer = Catalog.Default.pipe(
  Layer.provide(Layer.succeed(PublicUrl, "http://ribbon.test")),
  Layer.provideMerge(SeededTestDatabase)
)

describe("Catalog", () => {
  it.layer(TestLayer, { timeout: 120_000 })((it) => {
    it.effect("a collection's pages: its products in the collection's order, each with its own summary", () =>
      Effect.gen(function* () {
        const catalog = yield* Catalog
        const sql = yield* SqlClient.SqlClient
        const collections = yield* sql<{ id: string }>`SELECT id FROM collections ORDER BY id LIMIT 6`
        expect(collections.length).toBe(6)
        // Turn every collection's order round, so that it is not the order of the ids: the positions decide.
        yield* sql`UPDATE collection_products SET position = -position`
        for (const { id } of collections) {
          for (const country of ["US", "JP"]) {
            const target = yield* catalog.country(country)
            // The order to expect: the collection's positions, of the products available in the country.
            const ordered = yield* sql<{ id: string }>`
              SELECT p.id FROM collection_products cp JOIN products p ON p.id = cp.product_id
              WHERE cp.collection_id = ${id} AND ${availableIn(sql, target)} ORDER BY cp.position, p.id`
            const seen: Array<string> = []
            let cursor: string | undefined
            do {
              const page = yield* catalog.collection(id, {
                country,
                limit: 4,
                ...(cursor === undefined ? {} : { cursor })
              })
              const ids = page.products.map((p) => p.id)
              expect(page.products).toEqual(yield* catalog.summaries(ids, target))
              seen.push(...ids)
              cursor = page.nextCursor ?? undefined
            } while (cursor !== undefined)
            expect(seen.length).toBeGreaterThan(0)
            expect(seen).toEqual(ordered.map((row) => row.id))
          }
        }
      })
    )

    it.effect(
      "a product's recommendations: the rule read over every product, in order, each with its own summary",
      () =>
        Effect.gen(function* () {
          const catalog = yield* Catalog
          const sql = yield* SqlClient.SqlClient
          // Products in collections (ranked by both rules) and others (by category alone).
          const products = yield* sql<{ id: string }>`
          (SELECT DISTINCT product_id AS id FROM collection_products ORDER BY 1 LIMIT 8)
          UNION ALL (SELECT id FROM products ORDER BY md5(id) LIMIT 8)`
          let recommended = 0
          for (const { id } of products) {
            for (const country of ["US", "GB", "JP"]) {
              const target = yield* catalog.country(country)
              // The rule as docs/catalog.md states it, every product read: the same category or a shared
              // collection (both first), available in the country, then by id; at most 8.
              const expected = yield* sql<{ id: string }>`
              WITH self AS (SELECT id, category_id FROM products WHERE id = ${id}),
              shared AS (SELECT cp2.product_id FROM collection_products cp1
                         JOIN collection_products cp2 ON cp2.collection_id = cp1.collection_id
                         WHERE cp1.product_id = ${id})
              SELECT p.id FROM products p, self
              WHERE p.id <> self.id AND (p.category_id = self.category_id OR p.id IN (SELECT product_id FROM shared))
                AND ${availableIn(sql, target)}
              ORDER BY (p.category_id = self.category_id)::int + (p.id IN (SELECT product_id FROM shared))::int DESC,
                       p.id
              LIMIT 8`
              const ids = yield* catalog.recommendedIds(id, target)
              expect(ids).toEqual(expected.map((row) => row.id))
              const { recommendations } = yield* catalog.product(id, country)
              expect(recommendations).toEqual(yield* catalog.summaries(ids, target))
              recommended += ids.length
            }
          }
          expect(recommended).toBeGreaterThan(0)
        })
    )
  })
})
