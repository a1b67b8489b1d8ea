import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { ProductListV3 } from "../../../src/http/catalog/CatalogV3Api.js"
import { Catalog, PublicUrl } from "../../../src/services/catalog/Catalog.js"
import { convertUsd, minorDigits, Pricing } from "../../../src/services/catalog/Pricing.js"
import { Companies } from "../../../src/services/company/Companies.js"
import { CompanyServicesLive, createCompany, getWith, keyHeaders, postWith, v2Keys } from "../../support/company.js"
import { type RawResponse, SeededTestServer, testPublicUrl } from "../../support/http.js"

/**
 * The catalog on the company API, version 3 (docs/decisions/0042-v3-catalog.md), over real HTTP on the seeded demo
 * catalog: every query rule with its exact 400, keyset cursors that walk the whole catalog once in order under each
 * sort, prices in the country's currency, and the permissions that guard the catalog and its prices.
 */

const products = "/public-api/v3/products"
const collections = "/public-api/v3/collections"
const productTags = "/public-api/v3/product-tags"

const sqlClient = SqlClient.SqlClient

/** The v3 400 envelope naming each parameter, in order. */
const badRequest = (...paths: ReadonlyArray<string>) => ({
  message: expect.stringMatching(new RegExp(`^${paths[0]!.replace(/[[\]]/g, "\\$&")}: `)),
  errorCode: "400_PBLC_001",
  errors: paths.map((path) => ({ path, errorCode: "400_PBLC_001", message: expect.any(String) }))
})

const v3Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })

/** A company with its first key (every permission) and limits that never bite here. */
const company = Effect.gen(function* () {
  const created = yield* createCompany()
  const unlimited = { rate: 10_000, burst: 10_000 }
  yield* Effect.flatMap(Companies, (companies) =>
    companies.setRateLimits(created.companyId, { global: unlimited, "marketplace:read": unlimited })
  ).pipe(Effect.provide(CompanyServicesLive), Effect.orDie)
  return {
    ...created,
    headers: keyHeaders(created.apiKey),
    inAccount: keyHeaders(created.apiKey, { "ribbon-account-id": created.accountId })
  }
})

/** A further key of the company holding only `permissions`. */
const keyWith = (apiKey: string, permissions: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const created = yield* postWith(v2Keys, { name: `key ${permissions.join(" ")}`, permissions }, keyHeaders(apiKey))
    expect(created.status).toBe(200)
    return created.body.apiKey as string
  })

/** Every item of a list, following `links.next` verbatim from `url`. */
const walk = (url: string, headers: Record<string, string>) =>
  Effect.gen(function* () {
    const items: Array<any> = []
    let next: string | null = url
    while (next !== null) {
      const page: RawResponse = yield* getWith(next, headers)
      expect(page.status, JSON.stringify(page.body)).toBe(200)
      expect(page.body.links.prev).toBeNull()
      items.push(...page.body.data)
      next = page.body.links.next
    }
    return items
  })

const ids = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((row) => row.id)

const productIdsOrderedBy = (order: string) =>
  Effect.flatMap(
    sqlClient,
    (sql) => sql<{ id: string }>`SELECT id FROM products WHERE min_price_usd IS NOT NULL ORDER BY ${sql.literal(order)}`
  ).pipe(Effect.map(ids), Effect.orDie)

/** A country's currency and rate, as the seed wrote them. */
const countryRow = (code: string) =>
  Effect.flatMap(
    sqlClient,
    (sql) =>
      sql<{ currency: string; fxRate: string }>`SELECT currency, fx_rate::text AS fx_rate FROM countries
      WHERE code = ${code}`
  ).pipe(
    Effect.map(([row]) => ({ ...row!, digits: minorDigits(row!.currency) })),
    Effect.orDie
  )

/** The products with a variant available in the country whose item price (in its currency) is within bounds. */
const expectedWithin = (code: string, min: number, max: number) =>
  Effect.gen(function* () {
    const sql = yield* sqlClient
    const country = yield* countryRow(code)
    const variants = yield* sql<{ productId: string; priceUsd: number }>`
      SELECT v.product_id, v.price_usd FROM variants v JOIN variant_locations l ON l.variant_id = v.id
      WHERE v.price_usd IS NOT NULL AND (l.stock IS NULL OR l.stock > 0) AND ${code} = ANY (l.ships_to)`.pipe(
      Effect.orDie
    )
    const within = variants.filter((v) => {
      const local = convertUsd(v.priceUsd, country.fxRate, country.digits)
      return local >= min && local <= max
    })
    return new Set(within.map((v) => v.productId))
  })

const productKeys = ["catalog", "category", "createdAt", "id", "media", "title", "type"]

describe("catalog (/public-api/v3)", () => {
  it.layer(SeededTestServer, { timeout: 300_000 })((it) => {
    it.effect("lists products newest first in the v3 shape, never with variants; prev is always null", () =>
      Effect.gen(function* () {
        const { headers } = yield* company
        const page = yield* getWith(products, headers)
        expect(page.status).toBe(200)
        expect(page.body.data).toHaveLength(100)
        const first = page.body.data[0]
        expect(Object.keys(first).sort()).toEqual(productKeys)
        expect(first).toEqual({
          id: expect.stringMatching(/^[0-9a-f]{24}$/),
          title: expect.any(String),
          catalog: expect.stringMatching(/^(marketplace|swag)$/),
          type: expect.stringMatching(/^(physical|digital)$/),
          category: { fullName: expect.any(String) },
          media: expect.arrayContaining([{ type: "image", src: expect.stringMatching(`^${testPublicUrl}/images/`) }]),
          createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
        })
        expect(ids(page.body.data)).toEqual((yield* productIdsOrderedBy("created_at DESC, id DESC")).slice(0, 100))
        expect(page.body.links).toEqual({
          self: `${products}?page%5Bsize%5D=100`,
          next: expect.stringMatching(
            /^\/public-api\/v3\/products\?page%5Bcursor%5D=[A-Za-z0-9_-]+&page%5Bsize%5D=100$/
          ),
          prev: null
        })

        // The same id on every line: a v3 product is the v1 product.
        const sql = yield* sqlClient
        const [row] = yield* sql<{ title: string }>`SELECT title FROM products WHERE id = ${first.id}`
        expect(first.title).toBe(row!.title)
        const one = yield* getWith(`${products}/${first.id}`, headers)
        expect(one.body).toEqual({ data: first })
      })
    )

    it.effect("walking links.next returns every product exactly once, in order, under each sort", () =>
      Effect.gen(function* () {
        const { headers } = yield* company
        const orders: ReadonlyArray<readonly [string | undefined, string]> = [
          [undefined, "created_at DESC, id DESC"],
          ["createdAt", "created_at, id"],
          ["-createdAt", "created_at DESC, id DESC"],
          ["minPrice", "min_price_usd, id"],
          ["-minPrice", "min_price_usd DESC, id DESC"],
          ["title", "title, id"],
          ["-title", "title DESC, id DESC"]
        ]
        const total = (yield* productIdsOrderedBy("id")).length
        expect(total).toBeGreaterThan(300)
        for (const [sort, order] of orders) {
          const query = sort === undefined ? "page[size]=37" : `sort=${sort}&page[size]=37`
          const walked = yield* walk(`${products}?${query}&fields=priceRange`, headers)
          expect(walked).toHaveLength(total)
          expect(new Set(ids(walked)).size).toBe(total)
          expect(ids(walked), `sort=${sort}`).toEqual(yield* productIdsOrderedBy(order))
        }
        // The largest page is 300, and the cursor carries on from it.
        const big = yield* getWith(`${products}?page[size]=300&sort=title`, headers)
        expect(big.body.data).toHaveLength(300)
        const rest = yield* walk(big.body.links.next, headers)
        expect(rest).toHaveLength(total - 300)
      })
    )

    it.effect("every query rule is a 400 naming its parameter, all of them in one response", () =>
      Effect.gen(function* () {
        const { headers } = yield* company
        const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
          ["filter[colour]=red", ["filter[colour]"]],
          ["filter[price][eq]=5", ["filter[price][eq]"]],
          ["sort=createdAt,title", ["sort"]],
          ["sort=popularity", ["sort"]],
          ["page[number]=2", ["page[number]"]],
          ["page[size]=0", ["page[size]"]],
          ["page[size]=301", ["page[size]"]],
          ["page[size]=ten", ["page[size]"]],
          ["page[cursor]=not*a*cursor", ["page[cursor]"]],
          ["include=variants", ["include"]],
          ["fields=price", ["fields"]],
          ["filter[catalog]=gifts", ["filter[catalog]"]],
          ["filter[type]=edible", ["filter[type]"]],
          ["filter[tagId]=123", ["filter[tagId]"]],
          ["filter[country]=USA", ["filter[country]"]],
          ["filter[country]=ZZ", ["filter[country]"]],
          ["filter[price][gte]=-1", ["filter[price][gte]"]],
          ["filter[price][lte]=1.5", ["filter[price][lte]"]],
          ["limit=10", ["limit"]],
          ["sort=title,-createdAt&page[number]=1&filter[colour]=red", ["sort", "page[number]", "filter[colour]"]]
        ]
        for (const [query, paths] of cases) {
          const response = yield* getWith(`${products}?${query}`, headers)
          expect(response.status, query).toBe(400)
          expect(response.body, query).toEqual(badRequest(...paths))
        }
        const tooBig = yield* getWith(`${products}?page[size]=301`, headers)
        expect(tooBig.body.errors[0].message).toBe("Expected an integer from 1 to 300.")
        const twoSorts = yield* getWith(`${products}?sort=createdAt,title`, headers)
        expect(twoSorts.body.errors[0].message).toBe("This list sorts on one field.")

        // A cursor is opaque, but one that is not of this list's sort is refused rather than misread.
        const byPrice = yield* getWith(`${products}?sort=minPrice&page[size]=5`, headers)
        const cursor = new URL(byPrice.body.links.next, "http://x").searchParams.get("page[cursor]")!
        const misused = yield* getWith(`${products}?sort=createdAt&page[cursor]=${cursor}`, headers)
        expect(misused.status).toBe(400)
        expect(misused.body).toEqual(badRequest("page[cursor]"))
        const forged = Buffer.from(JSON.stringify([1, "'; DROP TABLE products; --"])).toString("base64url")
        expect((yield* getWith(`${products}?sort=minPrice&page[cursor]=${forged}`, headers)).body).toEqual(
          badRequest("page[cursor]")
        )
      })
    )

    it.effect("filters by catalog, type, search, tag and brand; include and fields add what they name", () =>
      Effect.gen(function* () {
        const { headers } = yield* company
        const sql = yield* sqlClient
        const swag = yield* walk(`${products}?filter[catalog]=swag&page[size]=300`, headers)
        const swagIds = ids(yield* sql<{ id: string }>`SELECT id FROM products WHERE catalog = 'swag' ORDER BY id`)
        expect(swagIds.length).toBeGreaterThan(0)
        expect(ids(swag).sort()).toEqual(swagIds)
        expect(swag.every((p) => p.catalog === "swag")).toBe(true)

        const digital = yield* walk(`${products}?filter[type]=digital&page[size]=300&fields=variantsCount`, headers)
        const digitalIds = ids(
          yield* sql<{ id: string }>`SELECT p.id FROM products p
            WHERE NOT EXISTS (SELECT 1 FROM variants v WHERE v.product_id = p.id AND NOT v.is_digital) ORDER BY p.id`
        )
        expect(digitalIds.length).toBeGreaterThan(0)
        expect(ids(digital).sort()).toEqual(digitalIds)
        expect(digital.every((p) => p.type === "digital" && p.variantsCount >= 1)).toBe(true)
        const physical = yield* walk(`${products}?filter[type]=physical&page[size]=300`, headers)
        expect(physical.length + digital.length).toBe((yield* productIdsOrderedBy("id")).length)

        const mugs = yield* walk(`${products}?filter[search]=mug&page[size]=300`, headers)
        expect(mugs.length).toBeGreaterThan(0)
        expect(mugs.some((p) => /mug/i.test(p.title))).toBe(true)

        const [tag] = yield* sql<{ id: string; name: string }>`SELECT id, name FROM tags WHERE slug = 'personalized'`
        const tagged = yield* walk(`${products}?filter[tagId]=${tag!.id.toUpperCase()}&include=tags`, headers)
        expect(tagged.length).toBeGreaterThan(0)
        for (const p of tagged) expect(p.tags).toContainEqual({ id: tag!.id, name: tag!.name })

        const [brand] = yield* sql<{ id: string; name: string }>`
          SELECT b.id, b.name FROM brands b JOIN products p ON p.brand_id = b.id GROUP BY b.id ORDER BY b.id LIMIT 1`
        const branded = yield* walk(`${products}?filter[brandId]=${brand!.id}&include=brand`, headers)
        expect(branded.length).toBeGreaterThan(0)
        for (const p of branded) expect(p.brand).toEqual({ id: brand!.id, name: brand!.name })

        // Several filters are ANDed.
        const both = yield* walk(`${products}?filter[catalog]=swag&filter[tagId]=${tag!.id}&include=tags`, headers)
        expect(both.every((p) => p.catalog === "swag" && p.tags.some((t: any) => t.id === tag!.id))).toBe(true)

        // Everything asked for at once; unbranded products show brand: null.
        const full = yield* getWith(
          `${products}?include=brand,tags&fields=priceRange,variantsCount,options&filter[catalog]=swag&page[size]=300`,
          headers
        )
        const keys = [...productKeys, "brand", "options", "priceRange", "tags", "variantsCount"].sort()
        for (const p of full.body.data) {
          expect(Object.keys(p).sort()).toEqual(keys)
          expect(p.priceRange.min.currency).toBe("USD")
          expect(p.priceRange.min.amount).toBeLessThanOrEqual(p.priceRange.max.amount)
        }
        expect(full.body.data.some((p: any) => p.brand === null)).toBe(true)
        expect(full.body.data.some((p: any) => p.options.length > 0)).toBe(true)
        // Product pages are sent without the schema's encode: they must still decode as the document says.
        for (const page of [
          full.body,
          (yield* getWith(`${products}?filter[type]=digital&include=tags`, headers)).body
        ]) {
          expect(Schema.decodeUnknownEither(ProductListV3)(page)._tag, JSON.stringify(page).slice(0, 200)).toBe("Right")
        }
      })
    )

    it.effect("filter[country] keeps what is available there and prices in its currency; filter[price] in it", () =>
      Effect.gen(function* () {
        const { headers } = yield* company
        for (const [code, currency, min, max] of [
          ["JP", "JPY", 3000, 6000],
          ["GB", "GBP", 1500, 3000]
        ] as const) {
          const all = yield* walk(`${products}?filter[country]=${code.toLowerCase()}&page[size]=300`, headers)
          expect(new Set(ids(all))).toEqual(yield* expectedWithin(code, 0, Number.MAX_SAFE_INTEGER))

          const query = `filter[country]=${code}&filter[price][gte]=${min}&filter[price][lte]=${max}`
          const within = yield* walk(`${products}?${query}&fields=priceRange&sort=minPrice&page[size]=25`, headers)
          expect(within.length).toBeGreaterThan(0)
          expect(new Set(ids(within))).toEqual(yield* expectedWithin(code, min, max))
          for (const p of within) {
            expect(p.priceRange.min.currency).toBe(currency)
            expect(p.priceRange.min.amount).toBeLessThanOrEqual(max)
            expect(p.priceRange.max.amount).toBeGreaterThanOrEqual(min)
          }
          const mins = within.map((p) => p.priceRange.min.amount)
          expect(mins).toEqual([...mins].sort((a, b) => a - b))
        }

        // Without a country, prices and the price filter are in the account's country: US dollars.
        const usd = yield* walk(`${products}?filter[price][lte]=1500&fields=priceRange&page[size]=300`, headers)
        expect(usd.length).toBeGreaterThan(0)
        for (const p of usd) {
          expect(p.priceRange.min.currency).toBe("USD")
          expect(p.priceRange.min.amount).toBeLessThanOrEqual(1500)
        }
      })
    )

    it.effect("a collection's products: in its order by default, cursor-paged, 404 for an unknown collection", () =>
      Effect.gen(function* () {
        const { headers } = yield* company
        const sql = yield* sqlClient
        const [collection] = yield* sql<{ id: string }>`
          SELECT collection_id AS id FROM collection_products GROUP BY collection_id ORDER BY count(*) DESC LIMIT 1`
        const members = ids(
          yield* sql<{ id: string }>`SELECT product_id AS id FROM collection_products
            WHERE collection_id = ${collection!.id} ORDER BY position, product_id`
        )
        expect(members.length).toBeGreaterThan(5)
        const path = `${collections}/${collection!.id}/products`
        expect(ids(yield* walk(`${path}?page[size]=3`, headers))).toEqual(members)
        const byTitle = yield* walk(`${path}?page[size]=4&sort=-title`, headers)
        expect(ids(byTitle)).toEqual(
          ids(
            yield* sql<{ id: string }>`SELECT p.id FROM collection_products cp JOIN products p ON p.id = cp.product_id
              WHERE cp.collection_id = ${collection!.id} ORDER BY p.title DESC, p.id DESC`
          )
        )
        const jp = yield* walk(`${path}?filter[country]=JP&fields=priceRange`, headers)
        const availableInJp = yield* expectedWithin("JP", 0, Number.MAX_SAFE_INTEGER)
        expect(ids(jp)).toEqual(members.filter((id) => availableInJp.has(id)))
        expect(jp.every((p) => p.priceRange.min.currency === "JPY")).toBe(true)

        const unknown = yield* getWith(`${collections}/${"0".repeat(24)}/products`, headers)
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual(v3Error(404, "404_COLL_001"))
        expect((yield* getWith(`${path}?page[number]=1`, headers)).body).toEqual(badRequest("page[number]"))
      })
    )

    it.effect("variants: page numbers, landed prices for filter[country] in its currency, default US", () =>
      Effect.gen(function* () {
        const { headers } = yield* company
        const sql = yield* sqlClient
        const [product] = yield* sql<{ id: string; count: number }>`
          SELECT product_id AS id, count(*)::int AS count FROM variants GROUP BY product_id
          HAVING count(*) >= 3 ORDER BY product_id LIMIT 1`
        const path = `${products}/${product!.id}/variants`

        const plain = yield* getWith(path, headers)
        expect(plain.status).toBe(200)
        expect(plain.body.data).toHaveLength(product!.count)
        for (const variant of plain.body.data) {
          expect(Object.keys(variant).sort()).toEqual([
            "id",
            "media",
            "personalization",
            "productId",
            "selectedOptions",
            "title"
          ])
          expect(variant.productId).toBe(product!.id)
        }
        const options = (yield* getWith(`${products}/${product!.id}?fields=options`, headers)).body.data.options
        for (const variant of plain.body.data) {
          expect(variant.selectedOptions.map((o: any) => o.name)).toEqual(
            options
              .map((o: any) => o.name)
              .filter((name: string) => variant.selectedOptions.some((s: any) => s.name === name))
          )
          for (const selected of variant.selectedOptions) {
            expect(options.find((o: any) => o.name === selected.name).values).toContain(selected.value)
          }
        }

        // Page numbers, links keeping the query.
        const first = yield* getWith(`${path}?page[size]=2&fields=price`, headers)
        expect(first.body.data).toHaveLength(2)
        expect(first.body.links).toEqual({
          self: `${path}?fields=price&page%5Bnumber%5D=1&page%5Bsize%5D=2`,
          next: `${path}?fields=price&page%5Bnumber%5D=2&page%5Bsize%5D=2`,
          prev: null
        })
        const second = yield* getWith(first.body.links.next, headers)
        expect(ids(second.body.data)).toEqual(ids(plain.body.data).slice(2, 4))
        expect(second.body.links.prev).toBe(`${path}?fields=price&page%5Bnumber%5D=1&page%5Bsize%5D=2`)
        expect((yield* getWith(`${path}?page[cursor]=abc`, headers)).body).toEqual(badRequest("page[cursor]"))
        expect((yield* getWith(`${path}?filter[catalog]=swag`, headers)).body).toEqual(badRequest("filter[catalog]"))

        // Prices: the landed total and its parts, in the country's currency; US dollars by default.
        const inUs = yield* getWith(`${path}?fields=price`, headers)
        expect(inUs.body.data.every((v: any) => v.price === null || v.price.currency === "USD")).toBe(true)
        const inJp = yield* getWith(`${path}?fields=price,priceBreakdown,details&filter[country]=jp`, headers)
        const quote = (variantId: string) =>
          Effect.flatMap(Pricing, (pricing) => pricing.quote(variantId, "JP")).pipe(
            Effect.provide(Pricing.Default),
            Effect.orDie
          )
        for (const variant of inJp.body.data) {
          const expected = yield* quote(variant.id)
          const money = (m: { amount: number; currency: string }) => ({ amount: m.amount, currency: m.currency })
          expect(variant.price).toEqual(money(expected.breakdown.total))
          expect(variant.priceBreakdown).toEqual({
            item: money(expected.breakdown.item),
            shipping: money(expected.breakdown.shipping),
            duties: money(expected.breakdown.duties),
            serviceFee: money(expected.breakdown.serviceFee)
          })
          expect(variant.price.currency).toBe("JPY")
          const { item, shipping, duties, serviceFee } = variant.priceBreakdown
          expect(item.amount + shipping.amount + duties.amount + serviceFee.amount).toBe(variant.price.amount)
          expect(variant.details).toEqual({
            descriptionHtml: expect.toSatisfy((d) => d === null || typeof d === "string")
          })
        }

        // Personalization: the fields a buyer may or must fill in, as stored; null when there are none.
        const personalized = yield* sql<{ productId: string; id: string; personalization: unknown }>`
          SELECT product_id, id, personalization FROM variants WHERE personalization IS NOT NULL
          ORDER BY product_id, position LIMIT 1`
        expect(personalized.length).toBe(1)
        const withFields = yield* getWith(`${products}/${personalized[0]!.productId}/variants`, headers)
        const shown = withFields.body.data.find((v: any) => v.id === personalized[0]!.id)
        expect(shown.personalization).toEqual(personalized[0]!.personalization)
        expect(shown.personalization.fields.length).toBeGreaterThan(0)

        const unknown = yield* getWith(`${products}/${"0".repeat(24)}/variants`, headers)
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual(v3Error(404, "404_PROD_001"))
        expect((yield* getWith(`${products}/nope/variants`, headers)).body).toEqual(badRequest("productId"))
      })
    )

    it.effect("recommendations come from the product detail's engine, in the v3 product shape", () =>
      Effect.gen(function* () {
        const { headers } = yield* company
        const listed = yield* getWith(`${products}?page[size]=3`, headers)
        const catalog = Catalog.Default.pipe(Layer.provide(Layer.succeed(PublicUrl, testPublicUrl)))
        for (const product of listed.body.data) {
          const response = yield* getWith(
            `${products}/${product.id}/recommendations?filter[country]=GB&fields=priceRange`,
            headers
          )
          expect(response.status).toBe(200)
          const detail = yield* Effect.flatMap(Catalog, (c) => c.product(product.id, "GB")).pipe(
            Effect.provide(catalog),
            Effect.orDie
          )
          expect(ids(response.body.data)).toEqual(ids(detail.recommendations))
          expect(response.body.data.length).toBeGreaterThan(0)
          for (const p of response.body.data) {
            expect(Object.keys(p).sort()).toEqual([...productKeys, "priceRange"].sort())
            expect(p.priceRange.min.currency).toBe("GBP")
          }
          expect(response.body.links).toEqual({
            self: expect.stringContaining("/recommendations?"),
            next: null,
            prev: null
          })
        }
        const unknown = yield* getWith(`${products}/${"0".repeat(24)}/recommendations`, headers)
        expect(unknown.body).toEqual(v3Error(404, "404_PROD_001"))
        expect((yield* getWith(`${products}/${"0".repeat(24)}`, headers)).body).toEqual(v3Error(404, "404_PROD_001"))
        const badInclude = yield* getWith(`${products}/${listed.body.data[0].id}?include=variants`, headers)
        expect(badInclude.body).toEqual(badRequest("include"))
      })
    )

    it.effect("collections need Ribbon-Account-Id; page numbers; search, tag, country and maxPrice filters", () =>
      Effect.gen(function* () {
        const { headers, inAccount, apiKey } = yield* company
        const sql = yield* sqlClient
        const without = yield* getWith(collections, headers)
        expect(without.status).toBe(400)
        expect(without.body).toEqual(badRequest("Ribbon-Account-Id"))
        const [one] = yield* sql<{ id: string; name: string }>`SELECT id, name FROM collections ORDER BY name LIMIT 1`
        expect((yield* getWith(`${collections}/${one!.id}`, headers)).body).toEqual(badRequest("Ribbon-Account-Id"))
        const elsewhere = keyHeaders(apiKey, { "ribbon-account-id": "f".repeat(24) })
        expect((yield* getWith(collections, elsewhere)).body).toEqual(v3Error(404, "404_ACCT_001"))

        const all = yield* sql<{ id: string }>`SELECT id FROM collections ORDER BY name, id`
        const first = yield* getWith(`${collections}?page[size]=10`, inAccount)
        expect(first.status).toBe(200)
        expect(ids(first.body.data)).toEqual(ids(all).slice(0, 10))
        expect(first.body.links.next).toBe(`${collections}?page%5Bnumber%5D=2&page%5Bsize%5D=10`)
        const listed: Array<any> = []
        let next: string | null = `${collections}?page[size]=10`
        while (next !== null) {
          const page: RawResponse = yield* getWith(next, inAccount)
          listed.push(...page.body.data)
          next = page.body.links.next
        }
        expect(ids(listed)).toEqual(ids(all))
        expect(Object.keys(listed[0]).sort()).toEqual([
          "createdAt",
          "description",
          "id",
          "media",
          "name",
          "priceRange",
          "tags"
        ])
        expect((yield* getWith(`${collections}?page[cursor]=abc`, inAccount)).body).toEqual(badRequest("page[cursor]"))
        expect((yield* getWith(`${collections}?filter[name]=x`, inAccount)).body).toEqual(badRequest("filter[name]"))

        const byId = yield* getWith(`${collections}/${one!.id}?filter[country]=JP`, inAccount)
        expect(byId.status).toBe(200)
        expect(byId.body.data).toMatchObject({ id: one!.id, name: one!.name })
        expect(byId.body.data.priceRange.min.currency).toBe("JPY")
        const unknown = yield* getWith(`${collections}/${"0".repeat(24)}`, inAccount)
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual(v3Error(404, "404_COLL_001"))

        const birthday = yield* getWith(`${collections}?filter[search]=birthday`, inAccount)
        expect(birthday.body.data.length).toBeGreaterThan(0)
        const [tag] = yield* sql<{ id: string; name: string }>`
          SELECT t.id, t.name FROM tags t JOIN collection_tags ct ON ct.tag_id = t.id GROUP BY t.id ORDER BY t.id LIMIT 1`
        for (const value of [tag!.id, tag!.name.toUpperCase()]) {
          const tagged = yield* getWith(`${collections}?filter[tag]=${encodeURIComponent(value)}`, inAccount)
          expect(tagged.body.data.length).toBeGreaterThan(0)
          for (const c of tagged.body.data) expect(c.tags).toContainEqual({ id: tag!.id, name: tag!.name })
        }

        // A collection is kept when it holds a product available in the country at or under maxPrice.
        const country = yield* countryRow("JP")
        const cheap = yield* getWith(`${collections}?filter[country]=JP&filter[maxPrice]=3000`, inAccount)
        const withinJpy = new Set<string>()
        for (const row of yield* sql<{ id: string; priceUsd: number }>`SELECT cp.collection_id AS id, v.price_usd
            FROM collection_products cp JOIN variants v ON v.product_id = cp.product_id
            JOIN variant_locations l ON l.variant_id = v.id
            WHERE v.price_usd IS NOT NULL AND (l.stock IS NULL OR l.stock > 0) AND 'JP' = ANY (l.ships_to)`) {
          if (convertUsd(row.priceUsd, country.fxRate, country.digits) <= 3000) withinJpy.add(row.id)
        }
        expect(withinJpy.size).toBeGreaterThan(0)
        expect(ids(cheap.body.data).sort()).toEqual([...withinJpy].sort())
        expect(cheap.body.data.length).toBeLessThan(all.length)
        expect(cheap.body.data.every((c: any) => c.priceRange.min.currency === "JPY")).toBe(true)
      })
    )

    it.effect("product tags: filter[name] is a case-insensitive substring; links keep it; title is a 400", () =>
      Effect.gen(function* () {
        const { headers } = yield* company
        const sql = yield* sqlClient
        const expected = yield* sql<{ id: string; name: string }>`
          SELECT id, name FROM tags WHERE name ILIKE '%E%' ORDER BY name, id`
        expect(expected.length).toBeGreaterThan(6)
        const first = yield* getWith(`${productTags}?filter[name]=E&page[size]=3`, headers)
        expect(first.status).toBe(200)
        expect(first.body.links.next).toBe(`${productTags}?filter%5Bname%5D=E&page%5Bnumber%5D=2&page%5Bsize%5D=3`)
        const walked: Array<any> = []
        let next: string | null = first.body.links.self
        while (next !== null) {
          const page: RawResponse = yield* getWith(next, headers)
          walked.push(...page.body.data)
          next = page.body.links.next
        }
        expect(walked).toEqual(expected.map((t) => ({ id: t.id, name: t.name })))

        const personalized = yield* getWith(`${productTags}?filter[name]=pERSONAL`, headers)
        expect(personalized.body.data).toEqual([{ id: expect.any(String), name: "Personalized" }])
        // `%` and `_` are matched literally.
        expect((yield* getWith(`${productTags}?filter[name]=%25`, headers)).body.data).toEqual([])

        const renamed = yield* getWith(`${productTags}?title=Personalized`, headers)
        expect(renamed.status).toBe(400)
        expect(renamed.body).toEqual(badRequest("title"))
        expect((yield* getWith(`${productTags}?page[size]=301`, headers)).body).toEqual(badRequest("page[size]"))
      })
    )

    it.effect("products:read and collections:read guard the catalog; prices need products:read:prices", () =>
      Effect.gen(function* () {
        // Two companies, as a company holds at most 3 active keys; the first key of each holds every permission.
        const one = yield* company
        const other = yield* company
        const listed = yield* getWith(`${products}?page[size]=1`, one.headers)
        const productId = listed.body.data[0].id
        const [collection] = (yield* getWith(`${collections}?page[size]=1`, one.inAccount)).body.data
        const as = (owner: typeof one, key: string) => keyHeaders(key, { "ribbon-account-id": owner.accountId })

        const productsOnly = as(one, yield* keyWith(one.apiKey, ["products:read"]))
        const collectionsOnly = as(one, yield* keyWith(one.apiKey, ["collections:read"]))
        const withPrices = other.inAccount
        const withoutPrices = as(other, yield* keyWith(other.apiKey, ["products:read", "collections:read"]))

        const forbidden = v3Error(403, "403_KEYS_001")
        for (const url of [
          `${products}`,
          `${products}/${productId}`,
          `${products}/${productId}/variants`,
          `${products}/${productId}/recommendations`,
          `${collections}/${collection.id}/products`,
          productTags
        ]) {
          expect((yield* getWith(url, collectionsOnly)).body, url).toEqual(forbidden)
          expect((yield* getWith(url, productsOnly)).status, url).toBe(200)
        }
        for (const url of [collections, `${collections}/${collection.id}`]) {
          expect((yield* getWith(url, productsOnly)).body, url).toEqual(forbidden)
          expect((yield* getWith(url, collectionsOnly)).status, url).toBe(200)
        }

        // Without products:read:prices no price or breakdown appears anywhere, whatever is asked for.
        const priced = [
          `${products}?page[size]=5&fields=priceRange,variantsCount`,
          `${products}/${productId}?fields=priceRange`,
          `${products}/${productId}/recommendations?fields=priceRange`,
          `${collections}/${collection.id}/products?page[size]=5&fields=priceRange`,
          `${products}/${productId}/variants?fields=price,priceBreakdown,details`,
          `${collections}?page[size]=5`,
          `${collections}/${collection.id}`
        ]
        for (const url of priced) {
          const hidden = yield* getWith(url, withoutPrices)
          const shown = yield* getWith(url, withPrices)
          expect(hidden.status, url).toBe(200)
          expect(shown.status, url).toBe(200)
          expect(hidden.text, url).not.toMatch(/"(priceRange|price|priceBreakdown|amount)"/)
          expect(shown.text, url).toMatch(/"(priceRange|price)":\{"/)
        }
        const variants = yield* getWith(
          `${products}/${productId}/variants?fields=price,priceBreakdown,details`,
          withoutPrices
        )
        expect(Object.keys(variants.body.data[0])).toContain("details")
        const counted = yield* getWith(`${products}?page[size]=1&fields=priceRange,variantsCount`, withoutPrices)
        expect(counted.body.data[0].variantsCount).toBeGreaterThan(0)

        // Filtering and sorting by price still work without the permission: they show no amount.
        const sorted = yield* getWith(`${products}?sort=minPrice&filter[price][lte]=2000&page[size]=3`, withoutPrices)
        expect(sorted.status).toBe(200)
      })
    )
  })
})
