import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { PublicUrl } from "../../../src/services/catalog/Catalog.js"
import { CatalogExports } from "../../../src/services/catalog/CatalogExports.js"
import { Signals } from "../../../src/services/platform/Signals.js"
import { getWith, postWith } from "../../support/company.js"
import {
  chunkCount,
  collectionExports,
  download,
  exportCounts,
  linesOf,
  newCompany,
  productExports,
  products,
  sqlClient,
  v3Error,
  walk
} from "../../support/exports.js"
import { SeededTestServer, testPublicUrl } from "../../support/http.js"

/**
 * Catalog exports over real HTTP on a server without the background worker, so exports stay pending until
 * a test runs their job (docs/decisions/0043-catalog-exports.md, docs/catalog.md "Exports"): the one-active-export
 * rule, every bad body (which stores nothing), a job that resumes after its last chunk and one that fails.
 */

/** The exports service on the test server's database, to run a job's work by hand. */
const ExportsLive = CatalogExports.Default.pipe(
  Layer.provide([Signals.layerInProcess, Layer.succeed(PublicUrl, testPublicUrl)])
)

describe("catalog exports, without a worker", () => {
  it.layer(SeededTestServer, { timeout: 300_000 })((it) => {
    it.effect("allows one active export per company across both kinds: 409 naming it; others are not held up", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const first = yield* postWith(productExports, {}, company.headers)
        expect(first.status).toBe(202)
        const before = yield* exportCounts
        expect(yield* postWith(productExports, { locations: ["GB"] }, company.headers)).toMatchObject({
          status: 409,
          body: { ...v3Error(409, "409_EXPT_001"), message: expect.stringContaining(first.body.data.id) }
        })
        const [collection] = yield* Effect.flatMap(
          sqlClient,
          (sql) => sql<{ id: string }>`SELECT id FROM collections LIMIT 1`
        )
        const second = yield* postWith(collectionExports, { collectionIds: [collection!.id] }, company.inAccount)
        expect(second).toMatchObject({ status: 409, body: v3Error(409, "409_EXPT_001") })
        expect(yield* exportCounts).toEqual(before)

        // Another company is not held up, and cannot read the first's export.
        const other = yield* newCompany
        expect((yield* postWith(productExports, {}, other.headers)).status).toBe(202)
        expect(yield* getWith(`${productExports}/${first.body.data.id}`, other.headers)).toMatchObject({
          status: 404,
          body: v3Error(404, "404_EXPT_001")
        })
      })
    )

    it.effect("refuses every bad body with a 400 naming the field, and stores nothing", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const before = yield* exportCounts
        const bad: ReadonlyArray<[string, unknown, string]> = [
          [productExports, { locations: [] }, "locations"],
          [productExports, { locations: ["USA"] }, "locations[0]"],
          [productExports, { locations: ["ZZ"] }, "locations"],
          [productExports, { locations: Array.from({ length: 21 }, () => "US") }, "locations"],
          [productExports, { include: ["variants"] }, "include[0]"],
          [productExports, { fields: ["price"] }, "fields[0]"],
          [productExports, { filter: { catalog: "gifts" } }, "filter.catalog"],
          [productExports, { filter: { country: "US" } }, "filter.country"],
          [productExports, { filter: { price: { gte: "-1" } } }, "filter.price.gte"],
          [productExports, { filter: { tagId: "nope" } }, "filter.tagId"],
          [productExports, { filter: { search: "" } }, "filter.search"],
          [productExports, { format: "csv" }, "format"],
          [collectionExports, {}, "collectionIds"],
          [collectionExports, { collectionIds: [] }, "collectionIds"],
          [collectionExports, { collectionIds: ["x"] }, "collectionIds[0]"],
          [collectionExports, { collectionIds: Array.from({ length: 101 }, () => "a".repeat(24)) }, "collectionIds"]
        ]
        for (const [url, body, path] of bad) {
          const response = yield* postWith(url, body, company.inAccount)
          expect(response.status, `${JSON.stringify(body)}: ${JSON.stringify(response.body)}`).toBe(400)
          expect(response.body.errorCode).toBe("400_PBLC_001")
          expect(response.body.errors.map((error: { path: string }) => error.path)).toContain(path)
        }
        expect(
          yield* postWith(collectionExports, { collectionIds: ["0".repeat(24)] }, company.inAccount)
        ).toMatchObject({ status: 404, body: v3Error(404, "404_COLL_001") })
        expect(yield* exportCounts).toEqual(before)
      })
    )

    it.effect(
      "a job resumes after its last chunk; a last attempt that fails marks the export failed and frees the slot",
      () =>
        Effect.gen(function* () {
          const company = yield* newCompany
          const started = yield* postWith(productExports, { locations: ["US", "GB"] }, company.headers)
          const exportId = started.body.data.id as string
          const exports = yield* CatalogExports
          const inUs = (yield* walk(`${products}?filter[country]=US&page[size]=300`, company.headers)).length
          // A first attempt stops once the US file is written, in the middle of the GB one.
          let calls = 0
          const firstTry = yield* Effect.exit(
            exports.run(exportId, false, (product) => {
              calls += 1
              if (calls > inUs) throw new Error("worker stopped")
              return { id: product.id, attempt: 1 }
            })
          )
          expect(firstTry._tag).toBe("Failure")
          const partly = (yield* getWith(`${productExports}/${exportId}`, company.headers)).body.data
          expect(partly.status).toBe("processing")
          expect(partly.progress).toBeGreaterThan(0)
          expect(partly.progress).toBeLessThan(100)

          // The rerun writes GB only: the US lines are the first attempt's.
          yield* exports.run(exportId, false, (product) => ({ id: product.id, attempt: 2 }))
          const done = (yield* getWith(`${productExports}/${exportId}`, company.headers)).body.data
          expect(done.status).toBe("completed")
          const us = linesOf(yield* download(done.downloadUrls.US))
          const gb = linesOf(yield* download(done.downloadUrls.GB))
          expect(us).toHaveLength(inUs)
          expect(new Set(us.map((line) => line.attempt))).toEqual(new Set([1]))
          expect(new Set(gb.map((line) => line.attempt))).toEqual(new Set([2]))
          expect(new Set(gb.map((line) => line.id)).size).toBe(gb.length)

          const failing = yield* postWith(productExports, {}, company.headers)
          expect(failing.status).toBe(202)
          yield* exports.run(failing.body.data.id, true, () => {
            throw new Error("cannot write")
          })
          const failed = (yield* getWith(`${productExports}/${failing.body.data.id}`, company.headers)).body.data
          expect(failed).toMatchObject({
            status: "failed",
            downloadUrls: null,
            errorMessage: "The export could not be written; start a new one."
          })
          expect(yield* chunkCount(failing.body.data.id)).toBe(0)
          expect((yield* postWith(productExports, {}, company.headers)).status).toBe(202)
        }).pipe(Effect.provide(ExportsLive))
    )
  })
})
