import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Companies } from "../../../src/services/company/Companies.js"
import { CompanyOrders } from "../../../src/services/company/CompanyOrders.js"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { memberScopeOf, placeOrder } from "../../support/companyOrders.js"
import { csrfOf, type DashboardBrowser, tableOf, textOf } from "../../support/dashboard.js"
import { memberOf, ownerOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"

/**
 * The dashboard's orders over HTTP: the list filtered (status, fulfillment status, account, dates, search) and paged
 * in SQL, masked for a viewer as the API masks it; an order's timeline with each status and its time; cancelling
 * after a confirm step that credits the billing method's ledger, refused in transit with the API's reason; the
 * sandbox's simulate buttons on test orders only; a viewer refused cancel and simulate; another company's order 404.
 */

const promise = <A>(run: () => Promise<A>) => Effect.promise(run)

const placedOn = (orderId: string, at: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE company_orders SET created_at = ${new Date(at)} WHERE id = ${orderId}`.pipe(Effect.orDie)
  )

/** The first column (the order id) of each row of the list. */
const idsOf = (browser: DashboardBrowser, query: string) =>
  Effect.map(
    promise(() => browser.get(`/dashboard/orders${query}`)),
    (page) => tableOf(page).map((cells) => cells[0])
  )

/** The timeline's entries, each as its text. */
const timelineOf = (html: string) => {
  const list = /<ol class="timeline"[^>]*>([\s\S]*?)<\/ol>/.exec(html)?.[1] ?? ""
  return [...list.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((item) => textOf(item[1]!))
}

const creditsOf = (orderId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ amount: number }>`SELECT amount::int AS amount FROM billing_entries
      WHERE subject_type = 'order' AND subject_id = ${orderId} AND kind = 'credit'`.pipe(Effect.orDie)
  )

const auditOf = (orderId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string; actorType: string }>`SELECT action, actor_type FROM audit_events
      WHERE target_id = ${orderId} ORDER BY occurred_at, id`.pipe(Effect.orDie)
  )

const ada = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" }
const grace = { firstName: "Grace", lastName: "Hopper", email: "grace@navy.example" }

describe("dashboard orders", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 240_000 })((it) => {
    it.effect(
      "lists orders filtered and paged in SQL, masked for a viewer; another company's order is not found",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const owner = yield* ownerOf(baseUrl, "Listed Orders")
          const adaId = yield* placeOrder(owner, "ada", ada)
          const graceId = yield* placeOrder(owner, "grace", grace)
          yield* placedOn(adaId, "2026-01-05T10:00:00Z")
          yield* placedOn(graceId, "2026-01-10T10:00:00Z")
          const bulk: Array<string> = []
          for (let n = 0; n < 20; n++) {
            const id = yield* placeOrder(owner, `bulk-${n}`, {
              firstName: "Bulk",
              lastName: `Person`,
              email: `b${n}@example.com`
            })
            yield* placedOn(id, `2026-02-01T10:${String(n).padStart(2, "0")}:00Z`)
            bulk.unshift(id)
          }
          const scope = yield* memberScopeOf(owner.companyId, owner.userId)
          const orders = yield* CompanyOrders
          yield* Effect.orDie(orders.simulate(scope, bulk[3]!, "processing"))
          yield* Effect.orDie(orders.cancel(scope, bulk[5]!, undefined))

          // Newest first, 20 a page.
          const first = yield* promise(() => owner.browser.get("/dashboard/orders"))
          expect(first.status).toBe(200)
          expect(first.text).toContain('aria-current="page">Orders</a>')
          expect(tableOf(first).map((cells) => cells[0])).toEqual(bulk)
          expect(tableOf(first)[0]!.slice(1, 3)).toEqual(["2026-02-01 10:19:00 UTC", "Bulk Person b19@example.com"])
          expect(first.text).toContain("Next page")
          expect(yield* idsOf(owner.browser, "?page=2")).toEqual([graceId, adaId])

          // Each filter, and filters together.
          expect(yield* idsOf(owner.browser, "?from=2026-01-01&to=2026-01-31")).toEqual([graceId, adaId])
          expect(yield* idsOf(owner.browser, "?from=2026-01-10&to=2026-01-10")).toEqual([graceId])
          expect(yield* idsOf(owner.browser, "?q=LOVELACE")).toEqual([adaId])
          expect(yield* idsOf(owner.browser, "?q=grace%40navy")).toEqual([graceId])
          expect(yield* idsOf(owner.browser, `?q=${adaId.toUpperCase()}`)).toEqual([adaId])
          expect(yield* idsOf(owner.browser, "?q=50%25")).toEqual([])
          expect(yield* idsOf(owner.browser, "?fulfillment=processing")).toEqual([bulk[3]])
          expect(yield* idsOf(owner.browser, "?status=cancelled")).toEqual([bulk[5]])
          expect(yield* idsOf(owner.browser, "?status=active&fulfillment=cancelled")).toEqual([])
          expect(yield* idsOf(owner.browser, `?account=${owner.accountId}&q=bulk&to=2026-02-01`)).toHaveLength(20)
          const none = yield* promise(() => owner.browser.get("/dashboard/orders?q=nobody"))
          expect(none.text).toContain("No orders match these filters.")

          // Bad filters are named, and no rows shown.
          const bad = yield* promise(() =>
            owner.browser.get("/dashboard/orders?status=lost&fulfillment=gone&account=elsewhere&from=2026-13-01")
          )
          expect(bad.status).toBe(400)
          const said = textOf(bad.text)
          expect(said).toContain("Status: expected one of active, completed, cancelled, refunded.")
          expect(said).toContain("Fulfillment status: expected one of orderReceived")
          expect(said).toContain("Account: not one of the accounts you reach here.")
          expect(said).toContain("From: expected a date as YYYY-MM-DD.")
          expect(tableOf(bad)).toEqual([])

          // A viewer sees the recipient masked as the API masks it, and finds orders by id only.
          const viewer = yield* memberOf(baseUrl, owner.companyId, "viewer")
          const masked = yield* promise(() => viewer.get("/dashboard/orders?page=2"))
          expect(tableOf(masked).map((cells) => cells[2])).toEqual([
            "G**** H***** g***@navy.example",
            "A** L******* a***@example.com"
          ])
          expect(masked.text).not.toContain("ada@example.com")
          expect(yield* idsOf(viewer, "?q=lovelace")).toEqual([])
          expect(yield* idsOf(viewer, `?q=${adaId}`)).toEqual([adaId])
          const maskedOrder = yield* promise(() => viewer.get(`/dashboard/orders/${adaId}`))
          expect(maskedOrder.status).toBe(200)
          expect(maskedOrder.text).toContain("a***@example.com")
          expect(maskedOrder.text).not.toContain("Lovelace")
          expect(maskedOrder.text).not.toContain("Downing")
          const unmasked = yield* promise(() => owner.browser.get(`/dashboard/orders/${adaId}`))
          expect(textOf(unmasked.text)).toContain("Ada Lovelace, ada@example.com, +442079460958")
          expect(unmasked.text).toContain("10 Downing Street")

          // Another company's order is not found, and an id that is no id neither.
          const other = yield* ownerOf(baseUrl, "Other Orders")
          for (const path of [
            `/dashboard/orders/${adaId}`,
            `/dashboard/orders/${adaId}/cancel`,
            "/dashboard/orders/x%20y"
          ]) {
            const page = yield* promise(() => other.browser.get(path))
            expect(page.status, path).toBe(404)
          }
          expect(yield* idsOf(other.browser, "")).toEqual([])
          const home = yield* promise(() => other.browser.get("/dashboard/orders"))
          const refused = yield* promise(() =>
            other.browser.post(`/dashboard/orders/${adaId}/cancel`, { csrf: csrfOf(home.text), reason: "" })
          )
          expect(refused.status).toBe(404)
          expect(yield* creditsOf(adaId)).toEqual([])
        }),
      120_000
    )

    it.effect(
      "cancels after a confirm step, crediting the ledger; refused in transit with the API's reason",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const owner = yield* ownerOf(baseUrl, "Cancelling Orders")
          const orderId = yield* placeOrder(owner, "to-cancel", ada)
          const sql = yield* SqlClient.SqlClient
          const [{ charged }] = yield* sql<{ charged: number }>`SELECT charged::int AS charged FROM company_orders
          WHERE id = ${orderId}`.pipe(Effect.orDie)
          const credit = `${(charged / 100).toLocaleString("en", { minimumFractionDigits: 2 })} USD`

          const order = yield* promise(() => owner.browser.get(`/dashboard/orders/${orderId}`))
          expect(order.text).toContain(`href="/dashboard/orders/${orderId}/cancel"`)
          const confirm = yield* promise(() => owner.browser.get(`/dashboard/orders/${orderId}/cancel`))
          expect(confirm.status).toBe(200)
          expect(textOf(confirm.text)).toContain(`The shipment stops and ${credit} is credited back to Test funds`)
          expect(yield* creditsOf(orderId)).toEqual([])

          const forged = yield* promise(() =>
            owner.browser.post(`/dashboard/orders/${orderId}/cancel`, { csrf: "forged", reason: "" })
          )
          expect(forged.status).toBe(403)
          const csrf = csrfOf(confirm.text, `/dashboard/orders/${orderId}/cancel`)
          const cancelled = yield* promise(() =>
            owner.browser.post(`/dashboard/orders/${orderId}/cancel`, { csrf, reason: "Wrong size" })
          )
          expect(cancelled.status).toBe(303)
          expect(cancelled.location).toBe(`/dashboard/orders/${orderId}`)
          expect(yield* creditsOf(orderId)).toEqual([{ amount: charged }])
          expect(yield* auditOf(orderId)).toEqual([
            { action: "order.created", actorType: "operator" },
            { action: "order.cancelled", actorType: "member" }
          ])
          const after = yield* promise(() => owner.browser.get(`/dashboard/orders/${orderId}`))
          expect(textOf(after.text)).toContain(`Order cancelled: ${credit} credited back to Test funds.`)
          expect(timelineOf(after.text)).toEqual([
            expect.stringMatching(/^Placed \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/),
            expect.stringMatching(/^Cancelled \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC — Wrong size$/)
          ])
          expect(after.text).not.toContain(`href="/dashboard/orders/${orderId}/cancel"`)
          expect(after.text).not.toContain("Sandbox: move the shipment")

          // Cancelling again is the API's refusal, and credits nothing more.
          const again = yield* promise(() =>
            owner.browser.post(`/dashboard/orders/${orderId}/cancel`, { csrf, reason: "" })
          )
          expect(again.status).toBe(303)
          expect(textOf((yield* promise(() => owner.browser.get(`/dashboard/orders/${orderId}`))).text)).toContain(
            `Order ${orderId} is already cancelled.`
          )
          expect(yield* creditsOf(orderId)).toHaveLength(1)

          // In transit: the confirm step says so, and a cancel is refused with the API's reason.
          const shipped = yield* placeOrder(owner, "in-transit", grace)
          for (const to of ["processing", "inTransit"]) {
            const moved = yield* promise(() =>
              owner.browser.post(`/dashboard/orders/${shipped}/simulate`, { csrf, to })
            )
            expect(moved.status).toBe(303)
          }
          const late = yield* promise(() => owner.browser.get(`/dashboard/orders/${shipped}/cancel`))
          expect(textOf(late.text)).toContain("This order is in transit: it can no longer be cancelled.")
          expect(late.text).not.toContain('action="/dashboard/orders/')
          const refused = yield* promise(() =>
            owner.browser.post(`/dashboard/orders/${shipped}/cancel`, { csrf, reason: "" })
          )
          expect(refused.status).toBe(303)
          const shown = yield* promise(() => owner.browser.get(`/dashboard/orders/${shipped}`))
          expect(textOf(shown.text)).toContain(`Order ${shipped} is inTransit; it can no longer be cancelled.`)
          expect(yield* creditsOf(shipped)).toEqual([])

          // A viewer reads, but neither cancels nor simulates.
          const viewer = yield* memberOf(baseUrl, owner.companyId, "viewer")
          const open = yield* placeOrder(owner, "viewer-sees", ada)
          const viewed = yield* promise(() => viewer.get(`/dashboard/orders/${open}`))
          expect(viewed.status).toBe(200)
          expect(viewed.text).not.toContain(`/dashboard/orders/${open}/cancel`)
          expect(viewed.text).not.toContain("Sandbox: move the shipment")
          expect((yield* promise(() => viewer.get(`/dashboard/orders/${open}/cancel`))).status).toBe(403)
          const viewerCsrf = csrfOf(viewed.text)
          for (const [path, fields] of [
            [`/dashboard/orders/${open}/cancel`, { reason: "" }],
            [`/dashboard/orders/${open}/simulate`, { to: "processing" }]
          ] as const) {
            const page = yield* promise(() => viewer.post(path, { csrf: viewerCsrf, ...fields }))
            expect(page.status, path).toBe(403)
          }
          expect(yield* creditsOf(open)).toEqual([])
          expect((yield* auditOf(open)).map((row) => row.action)).toEqual(["order.created"])
        }),
      120_000
    )

    it.effect(
      "simulates a test order to delivered, each status on the timeline; a live order has no simulate",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const owner = yield* ownerOf(baseUrl, "Simulated Orders")
          const orderId = yield* placeOrder(owner, "simulated", ada)
          const path = `/dashboard/orders/${orderId}`
          const order = yield* promise(() => owner.browser.get(path))
          expect(timelineOf(order.text)).toEqual([expect.stringMatching(/^Placed /)])
          const csrf = csrfOf(order.text, `${path}/simulate`)
          expect(textOf(order.text)).toContain("Move to Processing Move to Delivered")

          const one = yield* promise(() => owner.browser.post(`${path}/simulate`, { csrf, to: "processing" }))
          expect(one.status).toBe(303)
          const processing = yield* promise(() => owner.browser.get(path))
          expect(textOf(processing.text)).toContain("The shipment is now Processing.")
          expect(timelineOf(processing.text)).toEqual([
            expect.stringMatching(/^Placed /),
            expect.stringMatching(/^Processing \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
          ])

          const bogus = yield* promise(() => owner.browser.post(`${path}/simulate`, { csrf, to: "teleported" }))
          expect(bogus.status).toBe(303)
          expect(textOf((yield* promise(() => owner.browser.get(path))).text)).toContain(
            "Expected a status to move the shipment to: processing, inTransit, outForDelivery, delivered, failed."
          )

          yield* promise(() => owner.browser.post(`${path}/simulate`, { csrf, to: "delivered" }))
          const delivered = yield* promise(() => owner.browser.get(path))
          expect(textOf(delivered.text)).toContain("The shipment is now Delivered.")
          const steps = timelineOf(delivered.text)
          expect(steps.map((step) => step.split(" 20")[0])).toEqual([
            "Placed",
            "Processing",
            "In transit",
            "Out for delivery",
            "Delivered"
          ])
          for (const step of steps) expect(step).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/)
          const sql = yield* SqlClient.SqlClient
          const [tracking] = yield* sql<{ carrier: string; trackingNumber: string }>`SELECT carrier, tracking_number
          FROM company_orders WHERE id = ${orderId}`.pipe(Effect.orDie)
          expect(steps[2]).toContain(`— ${tracking!.carrier} tracking number ${tracking!.trackingNumber}`)
          expect(textOf(delivered.text)).toContain(`Tracking number ${tracking!.trackingNumber}`)
          expect(delivered.text).not.toContain("Sandbox: move the shipment")
          expect((yield* auditOf(orderId)).map((row) => row.action)).toEqual([
            "order.created",
            "order.simulated",
            "order.simulated",
            "order.simulated",
            "order.simulated"
          ])
          const done = yield* promise(() => owner.browser.post(`${path}/simulate`, { csrf, to: "delivered" }))
          expect(done.status).toBe(303)
          expect(textOf((yield* promise(() => owner.browser.get(path))).text)).toContain(
            `Order ${orderId} is delivered; it cannot move any more.`
          )

          // Once the company is live, its live orders are listed by default and have no simulate.
          yield* Effect.orDie(Effect.flatMap(Companies, (companies) => companies.activate(owner.companyId)))
          const liveId = yield* placeOrder(owner, "live-order", grace, "live")
          expect(yield* idsOf(owner.browser, "")).toEqual([liveId])
          expect(yield* idsOf(owner.browser, "?environment=test")).toEqual([orderId])
          const live = yield* promise(() => owner.browser.get(`/dashboard/orders/${liveId}`))
          expect(live.status).toBe(200)
          expect(live.text).toContain("(Live)")
          expect(live.text).not.toContain("Sandbox: move the shipment")
          const simulated = yield* promise(() =>
            owner.browser.post(`/dashboard/orders/${liveId}/simulate`, { csrf, to: "processing" })
          )
          expect(simulated.status).toBe(404)
          expect((yield* auditOf(liveId)).map((row) => row.action)).toEqual(["order.created"])
        }),
      120_000
    )
  })
})
