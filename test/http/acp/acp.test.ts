import * as Fs from "node:fs"
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Checkout } from "../../../src/domain/checkout/Checkout.js"
import {
  acpPost,
  address,
  conforms,
  details,
  expectError,
  newKey,
  readSession,
  schemaAvailable,
  schemaDir,
  schemaFile,
  VERSION,
  validatedCount
} from "../../support/acp.js"
import { signedIn } from "../../support/auth.js"
import { availableVariants, makeCheckoutTestServer, payWith } from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { get, raw, ribbonClient, testPublicUrl } from "../../support/http.js"

/**
 * The Agentic Commerce Protocol over HTTP (docs/agent-protocols.md, docs/decisions/0078-agentic-commerce-protocol.md):
 * every request sent and every response received is validated against the protocol's official 2026-04-17 JSON
 * Schema, read from the folder `ACP_SCHEMA_DIR` names (test/support/acp.ts). Without it, the conformance test below
 * is skipped (and says so) while every other assertion still runs.
 */

/** A POST under `/acp`. */
const post = (path: string, body: unknown, options?: Parameters<typeof acpPost>[2]) =>
  acpPost(`/acp${path}`, body, options)
const read = readSession

const countOf = (table: "acp_checkout_sessions" | "quotes") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`, ([row]) => row!.n)
  )
const sessionCount = countOf("acp_checkout_sessions")
/** The rows a refused request must not leave: sessions, and quotes pricing them. */
const writtenRows = Effect.all([countOf("acp_checkout_sessions"), countOf("quotes")])

describe("Agentic Commerce Protocol", () => {
  it.layer(makeCheckoutTestServer().pipe(signedIn({ defaultCountry: "GB" })), { timeout: 120_000 })((it) => {
    it.effect("publishes the discovery document, without a token", () =>
      Effect.gen(function* () {
        const response = yield* raw(
          HttpClientRequest.get("/.well-known/acp.json").pipe(HttpClientRequest.setHeader("authorization", ""))
        )
        expect(response.status).toBe(200)
        expect(response.headers["cache-control"]).toBe("public, max-age=3600")
        conforms("DiscoveryResponse", response.body)
        expect(response.body).toMatchObject({
          protocol: { name: "acp", version: VERSION, supported_versions: [VERSION] },
          api_base_url: `${testPublicUrl}/acp`,
          transports: ["rest", "mcp"],
          capabilities: { services: ["checkout", "delegate_payment"] }
        })
        expect(response.body.capabilities.supported_currencies).toContain("gbp")
      })
    )

    it.effect(
      "create → update with the address → requires_escalation → paid on the hosted page → completed with its orders",
      () =>
        Effect.gen(function* () {
          const [variantId] = yield* availableVariants("GB", "mug", 1)
          const created = yield* post(
            "/checkout_sessions",
            { line_items: [{ id: variantId! }, { id: variantId! }], currency: "gbp", capabilities: {} },
            { requestSchema: "CheckoutSessionCreateRequest" }
          )
          expect(created.status, created.text).toBe(201)
          conforms("CheckoutSession", created.body)
          const session = created.body
          expect(session).toMatchObject({
            status: "not_ready_for_payment",
            currency: "gbp",
            protocol: { version: VERSION },
            line_items: [{ id: `li_${variantId}`, item: { id: variantId }, quantity: 2 }]
          })
          expect(session.messages.map((m: any) => [m.type, m.code, m.param])).toEqual([
            ["error", "missing", "$.fulfillment_details"]
          ])
          expect(session.quote_id).toEqual(expect.any(String))
          expect(session.continue_url).toBeUndefined()

          // An address that does not pass validation: the session says which field, and stays unpayable.
          const misaddressed = yield* post(
            `/checkout_sessions/${session.id}`,
            { fulfillment_details: { ...details, address: { ...address, postal_code: "123" } } },
            { requestSchema: "CheckoutSessionUpdateRequest" }
          )
          expect(misaddressed.status, misaddressed.text).toBe(200)
          conforms("CheckoutSession", misaddressed.body)
          expect(misaddressed.body.status).toBe("not_ready_for_payment")
          expect(misaddressed.body.messages.map((m: any) => [m.code, m.param])).toEqual([
            ["invalid", "$.fulfillment_details.address.postal_code"]
          ])

          const updated = yield* post(
            `/checkout_sessions/${session.id}`,
            { fulfillment_details: details, buyer: { first_name: "Ada", email: "ada@example.com" } },
            { requestSchema: "CheckoutSessionUpdateRequest" }
          )
          expect(updated.status, updated.text).toBe(200)
          conforms("CheckoutSession", updated.body)
          expect(updated.body.status).toBe("requires_escalation")
          expect(updated.body.messages).toEqual([
            expect.objectContaining({ type: "info", resolution: "requires_buyer_input" })
          ])
          const total = updated.body.totals.find((t: any) => t.type === "total").amount
          // The quotes priced for GB are kept: the total is what they add up to, shipping and fees included.
          expect(updated.body.quote_id).toBe(session.quote_id)
          expect(updated.body.continue_url).toMatch(new RegExp(`^${testPublicUrl}/pay/`))

          // Selecting the option already selected keeps the checkout; an option Ribbon does not offer is refused.
          const selection = { type: "shipping", option_id: "ribbon_shipping", item_ids: [variantId!] }
          const same = yield* post(
            `/checkout_sessions/${session.id}`,
            { selected_fulfillment_options: [selection] },
            { requestSchema: "CheckoutSessionUpdateRequest" }
          )
          expect(same.status, same.text).toBe(200)
          expect(same.body.continue_url).toBe(updated.body.continue_url)
          const unknownOption = yield* post(`/checkout_sessions/${session.id}`, {
            selected_fulfillment_options: [{ ...selection, option_id: "express" }]
          })
          expectError(unknownOption, 400, "invalid")
          expect(unknownOption.body.param).toBe("$.selected_fulfillment_options[0].option_id")

          // Completing before the person paid is refused, and says where they pay.
          const early = yield* post(
            `/checkout_sessions/${session.id}/complete`,
            { payment_data: { purchase_order_number: "po-1" } },
            { requestSchema: "CheckoutSessionCompleteRequest" }
          )
          expectError(early, 409, "checkout_session_not_paid")
          expect(early.body.message).toMatch(/continue_url/)

          // The person pays on Ribbon's page, as any checkout is paid.
          const paid = yield* payWith({ paymentUrl: updated.body.continue_url } as Checkout)
          expect(paid.status).toBe(200)
          const done = yield* eventually(read(session.id), (r) => r.body.status === "completed", "completed")
          conforms("CheckoutSession", done.body)
          const client = yield* ribbonClient
          const checkout = yield* client.checkouts.getCheckout({ path: { checkoutId: done.body.order.id } })
          expect(checkout.totalAmount).toBe(total)
          expect(done.body.order).toMatchObject({
            checkout_session_id: session.id,
            permalink_url: `${testPublicUrl}/v1/checkouts/${checkout.id}`,
            status: "confirmed"
          })
          expect(done.body.order.line_items.map((line: any) => line.id)).toEqual(checkout.orderIds)
          expect(checkout.orderIds).toHaveLength(1)
          expect(done.body.continue_url).toBeUndefined()

          const completed = yield* post(
            `/checkout_sessions/${session.id}/complete`,
            { payment_data: { purchase_order_number: "po-1" } },
            { requestSchema: "CheckoutSessionCompleteRequest" }
          )
          expect(completed.status, completed.text).toBe(200)
          conforms("CheckoutSessionWithOrder", completed.body)
          expect(completed.body.order.line_items.map((line: any) => line.id)).toEqual(checkout.orderIds)

          // A completed session can no longer be changed or canceled.
          expectError(yield* post(`/checkout_sessions/${session.id}/cancel`, {}), 405, "checkout_session_closed")
          expectError(
            yield* post(`/checkout_sessions/${session.id}`, { order_notes: "late" }),
            405,
            "checkout_session_closed"
          )
        })
    )

    it.effect(
      "replays a key's answer, refuses it for another body, and makes one session of 20 concurrent requests",
      () =>
        Effect.gen(function* () {
          const [variantId] = yield* availableVariants("GB", "mug", 1)
          const body = {
            line_items: [{ id: variantId! }],
            currency: "gbp",
            capabilities: {},
            fulfillment_details: details
          }
          const key = newKey()
          const first = yield* post("/checkout_sessions", body, { key, requestSchema: "CheckoutSessionCreateRequest" })
          expect(first.status, first.text).toBe(201)
          expect(first.body.status).toBe("requires_escalation")
          expect(first.headers["idempotent-replayed"]).toBeUndefined()
          expect(first.headers["idempotency-key"]).toBe(key)
          // The same body, its keys in another order: the stored answer.
          const reordered = {
            capabilities: {},
            fulfillment_details: details,
            currency: "gbp",
            line_items: [{ id: variantId! }]
          }
          const again = yield* post("/checkout_sessions", reordered, { key })
          expect(again.status).toBe(201)
          expect(again.headers["idempotent-replayed"]).toBe("true")
          expect(again.body).toEqual(first.body)
          const other = yield* post("/checkout_sessions", { ...body, order_notes: "ring twice" }, { key })
          expectError(other, 422, "idempotency_conflict")
          // A new recipient: the checkout awaiting payment is cancelled and another one made for the change.
          const client = yield* ribbonClient
          const moved = yield* post(`/checkout_sessions/${first.body.id}`, {
            fulfillment_details: { ...details, name: "Grace Hopper" }
          })
          expect(moved.status, moved.text).toBe(200)
          expect(moved.body.status).toBe("requires_escalation")
          expect(moved.body.continue_url).not.toBe(first.body.continue_url)
          const replaced = new URL(first.body.continue_url).pathname.split("/")[2]!
          expect((yield* client.checkouts.getCheckout({ path: { checkoutId: replaced } })).status).toBe("cancelled")
          // The same key on another endpoint is another key.
          const cancel = yield* post(`/checkout_sessions/${first.body.id}/cancel`, {}, { key })
          expect(cancel.status, cancel.text).toBe(200)
          conforms("CheckoutSession", cancel.body)
          expect(cancel.body.status).toBe("canceled")
          expectError(yield* post(`/checkout_sessions/${first.body.id}/cancel`, {}), 405, "checkout_session_closed")

          const before = yield* sessionCount
          const concurrentKey = newKey()
          const answers = yield* Effect.all(
            Array.from({ length: 20 }, () => post("/checkout_sessions", body, { key: concurrentKey })),
            { concurrency: "unbounded" }
          )
          for (const answer of answers) {
            if (answer.status === 409) {
              expectError(answer, 409, "idempotency_in_flight")
              expect(answer.headers["retry-after"]).toBe("1")
            } else expect(answer.status, answer.text).toBe(201)
          }
          const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.body.id))
          expect(ids.size).toBe(1)
          expect(yield* sessionCount).toBe(before + 1)
        })
    )

    it.effect("refuses a request without API-Version, with an unsupported one, without a key or with a bad body", () =>
      Effect.gen(function* () {
        const before = yield* writtenRows
        const body = { line_items: [{ id: "v" }], currency: "gbp", capabilities: {} }
        const missing = yield* post("/checkout_sessions", body, { version: null })
        expectError(missing, 400, "missing_api_version")
        expect(missing.body.supported_versions).toEqual([VERSION])
        const old = yield* get("/acp/checkout_sessions/x", { "api-version": "2025-09-29" })
        expectError(old, 400, "unsupported_api_version")
        expect(old.body.supported_versions).toEqual([VERSION])
        expectError(yield* post("/checkout_sessions", body, { key: null }), 400, "idempotency_key_required")
        const empty = yield* post("/checkout_sessions", { ...body, line_items: [] })
        expectError(empty, 400, "invalid")
        expect(empty.body.param).toBe("$.line_items")
        // A known item before an unknown one: refused before anything is quoted.
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const unknown = yield* post("/checkout_sessions", { ...body, line_items: [{ id: variantId! }, { id: "v" }] })
        expectError(unknown, 400, "invalid")
        expect(unknown.body.param).toBe("$.line_items[1].id")
        expectError(yield* read("nope"), 404, "checkout_session_not_found")
        const unauthenticated = yield* raw(
          HttpClientRequest.get("/acp/checkout_sessions/x").pipe(
            HttpClientRequest.setHeaders({ "api-version": VERSION, authorization: "Bearer nope" })
          )
        )
        expectError(unauthenticated, 401, "invalid_token")
        expect(unauthenticated.headers["www-authenticate"]).toMatch(/^Bearer resource_metadata=/)
        expect(yield* writtenRows).toEqual(before)
      })
    )

    it.effect.skipIf(!schemaAvailable)(
      `validated every request and response above against the official schema (${schemaFile})`,
      () =>
        Effect.sync(() => {
          expect(validatedCount()).toBeGreaterThan(20)
          expect(Fs.readFileSync(`${schemaDir}/LICENSE`, "utf8")).toMatch(/Apache License/)
        })
    )
  })
})
