import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { allAccounts, defaultExpirationInDays, permissions } from "../../../src/domain/company/Company.js"
import { makeId } from "../../../src/domain/platform/Ids.js"
import { withActor } from "../../../src/services/company/Audit.js"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { insertAccount, keyHeaders, raiseLimits } from "../../support/company.js"
import { type Page, tableOf } from "../../support/dashboard.js"
import { memberOf, ownerOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"

/**
 * The dashboard's home over HTTP: its charts' data tables move with real actions (a gift sent with an API key,
 * opened and claimed on its page, its order delivered in the sandbox; an order placed, then cancelled), counted in
 * SQL within the member's reach: another company's, or an account the member does not reach, never shows; billing
 * methods' remaining funds for every role that reads them, their ledger links for billing managers only.
 */

const promise = <A>(run: () => Promise<A>) => Effect.promise(run)

const query = <A extends object>(run: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, run).pipe(Effect.orDie)

/** A product with one variant, priced, in stock and shipping to GB (as the gift claims' tests pick it). */
const product = query(
  (sql) => sql<{ productId: string; variantId: string }>`
    SELECT p.id AS product_id, v.id AS variant_id FROM products p JOIN variants v ON v.product_id = p.id
      JOIN variant_locations l ON l.variant_id = v.id
    WHERE v.price_usd IS NOT NULL AND NOT v.is_digital AND l.stock > 100 AND 'GB' = ANY (l.ships_to)
      AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
    ORDER BY p.id LIMIT 1`
).pipe(Effect.map((rows) => rows[0]!))

/** An API key of the company holding every permission, made as its owner would. */
const apiOf = (companyId: string, userId: string) =>
  Effect.gen(function* () {
    const baseUrl = yield* BaseUrl
    yield* raiseLimits(companyId)
    const made = yield* withActor({
      type: "member",
      id: userId,
      name: "Owner",
      sourceAddress: "203.0.113.5",
      requestId: "req-home"
    })(
      Effect.flatMap(KeyStore, (keys) =>
        keys.create({
          companyId,
          environment: "test",
          name: "Home",
          expirationInDays: defaultExpirationInDays,
          enforceMtls: false,
          permissions: [...permissions],
          accountsAccess: allAccounts,
          requestSource: null
        })
      )
    ).pipe(Effect.orDie)
    return (path: string, body: unknown) =>
      promise(() =>
        fetch(`${baseUrl}${path}`, {
          method: "POST",
          headers: { ...keyHeaders(made.apiKey), "content-type": "application/json" },
          body: JSON.stringify(body)
        }).then(async (response) => ({ status: response.status, body: await response.json() }))
      )
  })

/** The funnel's table as stage → count. */
const funnelOf = (page: Page) =>
  Object.fromEntries(tableOf(page, "Gift funnel").map(([stage, count]) => [stage, count]))

/** The spend table's rows, newest day first: [day, amount]. */
const spendOf = (page: Page) => tableOf(page, "Spend per day, USD")

/** Minor units as the tables show them. */
const usd = (minor: number) =>
  `${(minor / 100).toLocaleString("en", { minimumFractionDigits: 2, maximumFractionDigits: 2 })} USD`

const chargedOf = (orderId: string) =>
  query(
    (sql) => sql<{ charged: number }>`SELECT charged::int AS charged FROM company_orders WHERE id = ${orderId}`
  ).pipe(Effect.map((rows) => rows[0]!.charged))

const TestServer = realPortServerOn(SeededTestDatabase)

describe("dashboard home", () => {
  it.layer(TestServer, { timeout: 240_000 })((it) => {
    it.effect("the funnel and the spend move with a gift sent, opened, claimed and delivered, and an order", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const owner = yield* ownerOf(baseUrl, "Charted")
        const home = () => promise(() => owner.browser.get("/dashboard"))
        const post = yield* apiOf(owner.companyId, owner.userId)
        const chosen = yield* product

        const empty = yield* home()
        expect(empty.status).toBe(200)
        expect(funnelOf(empty)).toEqual({
          Sent: "0",
          Opened: "0",
          Claimed: "0",
          Delivered: "0",
          Expired: "0",
          Cancelled: "0"
        })
        const days = spendOf(empty)
        expect(days).toHaveLength(30)
        expect(days.every(([, amount]) => amount === "0.00 USD")).toBe(true)
        const today = days[0]![0]!
        expect(today).toBe(new Date().toISOString().slice(0, 10))
        expect(empty.text).toContain("No spend in USD")
        expect(empty.text).toContain('role="img"')
        expect(tableOf(empty, "Test (sandbox) accounts")[0]).toEqual([
          "Charted",
          "Test (sandbox)",
          "Yes",
          "100,000.00 USD left on Test funds",
          owner.accountId
        ])
        expect(empty.text).toContain(`href="/dashboard/billing/${owner.methodId}"`)
        expect(empty.text).toContain("No orders yet.")
        expect(empty.text).toContain("No gifts yet.")

        // A gift sent through the API: its budget's maximum is held on the ledger.
        const campaign = yield* post("/public-api/v2/campaigns", {
          name: "Welcome",
          customization: {
            giftProperties: {
              selectedGiftType: "product",
              productId: chosen.productId,
              budget: { min: 1, max: 500 }
            }
          }
        })
        expect(campaign.status, JSON.stringify(campaign.body)).toBe(201)
        const sent = yield* post("/public-api/v2/gifts", {
          campaignId: campaign.body.id,
          recipients: [
            { firstname: "Ada", lastname: "Lovelace", email: "ada@example.com", key: "ada" },
            { firstname: "Alan", lastname: "Turing", email: "alan@example.com", key: "alan" }
          ]
        })
        expect(sent.status, JSON.stringify(sent.body)).toBe(200)
        const [gift, other] = sent.body.results as ReadonlyArray<{ id: string; link: string }>
        const afterSend = yield* home()
        expect(funnelOf(afterSend)).toMatchObject({ Sent: "2", Opened: "0", Claimed: "0" })
        expect(spendOf(afterSend)[0]).toEqual([today, usd(2 * 500_00)])
        expect(
          tableOf(afterSend, "The 5 latest gifts")
            .map((row) => `${row[0]} ${row[1]}`)
            .sort()
        ).toEqual([`${gift!.id} unopened`, `${other!.id} unopened`].sort())
        expect(afterSend.text).toContain(`href="/dashboard/gifts/${gift!.id}"`)

        // The other gift is cancelled: its budget is released, and the funnel counts it.
        expect((yield* post(`/public-api/v2/gifts/${other!.id}/cancel`, {})).status).toBe(200)

        // Opened and claimed on the gift's page, as its recipient does.
        const page = gift!.link.replace(baseUrl, "")
        expect((yield* promise(() => fetch(`${baseUrl}${page}`))).status).toBe(200)
        expect(funnelOf(yield* home())).toMatchObject({ Sent: "2", Opened: "1", Claimed: "0", Cancelled: "1" })
        expect((yield* promise(() => fetch(`${baseUrl}${page}/choices?country=GB`))).status).toBe(200)
        const claimed = yield* promise(() =>
          fetch(`${baseUrl}${page}/claim`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({
              firstName: "Ada",
              lastName: "Lovelace",
              email: "ada@example.com",
              phone: "+44 20 7946 0958",
              address1: "10 Downing Street",
              city: "London",
              zipcode: "SW1A 2AA",
              country: "GB",
              variantId: chosen.variantId,
              productId: chosen.productId
            }).toString()
          })
        )
        expect(claimed.status).toBe(200)
        const [giftOrder] = yield* query(
          (sql) => sql<{ orderId: string }>`SELECT order_id FROM gifts WHERE id = ${gift!.id}`
        )
        const giftCharge = yield* chargedOf(giftOrder!.orderId)
        expect(giftCharge).toBeGreaterThan(0)
        const afterClaim = yield* home()
        expect(funnelOf(afterClaim)).toMatchObject({ Sent: "2", Opened: "1", Claimed: "1", Delivered: "0" })
        // Both budgets released; the claimed gift's price charged instead.
        expect(spendOf(afterClaim)[0]).toEqual([today, usd(giftCharge)])

        // Its order delivered in the sandbox.
        for (const fulfillmentStatus of ["processing", "inTransit", "outForDelivery", "delivered"]) {
          const moved = yield* post(`/public-api/v3/orders/${giftOrder!.orderId}/simulate`, { fulfillmentStatus })
          expect(moved.status, fulfillmentStatus).toBe(200)
        }
        expect(funnelOf(yield* home())).toEqual({
          Sent: "2",
          Opened: "1",
          Claimed: "1",
          Delivered: "1",
          Expired: "0",
          Cancelled: "1"
        })

        // An order placed, then cancelled: its credit takes its charge back off the day's spend.
        const order = yield* post("/public-api/v3/orders", {
          variantId: chosen.variantId,
          recipient: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+44 20 7946 0958" },
          shippingAddress: { countryCode: "GB", address1: "10 Downing Street", city: "London", postalCode: "SW1A 2AA" },
          idempotencyKey: "home-1"
        })
        expect(order.status, JSON.stringify(order.body)).toBe(201)
        const orderId = order.body.data.id as string
        const orderCharge = yield* chargedOf(orderId)
        const afterOrder = yield* home()
        expect(spendOf(afterOrder)[0]).toEqual([today, usd(giftCharge + orderCharge)])
        const latestOrders = tableOf(afterOrder, "The 5 latest orders")
        expect(latestOrders.map((row) => [row[0], row[2], row[3]])).toEqual([
          [orderId, "active", "orderReceived"],
          [giftOrder!.orderId, "completed", "delivered"]
        ])
        expect(afterOrder.text).toContain(`href="/dashboard/orders/${orderId}"`)
        expect((yield* post(`/public-api/v3/orders/${orderId}/cancel`, {})).status).toBe(200)
        const afterCancel = yield* home()
        expect(spendOf(afterCancel)[0]).toEqual([today, usd(giftCharge)])

        // A credit on a day without debits is a negative day: the cancellation's, moved to yesterday.
        yield* query(
          (sql) => sql`UPDATE billing_entries SET created_at = created_at - INTERVAL '1 day'
            WHERE subject_id = ${orderId} AND kind = 'credit' RETURNING id`
        )
        const moved = spendOf(yield* home())
        expect(moved[0]).toEqual([today, usd(giftCharge + orderCharge)])
        expect(moved[1]).toEqual([days[1]![0], `-${usd(orderCharge)}`])
      })
    )

    it.effect("another company's data, and accounts a member does not reach, never show; billing per role", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const owner = yield* ownerOf(baseUrl, "Busy")
        const post = yield* apiOf(owner.companyId, owner.userId)
        const chosen = yield* product
        const campaign = yield* post("/public-api/v2/campaigns", {
          name: "Thanks",
          customization: {
            giftProperties: { selectedGiftType: "product", productId: chosen.productId, budget: { min: 1, max: 100 } }
          }
        })
        const sent = yield* post("/public-api/v2/gifts", {
          campaignId: campaign.body.id,
          recipients: [{ firstname: "Ada", lastname: "Lovelace", email: "ada@example.com", key: "ada" }]
        })
        const giftId = sent.body.results[0].id as string
        const ownHome = yield* promise(() => owner.browser.get("/dashboard"))
        expect(funnelOf(ownHome)).toMatchObject({ Sent: "1" })

        // Another company sees none of it.
        const stranger = yield* ownerOf(baseUrl, "Quiet")
        const theirs = yield* promise(() => stranger.browser.get("/dashboard"))
        expect(funnelOf(theirs)).toMatchObject({ Sent: "0" })
        expect(spendOf(theirs).every(([, amount]) => amount === "0.00 USD")).toBe(true)
        expect(theirs.text).not.toContain(giftId)
        expect(theirs.text).not.toContain(owner.methodId)

        // A viewer limited to another account of the company sees that account alone, and nothing spent on it.
        const side = yield* makeId
        yield* insertAccount(owner.companyId, "test", side)
        const limited = yield* memberOf(baseUrl, owner.companyId, "viewer", { scope: "selected-accounts", ids: [side] })
        const narrow = yield* promise(() => limited.get("/dashboard"))
        expect(narrow.status).toBe(200)
        expect(tableOf(narrow, "Test (sandbox) accounts").map((row) => row[0])).toEqual([`Account ${side}`])
        expect(funnelOf(narrow)).toMatchObject({ Sent: "0" })
        expect(spendOf(narrow).every(([, amount]) => amount === "0.00 USD")).toBe(true)
        expect(narrow.text).not.toContain(giftId)
        expect(narrow.text).toContain("No gifts yet.")

        // A sender reads remaining funds (its role reads billing methods) but has no link to billing's settings.
        const sender = yield* memberOf(baseUrl, owner.companyId, "sender")
        const senderHome = yield* promise(() => sender.get("/dashboard"))
        expect(tableOf(senderHome, "Test (sandbox) accounts")[0]?.[3]).toBe("99,900.00 USD left on Test funds")
        expect(senderHome.text).not.toContain("/dashboard/billing/")
        expect(funnelOf(senderHome)).toMatchObject({ Sent: "1" })
        expect(tableOf(senderHome, "The 5 latest gifts")[0]?.[0]).toBe(giftId)
      })
    )
  })
})
