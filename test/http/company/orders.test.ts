import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Webhook } from "standardwebhooks"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { londonAddress, makeCheckoutTestServer } from "../../support/checkout.js"
import {
  createCompany,
  getWith,
  keyHeaders,
  orderCounts,
  postWith,
  postWithoutBody,
  raiseLimits,
  timestampPattern,
  v2Keys
} from "../../support/company.js"
import { eventually, settle } from "../../support/eventually.js"
import { certificate, httpsReceiver } from "../../support/receiver.js"

/**
 * v3 orders over real HTTP (docs/decisions/0039-v3-orders.md): placement, idempotency, the ledger, cancel, sandbox,
 * masking.
 */

const orders = "/public-api/v3/orders"
const billingMethods = "/public-api/v3/billing-methods"

const recipient = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+44 20 7946 0958" }

const v3Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })

/** A test company with raised limits and a variant that ships to GB. */
const setup = (environment: "test" | "live" = "test") =>
  Effect.gen(function* () {
    const company = yield* createCompany(environment)
    yield* raiseLimits(company.companyId)
    const sql = yield* SqlClient.SqlClient
    // A physical variant for sale that ships to GB with stock to spare.
    const [variant] = yield* sql<{
      id: string
    }>`SELECT v.id FROM variants v JOIN variant_locations l ON l.variant_id = v.id
      WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND 'GB' = ANY (l.ships_to) AND l.stock > 100
      ORDER BY l.stock DESC, v.id LIMIT 1`
    return { ...company, variantId: variant!.id }
  })

const remainingOf = (apiKey: string, accountId?: string) =>
  Effect.map(
    getWith(`${billingMethods}${accountId === undefined ? "" : `?filter[accountId]=${accountId}`}`, keyHeaders(apiKey)),
    (response) => response.body.data[0].spendingLimit.remaining as number
  )

const orderBody = (variantId: string, idempotencyKey: string, extra: Record<string, unknown> = {}) => ({
  variantId,
  recipient,
  shippingAddress: londonAddress,
  idempotencyKey,
  ...extra
})

/** A key of the company with only `permissions`. */
const keyWith = (apiKey: string, permissions: ReadonlyArray<string>, accountsAccess?: unknown) =>
  Effect.map(
    postWith(
      v2Keys,
      { name: `k-${Math.random()}`, permissions, ...(accountsAccess ? { accountsAccess } : {}) },
      keyHeaders(apiKey)
    ),
    (response) => response.body.apiKey as string
  )

const Server = makeCheckoutTestServer(
  Layer.mergeAll(
    FulfillmentSettings.layer({ progressEvery: "100 millis" }),
    OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })
  )
)

describe("orders (/public-api/v3)", () => {
  it.layer(Server, { timeout: 180_000 })((it) => {
    it.effect("places an order: 201 with every field, the ledger debited, readable by id, in the list and by key", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const before = yield* remainingOf(company.apiKey)
        const placed = yield* postWith(
          orders,
          orderBody(company.variantId, "order-1", {
            tags: ["welcome"],
            metadata: { crm: "42", order_ref: "A-1", "Cost-Center": "x" }
          }),
          keyHeaders(company.apiKey, { "request-source": "api_zapier" })
        )
        expect(placed.status).toBe(201)
        expect(placed.headers["idempotent-replayed"]).toBeUndefined()
        const order = placed.body.data
        expect(order).toEqual({
          id: expect.stringMatching(/^[0-9a-f]{24}$/),
          accountId: company.accountId,
          billingMethodId: expect.stringMatching(/^[0-9a-f]{24}$/),
          status: "active",
          fulfillmentStatus: "unfulfilled",
          idempotencyKey: "order-1",
          tags: ["welcome"],
          // Metadata keys come back exactly as sent, whatever their case.
          metadata: { crm: "42", order_ref: "A-1", "Cost-Center": "x" },
          lineItems: [
            {
              variantId: company.variantId,
              productId: expect.stringMatching(/^[0-9a-f]{24}$/),
              title: expect.any(String),
              quantity: 1,
              price: { amount: expect.any(Number), currency: "GBP" }
            }
          ],
          total: { amount: order.lineItems[0].price.amount, currency: "GBP" },
          recipient: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+442079460958" },
          recipientAddressHidden: false,
          shippingAddress: {
            address1: "10 Downing Street",
            address2: null,
            city: "London",
            provinceCode: null,
            postalCode: "SW1A 2AA",
            countryCode: "GB"
          },
          fulfillments: [
            {
              id: expect.stringMatching(/^[0-9a-f]{24}$/),
              status: "orderReceived",
              carrier: null,
              trackingNumber: null,
              trackingUrl: null,
              shippedAt: null,
              deliveredAt: null
            }
          ],
          trackingLink: null,
          source: "api_zapier",
          giftId: null,
          swappedFrom: null,
          cancellationDetails: null,
          createdAt: expect.stringMatching(timestampPattern),
          updatedAt: expect.stringMatching(timestampPattern)
        })
        const after = yield* remainingOf(company.apiKey)
        expect(after).toBeLessThan(before)

        const one = yield* getWith(`${orders}/${order.id}`, keyHeaders(company.apiKey))
        expect(one.body).toEqual({ data: order })
        const listed = yield* getWith(orders, keyHeaders(company.apiKey))
        expect(listed.body.data.map((o: any) => o.id)).toEqual([order.id])
        const byKey = yield* getWith(`${orders}?filter[idempotencyKey]=order-1`, keyHeaders(company.apiKey))
        expect(byKey.body.data).toEqual([order])
        const byTag = yield* getWith(`${orders}?filter[tag]=other`, keyHeaders(company.apiKey))
        expect(byTag.body.data).toEqual([])
        const since = yield* getWith(
          `${orders}?filter[createdAt][gte]=${encodeURIComponent(order.createdAt)}`,
          keyHeaders(company.apiKey)
        )
        expect(since.body.data).toHaveLength(1)
      })
    )

    it.effect("a replay returns the first response and debits nothing; another body with the key is a 422", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const first = yield* postWith(orders, orderBody(company.variantId, "replay-me"), keyHeaders(company.apiKey))
        expect(first.status).toBe(201)
        const remaining = yield* remainingOf(company.apiKey)
        const before = yield* orderCounts
        // The order moves on; the replay still answers with the first response.
        yield* postWith(
          `${orders}/${first.body.data.id}/simulate`,
          { fulfillmentStatus: "processing" },
          keyHeaders(company.apiKey)
        )

        const again = yield* postWith(orders, orderBody(company.variantId, "replay-me"), keyHeaders(company.apiKey))
        expect(again.status).toBe(201)
        expect(again.headers["idempotent-replayed"]).toBe("true")
        expect(again.body).toEqual(first.body)
        expect(yield* remainingOf(company.apiKey)).toBe(remaining)
        expect(yield* orderCounts).toEqual(before)

        const other = yield* postWith(
          orders,
          orderBody(company.variantId, "replay-me", { tags: ["different"] }),
          keyHeaders(company.apiKey)
        )
        expect(other.status).toBe(422)
        expect(other.body).toEqual(v3Error(422, "422_ORDS_003"))
        expect(yield* orderCounts).toEqual(before)
      })
    )

    it.effect("a key's replay stays in its accounts, and matches the account however the request named it", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const second = yield* postWith(
          "/public-api/v3/accounts",
          { name: "Second", billingMethod: { name: "Budget", type: "prepaid", spendingLimit: { amount: 1_000_000 } } },
          keyHeaders(company.apiKey)
        )
        expect(second.status, JSON.stringify(second.body)).toBe(201)
        const [first, other] = [company.accountId, second.body.data.id as string]
        const onlyOther = yield* keyWith(company.apiKey, ["orders:create"], {
          scope: "selected-accounts",
          ids: [other]
        })
        const body = orderBody(company.variantId, "shared-key")
        const placed = yield* postWith(orders, body, keyHeaders(company.apiKey, { "ribbon-account-id": first }))
        expect(placed.status, JSON.stringify(placed.body)).toBe(201)
        const before = yield* orderCounts
        const otherFunds = yield* remainingOf(company.apiKey, other)

        // The same body with the key, from a key that reaches only the other account: not the first order.
        for (const headers of [keyHeaders(onlyOther, { "ribbon-account-id": other }), keyHeaders(onlyOther)]) {
          const refused = yield* postWith(orders, body, headers)
          expect(refused.status, refused.text).toBe(422)
          expect(refused.body).toEqual(v3Error(422, "422_ORDS_003"))
          expect(refused.headers["idempotent-replayed"]).toBeUndefined()
          expect(refused.text).not.toContain(placed.body.data.id)
        }
        // Nor from the company's own key naming the other account.
        const named = yield* postWith(orders, body, keyHeaders(company.apiKey, { "ribbon-account-id": other }))
        expect(named).toMatchObject({ status: 422, body: v3Error(422, "422_ORDS_003") })
        expect(yield* orderCounts).toEqual(before)
        expect(yield* remainingOf(company.apiKey, other)).toBe(otherFunds)

        // An order for the other account, then its replays: the header, the body's accountId and the only
        // account the limited key reaches all mean that account; the first account does not.
        const forOther = orderBody(company.variantId, "other-key")
        const made = yield* postWith(orders, forOther, keyHeaders(company.apiKey, { "ribbon-account-id": other }))
        expect(made.status, JSON.stringify(made.body)).toBe(201)
        const afterMade = yield* orderCounts
        for (const [request, headers] of [
          [{ ...forOther, accountId: other }, keyHeaders(company.apiKey)],
          [forOther, keyHeaders(onlyOther)]
        ] as const) {
          const replayed = yield* postWith(orders, request, headers)
          expect(replayed.status, replayed.text).toBe(201)
          expect(replayed.headers["idempotent-replayed"]).toBe("true")
          expect(replayed.body.data.id).toBe(made.body.data.id)
        }
        const elsewhere = yield* postWith(orders, { ...forOther, accountId: first }, keyHeaders(company.apiKey))
        expect(elsewhere).toMatchObject({ status: 422, body: v3Error(422, "422_ORDS_003") })
        expect(yield* orderCounts).toEqual(afterMade)
      })
    )

    it.effect("20 concurrent requests with one new key place one order", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const before = yield* orderCounts
        const responses = yield* Effect.all(
          Array.from({ length: 20 }, () =>
            postWith(orders, orderBody(company.variantId, "burst"), keyHeaders(company.apiKey))
          ),
          { concurrency: "unbounded" }
        )
        const ids = new Set(responses.filter((r) => r.status === 201).map((r) => r.body.data.id))
        expect(ids.size).toBe(1)
        for (const response of responses) expect([201, 409]).toContain(response.status)
        const after = yield* orderCounts
        expect(after.orders - before.orders).toBe(1)
        expect(after.entries - before.entries).toBe(1)
        expect(after.bookings - before.bookings).toBe(1)
      })
    )

    it.effect("every bound is a 400 naming the field, and nothing is stored or debited", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const before = yield* orderCounts
        const good = orderBody(company.variantId, "k")
        const cases: ReadonlyArray<[unknown, string]> = [
          [{ ...good, idempotencyKey: "" }, "idempotencyKey"],
          [{ ...good, idempotencyKey: "x".repeat(121) }, "idempotencyKey"],
          [{ ...good, variantId: "nope" }, "variantId"],
          [{ ...good, recipient: { ...recipient, email: "not-an-email" } }, "recipient.email"],
          [{ ...good, recipient: { ...recipient, phone: "12345678" } }, "recipient.phone"],
          [{ ...good, recipient: { ...recipient, firstName: "" } }, "recipient.firstName"],
          [{ ...good, shippingAddress: { ...londonAddress, countryCode: "GBR" } }, "shippingAddress.countryCode"],
          [{ ...good, shippingAddress: { ...londonAddress, address1: undefined } }, "shippingAddress.address1"],
          [
            { ...good, shippingAddress: { ...londonAddress, postalCode: "x".repeat(21) } },
            "shippingAddress.postalCode"
          ],
          [{ ...good, tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, "tags"],
          [{ ...good, tags: [""] }, "tags[0]"],
          [{ ...good, metadata: { ["k".repeat(41)]: "v" } }, "metadata"],
          [{ ...good, metadata: { k: "v".repeat(501) } }, "metadata.k"],
          [{ ...good, metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) }, "metadata"],
          [{ ...good, country: "GB" }, "country"],
          [{ ...good, idempotencyKey: undefined }, "idempotencyKey"]
        ]
        for (const [body, path] of cases) {
          const response = yield* postWith(orders, body, keyHeaders(company.apiKey))
          expect(response.status, JSON.stringify(body).slice(0, 120)).toBe(400)
          expect(response.body.errorCode).toBe("400_PBLC_001")
          expect(
            response.body.errors
              .map((e: any) => e.path)
              .some((p: string) => p === path || p.startsWith(`${path}.`) || p.startsWith(`${path}[`)),
            `${path} in ${JSON.stringify(response.body.errors)}`
          ).toBe(true)
        }
        expect(yield* orderCounts).toEqual(before)
      })
    )

    it.effect("404 for an account, billing method or variant out of reach; 422 for shipping, address and funds", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const company = yield* setup()
        const before = yield* orderCounts
        const unknown = "0123456789abcdef01234567"
        const post = (body: unknown) => postWith(orders, body, keyHeaders(company.apiKey))

        expect((yield* post(orderBody(company.variantId, "a", { accountId: unknown }))).body).toEqual(
          v3Error(404, "404_ACCT_001")
        )
        expect((yield* post(orderBody(company.variantId, "b", { billingMethodId: unknown }))).body).toEqual(
          v3Error(404, "404_BILL_001")
        )
        expect((yield* post(orderBody(unknown, "c"))).body).toEqual(v3Error(404, "404_PROD_002"))

        // A variant that does not ship to one of the supported countries.
        const [narrow] = yield* sql<{ variantId: string; country: string }>`
          SELECT l.variant_id, c.code AS country FROM variant_locations l CROSS JOIN countries c
          WHERE NOT (c.code = ANY (l.ships_to)) ORDER BY l.variant_id, c.code LIMIT 1`
        const notShippable = yield* post({
          ...orderBody(narrow!.variantId, "d"),
          shippingAddress: { ...londonAddress, countryCode: narrow!.country }
        })
        expect(notShippable.status).toBe(422)
        expect(notShippable.body).toEqual(v3Error(422, "422_ORDS_001"))

        const badAddress = yield* post(
          orderBody(company.variantId, "e", { shippingAddress: { ...londonAddress, postalCode: "99999" } })
        )
        expect(badAddress.status).toBe(422)
        expect(badAddress.body).toEqual(v3Error(422, "422_ORDS_004"))

        const poor = yield* postWith(
          "/public-api/v3/accounts",
          { name: "Poor", billingMethod: { name: "Cent", type: "prepaid", spendingLimit: { amount: 1 } } },
          keyHeaders(company.apiKey)
        )
        const broke = yield* post(orderBody(company.variantId, "f", { accountId: poor.body.data.id }))
        expect(broke.status).toBe(422)
        expect(broke.body).toEqual(v3Error(422, "422_BILL_001"))
        expect(yield* orderCounts).toEqual(before)
      })
    )

    it.effect("two orders racing for the last funds: one is placed, the other is refused", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const start = yield* remainingOf(company.apiKey)
        yield* postWith(orders, orderBody(company.variantId, "probe"), keyHeaders(company.apiKey))
        const charged = start - (yield* remainingOf(company.apiKey))
        const tight = yield* postWith(
          "/public-api/v3/accounts",
          {
            name: "Tight",
            billingMethod: {
              name: "One order",
              type: "prepaid",
              spendingLimit: { amount: charged + Math.floor(charged / 2) }
            }
          },
          keyHeaders(company.apiKey)
        )
        const accountId = tight.body.data.id
        const results = yield* Effect.all(
          ["race-1", "race-2", "race-3"].map((key) =>
            postWith(orders, orderBody(company.variantId, key, { accountId }), keyHeaders(company.apiKey))
          ),
          { concurrency: "unbounded" }
        )
        expect(results.map((r) => r.status).sort()).toEqual([201, 422, 422])
        for (const refused of results.filter((r) => r.status === 422))
          expect(refused.body.errorCode).toBe("422_BILL_001")
        expect(yield* remainingOf(company.apiKey, accountId)).toBe(Math.floor(charged / 2))

        // The winner's key replayed: the funds left would refuse a new order, but its first response stands.
        // A refused key stored nothing: sent again, it is refused again.
        const [won, refused] = [0, 1, 2]
          .map((index) => ({ key: `race-${index + 1}`, response: results[index]! }))
          .sort((a, b) => a.response.status - b.response.status)
        const replayed = yield* postWith(
          orders,
          orderBody(company.variantId, won!.key, { accountId }),
          keyHeaders(company.apiKey)
        )
        expect(replayed.status).toBe(201)
        expect(replayed.headers["idempotent-replayed"]).toBe("true")
        expect(replayed.body).toEqual(won!.response.body)
        const again = yield* postWith(
          orders,
          orderBody(company.variantId, refused!.key, { accountId }),
          keyHeaders(company.apiKey)
        )
        expect(again.status).toBe(422)
        expect(again.headers["idempotent-replayed"]).toBeUndefined()
        expect(again.body.errorCode).toBe("422_BILL_001")
        expect(yield* remainingOf(company.apiKey, accountId)).toBe(Math.floor(charged / 2))
      })
    )

    it.effect("cancels until in transit, crediting the billing method; then 422", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const start = yield* remainingOf(company.apiKey)
        const placed = yield* postWith(orders, orderBody(company.variantId, "cancel-me"), keyHeaders(company.apiKey))
        const id = placed.body.data.id
        yield* postWith(`${orders}/${id}/simulate`, { fulfillmentStatus: "processing" }, keyHeaders(company.apiKey))
        const cancelled = yield* postWith(
          `${orders}/${id}/cancel`,
          { reason: "Changed our mind" },
          keyHeaders(company.apiKey)
        )
        expect(cancelled.status).toBe(200)
        expect(cancelled.body.data).toMatchObject({
          status: "cancelled",
          fulfillmentStatus: "cancelled",
          fulfillments: [{ status: "cancelled" }],
          cancellationDetails: { cancelledAt: expect.stringMatching(timestampPattern), reason: "Changed our mind" }
        })
        expect(yield* remainingOf(company.apiKey)).toBe(start)
        const twice = yield* postWith(`${orders}/${id}/cancel`, {}, keyHeaders(company.apiKey))
        expect(twice.body).toEqual(v3Error(422, "422_ORDS_005"))

        const shipped = yield* postWith(orders, orderBody(company.variantId, "too-late"), keyHeaders(company.apiKey))
        const shippedId = shipped.body.data.id
        for (const fulfillmentStatus of ["processing", "inTransit"]) {
          const moved = yield* postWith(
            `${orders}/${shippedId}/simulate`,
            { fulfillmentStatus },
            keyHeaders(company.apiKey)
          )
          expect(moved.status).toBe(200)
        }
        const late = yield* postWith(`${orders}/${shippedId}/cancel`, {}, keyHeaders(company.apiKey))
        expect(late.status).toBe(422)
        expect(late.body).toEqual(v3Error(422, "422_ORDS_002"))
      })
    )

    it.effect("cancel takes no body at all, or an empty one (Content-Length: 0): its reason is optional", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const headers = keyHeaders(company.apiKey)
        const first = yield* postWith(orders, orderBody(company.variantId, "no-body"), headers)
        const bare = yield* postWithoutBody(`${orders}/${first.body.data.id}/cancel`, headers)
        expect(bare.status, JSON.stringify(bare.body)).toBe(200)
        expect(bare.body.data).toMatchObject({
          status: "cancelled",
          cancellationDetails: { reason: "Cancelled by the company" }
        })
        const second = yield* postWith(orders, orderBody(company.variantId, "empty-body"), headers)
        const empty = yield* postWith(`${orders}/${second.body.data.id}/cancel`, "", headers)
        expect(empty.status, JSON.stringify(empty.body)).toBe(200)
        expect(empty.body.data.status).toBe("cancelled")
        // A body that is there is still checked.
        const third = yield* postWith(orders, orderBody(company.variantId, "bad-body"), headers)
        const refused = yield* postWith(`${orders}/${third.body.data.id}/cancel`, { reason: "" }, headers)
        expect(refused.status).toBe(400)
        expect(refused.body.errors).toEqual([
          { path: "reason", errorCode: "400_PBLC_001", message: "must not be empty" }
        ])
      })
    )

    it.effect(
      "the sandbox moves a test order step by step to delivered, or fails it with a refund; live keys get 404",
      () =>
        Effect.gen(function* () {
          const company = yield* setup()
          const start = yield* remainingOf(company.apiKey)
          const placed = yield* postWith(orders, orderBody(company.variantId, "sandbox"), keyHeaders(company.apiKey))
          const id = placed.body.data.id
          const afterFirst = yield* remainingOf(company.apiKey)
          expect(afterFirst).toBeLessThan(start)
          const simulate = (fulfillmentStatus: string) =>
            postWith(`${orders}/${id}/simulate`, { fulfillmentStatus }, keyHeaders(company.apiKey))

          const skip = yield* simulate("delivered")
          expect(skip.body).toEqual(v3Error(422, "422_ORDS_007"))
          for (const step of ["processing", "inTransit", "outForDelivery", "delivered"]) {
            const moved = yield* simulate(step)
            expect(moved.status, step).toBe(200)
            expect(moved.body.data.fulfillments[0].status).toBe(step)
          }
          const done = (yield* getWith(`${orders}/${id}`, keyHeaders(company.apiKey))).body.data
          expect(done).toMatchObject({ status: "completed", fulfillmentStatus: "fulfilled" })
          expect(done.fulfillments[0]).toMatchObject({
            carrier: expect.any(String),
            trackingNumber: expect.any(String),
            shippedAt: expect.stringMatching(timestampPattern),
            deliveredAt: expect.stringMatching(timestampPattern)
          })
          expect(done.trackingLink).toBe(done.fulfillments[0].trackingUrl)
          expect((yield* simulate("failed")).status).toBe(422)

          const lost = yield* postWith(orders, orderBody(company.variantId, "lost"), keyHeaders(company.apiKey))
          const failed = yield* postWith(
            `${orders}/${lost.body.data.id}/simulate`,
            { fulfillmentStatus: "failed" },
            keyHeaders(company.apiKey)
          )
          expect(failed.body.data).toMatchObject({
            status: "refunded",
            fulfillmentStatus: "cancelled",
            fulfillments: [{ status: "failed" }]
          })
          // The delivered order stays paid; the failed one is credited back.
          expect(yield* remainingOf(company.apiKey)).toBe(afterFirst)

          const live = yield* setup("live")
          const liveOrder = yield* postWith(orders, orderBody(live.variantId, "live-1"), keyHeaders(live.apiKey))
          expect(liveOrder.status).toBe(201)
          const refused = yield* postWith(
            `${orders}/${liveOrder.body.data.id}/simulate`,
            { fulfillmentStatus: "processing" },
            keyHeaders(live.apiKey)
          )
          expect(refused.status).toBe(404)
          // Live orders move on their own (here every 100 ms) to delivered.
          const delivered = yield* eventually(
            getWith(`${orders}/${liveOrder.body.data.id}`, keyHeaders(live.apiKey)),
            (r) => r.body.data.status === "completed",
            "the live order's delivery"
          )
          expect(delivered.body.data.fulfillments[0].status).toBe("delivered")
        })
    )

    it.effect("reads mask the recipient with orders:read:masked, show it with :unmasked, and 403 with neither", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const placed = yield* postWith(orders, orderBody(company.variantId, "mask"), keyHeaders(company.apiKey))
        const id = placed.body.data.id
        // At most 3 keys: the first key (every permission, so unmasked) and two more.
        const masked = yield* keyWith(company.apiKey, ["orders:read:masked"])
        const unmasked = company.apiKey
        const neither = yield* keyWith(company.apiKey, ["orders:create"])

        const seen = (yield* getWith(`${orders}/${id}`, keyHeaders(masked))).body.data
        expect(seen.recipient).toEqual({
          firstName: "A**",
          lastName: "L*******",
          email: "a***@example.com",
          phone: "+44******0958"
        })
        expect(seen.shippingAddress.address1).toBe("** D****** S*****")
        const listed = (yield* getWith(orders, keyHeaders(masked))).body.data
        expect(listed[0].recipient.email).toBe("a***@example.com")
        expect((yield* getWith(`${orders}/${id}`, keyHeaders(unmasked))).body.data.recipient.email).toBe(
          "ada@example.com"
        )
        for (const url of [orders, `${orders}/${id}`]) {
          const refused = yield* getWith(url, keyHeaders(neither))
          expect(refused.status).toBe(403)
          expect(refused.body).toEqual(v3Error(403, "403_KEYS_001"))
        }
        // Placing needs orders:create only; its answer is masked for a key that cannot read unmasked.
        const placedMasked = yield* postWith(orders, orderBody(company.variantId, "mask-2"), keyHeaders(neither))
        expect(placedMasked.status).toBe(201)
        expect(placedMasked.body.data.recipient.email).toBe("a***@example.com")
      })
    )

    it.effect("an order is out of reach of a key that cannot reach its account (404)", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const other = yield* postWith(
          "/public-api/v3/accounts",
          { name: "Other", billingMethod: { name: "B", type: "invoice", spendingLimit: { amount: 100_000_00 } } },
          keyHeaders(company.apiKey)
        )
        const placed = yield* postWith(
          orders,
          orderBody(company.variantId, "scoped", { accountId: other.body.data.id }),
          keyHeaders(company.apiKey)
        )
        expect(placed.status).toBe(201)
        expect(placed.body.data.accountId).toBe(other.body.data.id)
        const narrow = yield* keyWith(company.apiKey, ["orders:read:unmasked"], {
          scope: "selected-accounts",
          ids: [company.accountId]
        })
        const hidden = yield* getWith(`${orders}/${placed.body.data.id}`, keyHeaders(narrow))
        expect(hidden.status).toBe(404)
        expect(hidden.body).toEqual(v3Error(404, "404_ORDS_001"))
        expect((yield* getWith(orders, keyHeaders(narrow))).body.data).toEqual([])
        // With Ribbon-Account-Id, the header names the account the order is for.
        const viaHeader = yield* postWith(
          orders,
          orderBody(company.variantId, "header"),
          keyHeaders(company.apiKey, { "ribbon-account-id": other.body.data.id })
        )
        expect(viaHeader.body.data.accountId).toBe(other.body.data.id)
      })
    )
    it.scoped("webhooks: order-created once however often the key is replayed, then each move, signed v1", () =>
      Effect.gen(function* () {
        const receiver = yield* httpsReceiver()
        const company = yield* setup()
        const endpoint = yield* postWith(
          "/public-api/v3/webhooks",
          {
            url: receiver.url("/hooks"),
            eventTypes: ["order-created", "order-fulfillment-status-changed", "order-status-changed", "order-cancelled"]
          },
          keyHeaders(company.apiKey)
        )
        expect(endpoint.status).toBe(201)
        const placed = yield* postWith(orders, orderBody(company.variantId, "hooked"), keyHeaders(company.apiKey))
        const replayed = yield* postWith(orders, orderBody(company.variantId, "hooked"), keyHeaders(company.apiKey))
        expect(replayed.headers["idempotent-replayed"]).toBe("true")
        const id = placed.body.data.id
        yield* postWith(`${orders}/${id}/simulate`, { fulfillmentStatus: "processing" }, keyHeaders(company.apiKey))
        yield* postWith(`${orders}/${id}/cancel`, {}, keyHeaders(company.apiKey))

        yield* eventually(
          Effect.sync(() => receiver.received.length),
          (n) => n >= 5,
          "five deliveries"
        )
        yield* settle // and no sixth, which a replay would have emitted
        const verifier = new Webhook(endpoint.body.data.secret)
        const bodies = receiver.received.map((request) =>
          verifier.verify(request.body, {
            "webhook-id": String(request.headers["webhook-id"]),
            "webhook-timestamp": String(request.headers["webhook-timestamp"]),
            "webhook-signature": String(request.headers["webhook-signature"])
          })
        ) as Array<any>
        const seen = bodies.map((body) => `${body.webhookData.eventType}:${body.eventData.shipmentStatus}`).sort()
        expect(seen).toEqual(
          [
            "order-created:orderReceived",
            "order-fulfillment-status-changed:processing",
            "order-fulfillment-status-changed:cancelled",
            "order-status-changed:cancelled",
            "order-cancelled:cancelled"
          ].sort()
        )
        for (const body of bodies) {
          expect(body.eventData).toMatchObject({
            companyId: company.companyId,
            accountId: company.accountId,
            orderId: id
          })
          expect(body.webhookData.target).toBe(receiver.url("/hooks"))
        }
      })
    )
  })
})
