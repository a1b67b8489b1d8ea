import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { SearchResult, type SearchSort } from "../../../src/domain/catalog/Search.js"
import { Catalog, PublicUrl } from "../../../src/services/catalog/Catalog.js"
import { convertBetween, Search, type SearchParams } from "../../../src/services/catalog/Search.js"
import { SeededTestDatabase } from "../../support/database.js"

const TestLayer = Layer.mergeAll(Search.Default, Catalog.Default).pipe(
  Layer.provide(Layer.succeed(PublicUrl, "http://ribbon.test")),
  Layer.provideMerge(SeededTestDatabase)
)

/** Every product a search returns, walking every page with `limit`. */
const walk = (params: SearchParams, limit: number) =>
  Effect.gen(function* () {
    const search = yield* Search
    const ids: Array<string> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = yield* search.search({ ...params, limit, ...(cursor === undefined ? {} : { cursor }) })
      ids.push(...page.products.map((p) => p.id))
      cursor = page.nextCursor ?? undefined
      pages++
    } while (cursor !== undefined && pages < 100)
    return ids
  })

/**
 * The documented score of plain words (docs/search.md), from the term rows, every word's row joined: exact title
 * 10^8, a match 10^7, the tier of the weakest place a word matched, the words' average weight, the title's
 * brevity. Every match available in `country`, best first.
 */
const scoredByFormula = (q: string, country: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string }>`
      SELECT p.id FROM products p
      JOIN LATERAL (SELECT min(t.weight) AS weakest, count(*) AS words, max(t.title_words) AS title_words,
                           sum((ARRAY[80000, 160000, 320000, 800000])[t.weight + 1]) AS weights
                    FROM search_terms t
                    WHERE t.product_id = p.id AND t.lexeme = ANY (tsvector_to_array(to_tsvector('english', ${q})))) t
        ON t.words = array_length(tsvector_to_array(to_tsvector('english', ${q})), 1)
      WHERE p.search_document @@ websearch_to_tsquery('english', ${q})
        AND EXISTS (SELECT 1 FROM variants v JOIN variant_locations l ON l.variant_id = v.id
                    WHERE v.product_id = p.id AND v.price_usd IS NOT NULL AND (l.stock IS NULL OR l.stock > 0)
                      AND l.ships_to @> ARRAY[${country}])
      ORDER BY CASE WHEN lower(p.title) = lower(${q}) THEN 100000000 ELSE 0 END + 10000000
               + (ARRAY[0, 1000000, 3000000, 6000000])[t.weakest + 1]
               + t.weights / t.words
               + 100000 / (1 + t.title_words) DESC, p.id`
    return rows.map((r) => r.id)
  })

describe("convertBetween", () => {
  it("converts minor units between currencies through their USD rates, half-up", () => {
    const usd = { fxRate: "1.00000000", digits: 2 }
    const gbp = { fxRate: "0.79000000", digits: 2 }
    const jpy = { fxRate: "151.50000000", digits: 0 }
    expect(convertBetween(4000, usd, jpy)).toBe(6060)
    expect(convertBetween(2000, gbp, usd)).toBe(2532) // 25.3164…
    expect(convertBetween(6060, jpy, usd)).toBe(4000)
    expect(convertBetween(0, jpy, gbp)).toBe(0)
  })
})

describe("Search", () => {
  it.layer(TestLayer, { timeout: 120_000 })((it) => {
    it.effect("ranks an exact title match first", () =>
      Effect.gen(function* () {
        const search = yield* Search
        // "Hand-Thrown Ceramic Coffee Mug" also contains every word; the exact title wins.
        const { products } = yield* search.search({ q: "ceramic coffee mug" })
        expect(products[0]?.title).toBe("Ceramic Coffee Mug")
        expect(products.map((p) => p.title)).toContain("Hand-Thrown Ceramic Coffee Mug")
        const binoculars = yield* search.search({ q: "Binoculars" })
        expect(binoculars.products[0]?.title).toBe("Binoculars")
      })
    )

    it.effect("finds a product despite a one-letter typo", () =>
      Effect.gen(function* () {
        const search = yield* Search
        for (const [typo, title] of [
          ["binoculers", "Binoculars"],
          ["ceramic cofee mug", "Ceramic Coffee Mug"],
          ["cast iron skilet", "Cast Iron Skillet"],
          ["yoga matt", "Yoga Mat"]
        ] as const) {
          const { products } = yield* search.search({ q: typo })
          expect(
            products.slice(0, 3).map((p) => p.title),
            typo
          ).toContain(title)
        }
      })
    )

    it.effect("ranks tag and brand matches above description-only matches", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // "travel" is a tag and appears only in some descriptions; "lumen" and "studio" are brand words that
        // also appear in other products' descriptions.
        for (const term of ["travel", "lumen", "studio"]) {
          const ids = yield* walk({ q: term }, 50)
          const rows = yield* sql<{ id: string; strong: boolean; descriptionOnly: boolean }>`
            SELECT id,
              ts_filter(search_document, '{a,b,c}') @@ websearch_to_tsquery('english', ${term}) AS strong,
              (ts_filter(search_document, '{d}') @@ websearch_to_tsquery('english', ${term})
               AND NOT ts_filter(search_document, '{a,b,c}') @@ websearch_to_tsquery('english', ${term}))
                AS description_only
            FROM products WHERE id IN ${sql.in(ids)}`
          const kind = new Map(rows.map((r) => [r.id, r]))
          const strong = ids.filter((id) => kind.get(id)?.strong)
          const weak = ids.filter((id) => kind.get(id)?.descriptionOnly)
          expect(strong.length, term).toBeGreaterThan(0)
          expect(weak.length, term).toBeGreaterThan(0)
          const lastStrong = Math.max(...strong.map((id) => ids.indexOf(id)))
          const firstWeak = Math.min(...weak.map((id) => ids.indexOf(id)))
          expect(lastStrong, term).toBeLessThan(firstWeak)
        }
      })
    )

    it.effect("pages with a cursor through every match exactly once, in every sort", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [{ available }] = yield* sql<{ available: number }>`
          SELECT count(*)::int AS available FROM products p
          WHERE EXISTS (SELECT 1 FROM variants v JOIN variant_locations l ON l.variant_id = v.id
                        WHERE v.product_id = p.id AND v.price_usd IS NOT NULL AND (l.stock IS NULL OR l.stock > 0)
                          AND l.ships_to @> ARRAY['US'])`
        expect(available).toBeGreaterThan(200)
        for (const sort of ["newest", "price_asc", "price_desc", "relevance"] as ReadonlyArray<SearchSort>) {
          const ids = yield* walk({ sort }, 23)
          expect(new Set(ids).size, sort).toBe(ids.length)
          expect(ids.length, sort).toBe(available)
        }
        // With words, relevance pages: same set as one big page, each once.
        const paged = yield* walk({ q: "set" }, 7)
        const whole = yield* walk({ q: "set" }, 50)
        expect(paged.length).toBeGreaterThan(14)
        expect(new Set(paged).size).toBe(paged.length)
        expect(paged).toEqual(whole)
      })
    )

    it.effect("finds a page behind candidates that fail their checks, as if every candidate were sorted", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const whole = yield* walk({ q: "set" }, 50)
        expect(whole.length).toBeGreaterThan(14)
        // The ten best stop shipping to the US (their ships_to_mask still says they do): a page of one looks
        // among the first 10 candidates (5 per row it needs), finds none that pass, and must look further.
        const paged = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              yield* sql`
                UPDATE variant_locations SET ships_to = array_remove(ships_to, 'US')
                WHERE variant_id IN (SELECT id FROM variants WHERE product_id IN ${sql.in(whole.slice(0, 10))})`
              return yield* Effect.fail(yield* walk({ q: "set" }, 1)) // and roll back
            })
          )
          .pipe(Effect.flip)
        expect(paged).toEqual(whole.slice(10))
      })
    )

    it.effect("reads one word in rank order, each page as if every match were scored and sorted", () =>
      Effect.gen(function* () {
        for (const q of ["set", "gift", "travel", "studio", "binoculars", "coffee"]) {
          for (const country of ["US", "GB"]) {
            const expected = yield* scoredByFormula(q, country)
            expect(expected.length, q).toBeGreaterThan(0)
            for (const limit of [2, 50])
              expect(yield* walk({ q, country }, limit), `${q} ${country} ${limit}`).toEqual(expected)
          }
        }
        // A respelled word of several lexemes ("teapo": tea, team, teapot) is read in rank order on its first
        // page only; later pages sort every match. The first page, of any size, agrees with the pages after it.
        for (const q of ["teapo", "carr"]) {
          const byOne = yield* walk({ q }, 1)
          expect(byOne.length, q).toBeGreaterThan(10)
          expect(yield* walk({ q }, 4), q).toEqual(byOne)
          expect(yield* walk({ q }, 50), q).toEqual(byOne)
        }
      })
    )

    it.effect("reads several words' title matches first, each page as if every match were scored and sorted", () =>
      Effect.gen(function* () {
        // Pages of 1 need a window of 10 candidates, pages of 4 a window of 25: "gift card" has 22 products
        // with both words in the title, so it is read from its title tier alone while that holds a window after
        // the cursor, and with the tiers below from the page where it runs short; the others run short at once.
        for (const q of ["gift card", "gift box", "team gift", "coffee gift", "coffee mug"]) {
          for (const country of ["US", "GB"]) {
            const expected = yield* scoredByFormula(q, country)
            expect(expected.length, q).toBeGreaterThan(4)
            for (const limit of [1, 4, 50])
              expect(yield* walk({ q, country }, limit), `${q} ${country} ${limit}`).toEqual(expected)
          }
        }
      })
    )

    it.effect("scores a hyphenated word's parts by their own places, as if every word's rows were joined", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // The parts ("self" and "care" of "self-care") are looked up for the other words' candidates, not joined.
        const queries = [
          "self-care",
          "self-care kit",
          "eco-friendly bottle",
          "single-origin coffee",
          "pour-over coffee"
        ]
        const pagesAgree = Effect.forEach(queries, (q) =>
          Effect.gen(function* () {
            const expected = yield* scoredByFormula(q, "US")
            expect(expected.length, q).toBeGreaterThan(1)
            for (const limit of [1, 50]) expect(yield* walk({ q }, limit), `${q} ${limit}`).toEqual(expected)
          })
        )
        yield* pagesAgree
        // A part in a better place than its word: "care" in the title of a product whose "self-care" is below it
        // (a tag), beside a product with "kit" alone in its title. The part's own place, the title, puts the first
        // above the second for "self-care kit"; scored at any one weight, the second's shorter title wins.
        const moved = yield* sql<{ id: string }>`
          SELECT p.id FROM products p JOIN search_terms t ON t.product_id = p.id AND t.lexeme = 'self-car'
          WHERE t.weight < 3 ORDER BY p.id LIMIT 2`
        expect(moved.length, "products with self-care below their title").toBe(2)
        const retitle = (id: string, title: string) =>
          sql`UPDATE products SET title = ${title},
                search_document = setweight(to_tsvector('english', ${title}), 'A') || ts_filter(search_document, '{b,c,d}')
              WHERE id = ${id}`
        const error = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              yield* retitle(moved[0]!.id, "Care Kit")
              yield* retitle(moved[1]!.id, "Kit")
              const care = yield* sql<{ productId: string; weight: number }>`
                SELECT product_id, weight FROM search_terms WHERE product_id IN ${sql.in(moved.map((m) => m.id))}
                  AND lexeme = 'care' ORDER BY product_id`
              expect(care.map((row) => row.weight)).toEqual([3, 1])
              const ranked = yield* walk({ q: "self-care kit" }, 50)
              expect(ranked.indexOf(moved[0]!.id)).toBeGreaterThanOrEqual(0)
              expect(ranked.indexOf(moved[0]!.id)).toBeLessThan(ranked.indexOf(moved[1]!.id))
              yield* pagesAgree
              return yield* Effect.fail("roll back" as const)
            })
          )
          .pipe(Effect.flip)
        expect(error).toBe("roll back")
      })
    )

    it.effect("orders by price and keeps the order across pages", () =>
      Effect.gen(function* () {
        const search = yield* Search
        const first = yield* search.search({ sort: "price_asc", limit: 10, country: "GB" })
        const second = yield* search.search({ sort: "price_asc", limit: 10, country: "GB", cursor: first.nextCursor! })
        const mins = [...first.products, ...second.products].map((p) => p.priceRange!.min.amount)
        expect(mins).toEqual([...mins].sort((a, b) => a - b))
        const desc = yield* search.search({ sort: "price_desc", limit: 10 })
        const dmins = desc.products.map((p) => p.priceRange!.min.amount)
        expect(dmins).toEqual([...dmins].sort((a, b) => b - a))
      })
    )

    it.effect("refuses a cursor made for another ordering", () =>
      Effect.gen(function* () {
        const search = yield* Search
        const page = yield* search.search({ sort: "price_asc", limit: 5 })
        const error = yield* Effect.flip(search.search({ sort: "newest", cursor: page.nextCursor! }))
        expect(error._tag).toBe("InvalidRequest")
        expect(error._tag === "InvalidRequest" && error.errors[0]?.path).toBe("cursor")
      })
    )

    it.effect(
      "finds exactly the products whose document matches the words, in every order, plain or with operators",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          for (const q of [
            "coffee",
            "leather notebook",
            "pour-over coffee",
            "gift set",
            '"coffee mug"',
            "mug -ceramic",
            "tea or coffee"
          ]) {
            const expected = yield* sql<{ id: string }>`
            SELECT p.id FROM products p
            WHERE p.search_document @@ websearch_to_tsquery('english', ${q})
              AND EXISTS (SELECT 1 FROM variants v JOIN variant_locations l ON l.variant_id = v.id
                          WHERE v.product_id = p.id AND v.price_usd IS NOT NULL AND (l.stock IS NULL OR l.stock > 0)
                            AND l.ships_to @> ARRAY['US'])`
            expect(expected.length, q).toBeGreaterThan(0)
            for (const sort of ["relevance", "price_asc", "price_desc", "newest"] as ReadonlyArray<SearchSort>) {
              const paged = yield* walk({ q, sort }, 9)
              expect(new Set(paged).size, `${q} ${sort}`).toBe(paged.length)
              expect([...paged].sort(), `${q} ${sort}`).toEqual(expected.map((r) => r.id).sort())
              if (sort === "price_asc" || sort === "price_desc") {
                const prices = yield* sql<{ id: string; minPriceUsd: number }>`
                  SELECT id, min_price_usd FROM products WHERE id IN ${sql.in(paged)}`
                const price = new Map(prices.map((r) => [r.id, r.minPriceUsd]))
                const inOrder = paged.map((id) => price.get(id)!)
                const sorted = [...inOrder].sort((a, b) => (sort === "price_asc" ? a - b : b - a))
                expect(inOrder, `${q} ${sort}`).toEqual(sorted)
              }
            }
          }
        })
    )

    it.effect("narrows word matches to a collection and to tags, exactly", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [collection] = yield* sql<{ id: string }>`
          SELECT collection_id AS id FROM collection_products GROUP BY collection_id ORDER BY count(*) DESC LIMIT 1`
        const [tag] = yield* sql<{ id: string }>`
          SELECT tag_id AS id FROM product_tags GROUP BY tag_id ORDER BY count(*) DESC LIMIT 1`
        let matched = 0
        for (const q of ["gift", "set", "coffee"]) {
          const expected = yield* sql<{ id: string }>`
            SELECT p.id FROM products p
            WHERE p.search_document @@ websearch_to_tsquery('english', ${q})
              AND p.id IN (SELECT product_id FROM collection_products WHERE collection_id = ${collection!.id})
              AND p.id IN (SELECT product_id FROM product_tags WHERE tag_id = ${tag!.id})
              AND EXISTS (SELECT 1 FROM variants v JOIN variant_locations l ON l.variant_id = v.id
                          WHERE v.product_id = p.id AND v.price_usd IS NOT NULL AND (l.stock IS NULL OR l.stock > 0)
                            AND l.ships_to @> ARRAY['US'])`
          const found = yield* walk({ q, collectionId: collection!.id, tagIds: [tag!.id] }, 3)
          expect([...found].sort(), q).toEqual(expected.map((r) => r.id).sort())
          matched += found.length
        }
        expect(matched).toBeGreaterThan(3)
        // Without words, a small collection is listed from its members: every order, every page, exactly once.
        const members = yield* sql<{ id: string }>`
          SELECT p.id FROM collection_products cp JOIN products p ON p.id = cp.product_id
          WHERE cp.collection_id = ${collection!.id}
            AND EXISTS (SELECT 1 FROM variants v JOIN variant_locations l ON l.variant_id = v.id
                        WHERE v.product_id = p.id AND v.price_usd IS NOT NULL AND (l.stock IS NULL OR l.stock > 0)
                          AND l.ships_to @> ARRAY['US'])`
        for (const sort of ["newest", "price_asc", "price_desc"] as ReadonlyArray<SearchSort>) {
          const paged = yield* walk({ collectionId: collection!.id, sort }, 4)
          expect(paged, sort).toEqual(yield* walk({ collectionId: collection!.id, sort }, 50))
          expect([...paged].sort(), sort).toEqual(members.map((r) => r.id).sort())
        }
      })
    )

    it.effect("answers each page with its products' own summaries, already in their JSON form", () =>
      Effect.gen(function* () {
        const search = yield* Search
        const catalog = yield* Catalog
        const sql = yield* SqlClient.SqlClient
        const [collection] = yield* sql<{ id: string }>`
          SELECT collection_id AS id FROM collection_products GROUP BY collection_id ORDER BY count(*) LIMIT 1`
        const [tag] = yield* sql<{ id: string }>`
          SELECT tag_id AS id FROM product_tags GROUP BY tag_id ORDER BY count(*) DESC LIMIT 1`
        // Every way a page is read: one word in rank order, several words' titles first, a respelled word,
        // phrases, listings by every order, within a collection's few members or a big tag, and a later page.
        const searches: ReadonlyArray<SearchParams> = [
          { q: "mug" },
          { q: "ceramic coffee mug", country: "GB" },
          { q: "binoculers" },
          { q: '"coffee mug" -travel' },
          { sort: "newest", limit: 7 },
          { sort: "price_asc", minPrice: 2000, maxPrice: 9000, country: "JP" },
          { sort: "price_desc", collectionId: collection!.id },
          { q: "gift", tagIds: [tag!.id], limit: 5 }
        ]
        let pages = 0
        for (const params of searches) {
          const first = yield* search.search(params)
          const later = first.nextCursor === null ? [] : [yield* search.search({ ...params, cursor: first.nextCursor })]
          for (const result of [first, ...later]) {
            const label = JSON.stringify(params)
            const country = yield* catalog.country(result.appliedFilters.country)
            const ids = result.products.map((p) => p.id)
            expect(result.products, label).toEqual(yield* catalog.summaries(ids, country))
            // `/v1/search` sends the result as built: encoding it through its schema must change nothing.
            expect(JSON.stringify(result), label).toBe(JSON.stringify(Schema.encodeSync(SearchResult)(result)))
            if (ids.length > 0) pages++
          }
        }
        expect(pages).toBeGreaterThanOrEqual(searches.length + 3)
      })
    )

    it.effect("respells words that match nothing, and says so in appliedFilters", () =>
      Effect.gen(function* () {
        const search = yield* Search
        const sql = yield* SqlClient.SqlClient
        // Words that match are searched as typed: no look-alike joins them.
        const mug = yield* search.search({ q: "mug" })
        expect(mug.appliedFilters.spelling).toBeNull()
        const mugs = yield* walk({ q: "mug" }, 50)
        const [{ unmatched }] = yield* sql<{ unmatched: number }>`
          SELECT count(*)::int AS unmatched FROM products
          WHERE id IN ${sql.in(mugs)} AND NOT search_document @@ websearch_to_tsquery('english', 'mug')`
        expect(unmatched).toBe(0)
        // A misspelled word is respelled as the known words spelled like it; the results page like any other.
        const typo = yield* search.search({ q: "binoculers", limit: 1 })
        expect(typo.products[0]?.title).toBe("Binoculars")
        expect(typo.appliedFilters.spelling).toBe("binoculars")
        expect(yield* walk({ q: "binoculers" }, 1)).toEqual(yield* walk({ q: "binoculers" }, 50))
        const mugTypo = yield* search.search({ q: "ceramic cofee mug" })
        expect(mugTypo.products[0]?.title).toBe("Ceramic Coffee Mug")
        expect(mugTypo.appliedFilters.spelling).toBe("ceramic coffee mug")
        // Nothing is spelled like nonsense: no results, and no error.
        const nonsense = yield* search.search({ q: "zzzz qqqq" })
        expect(nonsense.products).toEqual([])
        expect(nonsense.appliedFilters.spelling).toBe("zzzz qqqq")
      })
    )

    it.effect("keeps the term index in step with every write of a product", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const search = yield* Search
        const [product] = yield* sql<{ id: string; title: string }>`
          SELECT id, title FROM products WHERE title = 'Binoculars'`
        yield* sql`
          UPDATE products SET title = 'Vantablue Binoculars',
            search_document = setweight(to_tsvector('english', 'Vantablue Binoculars'), 'A')
          WHERE id = ${product!.id}`
        const found = yield* search.search({ q: "vantablue" })
        expect(found.products.map((p) => p.id)).toEqual([product!.id])
        const [{ terms }] = yield* sql<{ terms: ReadonlyArray<string> }>`
          SELECT array_agg(lexeme ORDER BY lexeme) AS terms FROM search_terms WHERE product_id = ${product!.id}`
        expect(terms).toEqual(["binocular", "vantablu"])
      })
    )

    it.effect("filters by item price in the country's currency, on variants available there", () =>
      Effect.gen(function* () {
        const search = yield* Search
        const sql = yield* SqlClient.SqlClient
        const ids = yield* walk({ country: "JP", minPrice: 5000, maxPrice: 8000 }, 50)
        expect(ids.length).toBeGreaterThan(0)
        for (const id of ids) {
          const rows = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM variants v JOIN variant_locations l ON l.variant_id = v.id
            WHERE v.product_id = ${id} AND (l.stock IS NULL OR l.stock > 0) AND l.ships_to @> ARRAY['JP']
              AND round(v.price_usd * 151.5 / 100) BETWEEN 5000 AND 8000`
          expect(rows[0]!.n).toBeGreaterThan(0)
        }
        const flowers = yield* search.search({ q: "bouquet", country: "US" })
        const flowersJp = yield* search.search({ q: "bouquet", country: "JP" })
        // Flowers ship only within their warehouse's customs area.
        expect(flowersJp.products.length).toBeLessThan(flowers.products.length)
      })
    )
  })
})
