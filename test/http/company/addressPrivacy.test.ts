import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { createCompany, raiseLimits } from "../../support/company.js"
import { csrfOf, textOf } from "../../support/dashboard.js"
import { memberOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"

/**
 * Address privacy over real HTTP on a real port (docs/permissions.md "Address privacy"): a campaign's
 * `hideRecipientAddress` (on by default) leaves only the city, region and country of a claimed gift's address in
 * every company read, an unmasked key's and an admin member's included, while the order keeps the whole address for
 * its delivery; a campaign with it off shows the address whole; turning it on hides earlier orders, turning it off
 * does not show the orders whose recipient gave their address under it. A value that is not a boolean is a v2 400
 * and changes nothing.
 */

interface Sent {
  readonly status: number
  readonly body: any
}

/** A request to the server's port with the key, as a client sends it. */
const send = (method: string, path: string, apiKey: string, body?: unknown) =>
  Effect.flatMap(BaseUrl, (baseUrl) =>
    Effect.promise(async (): Promise<Sent> => {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { "x-api-key": apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      return { status: response.status, body: text === "" ? null : JSON.parse(text) }
    })
  )

const v2Invalid = (path: string) => ({ path, errorCode: "INVALID_REQUEST", message: expect.any(String) })

/** A product with one variant for sale that ships to GB with stock. */
const giftProduct = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ productId: string; variantId: string }>`
      SELECT p.id AS product_id, v.id AS variant_id FROM products p JOIN variants v ON v.product_id = p.id
        JOIN variant_locations l ON l.variant_id = v.id
      WHERE v.price_usd IS NOT NULL AND NOT v.is_digital AND l.stock > 100 AND 'GB' = ANY (l.ships_to)
        AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
      ORDER BY p.id LIMIT 1`,
    (rows) => rows[0]!
  )
).pipe(Effect.orDie)

const campaignCount = (companyId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`SELECT count(*)::int AS n FROM campaigns WHERE company_id = ${companyId}`,
      (rows) => rows[0]!.n
    )
  ).pipe(Effect.orDie)

/** The stored order and its booking with the fulfillment partner. */
const storedOrder = (orderId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ address1: string; postalCode: string; city: string; bookingCountry: string; bookingStatus: string }>`
        SELECT o.address1, o.postal_code, o.city, b.country_code AS booking_country, b.status AS booking_status
        FROM company_orders o JOIN orders b ON b.id = o.supplier_order_id WHERE o.id = ${orderId}`,
      (rows) => rows[0]!
    )
  ).pipe(Effect.orDie)

const orderRecipient = {
  firstName: "Ada",
  lastName: "Lovelace",
  email: "ada@example.com",
  phone: "+44 20 7946 0958",
  country: "GB",
  address: { addressLine1: "10 Downing Street", addressLine2: "Flat 2", city: "London", zipcode: "SW1A 2AA" }
}

const street = /Downing|Flat 2|SW1A/

describe("address privacy", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 240_000 })((it) => {
    it.effect(
      "a hiding campaign's orders show city, region and country only, to unmasked keys and members; the booking keeps all",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const company = yield* createCompany("test")
          yield* raiseLimits(company.companyId)
          const product = yield* giftProduct
          const owner = company.apiKey
          const campaignBody = (name: string, extra: Record<string, unknown> = {}) => ({
            name,
            ...extra,
            customization: {
              giftProperties: { selectedGiftType: "product", productId: product.productId, budget: { max: 20000 } }
            }
          })

          // Not a boolean: a v2 400 naming the field, on create and on update, and nothing stored or changed.
          const before = yield* campaignCount(company.companyId)
          for (const bad of ["yes", 1, null]) {
            const refused = yield* send(
              "POST",
              "/public-api/v2/campaigns",
              owner,
              campaignBody("Bad", { hideRecipientAddress: bad })
            )
            expect({ status: refused.status, body: refused.body }).toEqual({
              status: 400,
              body: v2Invalid("hideRecipientAddress")
            })
          }
          expect(yield* campaignCount(company.companyId)).toBe(before)

          // Hidden unless told otherwise; the other campaign turns it off.
          const hiding = yield* send("POST", "/public-api/v2/campaigns", owner, campaignBody("Private"))
          expect(hiding.status, JSON.stringify(hiding.body)).toBe(201)
          expect(hiding.body.hideRecipientAddress).toBe(true)
          const showing = yield* send(
            "POST",
            "/public-api/v2/campaigns",
            owner,
            campaignBody("Open", { hideRecipientAddress: false })
          )
          expect(showing.status, JSON.stringify(showing.body)).toBe(201)
          expect(showing.body.hideRecipientAddress).toBe(false)
          const badUpdate = yield* send("PATCH", `/public-api/v2/campaigns/${showing.body.id}`, owner, {
            hideRecipientAddress: "yes"
          })
          expect(badUpdate.status).toBe(400)
          expect(badUpdate.body).toEqual(v2Invalid("hideRecipientAddress"))
          const unchanged = yield* send("GET", `/public-api/v2/campaigns/${showing.body.id}`, owner)
          expect(unchanged.body).toEqual(showing.body)

          // A gift of each, claimed with a full address.
          const claimedOrder = Effect.fnUntraced(function* (campaignId: string, key: string) {
            const sent = yield* send("POST", "/public-api/v2/gifts", owner, {
              campaignId,
              recipients: [{ firstname: "Ada", lastname: "Lovelace", email: `${key}@example.com`, key }]
            })
            expect(sent.status, JSON.stringify(sent.body)).toBe(200)
            const giftId = sent.body.results[0].id as string
            const claimed = yield* send("POST", `/public-api/v2/gifts/${giftId}/claim`, owner, {
              variantId: product.variantId,
              orderRecipient
            })
            expect(claimed.status, JSON.stringify(claimed.body)).toBe(200)
            return { giftId, orderId: claimed.body.orderId as string }
          })
          const hidden = yield* claimedOrder(hiding.body.id, "hidden")
          const shown = yield* claimedOrder(showing.body.id, "shown")

          // A key that reads orders, gifts and recipients unmasked.
          const key = yield* send("POST", "/public-api/v2/authentication/apiKeys", owner, {
            name: "unmasked reader",
            permissions: ["orders:read:unmasked", "gifts:read:unmasked", "recipients:read:unmasked"]
          })
          expect(key.status, JSON.stringify(key.body)).toBe(200)
          const unmasked = key.body.apiKey as string
          const reads = Effect.fnUntraced(function* (order: { giftId: string; orderId: string }) {
            const one = yield* send("GET", `/public-api/v3/orders/${order.orderId}`, unmasked)
            const list = yield* send("GET", "/public-api/v3/orders?page[size]=100", unmasked)
            const gift = yield* send("GET", `/public-api/v2/gifts/${order.giftId}?expand[]=orders`, unmasked)
            const gifts = yield* send("GET", "/public-api/v2/gifts?expand[]=orders&limit=100", unmasked)
            for (const read of [one, list, gift, gifts]) expect(read.status, JSON.stringify(read.body)).toBe(200)
            const listed = list.body.data.find((o: { id: string }) => o.id === order.orderId)
            const giftListed = gifts.body.results.find((g: { id: string }) => g.id === order.giftId)
            return [one.body.data, listed, gift.body.orders[0], giftListed.orders[0]]
          })

          for (const order of yield* reads(hidden)) {
            expect(order.id).toBe(hidden.orderId)
            expect(order.shippingAddress).toEqual({
              address1: null,
              address2: null,
              city: "London",
              provinceCode: null,
              postalCode: null,
              countryCode: "GB"
            })
            expect(order.recipientAddressHidden).toBe(true)
            expect(JSON.stringify(order)).not.toMatch(street)
            // The rest of the recipient is read unmasked, as the key may.
            expect(order.recipient).toMatchObject({ lastName: "Lovelace", email: "ada@example.com" })
          }
          for (const order of yield* reads(shown)) {
            expect(order.shippingAddress).toEqual({
              address1: "10 Downing Street",
              address2: "Flat 2",
              city: "London",
              provinceCode: null,
              postalCode: "SW1A 2AA",
              countryCode: "GB"
            })
            expect(order.recipientAddressHidden).toBe(false)
          }

          // The order keeps the whole address for its delivery, and its booking with the partner is as ever.
          for (const order of [hidden, shown]) {
            expect(yield* storedOrder(order.orderId)).toEqual({
              address1: "10 Downing Street",
              postalCode: "SW1A 2AA",
              city: "London",
              bookingCountry: "GB",
              bookingStatus: expect.any(String)
            })
          }

          // An admin member (every read unmasked) sees no street on the order's page, nor in the list.
          const admin = yield* memberOf(baseUrl, company.companyId, "admin")
          const page = yield* Effect.promise(() => admin.get(`/dashboard/orders/${hidden.orderId}`))
          expect(page.status, page.text.slice(0, 500)).toBe(200)
          expect(page.text).toContain("Lovelace")
          expect(textOf(page.text)).toContain("London, GB")
          expect(page.text).not.toMatch(street)
          expect(textOf(page.text)).toContain("street and postal code hidden by the campaign's address privacy")
          const openPage = yield* Effect.promise(() => admin.get(`/dashboard/orders/${shown.orderId}`))
          expect(openPage.text).toContain("10 Downing Street")
          const campaignPage = yield* Effect.promise(() => admin.get(`/dashboard/campaigns/${hiding.body.id}`))
          expect(campaignPage.status, campaignPage.text.slice(0, 500)).toBe(200)
          expect(textOf(campaignPage.text)).toContain("Recipient addresses Hidden: city, region and country only")

          // The dashboard's campaign form: the box is ticked to start with; left ticked it hides, unticked it shows.
          const form = yield* Effect.promise(() => admin.get("/dashboard/send/campaigns/new?environment=test"))
          expect(form.status).toBe(200)
          expect(form.text).toMatch(/<input[^>]*name="hideAddress"[^>]*checked/)
          expect(textOf(form.text)).toContain("Hide recipients' street addresses")
          const fields = {
            csrf: csrfOf(form.text, "/dashboard/send/campaigns"),
            environment: "test",
            name: "From the form",
            budgetMin: "1",
            budgetMax: "100",
            giftType: "product",
            productId: product.productId,
            collectionId: "",
            expiryDays: "30",
            message: "",
            reminders: "on"
          }
          for (const [hideAddress, hidden] of [
            ["on", true],
            [undefined, false]
          ] as const) {
            const created = yield* Effect.promise(() =>
              admin.post("/dashboard/send/campaigns", hideAddress === undefined ? fields : { ...fields, hideAddress })
            )
            expect(created.status, textOf(created.text)).toBe(303)
            const campaignId = new URL(created.location!, baseUrl).searchParams.get("campaignId")!
            const read = yield* send("GET", `/public-api/v2/campaigns/${campaignId}`, owner)
            expect(read.body.hideRecipientAddress).toBe(hidden)
          }

          // Turned off, the setting does not show what a recipient gave under it; turned on, it hides earlier orders.
          const off = yield* send("PATCH", `/public-api/v2/campaigns/${hiding.body.id}`, owner, {
            hideRecipientAddress: false
          })
          expect(off.body.hideRecipientAddress).toBe(false)
          const on = yield* send("PATCH", `/public-api/v2/campaigns/${showing.body.id}`, owner, {
            hideRecipientAddress: true
          })
          expect(on.body.hideRecipientAddress).toBe(true)
          for (const order of [hidden, shown]) {
            const read = yield* send("GET", `/public-api/v3/orders/${order.orderId}`, unmasked)
            expect(read.body.data.recipientAddressHidden).toBe(true)
            expect(JSON.stringify(read.body)).not.toMatch(street)
          }
          const later = yield* claimedOrder(hiding.body.id, "later")
          const laterRead = yield* send("GET", `/public-api/v3/orders/${later.orderId}`, unmasked)
          expect(laterRead.body.data.shippingAddress.address1).toBe("10 Downing Street")
        })
    )
  })
})
