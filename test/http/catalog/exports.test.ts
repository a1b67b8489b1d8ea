import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TimeTravel } from "../../support/auth.js"
import { makeCheckoutTestServer } from "../../support/checkout.js"
import { getWith, keyHeaders, postWith, v2Keys } from "../../support/company.js"
import { eventually } from "../../support/eventually.js"
import {
  chunkCount,
  collectionExports,
  download,
  finished,
  linesOf,
  newCompany,
  productExports,
  products,
  sqlClient,
  walk
} from "../../support/exports.js"

/**
 * Catalog exports over real HTTP with the background worker (docs/decisions/0043-catalog-exports.md, docs/catalog.md
 * "Exports"): 202, completed, NDJSON files equal to the product list with the same query, a tampered link 403, 410
 * after 48 hours and the files deleted by the expiry job. The rules are exportRules.test.ts's.
 */

describe("catalog exports, with the worker", () => {
  it.layer(makeCheckoutTestServer(), { timeout: 300_000 })((it) => {
    it.effect("exports the filtered catalog per location as the product list shows it, then expires", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const started = yield* postWith(
          productExports,
          {
            filter: { catalog: "marketplace", price: { gte: "1000" } },
            locations: ["us", "GB"],
            include: ["brand", "tags"],
            fields: ["priceRange", "variantsCount"]
          },
          company.headers
        )
        expect(started.status, JSON.stringify(started.body)).toBe(202)
        expect(started.body.data).toEqual({
          id: expect.stringMatching(/^[0-9a-f]{24}$/),
          type: "products",
          status: "pending",
          locations: ["US", "GB"],
          progress: 0,
          downloadUrls: null,
          expiresAt: null,
          errorMessage: null,
          createdAt: expect.any(String),
          completedAt: null
        })
        const url = `${productExports}/${started.body.data.id}`
        const done = yield* finished(url, company.headers)
        const exported = done.body.data
        expect(exported.status).toBe("completed")
        expect(exported.progress).toBe(100)
        expect(Date.parse(exported.expiresAt) - Date.parse(exported.completedAt)).toBe(48 * 3_600_000)
        expect(Object.keys(exported.downloadUrls)).toEqual(["US", "GB"])

        for (const location of ["US", "GB"]) {
          const file = yield* download(exported.downloadUrls[location])
          expect(file.status, file.text.slice(0, 300)).toBe(200)
          expect(file.headers["content-type"]).toBe("application/x-ndjson")
          expect(file.headers["content-disposition"]).toBe(
            `attachment; filename="export-${exported.id}-${location}.ndjson"`
          )
          // The same products, in the same order and shape, as the list with the same query.
          const listed = yield* walk(
            `${products}?filter[catalog]=marketplace&filter[price][gte]=1000&filter[country]=${location}` +
              "&include=brand,tags&fields=priceRange,variantsCount&page[size]=300",
            company.headers
          )
          expect(listed.length).toBeGreaterThan(50)
          expect(linesOf(file)).toEqual(listed)
        }

        // A changed signature, expiry or location is refused.
        const link = new URL(exported.downloadUrls.US)
        const signature = link.searchParams.get("signature")!
        const tampered = new URL(link)
        tampered.searchParams.set("signature", `${signature.slice(0, -2)}${signature.endsWith("AA") ? "BB" : "AA"}`)
        expect(yield* download(tampered.toString())).toMatchObject({
          status: 403,
          body: { status: 403, code: "export_link_invalid", detail: expect.any(String) }
        })
        const later = new URL(link)
        later.searchParams.set("expires", String(Number(link.searchParams.get("expires")) + 3600))
        expect((yield* download(later.toString())).status).toBe(403)
        expect((yield* download(exported.downloadUrls.US.replace("/US?", "/GB?"))).status).toBe(403)

        // After 48 hours: 410, and the expiry job deletes the files (the export itself can still be read).
        expect(yield* chunkCount(exported.id)).toBeGreaterThan(0)
        yield* Effect.flatMap(TimeTravel, (travel) => travel.advance("48 hours"))
        const gone = yield* download(exported.downloadUrls.US)
        expect(gone).toMatchObject({ status: 410, body: { status: 410, code: "export_expired" } })
        yield* eventually(chunkCount(exported.id), (count) => count === 0, "the expired files to be deleted")
        expect((yield* getWith(url, company.headers)).body.data.status).toBe("completed")
      })
    )

    it.effect("exports collections' products in each collection's order, each line naming its collection", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const sql = yield* sqlClient
        const picked = yield* sql<{ id: string }>`SELECT collection_id AS id FROM collection_products
          GROUP BY collection_id HAVING count(*) >= 3 ORDER BY collection_id LIMIT 2`
        const collectionIds = picked.map((row) => row.id)
        const body = { collectionIds, locations: ["US"] }
        expect(yield* postWith(collectionExports, body, company.headers)).toMatchObject({
          status: 400,
          body: { errorCode: "400_PBLC_001", errors: [{ path: "Ribbon-Account-Id" }] }
        })
        const started = yield* postWith(collectionExports, body, company.inAccount)
        expect(started.status, JSON.stringify(started.body)).toBe(202)
        expect(started.body.data.type).toBe("collections")
        const url = `${collectionExports}/${started.body.data.id}`
        const done = (yield* finished(url, company.inAccount)).body.data
        expect(done.status).toBe("completed")
        // Not readable as a product export.
        expect((yield* getWith(`${productExports}/${done.id}`, company.headers)).status).toBe(404)

        const lines = linesOf(yield* download(done.downloadUrls.US))
        const expected: Array<any> = []
        for (const collectionId of collectionIds) {
          const listed = yield* walk(
            `/public-api/v3/collections/${collectionId}/products?filter[country]=US`,
            company.headers
          )
          expected.push(...listed.map((product) => ({ collectionId, ...product })))
        }
        expect(expected.length).toBeGreaterThanOrEqual(6)
        expect(lines).toEqual(expected)
      })
    )

    it.effect("refuses an export written with prices to a key of the company without products:read:prices", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const created = yield* postWith(v2Keys, { name: "no prices", permissions: ["products:read"] }, company.headers)
        const noPrices = keyHeaders(created.body.apiKey)
        const started = yield* postWith(
          productExports,
          { filter: { catalog: "swag" }, fields: ["priceRange"] },
          company.headers
        )
        expect(started.status, JSON.stringify(started.body)).toBe(202)
        const url = `${productExports}/${started.body.data.id}`
        const done = (yield* finished(url, company.headers)).body.data
        expect(done.status).toBe("completed")
        const lines = linesOf(yield* download(done.downloadUrls.US))
        expect(lines.length).toBeGreaterThan(0)
        expect(lines.every((line) => "priceRange" in line)).toBe(true)

        // The other key reads neither the export nor, so, its links.
        const refused = yield* getWith(url, noPrices)
        expect(refused).toMatchObject({
          status: 403,
          body: { status: 403, errorCode: "403_KEYS_001", message: expect.stringContaining("products:read:prices") }
        })
        expect(refused.text).not.toContain("/export-files/")
      })
    )

    it.effect("leaves prices out of the lines for a key without products:read:prices", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const created = yield* postWith(v2Keys, { name: "no prices", permissions: ["products:read"] }, company.headers)
        const headers = keyHeaders(created.body.apiKey)
        const started = yield* postWith(
          productExports,
          { filter: { catalog: "swag" }, fields: ["priceRange", "variantsCount"] },
          headers
        )
        expect(started.status, JSON.stringify(started.body)).toBe(202)
        const done = (yield* finished(`${productExports}/${started.body.data.id}`, headers)).body.data
        const lines = linesOf(yield* download(done.downloadUrls.US))
        expect(lines.length).toBeGreaterThan(0)
        for (const line of lines) {
          expect(line.catalog).toBe("swag")
          expect(line).not.toHaveProperty("priceRange")
          expect(line.variantsCount).toEqual(expect.any(Number))
        }
      })
    )
  })
})
