import { createHmac, timingSafeEqual } from "node:crypto"
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Checkout } from "../../../src/domain/checkout/Checkout.js"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { acpPost, conforms, details, expectError, readSession, VERSION } from "../../support/acp.js"
import { issueTestToken, signedIn, TimeTravel } from "../../support/auth.js"
import { availableVariants, makeCheckoutTestServer, payWith } from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { get, raw, ribbonClient, testPublicUrl } from "../../support/http.js"
import { certificate, httpsReceiver, type Received } from "../../support/receiver.js"

/**
 * ACP order webhooks over HTTP (docs/agent-protocols.md "Order webhooks", docs/decisions/0084-acp-order-webhooks.md):
 * the platform registers a URL with its bearer token, and a real HTTPS receiver on 127.0.0.1 gets `order_create`
 * and `order_update` for its session, each verified by recomputing `Merchant-Signature` as a platform does, and
 * each order validated against the protocol's JSON Schema (when `ACP_SCHEMA_DIR` names it).
 */

/** Loopback allowed and the receiver's certificate trusted; orders move on only when the test moves the clock. */
const Server = makeCheckoutTestServer(
  Layer.merge(
    FulfillmentSettings.Default,
    OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })
  )
)

const endpoints = "/acp/webhook_endpoints"
const readHeaders = { "api-version": VERSION }

const endpointRows = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM acp_webhook_endpoints`, ([row]) => row!.n)
)

/**
 * Verifies `Merchant-Signature: t=<unix>,v1=<hex>` as a platform does: the hex HMAC-SHA256 of `${t}.${raw body}`,
 * keyed by the secret, within 300 seconds. Returns the parsed event.
 */
const verified = (request: Received, secret: string) => {
  const header = String(request.headers["merchant-signature"])
  const match = /^t=(\d+),v1=([a-f0-9]{64})$/.exec(header)
  expect(match, header).not.toBeNull()
  const [, t, v1] = match!
  const expected = createHmac("sha256", secret).update(`${t}.${request.body}`).digest()
  expect(timingSafeEqual(expected, Buffer.from(v1!, "hex"))).toBe(true)
  expect(Math.abs(Date.now() / 1000 - Number(t))).toBeLessThan(300)
  return JSON.parse(request.body)
}

/** The sequence number of an event, from its `Request-Id` (`acp_evt_<n>`). */
const sequenceOf = (request: Received) => Number(/^acp_evt_(\d+)$/.exec(String(request.headers["request-id"]))![1])

describe("ACP order webhooks", () => {
  it.layer(Server.pipe(signedIn({ defaultCountry: "GB" })), { timeout: 180_000 })((it) => {
    it.scoped(
      "register → create → address → requires_escalation → paid on the page → completed → shipped: order_create then order_updates, each signed",
      () =>
        Effect.gen(function* () {
          const receiver = yield* httpsReceiver()
          const url = receiver.url("/acp/order_events")
          const registered = yield* acpPost(endpoints, { url })
          expect(registered.status, registered.text).toBe(201)
          expect(registered.body).toEqual({
            id: expect.any(String),
            url,
            events: ["order_create", "order_update"],
            created_at: expect.any(String),
            secret: expect.stringMatching(/^whsec_/)
          })
          const secret: string = registered.body.secret
          // The list never shows the secret again.
          const listed = yield* get(endpoints, readHeaders)
          expect(listed.status, listed.text).toBe(200)
          expect(listed.body).toEqual({ data: [{ ...registered.body, secret: undefined }] })
          expect(listed.body.data[0]).not.toHaveProperty("secret")

          const [variantId] = yield* availableVariants("GB", "mug", 1)
          const created = yield* acpPost(
            "/acp/checkout_sessions",
            { line_items: [{ id: variantId! }], currency: "gbp", capabilities: {} },
            { requestSchema: "CheckoutSessionCreateRequest" }
          )
          expect(created.status, created.text).toBe(201)
          const sessionId: string = created.body.id
          const updated = yield* acpPost(
            `/acp/checkout_sessions/${sessionId}`,
            { fulfillment_details: details },
            { requestSchema: "CheckoutSessionUpdateRequest" }
          )
          expect(updated.body.status).toBe("requires_escalation")
          // Nothing is sent before the person pays: there is no order yet.
          expect(receiver.received).toEqual([])

          expect((yield* payWith({ paymentUrl: updated.body.continue_url } as Checkout)).status).toBe(200)
          const done = yield* eventually(readSession(sessionId), (r) => r.body.status === "completed", "completed")
          const client = yield* ribbonClient
          const checkout = yield* client.checkouts.getCheckout({ path: { checkoutId: done.body.order.id } })
          const confirmed = yield* eventually(
            Effect.sync(() => receiver.received.map((request) => JSON.parse(request.body))),
            (events) => events.some((event) => event.data.status === "confirmed"),
            "order_update confirmed"
          )
          expect(confirmed.length).toBeGreaterThanOrEqual(2)

          // The order ships: one simulator step per minute of the test's clock.
          const travel = yield* TimeTravel
          yield* travel.advance("1 minute")
          yield* eventually(
            Effect.sync(() => receiver.received.map((request) => JSON.parse(request.body).data.status)),
            (statuses) => statuses.includes("confirmed") && statuses.length > confirmed.length,
            "order_update processing"
          )
          yield* travel.advance("1 minute")
          yield* eventually(
            Effect.sync(() => receiver.received.map((request) => JSON.parse(request.body).data.status)),
            (statuses) => statuses.includes("shipped"),
            "order_update shipped"
          )

          // Deliveries may arrive in any order; the Request-Id is the event's sequence.
          const requests = [...receiver.received].sort((a, b) => sequenceOf(a) - sequenceOf(b))
          expect(new Set(requests.map(sequenceOf)).size).toBe(requests.length)
          const events = requests.map((request) => {
            expect(request.method).toBe("POST")
            expect(request.path).toBe("/acp/order_events")
            expect(request.headers["content-type"]).toBe("application/json")
            expect(Number.isNaN(Date.parse(String(request.headers.timestamp)))).toBe(false)
            const event = verified(request, secret)
            expect(Object.keys(event).sort()).toEqual(["data", "type"])
            conforms("Order", event.data)
            return event
          })
          expect(events.map((event) => event.type)).toEqual([
            "order_create",
            ...events.slice(1).map(() => "order_update")
          ])
          for (const event of events) {
            expect(event.data).toMatchObject({
              type: "order",
              id: checkout.id,
              checkout_session_id: sessionId,
              permalink_url: `${testPublicUrl}/v1/checkouts/${checkout.id}`
            })
          }
          expect(events[0].data.status).toBe("processing")
          const byStatus = (status: string) => events.find((event) => event.data.status === status)!.data
          expect(byStatus("confirmed").line_items.map((line: any) => line.id)).toEqual(checkout.orderIds)
          expect(byStatus("confirmed").totals).toEqual([
            { type: "total", display_text: "Total", amount: checkout.totalAmount }
          ])
          const shipped = byStatus("shipped")
          expect(shipped.line_items).toEqual([
            expect.objectContaining({ id: checkout.orderIds[0], status: "fulfilled", quantity: expect.anything() })
          ])
          expect(shipped.fulfillments).toEqual([
            expect.objectContaining({
              type: "shipping",
              status: "shipped",
              line_items: [{ id: checkout.orderIds[0], quantity: 1 }],
              tracking_number: expect.any(String)
            })
          ])
          // The session shows the same order as the last event.
          const session = yield* readSession(sessionId)
          conforms("CheckoutSession", session.body)
          expect(session.body.order).toEqual(events.at(-1).data)

          // Deleted: no longer listed, and a second deletion is not found.
          const del = (id: string) =>
            raw(HttpClientRequest.del(`${endpoints}/${id}`).pipe(HttpClientRequest.setHeaders(readHeaders)))
          const deleted = yield* del(registered.body.id)
          expect(deleted.status, deleted.text).toBe(204)
          expect((yield* get(endpoints, readHeaders)).body).toEqual({ data: [] })
          expectError(yield* del(registered.body.id), 404, "not_found")
          // Its secret is gone from the database, its deliveries' copies included.
          const sql = yield* SqlClient.SqlClient
          const [kept] = yield* sql<{ secrets: number; deliveries: number }>`
            SELECT (SELECT count(*)::int FROM acp_webhook_endpoints WHERE secret IS NOT NULL) AS secrets,
              (SELECT count(*)::int FROM webhook_deliveries
                WHERE acp_endpoint_id = ${registered.body.id} AND signing_secret IS NOT NULL) AS deliveries`
          expect(kept).toEqual({ secrets: 0, deliveries: 0 })
        })
    )

    it.effect("endpoints are the platform's own: another OAuth client's token neither sees nor deletes them", () =>
      Effect.gen(function* () {
        const registered = yield* acpPost(endpoints, { url: "https://127.0.0.1:9/acp/order_events" })
        expect(registered.status, registered.text).toBe(201)
        const other = yield* issueTestToken({ defaultCountry: "GB" })
        const as = (request: HttpClientRequest.HttpClientRequest) =>
          raw(
            request.pipe(HttpClientRequest.setHeaders({ ...readHeaders, authorization: `Bearer ${other.accessToken}` }))
          )
        const listed = yield* as(HttpClientRequest.get(endpoints))
        expect(listed.status, listed.text).toBe(200)
        expect(listed.body).toEqual({ data: [] })
        expectError(yield* as(HttpClientRequest.del(`${endpoints}/${registered.body.id}`)), 404, "not_found")
        const own = yield* get(endpoints, readHeaders)
        expect(own.body.data.map((endpoint: any) => endpoint.id)).toContain(registered.body.id)
        // The same URL twice for one platform is refused: each event would reach it once anyway.
        const again = yield* acpPost(endpoints, { url: "https://127.0.0.1:9/acp/order_events" })
        expectError(again, 400, "invalid")
        expect(again.body.param).toBe("$.url")
        const deleted = yield* raw(
          HttpClientRequest.del(`${endpoints}/${registered.body.id}`).pipe(HttpClientRequest.setHeaders(readHeaders))
        )
        expect(deleted.status, deleted.text).toBe(204)
      })
    )

    it.effect("a bad registration is the protocol's error and stores nothing", () =>
      Effect.gen(function* () {
        const before = yield* endpointRows
        const refused = [
          { body: {}, param: "$.url" },
          { body: { url: 42 }, param: "$.url" },
          { body: { url: "http://example.com/hook" }, param: "$.url", message: /https/ },
          { body: { url: "https://10.0.0.7/hook" }, param: "$.url", message: /private/ },
          { body: { url: "https://169.254.169.254/latest" }, param: "$.url" },
          { body: { url: "not a url" }, param: "$.url" }
        ]
        for (const { body, param, message } of refused) {
          const response = yield* acpPost(endpoints, body)
          expectError(response, 400, "invalid")
          expect(response.body.param, JSON.stringify(body)).toBe(param)
          if (message !== undefined) expect(response.body.message).toMatch(message)
        }
        // Not JSON at all.
        const malformed = yield* raw(
          HttpClientRequest.post(endpoints).pipe(
            HttpClientRequest.setHeaders({ ...readHeaders, "idempotency-key": "malformed-1" }),
            HttpClientRequest.bodyText("{url:", "application/json")
          )
        )
        expect(malformed.status, malformed.text).toBe(400)
        conforms("Error", malformed.body)
        expect(malformed.body.type).toBe("invalid_request")
        // Every POST under /acp needs its Idempotency-Key and API-Version.
        expectError(
          yield* acpPost(endpoints, { url: "https://example.com/hook" }, { key: null }),
          400,
          "idempotency_key_required"
        )
        const unversioned = yield* acpPost(endpoints, { url: "https://example.com/hook" }, { version: null })
        expect(unversioned.status, unversioned.text).toBe(400)
        expect(yield* endpointRows).toBe(before)
      })
    )
  })
})
