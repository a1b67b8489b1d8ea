import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  acpPost,
  CARD,
  conforms,
  delegateSchemaAvailable,
  delegation,
  details,
  expectError,
  newKey,
  readSession,
  schemaAvailable,
  schemaDir,
  validatedCount
} from "../../support/acp.js"
import { signedIn } from "../../support/auth.js"
import { availableVariants, makeCheckoutTestServer } from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { ribbonClient } from "../../support/http.js"

/**
 * Delegated payment in the Agentic Commerce Protocol (docs/decisions/0079-acp-delegated-payment.md): Ribbon as the
 * PSP tokenizes a card with its payment simulator into a vault token, and `complete` pays the session with it. Requests
 * and responses are validated against the protocol's JSON Schema when `ACP_SCHEMA_DIR` names it (test/support/acp.ts).
 */

const TOKEN_PARAM = "$.payment_data.instrument.credential.token"

/** Tokenizes `body` (conforming to the protocol's request object when its schema is at hand). */
const delegate = (body: unknown, options: { readonly key?: string | null } = {}) => {
  conforms("DelegatePaymentRequest", body, "delegate_payment")
  return acpPost("/agentic_commerce/delegate_payment", body, options)
}

/** A vault token for the session, within `max_amount`. */
const tokenFor = (allowance: Parameters<typeof delegation>[0]) =>
  Effect.map(delegate(delegation(allowance)), (response) => {
    expect(response.status, response.text).toBe(201)
    return response.body.id as string
  })

const paymentData = (token: string) => ({
  handler_id: "ribbon_card",
  instrument: { type: "card", credential: { type: "spt", token } }
})

const complete = (sessionId: string, token: string) =>
  acpPost(
    `/acp/checkout_sessions/${sessionId}/complete`,
    { payment_data: paymentData(token) },
    { requestSchema: "CheckoutSessionCompleteRequest" }
  )

/** A session with nothing missing: awaiting payment, with its total. */
const readySession = Effect.gen(function* () {
  const [variantId] = yield* availableVariants("GB", "mug", 1)
  const created = yield* acpPost(
    "/acp/checkout_sessions",
    { line_items: [{ id: variantId! }], currency: "gbp", capabilities: {}, fulfillment_details: details },
    { requestSchema: "CheckoutSessionCreateRequest" }
  )
  expect(created.status, created.text).toBe(201)
  conforms("CheckoutSession", created.body)
  expect(created.body.status).toBe("requires_escalation")
  const total: number = created.body.totals.find((t: any) => t.type === "total").amount
  return { id: created.body.id as string, total, session: created.body }
})

const tokenRows = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<any>`SELECT * FROM acp_vault_tokens ORDER BY id`)

describe("ACP delegated payment", () => {
  it.layer(makeCheckoutTestServer().pipe(signedIn({ defaultCountry: "GB" })), { timeout: 120_000 })((it) => {
    it.effect("tokenizes a card, pays the session with the token, and refuses the token a second time", () =>
      Effect.gen(function* () {
        const { id, total, session } = yield* readySession
        expect(session.capabilities.payment.handlers).toEqual([
          expect.objectContaining({
            id: "ribbon_card",
            name: "dev.acp.tokenized.card",
            requires_delegate_payment: true
          })
        ])

        const key = newKey()
        const body = delegation({ max_amount: total, checkout_session_id: id })
        const created = yield* delegate(body, { key })
        expect(created.status, created.text).toBe(201)
        conforms("DelegatePaymentResponse", created.body, "delegate_payment")
        expect(created.body).toEqual({
          id: expect.stringMatching(/^vt_[a-zA-Z0-9]+$/),
          created: expect.any(String),
          metadata: { campaign: "q4", merchant_id: "ribbon", idempotency_key: key }
        })
        const token: string = created.body.id
        // The same key and body: the same token, not another one.
        const replayed = yield* delegate(body, { key })
        expect(replayed.status).toBe(201)
        expect(replayed.headers["idempotent-replayed"]).toBe("true")
        expect(replayed.body).toEqual(created.body)

        // Neither the card number nor the token is in the table: the simulator's saved card and the token's hash.
        const rows = yield* tokenRows
        expect(rows).toHaveLength(1)
        expect(JSON.stringify(rows)).not.toContain(CARD)
        expect(JSON.stringify(rows)).not.toContain(token)
        expect(rows[0]).toMatchObject({ cardLast4: "4242", maxAmount: total, checkoutSessionId: id, usedAt: null })

        const paid = yield* complete(id, token)
        expect(paid.status, paid.text).toBe(200)
        conforms("CheckoutSessionWithOrder", paid.body)
        expect(["complete_in_progress", "completed"]).toContain(paid.body.status)
        const done = yield* eventually(readSession(id), (r) => r.body.status === "completed", "completed")
        conforms("CheckoutSessionWithOrder", done.body)
        const client = yield* ribbonClient
        const checkout = yield* client.checkouts.getCheckout({ path: { checkoutId: done.body.order.id } })
        expect(checkout).toMatchObject({ status: "confirmed", totalAmount: total })
        expect(done.body.order.line_items.map((line: any) => line.id)).toEqual(checkout.orderIds)
        expect((yield* tokenRows)[0]).toMatchObject({ checkoutId: checkout.id, usedAt: expect.any(Date) })

        // The allowance is one_time: a second use is refused, even for the session it paid.
        const twice = yield* complete(id, token)
        expectError(twice, 409, "conflict")
        expect(twice.body.param).toBe(TOKEN_PARAM)
      })
    )

    it.effect("refuses a token over its max_amount, expired, or for another session; the session stays unpaid", () =>
      Effect.gen(function* () {
        const { id, total } = yield* readySession
        const other = yield* readySession
        const refusals = [
          [yield* tokenFor({ max_amount: total - 1, checkout_session_id: id }), 402, "maximum_exceeded"],
          [
            yield* tokenFor({
              max_amount: total,
              checkout_session_id: id,
              expires_at: new Date(Date.now() - 60_000).toISOString()
            }),
            402,
            "expired"
          ],
          [yield* tokenFor({ max_amount: total, checkout_session_id: other.id }), 402, "payment_declined"],
          [`vt_${"0".repeat(48)}`, 402, "payment_declined"]
        ] as const
        for (const [token, status, code] of refusals) {
          const refused = yield* complete(id, token)
          expectError(refused, status, code)
          expect(refused.body.param).toBe(TOKEN_PARAM)
        }
        const after = yield* readSession(id)
        expect(after.body.status).toBe("requires_escalation")
        expect(after.body.order).toBeUndefined()
        expect((yield* tokenRows).filter((row: any) => row.usedAt !== null)).toHaveLength(1)
      })
    )

    it.effect("refuses a bad card, a missing field or a missing key with the protocol's codes, storing nothing", () =>
      Effect.gen(function* () {
        const before = (yield* tokenRows).length
        const body = delegation({ max_amount: 100, checkout_session_id: "cs" })
        const luhn = yield* acpPost("/agentic_commerce/delegate_payment", {
          ...body,
          payment_method: { ...body.payment_method, number: "4242424242424241" }
        })
        expectError(luhn, 400, "invalid_card")
        expect(luhn.body.param).toBe("$.payment_method.number")
        expect(luhn.text).not.toContain("4242424242424241")
        const { allowance, ...withoutAllowance } = body
        const missing = yield* acpPost("/agentic_commerce/delegate_payment", withoutAllowance)
        expectError(missing, 400, "invalid_card")
        expect(missing.body.param).toBe("$.allowance")
        expectError(
          yield* acpPost("/agentic_commerce/delegate_payment", body, { key: null }),
          400,
          "idempotency_key_required"
        )
        expectError(
          yield* acpPost("/agentic_commerce/delegate_payment", body, { version: null }),
          400,
          "missing_api_version"
        )
        expect((yield* tokenRows).length).toBe(before)
      })
    )

    it.effect.skipIf(!schemaAvailable)(
      `validated the requests and responses above against the official schema (${schemaDir}${delegateSchemaAvailable ? "" : "; delegate_payment's schema is not there, so its objects were not validated"})`,
      () => Effect.sync(() => expect(validatedCount()).toBeGreaterThan(10))
    )
  })
})
