import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Layer } from "effect"
import { Pricing } from "../../../src/services/catalog/Pricing.js"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { makeCheckoutTestServer } from "../../support/checkout.js"
import { deleteWith, getWith, keyHeaders, postWith, v2Keys } from "../../support/company.js"
import { eventually } from "../../support/eventually.js"
import { companyWithProductCampaign } from "../../support/giftLinks.js"
import { get, postForm, testPublicUrl } from "../../support/http.js"
import { certificate, httpsReceiver } from "../../support/receiver.js"

/**
 * Claiming v2 gifts over real HTTP (docs/decisions/0048-gift-page-and-claims.md): the gift page's steps as a browser
 * without JavaScript takes them (plain GETs and a form POST), with the gift's status moving at each; the claim API;
 * and `POST /v2/orders`, idempotent on the recipient's key. Every claim's order is the v3 order, its budget
 * reservation released and the landed price charged instead.
 */

const gifts = "/public-api/v2/gifts"
const sqlClient = SqlClient.SqlClient

const v2Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })

/** A product with one variant for sale that ships to GB with stock, and another product. */
const catalog = Effect.flatMap(sqlClient, (sql) =>
  Effect.gen(function* () {
    const [chosen] = yield* sql<{ productId: string; variantId: string; title: string }>`
      SELECT p.id AS product_id, v.id AS variant_id, p.title FROM products p JOIN variants v ON v.product_id = p.id
        JOIN variant_locations l ON l.variant_id = v.id
      WHERE v.price_usd IS NOT NULL AND NOT v.is_digital AND l.stock > 100 AND 'GB' = ANY (l.ships_to)
        AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
      ORDER BY p.id LIMIT 1`
    const [other] = yield* sql<{ variantId: string }>`SELECT v.id AS variant_id FROM variants v
      WHERE v.product_id <> ${chosen!.productId} AND v.price_usd IS NOT NULL ORDER BY v.id LIMIT 1`
    return { ...chosen!, otherVariantId: other!.variantId }
  })
).pipe(Effect.orDie)

const setup = Effect.gen(function* () {
  const product = yield* catalog
  const company = yield* companyWithProductCampaign(product.productId, { message: "Welcome aboard!" })
  return { ...company, ...product, campaignId: company.campaign.id }
})

const remaining = (headers: Record<string, string>) =>
  Effect.map(
    getWith("/public-api/v3/billing-methods", headers),
    (response) => response.body.data[0].spendingLimit.remaining as number
  )

const sendGift = (company: Effect.Effect.Success<typeof setup>, key: string) =>
  Effect.map(
    postWith(
      gifts,
      {
        campaignId: company.campaignId,
        recipients: [{ firstname: "Ada", lastname: "Lovelace", email: `${key}@example.com`, key }]
      },
      company.headers
    ),
    (response) => response.body.results[0] as { id: string; link: string }
  )

const statusOf = (company: Effect.Effect.Success<typeof setup>, giftId: string) =>
  Effect.map(getWith(`${gifts}/${giftId}`, company.headers), (response) => response.body.status as string)

const londonForm = {
  firstName: "Ada",
  lastName: "Lovelace",
  email: "ada@example.com",
  phone: "+44 20 7946 0958",
  address1: "10 Downing Street",
  city: "London",
  zipcode: "SW1A 2AA",
  country: "GB"
}

const orderRecipient = {
  firstName: "Ada",
  lastName: "Lovelace",
  email: "ada@example.com",
  phone: "+44 20 7946 0958",
  country: "GB",
  address: { addressLine1: "10 Downing Street", city: "London", zipcode: "SW1A 2AA" }
}

/**
 * The server's outbound requests trust the test receiver and wait for it as long as it takes, so that a
 * delivery it holds stays in flight for the whole test. `Pricing` is the server's own instance (layers are
 * shared by reference within a build), so the test can drop its cached reference data.
 */
const ClaimsServer = Layer.provideMerge(
  Pricing.Default,
  makeCheckoutTestServer(
    Layer.mergeAll(
      FulfillmentSettings.Default,
      OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert], timeout: Duration.hours(1) })
    )
  )
)

describe("claiming gifts", () => {
  it.layer(ClaimsServer, { timeout: 180_000 })((it) => {
    it.effect("the gift page: opened, unwrapped, the form, then claimed with the v3 order and the price charged", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const before = yield* remaining(company.headers)
        const gift = yield* sendGift(company, "page")
        const path = gift.link.replace(testPublicUrl, "")
        expect(yield* statusOf(company, gift.id)).toBe("unopened")

        const landing = yield* get(path)
        expect(landing.status).toBe(200)
        expect(landing.headers["content-security-policy"]).toContain("default-src 'none'")
        expect(landing.headers["cache-control"]).toBe("no-store")
        expect(landing.text).toContain("Ada, you have a gift")
        expect(landing.text).toContain("Welcome aboard!")
        expect(landing.text).toContain('<label for="country">Country</label>')
        expect(yield* statusOf(company, gift.id)).toBe("opened")

        const choices = yield* get(`${path}/choices?country=GB`)
        expect(choices.status).toBe(200)
        expect(choices.text).toContain(company.title.replace(/&/g, "&amp;"))
        expect(choices.text).toContain(">Choose</button>")
        // No price reaches the recipient.
        expect(choices.text).not.toMatch(/[$£€]\s?\d/)
        expect(yield* statusOf(company, gift.id)).toBe("unwrapped")

        const form = yield* get(`${path}/choose?productId=${company.productId}&country=GB`)
        expect(form.status).toBe(200)
        for (const label of ["First name", "Last name", "Email", "Phone", "Address line 1", "City", "Country"]) {
          expect(form.text).toContain(`>${label}</label>`)
        }
        for (const label of ["Address line 2", "State or province", "Postal code"]) {
          expect(form.text).toContain(`>${label} <span class="optional">(optional)</span></label>`)
        }
        expect(form.text).toContain(">Claim gift</button>")

        // A form missing its city is shown again with the problem, announced and beside the field it belongs to (the
        // field marked invalid, described by its message); nothing is placed.
        const refused = yield* postForm(`${path}/claim`, {
          ...londonForm,
          city: "",
          variantId: company.variantId,
          productId: company.productId
        })
        expect(refused.status).toBe(422)
        expect(refused.text).toContain('<div class="error" role="alert" id="claim-problem">')
        expect(refused.text).toContain(
          '<li><a href="#city">City: Enter the city as it is written in the address.</a></li>'
        )
        expect(refused.text).toContain(
          '<p class="field-error" id="city-error">Error: Enter the city as it is written in the address.</p>'
        )
        expect(refused.text).toMatch(/<input id="city" [^>]*aria-invalid="true" aria-describedby="city-error">/)
        expect(refused.text).not.toMatch(/<input id="(?!city")[^>]*aria-invalid/)
        expect(yield* statusOf(company, gift.id)).toBe("unwrapped")

        // A phone the form takes but the claim refuses (the service judges it) is tied to its field the same way.
        const badPhone = yield* postForm(`${path}/claim`, {
          ...londonForm,
          phone: "not a phone",
          variantId: company.variantId,
          productId: company.productId
        })
        expect(badPhone.status).toBe(422)
        expect(badPhone.text).toContain('<li><a href="#phone">Phone: Enter a phone number with its country code')
        expect(badPhone.text).toMatch(/<input id="phone" [^>]*aria-invalid="true" aria-describedby="phone-error">/)
        expect(badPhone.text).not.toMatch(/<input id="(?!phone")[^>]*aria-invalid/)
        expect(yield* statusOf(company, gift.id)).toBe("unwrapped")

        const claimed = yield* postForm(`${path}/claim`, {
          ...londonForm,
          variantId: company.variantId,
          productId: company.productId
        })
        expect(claimed.status, claimed.text.slice(0, 500)).toBe(200)
        expect(claimed.text).toContain("Your gift is claimed")
        expect(claimed.text).toContain("Order received")
        // Followed live: a script (under the page's nonce) asks the status; without JavaScript, the Refresh link (the
        // page never reloads itself on a timer).
        expect(claimed.text).toContain(`fetch("${path}/status"`)
        expect(claimed.text).toContain(`<a href="${path}">Refresh</a>`)
        expect(claimed.text).not.toContain("http-equiv")
        expect(claimed.headers["content-security-policy"]).toContain("connect-src 'self'")

        const read = yield* getWith(`${gifts}/${gift.id}`, company.headers)
        expect(read.body).toMatchObject({ status: "claimed", orderId: expect.stringMatching(/^[0-9a-f]{24}$/) })
        expect(read.body.claimedAt).not.toBeNull()
        expect(read.body.deliveryDetails).toEqual({
          status: "orderReceived",
          fulfillmentStatus: "unfulfilled",
          countryCode: "GB",
          carrier: null,
          trackingNumber: null,
          trackingUrl: null
        })
        const order = yield* getWith(`/public-api/v3/orders/${read.body.orderId}`, company.headers)
        expect(order.body.data).toMatchObject({ giftId: gift.id, status: "active" })
        // The reservation was released and the order's landed price charged instead.
        const sql = yield* sqlClient
        const [charged] = yield* sql<{ charged: number }>`SELECT charged::int FROM company_orders
          WHERE id = ${read.body.orderId}`
        expect(yield* remaining(company.headers)).toBe(before - charged!.charged)

        // The link now shows the claimed gift.
        expect((yield* get(path)).text).toContain("Your gift is claimed")
        expect((yield* get("/g/not-a-token")).status).toBe(404)
      })
    )

    it.effect("the claim API: one order per gift, a refused choice, a closed gift; the gift's webhooks", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const hook = yield* postWith(
          "/public-api/v3/webhooks",
          { url: "https://127.0.0.1:9/hooks", eventTypes: ["gift-status-changed", "gift-delivery-status-changed"] },
          company.headers
        )
        expect(hook.status, JSON.stringify(hook.body)).toBe(201)
        const gift = yield* sendGift(company, "api")
        const claim = `${gifts}/${gift.id}/claim`
        expect(
          yield* postWith(claim, { variantId: company.otherVariantId, orderRecipient }, company.headers)
        ).toMatchObject({ status: 422, body: v2Error(422, "UNPROCESSABLE_ENTITY") })
        expect(
          yield* postWith(
            claim,
            { variantId: company.variantId, orderRecipient: { ...orderRecipient, country: "GBR" } },
            company.headers
          )
        ).toMatchObject({ status: 400, body: { errorCode: "INVALID_REQUEST", path: "orderRecipient.country" } })
        // A country the catalog does not deliver to: not a choice of this gift.
        expect(
          yield* postWith(
            claim,
            { variantId: company.variantId, orderRecipient: { ...orderRecipient, country: "XX" } },
            company.headers
          )
        ).toMatchObject({ status: 422, body: v2Error(422, "UNPROCESSABLE_ENTITY") })
        expect(yield* statusOf(company, gift.id)).toBe("unopened")
        const done = yield* postWith(claim, { variantId: company.variantId, orderRecipient }, company.headers)
        expect(done.status, JSON.stringify(done.body)).toBe(200)
        expect(done.body).toEqual({ orderId: expect.stringMatching(/^[0-9a-f]{24}$/), status: "active" })
        expect(yield* postWith(claim, { variantId: company.variantId, orderRecipient }, company.headers)).toMatchObject(
          {
            status: 422,
            body: v2Error(422, "UNPROCESSABLE_ENTITY")
          }
        )
        expect(yield* postWith(`${gifts}/${gift.id}/cancel`, {}, company.headers)).toMatchObject({ status: 422 })

        // The gift page follows the delivery live from its status.
        const statusPath = `${gift.link.replace(testPublicUrl, "")}/status`
        expect((yield* get(statusPath)).body).toEqual({
          shipmentStatus: "orderReceived",
          label: "Order received",
          final: false
        })
        expect((yield* get("/g/not-a-token/status")).status).toBe(404)

        // Its order moves (the sandbox): the gift's subscribers hear of its delivery.
        const moved = yield* postWith(
          `/public-api/v3/orders/${done.body.orderId}/simulate`,
          { fulfillmentStatus: "processing" },
          company.headers
        )
        expect(moved.status, JSON.stringify(moved.body)).toBe(200)
        const sql = yield* sqlClient
        const events = yield* sql<{ eventType: string; payload: { eventData: Record<string, unknown> } }>`
          SELECT event_type, payload FROM webhook_deliveries WHERE endpoint_id = ${hook.body.data.id} ORDER BY created_at, id`
        expect(events.map((e) => e.eventType)).toEqual([
          "gift-status-changed",
          "gift-status-changed",
          "gift-delivery-status-changed"
        ])
        expect(events.map((e) => e.payload.eventData.status)).toEqual(["unopened", "claimed", "active"])
        expect((yield* get(statusPath)).body).toEqual({
          shipmentStatus: "processing",
          label: "Being prepared",
          final: false
        })
        expect(events[2]!.payload.eventData).toMatchObject({
          giftId: gift.id,
          companyId: company.companyId,
          shipmentStatus: "processing",
          fulfillmentStatus: "unfulfilled"
        })
      })
    )

    it.effect("expand[] needs the expanded resource's read permission and shows it in that resource's mode", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const gift = yield* sendGift(company, "expand")
        const claimed = yield* postWith(
          `${gifts}/${gift.id}/claim`,
          { variantId: company.variantId, orderRecipient },
          company.headers
        )
        expect(claimed.status, JSON.stringify(claimed.body)).toBe(200)
        const keyWith = (permissions: ReadonlyArray<string>) =>
          Effect.map(
            postWith(v2Keys, { name: `k-${permissions.join(" ")}`, permissions }, company.headers),
            (response) => keyHeaders(response.body.apiKey)
          )
        const url = `${gifts}/${gift.id}`
        // Gifts unmasked, nothing else: neither the order nor the recipient, as GET /v3/orders would refuse.
        const giftsOnly = yield* keyWith(["gifts:read:unmasked"])
        expect((yield* getWith("/public-api/v3/orders", giftsOnly)).status).toBe(403)
        for (const query of ["expand[]=orders", "expand[]=recipient", "expand[]=orders&expand[]=recipient"]) {
          for (const read of [url, gifts]) {
            const refused = yield* getWith(`${read}?${query}`, giftsOnly)
            expect(refused.status, `${read}?${query}`).toBe(403)
            expect(refused.body).toEqual(v2Error(403, "FORBIDDEN"))
            expect(JSON.stringify(refused.body)).not.toContain("Lovelace")
          }
        }
        expect((yield* getWith(`${url}?expand[]=campaign`, giftsOnly)).status).toBe(403)
        expect((yield* getWith(url, giftsOnly)).status).toBe(200)
        // With the masked reads of orders and recipients, each is masked, whatever the gifts permission says.
        const masked = yield* keyWith(["gifts:read:unmasked", "orders:read:masked", "recipients:read:masked"])
        const maskedRead = yield* getWith(`${url}?expand[]=orders&expand[]=recipient`, masked)
        expect(maskedRead.status, JSON.stringify(maskedRead.body)).toBe(200)
        expect(maskedRead.body.recipient).toMatchObject({ firstName: "A**", lastName: "L*******" })
        expect(maskedRead.body.recipient.email).not.toContain("expand@")
        expect(maskedRead.body.orders[0].id).toBe(claimed.body.orderId)
        expect(JSON.stringify(maskedRead.body.orders)).not.toContain("Lovelace")
        expect(JSON.stringify(maskedRead.body.orders)).not.toContain("ada@example.com")
        // Unmasked reads of both, with only masked gifts: both unmasked. (Three keys at most: one goes.)
        const keys = yield* getWith(v2Keys, company.headers)
        const giftsOnlyId = keys.body.results.find((key: { name: string }) => key.name === "k-gifts:read:unmasked").id
        expect((yield* deleteWith(`${v2Keys}/${giftsOnlyId}`, company.headers)).status).toBeLessThan(300)
        const unmasked = yield* keyWith(["gifts:read:masked", "orders:read:unmasked", "recipients:read:unmasked"])
        const full = yield* getWith(`${url}?expand[]=orders&expand[]=recipient`, unmasked)
        expect(full.status, JSON.stringify(full.body)).toBe(200)
        expect(full.body.recipient).toMatchObject({ firstName: "Ada", email: "expand@example.com" })
        expect(full.body.orders[0].recipient).toMatchObject({ lastName: "Lovelace", email: "ada@example.com" })
      })
    )

    it.effect("POST /v2/orders from a key limited to one account makes its own recipient, never another's", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const sql = yield* sqlClient
        const ada = yield* postWith(
          "/public-api/v2/recipients",
          { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", externalId: "emp-1" },
          company.headers
        )
        expect(ada.status, JSON.stringify(ada.body)).toBe(201)
        const adaBefore = yield* sql`SELECT * FROM recipients WHERE id = ${ada.body.id}`
        const sales = yield* postWith(
          "/public-api/v3/accounts",
          {
            name: "Sales",
            billingMethod: { name: "Sales budget", type: "prepaid", spendingLimit: { amount: 5000_00 } }
          },
          company.headers
        )
        const salesId = sales.body.data.id as string
        const campaign = yield* postWith(
          "/public-api/v2/campaigns",
          {
            name: "Sales welcome",
            customization: {
              giftProperties: {
                selectedGiftType: "product",
                productId: company.productId,
                budget: { min: 1, max: 1000 }
              }
            }
          },
          keyHeaders(company.apiKey, { "ribbon-account-id": salesId })
        )
        expect(campaign.status, JSON.stringify(campaign.body)).toBe(201)
        const limited = yield* postWith(
          v2Keys,
          {
            name: "sales orders",
            permissions: ["orders:create", "gifts:read:masked"],
            accountsAccess: { scope: "selected-accounts", ids: [salesId] }
          },
          company.headers
        )
        const salesKey = keyHeaders(limited.body.apiKey)
        const ordered = yield* postWith(
          "/public-api/v2/orders",
          {
            campaignId: campaign.body.id,
            variantId: company.variantId,
            recipient: { firstname: "Eve", lastname: "Mallory", externalId: "emp-1", key: "eve-order" },
            orderRecipient
          },
          salesKey
        )
        expect(ordered.status, JSON.stringify(ordered.body)).toBe(200)
        const gift = yield* getWith(`${gifts}/${ordered.body.giftId}`, salesKey)
        expect(gift.body.recipientId).not.toBe(ada.body.id)
        const [own] = yield* sql<{ firstName: string; accountIds: Array<string> }>`SELECT first_name, account_ids
          FROM recipients WHERE id = ${gift.body.recipientId}`
        expect(own).toEqual({ firstName: "Eve", accountIds: [salesId] })
        expect(yield* sql`SELECT * FROM recipients WHERE id = ${ada.body.id}`).toEqual(adaBefore)
      })
    )

    it.effect(
      "POST /v2/orders makes and claims a gift at once; its key replays it; a refused claim leaves nothing",
      () =>
        Effect.gen(function* () {
          const company = yield* setup
          const body = {
            campaignId: company.campaignId,
            variantId: company.variantId,
            recipient: { firstname: "Ada", lastname: "Lovelace", email: "ada@example.com", key: "order-1" },
            orderRecipient
          }
          const first = yield* postWith("/public-api/v2/orders", body, company.headers)
          expect(first.status, JSON.stringify(first.body)).toBe(200)
          expect(first.body).toEqual({
            orderId: expect.stringMatching(/^[0-9a-f]{24}$/),
            giftId: expect.stringMatching(/^[0-9a-f]{24}$/),
            status: "active"
          })
          const again = yield* postWith("/public-api/v2/orders", body, company.headers)
          expect(again.body).toEqual(first.body)
          const moved = yield* postWith(
            "/public-api/v2/orders",
            {
              ...body,
              orderRecipient: {
                ...orderRecipient,
                address: { ...orderRecipient.address, addressLine1: "11 Downing Street" }
              }
            },
            company.headers
          )
          expect(moved).toMatchObject({ status: 422, body: v2Error(422, "UNPROCESSABLE_ENTITY") })
          expect((yield* getWith(`${gifts}/${first.body.giftId}`, company.headers)).body.orderId).toBe(
            first.body.orderId
          )

          const sql = yield* sqlClient
          const count = Effect.map(
            sql<{ gifts: number; orders: number }>`SELECT (SELECT count(*)::int FROM gifts) AS gifts,
            (SELECT count(*)::int FROM company_orders) AS orders`,
            (rows) => rows[0]!
          )
          const beforeRefused = yield* count
          const refused = yield* postWith(
            "/public-api/v2/orders",
            { ...body, variantId: company.otherVariantId, recipient: { ...body.recipient, key: "order-2" } },
            company.headers
          )
          expect(refused).toMatchObject({ status: 422, body: v2Error(422, "UNPROCESSABLE_ENTITY") })
          expect(yield* count).toEqual(beforeRefused)
        })
    )
    it.scoped(
      "a claim that reads the pricing reference data first, and /ready, answer while the receiver holds a delivery",
      () =>
        Effect.gen(function* () {
          const answer = yield* Deferred.make<void>()
          const receiver = yield* httpsReceiver(() => ({
            status: 204,
            after: Effect.runPromise(Deferred.await(answer))
          }))
          const company = yield* setup
          const hook = yield* postWith(
            "/public-api/v3/webhooks",
            { url: receiver.url("/hooks"), eventTypes: ["gift-status-changed"] },
            company.headers
          )
          expect(hook.status, JSON.stringify(hook.body)).toBe(201)
          // The gift's "unopened" event goes out, and the receiver holds it.
          const gift = yield* sendGift(company, "held")
          yield* eventually(
            Effect.sync(() => receiver.received.length),
            (n) => n === 1,
            "the delivery to arrive"
          )

          // The claim is the first to need the pricing reference data (as after a quiet minute), inside its
          // transaction: it reads them on its own connection, and nothing waits on the delivery.
          yield* Effect.flatMap(Pricing, (pricing) => pricing.invalidateReference)
          const [claimed, ready] = yield* Effect.all(
            [
              postWith(`${gifts}/${gift.id}/claim`, { variantId: company.variantId, orderRecipient }, company.headers),
              get("/ready")
            ],
            { concurrency: "unbounded" }
          )
          expect(claimed.status, JSON.stringify(claimed.body)).toBe(200)
          expect(ready.status).toBe(200)
          expect(yield* Deferred.isDone(answer)).toBe(false)
          expect(receiver.received).toHaveLength(1)
          expect(yield* statusOf(company, gift.id)).toBe("claimed")
          yield* Deferred.succeed(answer, undefined)
        })
    )
  })
})
