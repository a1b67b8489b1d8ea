import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { Webhook } from "standardwebhooks"
import {
  netChanges,
  StockAvailability,
  StockAvailabilityNotifierLive,
  StockAvailabilityWindow
} from "../../../src/services/catalog/StockAvailability.js"
import { deliverWebhookHandler, WebhookDeliveries } from "../../../src/services/checkout/WebhookDeliveries.js"
import { CompanyWebhooks } from "../../../src/services/company/CompanyWebhooks.js"
import { Jobs } from "../../../src/services/platform/Jobs.js"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { Signals } from "../../../src/services/platform/Signals.js"
import { createCompany, keyHeaders, postWith, raiseLimits } from "../../support/company.js"
import { SeededTestDatabase } from "../../support/database.js"
import { eventually, settle } from "../../support/eventually.js"
import { serveRibbon } from "../../support/http.js"
import { certificate, httpsReceiver, type Received } from "../../support/receiver.js"

/**
 * `stock-availability-updates` (docs/decisions/0050-company-webhooks.md, docs/webhooks.md "Stock availability"): the
 * trigger that records availability changes from any write of stock, `notify` netting and broadcasting them to every
 * subscribed endpoint of every company, the notifier that runs it every window, and the sandbox control
 * over real HTTP. Deliveries go to a real HTTPS receiver and are verified with `standardwebhooks`.
 */

const SignalsLive = process.env.DATABASE_URL === undefined ? Signals.layerInProcess : Signals.layerPostgres

const TestServices = Layer.fresh(
  Layer.mergeAll(StockAvailability.Default, WebhookDeliveries.Default).pipe(
    Layer.provideMerge(CompanyWebhooks.Default),
    Layer.provideMerge(Jobs.Default),
    Layer.provide(OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })),
    Layer.provideMerge(SignalsLive)
  )
)

const TestLayer = TestServices.pipe(
  Layer.provideMerge(serveRibbon(SeededTestDatabase)),
  Layer.merge(Logger.minimumLogLevel(process.env.TEST_LOG === undefined ? LogLevel.None : LogLevel.Debug))
)

const sqlClient = SqlClient.SqlClient

const startWorker = Effect.flatMap(Jobs, (jobs) =>
  jobs.run([deliverWebhookHandler], { concurrency: 2, pollInterval: "1 hour" })
)

const newCompany = (environment: "test" | "live" = "test") =>
  Effect.tap(createCompany(environment), (company) => raiseLimits(company.companyId))

const createEndpoint = (apiKey: string, url: string, eventTypes: ReadonlyArray<string>) =>
  Effect.map(postWith("/public-api/v3/webhooks", { url, eventTypes }, keyHeaders(apiKey)), (response) => {
    expect(response.status).toBe(201)
    return response.body.data as { readonly id: string; readonly secret: string }
  })

const headersOf = (request: Received) => ({
  "webhook-id": String(request.headers["webhook-id"]),
  "webhook-timestamp": String(request.headers["webhook-timestamp"]),
  "webhook-signature": String(request.headers["webhook-signature"])
})

/** A tracked, in-stock physical variant (not one another test uses), with its product and countries. */
const pickVariant = (offset: number) =>
  Effect.flatMap(sqlClient, (sql) =>
    sql<{ id: string; productId: string; stock: number; shipsTo: ReadonlyArray<string> }>`
      SELECT v.id, v.product_id, l.stock, l.ships_to FROM variants v JOIN variant_locations l ON l.variant_id = v.id
      WHERE l.stock > 10 AND cardinality(l.ships_to) BETWEEN 2 AND 40 ORDER BY v.id OFFSET ${offset} LIMIT 1`.pipe(
      Effect.map((rows) => rows[0]!)
    )
  ).pipe(Effect.orDie)

const recorded = Effect.flatMap(
  sqlClient,
  (sql) =>
    sql<{ variantId: string; countryCode: string; available: boolean }>`
    SELECT variant_id, country_code, available FROM stock_availability_changes ORDER BY id`
).pipe(Effect.orDie)

const clearRecorded = Effect.flatMap(sqlClient, (sql) => sql`DELETE FROM stock_availability_changes`).pipe(Effect.orDie)

const setStock = (variantId: string, stock: number) =>
  Effect.flatMap(sqlClient, (sql) => sql`UPDATE variant_locations SET stock = ${stock} WHERE variant_id = ${variantId}`)

const deliveryCount = Effect.flatMap(sqlClient, (sql) =>
  sql<{
    count: number
  }>`SELECT count(*)::int AS count FROM webhook_deliveries WHERE event_type = 'stock-availability-updates'`.pipe(
    Effect.map((rows) => rows[0]!.count)
  )
).pipe(Effect.orDie)

const byCountry = (changes: ReadonlyArray<{ readonly countryCode: string }>) =>
  [...changes].sort((a, b) => a.countryCode.localeCompare(b.countryCode))

describe("netChanges", () => {
  const row = (seq: number, countryCode: string, available: boolean) => ({
    seq,
    variantId: "v1",
    productId: "p1",
    countryCode,
    available
  })

  layer(Layer.empty)((it) => {
    it.effect("keeps the last state of each variant and country, and drops a change undone in the window", () =>
      Effect.sync(() => {
        expect(
          netChanges([
            row(3, "US", true),
            row(1, "US", false),
            row(2, "GB", false),
            row(4, "DE", true),
            row(5, "DE", false)
          ])
        ).toEqual([{ variantId: "v1", productId: "p1", countryCode: "GB", available: false }])
        expect(netChanges([row(1, "US", false), row(2, "US", true), row(3, "US", false)])).toEqual([
          { variantId: "v1", productId: "p1", countryCode: "US", available: false }
        ])
        // A variant deleted since has no product: nothing to tell.
        expect(netChanges([{ ...row(1, "US", false), productId: null }])).toEqual([])
      })
    )
  })
})

describe("StockAvailability", () => {
  layer(TestLayer, { excludeTestServices: true, timeout: "120 seconds" })((it) => {
    it.effect(
      "the seed records nothing; any write that changes availability records it per country, others nothing",
      () =>
        Effect.gen(function* () {
          expect(yield* recorded).toEqual([])
          const variant = yield* pickVariant(0)
          const sql = yield* sqlClient
          // An order's decrement that leaves stock: nothing.
          yield* sql`UPDATE variant_locations SET stock = stock - 1 WHERE variant_id = ${variant.id}`
          expect(yield* recorded).toEqual([])
          yield* setStock(variant.id, 0)
          expect(byCountry(yield* recorded)).toEqual(
            byCountry(variant.shipsTo.map((countryCode) => ({ variantId: variant.id, countryCode, available: false })))
          )
          yield* clearRecorded
          // Out of stock, a country more or less changes nothing; a restock makes it available where it ships.
          yield* sql`UPDATE variant_locations SET ships_to = array_append(ships_to, 'ZZ') WHERE variant_id = ${variant.id}`
          expect(yield* recorded).toEqual([])
          yield* setStock(variant.id, 5)
          expect(byCountry(yield* recorded)).toEqual(
            byCountry(
              [...variant.shipsTo, "ZZ"].map((countryCode) => ({ variantId: variant.id, countryCode, available: true }))
            )
          )
          yield* clearRecorded
          // In stock, a country removed is that country only; a location deleted is every country it shipped to.
          yield* sql`UPDATE variant_locations SET ships_to = array_remove(ships_to, 'ZZ') WHERE variant_id = ${variant.id}`
          expect(yield* recorded).toEqual([{ variantId: variant.id, countryCode: "ZZ", available: false }])
          yield* clearRecorded
          yield* sql
            .withTransaction(
              Effect.gen(function* () {
                yield* sql`DELETE FROM variant_locations WHERE variant_id = ${variant.id}`
                expect((yield* recorded).length).toBe(variant.shipsTo.length)
                expect((yield* recorded).every((change) => !change.available)).toBe(true)
                return yield* Effect.fail("roll back")
              })
            )
            .pipe(Effect.ignore)
          yield* setStock(variant.id, variant.stock)
          yield* clearRecorded
        })
    )

    it.scoped("notify nets the changes and sends them once to every subscribed endpoint of every company", () =>
      Effect.gen(function* () {
        const receiver = yield* httpsReceiver()
        const test = yield* newCompany("test")
        const live = yield* newCompany("live")
        const testEndpoint = yield* createEndpoint(test.apiKey, receiver.url("/test"), ["stock-availability-updates"])
        const liveEndpoint = yield* createEndpoint(live.apiKey, receiver.url("/live"), ["stock-availability-updates"])
        yield* createEndpoint(test.apiKey, receiver.url("/orders"), ["order-created"])
        const gone = yield* pickVariant(1)
        const blip = yield* pickVariant(2)
        yield* setStock(gone.id, 0)
        // Out and back within the window: no change to tell.
        yield* setStock(blip.id, 0)
        yield* setStock(blip.id, 7)

        const stock = yield* StockAvailability
        expect(yield* stock.notify()).toBe(gone.shipsTo.length)
        expect(yield* recorded).toEqual([])
        expect(yield* stock.notify()).toBe(0)
        yield* startWorker
        yield* eventually(
          Effect.sync(() => receiver.received.length),
          (count) => count >= 2,
          "both deliveries"
        )
        yield* settle
        expect(receiver.received.map((request) => request.path).sort()).toEqual(["/live", "/test"])
        for (const [endpoint, company] of [
          [testEndpoint, test],
          [liveEndpoint, live]
        ] as const) {
          const request = receiver.received.find((r) => r.path === (company === test ? "/test" : "/live"))!
          const body = new Webhook(endpoint.secret).verify(request.body, headersOf(request)) as any
          expect(body.webhookData.eventType).toBe("stock-availability-updates")
          expect(body.eventData.companyId).toBe(company.companyId)
          expect(body.eventData.accountId).toBeNull()
          expect(byCountry(body.eventData.changes)).toEqual(
            byCountry(
              gone.shipsTo.map((countryCode) => ({
                variantId: gone.id,
                productId: gone.productId,
                countryCode,
                available: false
              }))
            )
          )
        }
        yield* setStock(gone.id, gone.stock)
        yield* setStock(blip.id, blip.stock)
        yield* clearRecorded
      })
    )

    it.scoped("the notifier sends what changed within a window without being asked", () =>
      Effect.gen(function* () {
        const receiver = yield* httpsReceiver()
        const company = yield* newCompany()
        const endpoint = yield* createEndpoint(company.apiKey, receiver.url("/stock"), ["stock-availability-updates"])
        yield* startWorker
        yield* Layer.build(
          StockAvailabilityNotifierLive.pipe(Layer.provide(Layer.succeed(StockAvailabilityWindow, "50 millis")))
        )
        const variant = yield* pickVariant(3)
        yield* setStock(variant.id, 0)
        yield* eventually(
          Effect.sync(() => receiver.received.length),
          (count) => count === 1,
          "the notifier's delivery"
        )
        const [request] = receiver.received
        const body = new Webhook(endpoint.secret).verify(request!.body, headersOf(request!)) as any
        expect(body.eventData.changes).toHaveLength(variant.shipsTo.length)
        yield* setStock(variant.id, variant.stock)
      })
    )

    it.scoped(
      "the sandbox control sends the test endpoints the event a stock level would cause, changing nothing",
      () =>
        Effect.gen(function* () {
          const receiver = yield* httpsReceiver()
          const company = yield* newCompany("test")
          const endpoint = yield* createEndpoint(company.apiKey, receiver.url("/sandbox"), [
            "stock-availability-updates"
          ])
          const other = yield* newCompany("test")
          yield* createEndpoint(other.apiKey, receiver.url("/other"), ["stock-availability-updates"])
          const variant = yield* pickVariant(4)
          const url = `/public-api/v3/variants/${variant.id}/simulate-stock`
          const headers = keyHeaders(company.apiKey)
          const before = yield* deliveryCount

          for (const body of [{}, { stock: -1 }, { stock: 1.5 }, { stock: "0" }, { stock: 0, extra: true }]) {
            const refused = yield* postWith(url, body, headers)
            expect(refused.status, JSON.stringify(body)).toBe(400)
            expect(refused.body.errorCode).toBe("400_PBLC_001")
          }
          expect(
            yield* postWith(`/public-api/v3/variants/${"0".repeat(24)}/simulate-stock`, { stock: 0 }, headers)
          ).toMatchObject({
            status: 404,
            body: { errorCode: "404_PROD_002" }
          })
          const live = yield* newCompany("live")
          expect((yield* postWith(url, { stock: 0 }, keyHeaders(live.apiKey))).status).toBe(404)
          // In stock already: nothing would change.
          expect(yield* postWith(url, { stock: 3 }, headers)).toMatchObject({
            status: 202,
            body: { data: { changes: [] } }
          })
          expect(yield* deliveryCount).toBe(before)

          const sent = yield* postWith(url, { stock: 0 }, headers)
          expect(sent.status).toBe(202)
          const expected = variant.shipsTo.map((countryCode) => ({
            variantId: variant.id,
            productId: variant.productId,
            countryCode,
            available: false
          }))
          expect(byCountry(sent.body.data.changes)).toEqual(byCountry(expected))
          yield* startWorker
          yield* eventually(
            Effect.sync(() => receiver.received.length),
            (count) => count >= 1,
            "the sandbox event"
          )
          yield* settle
          expect(receiver.received.map((request) => request.path)).toEqual(["/sandbox"])
          const body = new Webhook(endpoint.secret).verify(
            receiver.received[0]!.body,
            headersOf(receiver.received[0]!)
          ) as any
          expect(body.eventData).toEqual({
            companyId: company.companyId,
            accountId: null,
            changes: sent.body.data.changes
          })
          // The catalog's stock is untouched, and nothing was recorded for the notifier.
          const [location] = yield* Effect.flatMap(
            sqlClient,
            (sql) => sql<{ stock: number }>`SELECT stock FROM variant_locations WHERE variant_id = ${variant.id}`
          )
          expect(location!.stock).toBe(variant.stock)
          expect((yield* recorded).filter((change) => change.variantId === variant.id)).toEqual([])
        })
    )
  })
})
