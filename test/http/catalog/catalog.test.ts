import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { signedIn } from "../../support/auth.js"
import { get, postText, ribbonClient, SeededTestServer, testPublicUrl } from "../../support/http.js"

/** The agent API's catalog over HTTP, through the derived client, on the seeded demo catalog. */
describe("catalog (/v1)", () => {
  it.layer(SeededTestServer.pipe(signedIn({ scopes: ["catalog:read"] })), { timeout: 120_000 })((it) => {
    it.effect("walks search (budget in USD, shopping from Japan) → product → availability → all-in price", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const result = yield* client.catalog.search({ urlParams: { q: "mug", budget: "under $40", country: "jp" } })

        // "$" in Japan means US dollars: converted at 151.50 JPY per USD, ¥0 decimals.
        expect(result.appliedFilters).toMatchObject({
          country: "JP",
          currency: "JPY",
          minPrice: null,
          maxPrice: 6060,
          budget: {
            input: "under $40",
            kind: "max",
            currency: "USD",
            currencyNamed: true,
            min: null,
            max: 4000,
            converted: { currency: "JPY", min: null, max: 6060 },
            overriddenBy: []
          },
          sort: "relevance",
          availableIn: "JP"
        })
        expect(result.products.length).toBeGreaterThan(0)
        for (const product of result.products) {
          expect(product.priceRange?.min.currency).toBe("JPY")
          expect(product.priceRange!.min.amount).toBeLessThanOrEqual(6060)
          expect(product.imageUrl?.startsWith(`${testPublicUrl}/images/`)).toBe(true)
          for (const image of product.images) expect(image.startsWith(`${testPublicUrl}/images/`)).toBe(true)
        }

        const first = result.products[0]!
        const detail = yield* client.catalog.product({ path: { productId: first.id }, urlParams: { country: "JP" } })
        expect(detail.product.id).toBe(first.id)
        expect(detail.variants.length).toBe(first.variantsCount)
        expect(detail.recommendations.length).toBeGreaterThan(0)
        expect(detail.recommendations.length).toBeLessThanOrEqual(8)
        expect(detail.recommendations.map((p) => p.id)).not.toContain(first.id)

        // The chosen variant: within budget, and available in Japan.
        let chosen: { id: string; total: number } | undefined
        for (const variant of detail.variants) {
          if (variant.price === null || variant.price.amount > 6060) continue
          const availability = yield* client.catalog.availability({
            path: { variantId: variant.id },
            urlParams: { countries: ["JP"] }
          })
          expect(availability.variantId).toBe(variant.id)
          const [entry] = availability.countries
          if (!entry?.available) continue
          const { item, shipping, duties, serviceFee, total } = entry.breakdown
          expect(item.amount).toBe(variant.price.amount)
          expect(item.amount + shipping.amount + duties.amount + serviceFee.amount).toBe(total.amount)
          expect(entry.price).toEqual(total)
          for (const money of [item, shipping, duties, serviceFee, total]) expect(money.currency).toBe("JPY")
          chosen = { id: variant.id, total: total.amount }
          break
        }
        expect(chosen).toBeDefined()

        const variant = yield* client.catalog.variant({ path: { variantId: chosen!.id }, urlParams: { country: "JP" } })
        expect(variant.productId).toBe(first.id)
        expect(variant.price?.currency).toBe("JPY")
      })
    )

    it.effect(
      "converts a budget written in another currency (GBP in the US) and lets minPrice/maxPrice override it",
      () =>
        Effect.gen(function* () {
          const client = yield* ribbonClient
          const result = yield* client.catalog.search({ urlParams: { budget: "between £20 and £40", country: "US" } })
          // £20 / 0.79 = $25.3164… → 2532 cents; £40 → 5063.29… → 5063.
          expect(result.appliedFilters.budget?.converted).toEqual({ currency: "USD", min: 2532, max: 5063 })
          expect(result.appliedFilters).toMatchObject({ minPrice: 2532, maxPrice: 5063, sort: "newest" })

          const overridden = yield* client.catalog.search({
            urlParams: { budget: "between £20 and £40", maxPrice: 3000, country: "US" }
          })
          expect(overridden.appliedFilters).toMatchObject({ minPrice: 2532, maxPrice: 3000 })
          expect(overridden.appliedFilters.budget?.overriddenBy).toEqual(["maxPrice"])
          for (const product of overridden.products) expect(product.priceRange!.min.amount).toBeLessThanOrEqual(3000)
        })
    )

    it.effect("filters by collection and tags, and returns matching collections for words", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const { collections } = yield* client.catalog.collections({ urlParams: { limit: 100 } })
        expect(collections.length).toBe(32)
        const target = collections[0]!
        const inCollection = yield* client.catalog.search({ urlParams: { collectionId: target.id, limit: 50 } })
        const page = yield* client.catalog.collection({
          path: { collectionId: target.id },
          urlParams: { limit: 100 }
        })
        expect(page.products.length).toBeGreaterThan(0)
        expect(inCollection.products.length).toBe(Math.min(50, page.products.length))
        expect(inCollection.appliedFilters.collectionId).toBe(target.id)
        for (const product of inCollection.products) expect(page.products.map((p) => p.id)).toContain(product.id)

        const { tags } = yield* client.catalog.tags({ urlParams: { q: "coffee" } })
        expect(tags[0]?.name).toBe("Coffee")
        const tagged = yield* client.catalog.search({ urlParams: { tagIds: [tags[0]!.id], limit: 50 } })
        expect(tagged.products.length).toBeGreaterThan(0)
        for (const product of tagged.products) expect(product.tags).toContain("Coffee")
        expect(tagged.appliedFilters.tagIds).toEqual([tags[0]!.id])

        const worded = yield* client.catalog.search({ urlParams: { q: "coffee" } })
        expect(worded.collections.length).toBeGreaterThan(0)
        const none = yield* client.catalog.search({ urlParams: {} })
        expect(none.collections).toEqual([])
      })
    )

    it.effect("pages a collection with a cursor and prices its range per country", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const { collections } = yield* client.catalog.collections({ urlParams: { country: "GB", limit: 5 } })
        expect(collections.length).toBe(5)
        const collection = collections[0]!
        expect(collection.imageUrl?.startsWith(testPublicUrl)).toBe(true)
        expect(Number.isInteger(collection.priceRange?.min)).toBe(true)

        const all = yield* client.catalog.collection({
          path: { collectionId: collection.id },
          urlParams: { limit: 100 }
        })
        const seen: Array<string> = []
        let cursor: string | undefined
        do {
          const page = yield* client.catalog.collection({
            path: { collectionId: collection.id },
            urlParams: { limit: 7, ...(cursor === undefined ? {} : { cursor }) }
          })
          seen.push(...page.products.map((p) => p.id))
          cursor = page.nextCursor ?? undefined
        } while (cursor !== undefined)
        expect(seen).toEqual(all.products.map((p) => p.id))

        const cheap = yield* client.catalog.collections({ urlParams: { maxPrice: 1000, country: "US", limit: 100 } })
        expect(cheap.collections.length).toBeLessThan(32)
        for (const c of cheap.collections) expect(c.priceRange!.min).toBeLessThanOrEqual(1000)

        const found = yield* client.catalog.collections({ urlParams: { q: collection.name } })
        expect(found.collections[0]?.id).toBe(collection.id)
      })
    )

    it.effect("serves every image URL it hands out, as SVG naming the product or collection", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const found = yield* client.catalog.search({ urlParams: { q: "ceramic coffee mug" } })
        const { product, variants } = yield* client.catalog.product({
          path: { productId: found.products[0]!.id },
          urlParams: {}
        })
        const { collections } = yield* client.catalog.collections({ urlParams: {} })
        const urls = [
          ...product.images,
          ...variants.flatMap((v) => (v.imageUrl === null ? [] : [v.imageUrl])),
          collections[0]!.imageUrl!
        ]
        expect(urls.length).toBeGreaterThan(2)
        for (const url of urls) {
          const response = yield* get(url.slice(testPublicUrl.length))
          expect(response.status, url).toBe(200)
          expect(response.headers["content-type"], url).toBe("image/svg+xml")
          expect(response.text, url).toMatch(/^<svg /)
        }
        const image = yield* get(product.images[0]!.slice(testPublicUrl.length))
        expect(image.text).toContain(`aria-label="${product.title}"`)
        const missing = yield* get("/images/products/000000000000000000000000/1.svg")
        expect(missing.status).toBe(404)
        expect(missing.body.code).toBe("not_found")
      })
    )

    it.effect("sets defaultVariantId only for exactly one purchasable variant, and every field is present", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const { products } = yield* client.catalog.search({ urlParams: { limit: 50, sort: "price_asc" } })
        const raw = yield* get("/v1/search?limit=50&sort=price_asc")
        for (const product of raw.body.products) {
          expect(Object.keys(product).sort()).toEqual(
            [
              "id",
              "title",
              "brand",
              "category",
              "catalog",
              "imageUrl",
              "images",
              "tags",
              "priceRange",
              "variantsCount",
              "options",
              "defaultVariantId"
            ].sort()
          )
        }
        let checked = 0
        for (const product of products.slice(0, 12)) {
          const detail = yield* client.catalog.product({ path: { productId: product.id }, urlParams: {} })
          const { countries } = yield* Effect.forEach(detail.variants, (v) =>
            v.price === null
              ? Effect.succeed({ id: v.id, available: false })
              : Effect.map(
                  client.catalog.availability({ path: { variantId: v.id }, urlParams: { countries: ["US"] } }),
                  (a) => ({ id: v.id, available: a.countries[0]!.available })
                )
          ).pipe(Effect.map((countries) => ({ countries })))
          const purchasable = countries.filter((c) => c.available)
          expect(product.defaultVariantId).toBe(purchasable.length === 1 ? purchasable[0]!.id : null)
          checked++
        }
        expect(checked).toBe(12)
      })
    )

    it.effect("lists countries, defaults availability to all of them, and finds tags", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const { countries } = yield* client.catalog.countries()
        expect(countries).toHaveLength(25)
        expect(countries).toContain("JP")
        const { products } = yield* client.catalog.search({ urlParams: { q: "e-gift card" } })
        const product = yield* client.catalog.product({ path: { productId: products[0]!.id }, urlParams: {} })
        const variant = product.variants.find((v) => v.price !== null)!
        const availability = yield* client.catalog.availability({ path: { variantId: variant.id }, urlParams: {} })
        expect(availability.countries.map((c) => c.countryCode)).toEqual(countries)

        const { tags } = yield* client.catalog.tags({ urlParams: { q: "cofee" } })
        expect(tags.map((t) => t.name)).toContain("Coffee")
      })
    )

    it.effect("autocompletes and validates addresses", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const { suggestions } = yield* client.catalog.autocompleteAddress({
          urlParams: { q: "Springfield", country: "US" }
        })
        expect(suggestions.length).toBeGreaterThan(0)
        for (const s of suggestions) expect(s.countryCode).toBe("US")

        const verified = yield* client.catalog.validateAddress({
          payload: {
            address: {
              address1: "1600 Amphitheatre Parkway",
              city: "Mountain View",
              provinceCode: "CA",
              postalCode: "94043",
              countryCode: "US"
            }
          }
        })
        expect(verified.result).toBe("verified")
        const ambiguous = yield* client.catalog.validateAddress({ payload: { address: { countryCode: "US" } } })
        expect(ambiguous).toEqual({ result: "ambiguous", message: expect.any(String) })
      })
    )

    it.effect("answers odd words with results or none, never an error", () =>
      Effect.gen(function* () {
        for (const q of ["the", "!!!", "' OR 1=1 --", "-", '"unterminated', "mug or candle", "50% off", "日本"]) {
          const response = yield* get(`/v1/search?q=${encodeURIComponent(q)}`)
          expect(response.status, q).toBe(200)
          expect(Array.isArray(response.body.products)).toBe(true)
        }
      })
    )

    describe("bad input", () => {
      const long = (n: number) => "x".repeat(n)
      const cases: ReadonlyArray<readonly [string, string, number, string]> = [
        ["search q over 200", `/v1/search?q=${long(201)}`, 400, "q"],
        ["search budget over 60", `/v1/search?budget=${long(61)}`, 400, "budget"],
        ["search budget unparseable", `/v1/search?budget=${encodeURIComponent("whenever you like")}`, 400, "budget"],
        ["search limit 0", "/v1/search?limit=0", 400, "limit"],
        ["search limit 51", "/v1/search?limit=51", 400, "limit"],
        ["search limit not a number", "/v1/search?limit=ten", 400, "limit"],
        ["collections limit 0", "/v1/collections?limit=0", 400, "limit"],
        ["collections limit 101", "/v1/collections?limit=101", 400, "limit"],
        ["collection limit 101", "/v1/collections/000000000000000000000000?limit=101", 400, "limit"],
        ["tags q under 3", "/v1/tags?q=ab", 400, "q"],
        ["autocomplete q under 4", "/v1/addresses/autocomplete?q=abc&country=US", 400, "q"],
        ["autocomplete q over 128", `/v1/addresses/autocomplete?q=${long(129)}&country=US`, 400, "q"],
        ["autocomplete without country", "/v1/addresses/autocomplete?q=London", 400, "country"],
        ["autocomplete unknown country", "/v1/addresses/autocomplete?q=London&country=XX", 400, "country"],
        ["country U1", "/v1/search?country=U1", 400, "country"],
        ["country USA", "/v1/search?country=USA", 400, "country"],
        ["country not supported", "/v1/search?country=ZZ", 400, "country"],
        ["product country USA", "/v1/products/000000000000000000000000?country=USA", 400, "country"],
        ["minPrice -1", "/v1/search?minPrice=-1", 400, "minPrice"],
        ["maxPrice fractional", "/v1/search?maxPrice=10.5", 400, "maxPrice"],
        ["minPrice above maxPrice", "/v1/search?minPrice=500&maxPrice=100", 400, "minPrice"],
        ["unknown sort", "/v1/search?sort=cheapest", 400, "sort"],
        ["malformed cursor", "/v1/search?cursor=!!!", 400, "cursor"],
        ["cursor that is not ours", `/v1/search?cursor=${Buffer.from("hello").toString("base64url")}`, 400, "cursor"],
        ["collection malformed cursor", "/v1/collections/000000000000000000000000?cursor=%25%25", 400, "cursor"],
        ["tagIds not ids", "/v1/search?tagIds=abc,def", 400, "tagIds"],
        [
          "unknown country in countries",
          "/v1/variants/000000000000000000000000/availability?countries=JP,ZZ",
          400,
          "countries"
        ],
        [
          "malformed country in countries",
          "/v1/variants/000000000000000000000000/availability?countries=JPN",
          400,
          "countries"
        ],
        ["unknown product", "/v1/products/000000000000000000000000", 404, "product"],
        ["unknown product (not an id)", "/v1/products/nope", 404, "product"],
        ["unknown variant", "/v1/variants/000000000000000000000000", 404, "variant"],
        ["unknown variant availability", "/v1/variants/000000000000000000000000/availability", 404, "variant"],
        ["unknown collection", "/v1/collections/000000000000000000000000", 404, "collection"],
        ["unknown collectionId filter", "/v1/search?collectionId=000000000000000000000000", 404, "collection"]
      ]
      for (const [name, url, status, field] of cases) {
        it.effect(`${name} → ${status} naming ${field}`, () =>
          Effect.gen(function* () {
            const response = yield* get(url)
            expect(response.status, response.text).toBe(status)
            expect(response.headers["content-type"]).toBe("application/problem+json")
            expect(response.body.status).toBe(status)
            if (status === 400) {
              expect(response.body.code).toBe("invalid_request")
              const paths: Array<string> = response.body.errors.map((e: { path: string }) => e.path)
              expect(paths.some((path) => path === field || path.startsWith(`${field}[`))).toBe(true)
            } else {
              expect(response.body.code).toBe(`${field}_not_found`)
              expect(response.body.detail).toContain(field === "product" ? "product" : field)
              expect(response.body[`${field}Id`]).toBeTypeOf("string")
            }
          })
        )
      }

      it.effect("validate without countryCode → 400 naming address.countryCode", () =>
        Effect.gen(function* () {
          const response = yield* postText("/v1/addresses/validate", JSON.stringify({ address: { city: "Paris" } }))
          expect(response.status).toBe(400)
          expect(response.body.errors.map((e: { path: string }) => e.path)).toContain("address.countryCode")
        })
      )
    })
  })
})
