import * as Fs from "node:fs"
import { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Checkout } from "../../../src/domain/checkout/Checkout.js"
import { signedIn, TimeTravel } from "../../support/auth.js"
import { availableVariants, makeCheckoutTestServer, payWith } from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { raw, ribbonClient, testPublicUrl } from "../../support/http.js"
import {
  AGENT,
  buyer,
  CHECKOUT,
  conforms,
  countOf,
  expectUcpError,
  londonDestination,
  PROFILE,
  schemaAvailable,
  schemaDir,
  send,
  VERSION,
  validatedCount
} from "../../support/ucp.js"

/**
 * The Universal Commerce Protocol over HTTP (docs/agent-protocols.md, docs/decisions/0080-universal-commerce-protocol.md):
 * the business profile and the checkout capability's REST binding. Every checkout and the profile are validated
 * against the protocol's 2026-04-08 JSON Schemas when `UCP_SCHEMA_DIR` names them (test/support/ucp.ts).
 */

const ORDER = "https://ucp.dev/schemas/shopping/order.json"
const writtenRows = Effect.all([countOf("acp_checkout_sessions"), countOf("quotes")])

describe("Universal Commerce Protocol", () => {
  it.layer(makeCheckoutTestServer().pipe(signedIn({ defaultCountry: "GB" })), { timeout: 120_000 })((it) => {
    it.effect("publishes the business profile with its ES256 signing key, without a token", () =>
      Effect.gen(function* () {
        const response = yield* raw(
          HttpClientRequest.get("/.well-known/ucp").pipe(HttpClientRequest.setHeader("authorization", ""))
        )
        expect(response.status, response.text).toBe(200)
        conforms(PROFILE, response.body)
        const { ucp, signing_keys } = response.body
        expect(ucp.version).toBe(VERSION)
        expect(ucp.services["dev.ucp.shopping"]).toEqual([
          expect.objectContaining({ transport: "rest", endpoint: `${testPublicUrl}/ucp` }),
          expect.objectContaining({ transport: "mcp", endpoint: `${testPublicUrl}/mcp` })
        ])
        expect(Object.keys(ucp.capabilities).sort()).toEqual([
          "dev.ucp.shopping.checkout",
          "dev.ucp.shopping.fulfillment",
          "dev.ucp.shopping.order"
        ])
        expect(signing_keys).toEqual([
          expect.objectContaining({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: expect.any(String) })
        ])
        // Only the public half is published.
        expect(signing_keys[0].d).toBeUndefined()
      })
    )

    it.effect("create → update with the address → requires_escalation → paid on the hosted page → completed", () =>
      Effect.gen(function* () {
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const lineItems = [{ item: { id: variantId! }, quantity: 2 }]
        const created = yield* send("POST", "/checkout-sessions", { line_items: lineItems })
        expect(created.status, created.text).toBe(201)
        conforms(CHECKOUT, created.body)
        const checkout = created.body
        expect(checkout).toMatchObject({
          ucp: { version: VERSION, capabilities: { "dev.ucp.shopping.checkout": [{ version: VERSION }] } },
          status: "incomplete",
          currency: "GBP",
          line_items: [{ id: `li_${variantId}`, item: { id: variantId }, quantity: 2 }]
        })
        expect(checkout.messages).toEqual([
          expect.objectContaining({ type: "error", code: "missing", severity: "requires_buyer_input" })
        ])
        expect(checkout.continue_url).toBeUndefined()

        // An address that does not pass validation: the checkout says which field, and stays incomplete.
        const misaddressed = yield* send("PUT", `/checkout-sessions/${checkout.id}`, {
          line_items: lineItems,
          buyer,
          fulfillment: { methods: [{ type: "shipping", destinations: [{ ...londonDestination, postal_code: "123" }] }] }
        })
        expect(misaddressed.status, misaddressed.text).toBe(200)
        conforms(CHECKOUT, misaddressed.body)
        expect(misaddressed.body.status).toBe("incomplete")
        expect(misaddressed.body.messages.map((m: any) => [m.code, m.path])).toEqual([
          ["invalid", "$.fulfillment.methods[0].destinations[0].postal_code"]
        ])

        const updated = yield* send("PUT", `/checkout-sessions/${checkout.id}`, {
          line_items: lineItems,
          buyer,
          fulfillment: { methods: [{ type: "shipping", destinations: [londonDestination] }] }
        })
        expect(updated.status, updated.text).toBe(200)
        conforms(CHECKOUT, updated.body)
        expect(updated.body.status).toBe("requires_escalation")
        expect(updated.body.continue_url).toMatch(new RegExp(`^${testPublicUrl}/pay/`))
        expect(updated.body.fulfillment.methods[0]).toMatchObject({
          type: "shipping",
          line_item_ids: [`li_${variantId}`],
          destinations: [expect.objectContaining({ street_address: "10 Downing Street", address_country: "GB" })]
        })
        const total = updated.body.totals.find((t: any) => t.type === "total").amount

        // Completing before the person paid is refused, and says where they pay.
        const early = yield* send("POST", `/checkout-sessions/${checkout.id}/complete`, {
          payment: { instruments: [] }
        })
        expectUcpError(early, 409, "checkout_session_not_paid")
        expect(early.body.content).toMatch(/continue_url/)

        // The person pays on Ribbon's page, as any checkout is paid.
        const paid = yield* payWith({ paymentUrl: updated.body.continue_url } as Checkout)
        expect(paid.status).toBe(200)
        const done = yield* eventually(
          send("GET", `/checkout-sessions/${checkout.id}`),
          (r) => r.body.status === "completed",
          "completed"
        )
        conforms(CHECKOUT, done.body)
        expect(done.body.continue_url).toBeUndefined()
        const client = yield* ribbonClient
        const placed = yield* client.checkouts.getCheckout({ path: { checkoutId: done.body.order.id } })
        expect(placed.totalAmount).toBe(total)
        expect(placed.orderIds).toHaveLength(1)
        expect(done.body.order).toEqual({ id: placed.id, permalink_url: `${testPublicUrl}/v1/checkouts/${placed.id}` })

        const completed = yield* send("POST", `/checkout-sessions/${checkout.id}/complete`, { payment: {} })
        expect(completed.status, completed.text).toBe(200)
        conforms(CHECKOUT, completed.body)
        expect(completed.body.status).toBe("completed")
        // The same session, seen through ACP.
        const acp = yield* raw(
          HttpClientRequest.get(`/acp/checkout_sessions/${checkout.id}`).pipe(
            HttpClientRequest.setHeader("api-version", "2026-04-17")
          )
        )
        expect(acp.body.order.line_items.map((line: any) => line.id)).toEqual(placed.orderIds)

        // A completed checkout can no longer be changed or canceled.
        expectUcpError(yield* send("POST", `/checkout-sessions/${checkout.id}/cancel`), 405, "checkout_session_closed")
        expectUcpError(
          yield* send("PUT", `/checkout-sessions/${checkout.id}`, { line_items: lineItems }),
          405,
          "checkout_session_closed"
        )
      })
    )

    it.effect("cancels a checkout awaiting payment, and its Ribbon checkout with it", () =>
      Effect.gen(function* () {
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const created = yield* send("POST", "/checkout-sessions", {
          line_items: [{ item: { id: variantId! }, quantity: 1 }],
          buyer,
          fulfillment: { methods: [{ type: "shipping", destinations: [londonDestination] }] }
        })
        expect(created.body.status, created.text).toBe("requires_escalation")
        const canceled = yield* send("POST", `/checkout-sessions/${created.body.id}/cancel`)
        expect(canceled.status, canceled.text).toBe(200)
        conforms(CHECKOUT, canceled.body)
        expect(canceled.body.status).toBe("canceled")
        const client = yield* ribbonClient
        const paymentCheckout = new URL(created.body.continue_url).pathname.split("/")[2]!
        expect((yield* client.checkouts.getCheckout({ path: { checkoutId: paymentCheckout } })).status).toBe(
          "cancelled"
        )
      })
    )

    it.effect("refuses a request without UCP-Agent, with a bad body or an unknown item, leaving nothing", () =>
      Effect.gen(function* () {
        const before = yield* writtenRows
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const body = { line_items: [{ item: { id: variantId! }, quantity: 1 }] }
        expectUcpError(yield* send("POST", "/checkout-sessions", body, null), 400, "invalid_profile_url")
        expectUcpError(yield* send("POST", "/checkout-sessions", body, "profile=nope"), 400, "invalid_profile_url")
        const empty = yield* send("POST", "/checkout-sessions", { line_items: [] })
        expectUcpError(empty, 400, "invalid")
        expect(empty.body.path).toBe("$.line_items")
        // A known item (twice) before an unknown one: named by its line, refused before anything is quoted.
        const unknown = yield* send("POST", "/checkout-sessions", {
          line_items: [
            { item: { id: variantId! }, quantity: 2 },
            { item: { id: "v" }, quantity: 1 }
          ]
        })
        expectUcpError(unknown, 400, "invalid")
        expect(unknown.body.path).toBe("$.line_items[1].item.id")
        expectUcpError(yield* send("GET", "/checkout-sessions/nope"), 404, "checkout_session_not_found")
        const unauthenticated = yield* raw(
          HttpClientRequest.get("/ucp/checkout-sessions/x").pipe(
            HttpClientRequest.setHeaders({ "ucp-agent": AGENT, authorization: "Bearer nope" })
          )
        )
        expectUcpError(unauthenticated, 401, "invalid_token")
        expect(unauthenticated.headers["www-authenticate"]).toMatch(/^Bearer resource_metadata=/)
        expect(yield* writtenRows).toEqual(before)
      })
    )

    it.effect("serves a paid checkout's order, its shipments as events; an unpaid or unknown one is not found", () =>
      Effect.gen(function* () {
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const created = yield* send("POST", "/checkout-sessions", {
          line_items: [{ item: { id: variantId! }, quantity: 2 }],
          buyer,
          fulfillment: { methods: [{ type: "shipping", destinations: [londonDestination] }] }
        })
        expect(created.body.status, created.text).toBe("requires_escalation")
        const unpaid = new URL(created.body.continue_url).pathname.split("/")[2]!
        expectUcpError(yield* send("GET", `/orders/${unpaid}`), 404, "order_not_found")
        expectUcpError(yield* send("GET", "/orders/nope"), 404, "order_not_found")

        yield* payWith({ paymentUrl: created.body.continue_url } as Checkout)
        const done = yield* eventually(
          send("GET", `/checkout-sessions/${created.body.id}`),
          (r) => r.body.status === "completed",
          "completed"
        )
        const placed = yield* send("GET", `/orders/${done.body.order.id}`)
        expect(placed.status, placed.text).toBe(200)
        conforms(ORDER, placed.body)
        expect(placed.body).toMatchObject({
          ucp: { version: VERSION, capabilities: { "dev.ucp.shopping.order": [{ version: VERSION }] } },
          id: done.body.order.id,
          checkout_id: created.body.id,
          permalink_url: done.body.order.permalink_url,
          currency: "GBP",
          line_items: [
            { id: `li_${variantId}`, quantity: { original: 2, total: 2, fulfilled: 0 }, status: "processing" }
          ],
          fulfillment: {
            expectations: [
              {
                method_type: "shipping",
                line_items: [{ id: `li_${variantId}`, quantity: 2 }],
                destination: expect.objectContaining({ postal_code: "SW1A 2AA" })
              }
            ],
            events: []
          }
        })
        expect(placed.body.totals).toEqual(done.body.totals)

        // The fulfillment partner ships each placed order in turn (a step per minute of the test's clock).
        const travel = yield* TimeTravel
        const client = yield* ribbonClient
        const { orderIds } = yield* client.checkouts.getCheckout({ path: { checkoutId: done.body.order.id } })
        for (const status of ["processing", "shipped"]) {
          yield* travel.advance("1 minute")
          yield* eventually(
            client.orders.listOrders({ urlParams: {} }),
            (page) => orderIds.every((id) => page.orders.find((o) => o.id === id)?.status === status),
            status
          )
        }
        const shipped = yield* eventually(
          send("GET", `/orders/${done.body.order.id}`),
          (r) => r.body.line_items[0].status === "fulfilled",
          "fulfilled"
        )
        conforms(ORDER, shipped.body)
        expect(shipped.body.line_items[0].quantity).toEqual({ original: 2, total: 2, fulfilled: 2 })
        expect(shipped.body.fulfillment.events).toEqual([
          expect.objectContaining({
            type: "shipped",
            line_items: [{ id: `li_${variantId}`, quantity: 2 }],
            tracking_number: expect.any(String)
          })
        ])
      })
    )

    it.effect.skipIf(!schemaAvailable)(`validated the profile and every checkout above against ${schemaDir}`, () =>
      Effect.sync(() => {
        expect(validatedCount()).toBeGreaterThanOrEqual(7)
        expect(Fs.readFileSync(`${schemaDir}/../LICENSE`, "utf8")).toMatch(/Apache License/)
      })
    )
  })
})
