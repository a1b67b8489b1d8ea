import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createCompany, getWith, keyHeaders, postWith, raiseLimits, v2Keys } from "../../support/company.js"
import { SeededTestServer, testPublicUrl } from "../../support/http.js"

/**
 * The v2 catalog reads over real HTTP (docs/decisions/0044-v2-catalog-reads.md, docs/catalog.md): budgets in major
 * units judged against the landed total, `skip`/`limit`, the v2 error bodies, and prices only for keys that may
 * read them.
 */

const products = "/public-api/v2/products"
const variants = "/public-api/v2/variants"

const hex24 = expect.stringMatching(/^[0-9a-f]{24}$/)
const invalid = (path: string, message: string) => ({ path, errorCode: "INVALID_REQUEST", message })

/** A key of the company with only `permissions`. */
const keyWith = (apiKey: string, permissions: ReadonlyArray<string>) =>
  Effect.map(
    postWith(v2Keys, { name: `k-${Math.random()}`, permissions }, keyHeaders(apiKey)),
    (response) => response.body.apiKey as string
  )

/** A company whose first key holds every permission, with limits that never bite. */
const setup = Effect.gen(function* () {
  const company = yield* createCompany()
  yield* raiseLimits(company.companyId)
  return { ...company, headers: keyHeaders(company.apiKey) }
})

/** Every product of a budget query, page by page. */
const walk = (query: string, headers: Record<string, string>, limit = 100) =>
  Effect.gen(function* () {
    const all: Array<any> = []
    for (let skip = 0; ; skip += limit) {
      const page = yield* getWith(`${products}?${query}&skip=${skip}&limit=${limit}`, headers)
      expect(page.status).toBe(200)
      expect(page.body).toMatchObject({ skip, limit })
      all.push(...page.body.results)
      if (page.body.results.length < limit) return all
    }
  })

const landedSumsUp = (pricing: any, currency: string) => {
  expect(pricing).toEqual({
    cost: { amount: expect.any(Number), currency },
    totalFee: { amount: expect.any(Number), currency },
    totalTax: { amount: expect.any(Number), currency },
    totalFinalCost: { amount: expect.any(Number), currency }
  })
  expect(pricing.cost.amount + pricing.totalFee.amount + pricing.totalTax.amount).toBe(pricing.totalFinalCost.amount)
}

describe("catalog (/public-api/v2)", () => {
  it.layer(SeededTestServer, { timeout: 180_000 })((it) => {
    it.effect("lists products within a landed budget in dollars: every field, newest first, variants that fit", () =>
      Effect.gen(function* () {
        const { headers } = yield* setup
        const response = yield* getWith(`${products}?budget=40`, headers)
        expect(response.status).toBe(200)
        expect(response.body).toMatchObject({ skip: 0, limit: 20 })
        expect(response.body.results).toHaveLength(20)
        for (const product of response.body.results) {
          expect(product).toEqual({
            id: hex24,
            title: expect.any(String),
            brand: product.brand === null ? null : { id: hex24, name: expect.any(String) },
            types: expect.arrayContaining([expect.stringMatching(/^(physical|digital)$/)]),
            mediaItems: expect.any(Array),
            variants: expect.any(Array)
          })
          for (const media of product.mediaItems) {
            expect(media).toEqual({ type: "image", url: expect.stringMatching(`^${testPublicUrl}/images/products/`) })
          }
          expect(product.variants.length).toBeGreaterThan(0)
          for (const variant of product.variants) {
            expect(variant).toEqual({
              id: hex24,
              productId: product.id,
              title: expect.any(String),
              optionAttributes: expect.any(Object),
              mediaItems: expect.any(Array),
              types: [expect.stringMatching(/^(physical|digital)$/)],
              pricing: { US: expect.any(Object) },
              supportedCountries: expect.arrayContaining(["US"])
            })
            expect(product.types).toContain(variant.types[0])
            expect(variant.mediaItems.length).toBeGreaterThan(0)
            landedSumsUp(variant.pricing.US, "USD")
            expect(variant.pricing.US.totalFinalCost.amount).toBeLessThanOrEqual(4000)
          }
        }
        // Newest first: the same order as the catalog's creation times.
        const sql = yield* SqlClient.SqlClient
        const ids = response.body.results.map((p: any) => p.id)
        const rows = yield* sql<{ id: string }>`
          SELECT id FROM products WHERE id IN ${sql.in(ids)} ORDER BY created_at DESC, id DESC`
        expect(rows.map((r) => r.id)).toEqual(ids)
      })
    )

    it.effect("pages with skip and limit over every product exactly once", () =>
      Effect.gen(function* () {
        const { headers } = yield* setup
        const whole = yield* walk("budget=60&minBudget=20", headers, 100)
        const paged = yield* walk("budget=60&minBudget=20", headers, 7)
        expect(paged.map((p) => p.id)).toEqual(whole.map((p) => p.id))
        expect(new Set(whole.map((p) => p.id)).size).toBe(whole.length)
        for (const variant of whole.flatMap((p) => p.variants)) {
          expect(variant.pricing.US.totalFinalCost.amount).toBeGreaterThanOrEqual(2000)
          expect(variant.pricing.US.totalFinalCost.amount).toBeLessThanOrEqual(6000)
        }
        const past = yield* getWith(`${products}?budget=60&minBudget=20&skip=${whole.length}`, headers)
        expect(past.body).toEqual({ results: [], skip: whole.length, limit: 20 })
      })
    )

    it.effect("judges the budget against the landed total in yen and in pounds, to the minor unit", () =>
      Effect.gen(function* () {
        const { headers } = yield* setup
        for (const [country, currency, digits, budget] of [
          ["JP", "JPY", 0, 8000],
          ["gb", "GBP", 2, 45]
        ] as const) {
          const code = country.toUpperCase()
          const listed = yield* walk(`budget=${budget}&country=${country}`, headers)
          expect(listed.length, code).toBeGreaterThan(0)
          const found = listed.flatMap((p) => p.variants)
          for (const variant of found) {
            expect(Object.keys(variant.pricing)).toEqual([code])
            landedSumsUp(variant.pricing[code], currency)
            expect(variant.pricing[code].totalFinalCost.amount).toBeLessThanOrEqual(budget * 10 ** digits)
            expect(variant.supportedCountries).toContain(code)
          }
          // The dearest variant that fits: a budget of exactly its landed total lists it, one minor unit less not.
          const dearest = found.reduce((a, b) =>
            b.pricing[code].totalFinalCost.amount > a.pricing[code].totalFinalCost.amount ? b : a
          )
          const total: number = dearest.pricing[code].totalFinalCost.amount
          const major = (amount: number) => (amount / 10 ** digits).toFixed(digits)
          const exactly = yield* getWith(
            `${products}?budget=${major(total)}&minBudget=${major(total)}&country=${country}&limit=100`,
            headers
          )
          const exactIds = exactly.body.results.flatMap((p: any) => p.variants.map((v: any) => v.id))
          expect(exactIds, code).toContain(dearest.id)
          for (const product of exactly.body.results) {
            for (const v of product.variants) expect(v.pricing[code].totalFinalCost.amount).toBe(total)
          }
          const under = yield* getWith(`${products}?budget=${major(total - 1)}&country=${country}&limit=100`, headers)
          expect(under.body.results.flatMap((p: any) => p.variants.map((v: any) => v.id))).not.toContain(dearest.id)
        }
      })
    )

    it.effect("narrows to a collection, in the collection's order; an unknown collection is a 404", () =>
      Effect.gen(function* () {
        const { headers } = yield* setup
        const sql = yield* SqlClient.SqlClient
        const [collection] = yield* sql<{ id: string }>`
          SELECT id FROM collections WHERE slug = 'team-swag'`
        const members = yield* sql<{ productId: string }>`
          SELECT product_id FROM collection_products WHERE collection_id = ${collection!.id} ORDER BY position`
        const listed = yield* walk(`budget=20000&collectionId=${collection!.id}`, headers)
        expect(listed.length).toBeGreaterThan(0)
        const order = members.map((m) => m.productId)
        expect(listed.map((p) => p.id)).toEqual(order.filter((id) => listed.some((p) => p.id === id)))
        const unknown = yield* getWith(`${products}?budget=50&collectionId=${"0".repeat(24)}`, headers)
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual({
          status: 404,
          errorCode: "NOT_FOUND",
          message: `No collection ${"0".repeat(24)}.`
        })
      })
    )

    it.effect("lists the swag base products like any other, priced and available", () =>
      Effect.gen(function* () {
        const { headers } = yield* setup
        const listed = yield* walk("budget=200", headers)
        const titles = listed.map((p) => p.title)
        for (const title of [
          "Classic Crew Tee",
          "Insulated Tumbler 20 oz",
          "Recycled Canvas Tote",
          "Spiral Notebook"
        ]) {
          expect(titles).toContain(title)
        }
        const tee = listed.find((p) => p.title === "Classic Crew Tee")
        expect(tee.brand).toEqual({ id: hex24, name: expect.any(String) })
        expect(tee.variants[0].optionAttributes).toEqual({ size: expect.any(String), colour: expect.any(String) })
      })
    )

    it.effect("refuses each bad parameter with a v2 400 naming it, and ignores unknown ones", () =>
      Effect.gen(function* () {
        const { headers } = yield* setup
        const budgetRange = "Expected a number from 1 to 20000"
        const budgetFormat = "Expected a number from 1 to 20000 in the major units of the country's currency"
        const cases: ReadonlyArray<readonly [string, ReturnType<typeof invalid>]> = [
          ["", invalid("budget", "budget: is missing")],
          ["budget=", invalid("budget", `budget: ${budgetFormat}`)],
          ["budget=0", invalid("budget", `budget: ${budgetRange}`)],
          ["budget=0.99", invalid("budget", `budget: ${budgetRange}`)],
          ["budget=20000.01", invalid("budget", `budget: ${budgetRange}`)],
          ["budget=20001", invalid("budget", `budget: ${budgetRange}`)],
          ["budget=-5", invalid("budget", `budget: ${budgetFormat}`)],
          ["budget=ten", invalid("budget", `budget: ${budgetFormat}`)],
          ["budget=1e3", invalid("budget", `budget: ${budgetFormat}`)],
          ["budget=50&minBudget=0", invalid("minBudget", `minBudget: ${budgetRange}`)],
          ["budget=50&minBudget=60", invalid("minBudget", "minBudget: Must not be more than budget.")],
          ["budget=50&country=ZZ", invalid("country", "country: ZZ is not a supported country.")],
          ["budget=50&country=USA", invalid("country", "country: Expected an ISO 3166-1 alpha-2 country code")],
          ["budget=50&collectionId=team-swag", invalid("collectionId", expect.stringMatching(/^collectionId: /))],
          ["budget=50&limit=0", invalid("limit", "limit: Expected an integer from 1 to 100")],
          ["budget=50&limit=101", invalid("limit", "limit: Expected an integer from 1 to 100")],
          ["budget=50&limit=ten", invalid("limit", expect.stringMatching(/^limit: /))],
          ["budget=50&skip=-1", invalid("skip", expect.stringMatching(/^skip: /))]
        ]
        for (const [query, body] of cases) {
          const response = yield* getWith(`${products}?${query}`, headers)
          expect(response.status, query).toBe(400)
          expect(response.body, query).toEqual(body)
        }
        const ignored = yield* getWith(`${products}?budget=50&limit=2&sort=title&foo=bar`, headers)
        expect(ignored.status).toBe(200)
        expect(ignored.body.results).toHaveLength(2)
        const edges = yield* getWith(`${products}?budget=20000&minBudget=1&limit=100&skip=0`, headers)
        expect(edges.status).toBe(200)
        expect(edges.body.results).toHaveLength(100)
      })
    )

    it.effect("reads a variant priced for a country; not orderable there → no pricing; unknown → 404", () =>
      Effect.gen(function* () {
        const { headers } = yield* setup
        const [fromList] = (yield* getWith(`${products}?budget=10000&country=JP&limit=1`, headers)).body.results
        const listed = fromList.variants[0]
        const variant = yield* getWith(`${variants}/${listed.id}?country=jp`, headers)
        expect(variant.status).toBe(200)
        expect(variant.body).toEqual(listed)
        landedSumsUp(variant.body.pricing.JP, "JPY")
        // Default country: US.
        const us = yield* getWith(`${variants}/${listed.id}`, headers)
        expect(Object.keys(us.body.pricing)).toEqual(us.body.supportedCountries.includes("US") ? ["US"] : [])

        const sql = yield* SqlClient.SqlClient
        const [domestic] = yield* sql<{ id: string }>`
          SELECT v.id FROM variants v JOIN variant_locations l ON l.variant_id = v.id
          WHERE v.price_usd IS NOT NULL AND NOT ('JP' = ANY (l.ships_to)) AND 'US' = ANY (l.ships_to)
            AND (l.stock IS NULL OR l.stock > 0)
          ORDER BY v.id LIMIT 1`
        const nowhere = yield* getWith(`${variants}/${domestic!.id}?country=JP`, headers)
        expect(nowhere.status).toBe(200)
        expect(nowhere.body.pricing).toEqual({})
        expect(nowhere.body.supportedCountries).toContain("US")
        expect(nowhere.body.supportedCountries).not.toContain("JP")
        const [soldOut] = yield* sql<{ id: string }>`
          SELECT variant_id AS id FROM variant_locations WHERE stock = 0 ORDER BY variant_id LIMIT 1`
        const empty = yield* getWith(`${variants}/${soldOut!.id}`, headers)
        expect(empty.body).toMatchObject({ pricing: {}, supportedCountries: [] })

        const unknown = yield* getWith(`${variants}/${"f".repeat(24)}`, headers)
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual({ status: 404, errorCode: "NOT_FOUND", message: `No variant ${"f".repeat(24)}.` })
        const badCountry = yield* getWith(`${variants}/${listed.id}?country=XX`, headers)
        expect(badCountry.status).toBe(400)
        expect(badCountry.body).toEqual(invalid("country", "country: XX is not a supported country."))
      })
    )

    it.effect("shows pricing only to a key with products:read:prices, and needs products:read", () =>
      Effect.gen(function* () {
        const { apiKey, headers } = yield* setup
        const withPrices = yield* getWith(`${products}?budget=30&limit=3`, headers)
        const plain = yield* keyWith(apiKey, ["products:read"])
        const list = yield* getWith(`${products}?budget=30&limit=3`, keyHeaders(plain))
        expect(list.status).toBe(200)
        // The same products and variants (the budget still applies), without pricing.
        const strip = (results: ReadonlyArray<any>) =>
          results.map((p) => ({ ...p, variants: p.variants.map(({ pricing: _, ...v }: any) => v) }))
        expect(list.body.results).toEqual(strip(withPrices.body.results))
        for (const variant of list.body.results.flatMap((p: any) => p.variants))
          expect(variant).not.toHaveProperty("pricing")
        const one = yield* getWith(`${variants}/${list.body.results[0].variants[0].id}`, keyHeaders(plain))
        expect(one.status).toBe(200)
        expect(one.body).not.toHaveProperty("pricing")

        const pricesOnly = yield* keyWith(apiKey, ["products:read:prices"])
        for (const url of [`${products}?budget=30`, `${variants}/${"f".repeat(24)}`]) {
          const denied = yield* getWith(url, keyHeaders(pricesOnly))
          expect(denied.status, url).toBe(403)
          expect(denied.body, url).toEqual({
            status: 403,
            errorCode: "FORBIDDEN",
            message: "This API key lacks the products:read permission."
          })
        }
        const anonymous = yield* getWith(`${products}?budget=30`, {})
        expect(anonymous.status).toBe(401)
        expect(anonymous.body).toMatchObject({ status: 401, errorCode: "UNAUTHORIZED" })
      })
    )
  })
})
