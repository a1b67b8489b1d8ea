import { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { acpPost, delegation } from "../../support/acp.js"
import { signedIn } from "../../support/auth.js"
import { availableVariants, makeCheckoutTestServer } from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { raw, ribbonClient, testPublicUrl } from "../../support/http.js"
import {
  buyer,
  CHECKOUT,
  conforms,
  countOf,
  expectUcpError,
  londonDestination,
  PROFILE,
  schemaAvailable,
  send,
  validatedCount
} from "../../support/ucp.js"

/**
 * UCP's payment handler (docs/decisions/0086-ucp-idempotency-payment-and-mcp.md): Ribbon tokenizes a card with its
 * delegated payment (`POST /agentic_commerce/delegate_payment`, bound to the checkout's id), the checkout is then
 * `ready_for_complete`, and `complete` with the token as a `ribbon_card` instrument places its order. Without a
 * token the checkout stays `requires_escalation`, the person paying at `continue_url`.
 */

const HANDLER = "test.ribbon.delegated_card"

/** A token of the handler for the checkout, within `max_amount`. */
const tokenFor = (allowance: Parameters<typeof delegation>[0]) =>
  Effect.map(acpPost("/agentic_commerce/delegate_payment", delegation(allowance)), (response) => {
    expect(response.status, response.text).toBe(201)
    return response.body.id as string
  })

const instrument = (token: string, handlerId = "ribbon_card") => ({
  id: "instr_1",
  handler_id: handlerId,
  type: "card",
  selected: true,
  display: { brand: "visa", last_digits: "4242" },
  credential: { type: "token", token }
})
const complete = (id: string, payment: unknown) => send("POST", `/checkout-sessions/${id}/complete`, { payment })

/** A checkout with nothing missing, which no token pays yet. */
const readyCheckout = Effect.gen(function* () {
  const [variantId] = yield* availableVariants("GB", "mug", 1)
  const created = yield* send("POST", "/checkout-sessions", {
    line_items: [{ item: { id: variantId! }, quantity: 1 }],
    buyer,
    fulfillment: { methods: [{ type: "shipping", destinations: [londonDestination] }] }
  })
  expect(created.status, created.text).toBe(201)
  conforms(CHECKOUT, created.body)
  const total: number = created.body.totals.find((t: any) => t.type === "total").amount
  return { id: created.body.id as string, total, checkout: created.body }
})

describe("UCP payment handler", () => {
  it.layer(makeCheckoutTestServer().pipe(signedIn({ defaultCountry: "GB" })), { timeout: 120_000 })((it) => {
    it.effect(
      "offers the handler; without a token requires_escalation, with one ready_for_complete, then completed",
      () =>
        Effect.gen(function* () {
          const { id, total, checkout } = yield* readyCheckout
          const handlers = {
            [HANDLER]: [
              expect.objectContaining({
                id: "ribbon_card",
                available_instruments: [{ type: "card", constraints: { brands: ["visa", "mastercard", "amex"] } }],
                config: expect.objectContaining({
                  tokenization_url: `${testPublicUrl}/agentic_commerce/delegate_payment`,
                  credential_type: "token"
                })
              })
            ]
          }
          expect(checkout.ucp.payment_handlers).toEqual(handlers)
          // No token yet: the person pays at continue_url, and a message with a buyer severity says so.
          expect(checkout.status).toBe("requires_escalation")
          expect(checkout.continue_url).toMatch(new RegExp(`^${testPublicUrl}/pay/`))
          expect(checkout.messages).toEqual([
            expect.objectContaining({ type: "error", code: "payment_required", severity: "requires_buyer_input" })
          ])

          const token = yield* tokenFor({ max_amount: total, checkout_session_id: id })
          const ready = yield* send("GET", `/checkout-sessions/${id}`)
          conforms(CHECKOUT, ready.body)
          expect(ready.body.status).toBe("ready_for_complete")
          expect(ready.body.messages).toEqual([])
          expect(ready.body.continue_url).toBeDefined()

          const completed = yield* complete(id, { instruments: [instrument(token)] })
          expect(completed.status, completed.text).toBe(200)
          conforms(CHECKOUT, completed.body)
          expect(["complete_in_progress", "completed"]).toContain(completed.body.status)
          const done = yield* eventually(
            send("GET", `/checkout-sessions/${id}`),
            (r) => r.body.status === "completed",
            "completed"
          )
          conforms(CHECKOUT, done.body)
          const client = yield* ribbonClient
          const placed = yield* client.checkouts.getCheckout({ path: { checkoutId: done.body.order.id } })
          expect(placed.totalAmount).toBe(total)
          expect(placed.orderIds).toHaveLength(1)

          // The token paid once: used again it is refused, even on its own paid checkout.
          const again = yield* complete(id, { instruments: [instrument(token)] })
          expectUcpError(again, 409, "conflict")
          expect(again.body.path).toBe("$.payment.instruments[0].credential.token")
        })
    )

    it.effect("refuses an overspent, expired, other-checkout or unknown token, charging nothing", () =>
      Effect.gen(function* () {
        const { id, total } = yield* readyCheckout
        const other = yield* readyCheckout
        const checkouts = yield* countOf("checkouts")
        const refused = (token: string, status: number, code: string) =>
          Effect.gen(function* () {
            const response = yield* complete(id, { instruments: [instrument(token)] })
            expectUcpError(response, status, code)
            expect(response.body.path).toBe("$.payment.instruments[0].credential.token")
          })

        // Under the total: not ready, and refused.
        const small = yield* tokenFor({ max_amount: total - 1, checkout_session_id: id })
        expect((yield* send("GET", `/checkout-sessions/${id}`)).body.status).toBe("requires_escalation")
        yield* refused(small, 402, "maximum_exceeded")
        const expired = yield* tokenFor({
          max_amount: total,
          checkout_session_id: id,
          expires_at: new Date(Date.now() - 1000).toISOString()
        })
        expect((yield* send("GET", `/checkout-sessions/${id}`)).body.status).toBe("requires_escalation")
        yield* refused(expired, 402, "expired")
        const elsewhere = yield* tokenFor({ max_amount: other.total, checkout_session_id: other.id })
        expect((yield* send("GET", `/checkout-sessions/${id}`)).body.status).toBe("requires_escalation")
        yield* refused(elsewhere, 402, "payment_declined")
        yield* refused(`vt_${"0".repeat(48)}`, 402, "payment_declined")

        // Another handler, or a credential that is no token: the request's 400, naming the field.
        const wrongHandler = yield* complete(id, { instruments: [instrument(small, "gpay")] })
        expectUcpError(wrongHandler, 400, "invalid")
        expect(wrongHandler.body.path).toBe("$.payment.instruments[0].handler_id")
        const noToken = yield* complete(id, {
          instruments: [{ ...instrument(small), credential: { type: "card", number: "4242424242424242" } }]
        })
        expectUcpError(noToken, 400, "invalid")
        expect(noToken.body.path).toBe("$.payment.instruments[0].credential")

        // Nothing was charged: the checkout still awaits payment, and no other was made.
        const after = yield* send("GET", `/checkout-sessions/${id}`)
        expect(after.body.status).toBe("requires_escalation")
        expect(yield* countOf("checkouts")).toBe(checkouts)
      })
    )

    it.effect("lists the handler in the business profile", () =>
      Effect.gen(function* () {
        const response = yield* raw(HttpClientRequest.get("/.well-known/ucp"))
        expect(response.status).toBe(200)
        conforms(PROFILE, response.body)
        expect(Object.keys(response.body.ucp.payment_handlers)).toEqual([HANDLER])
        expect(response.body.ucp.payment_handlers[HANDLER][0]).toMatchObject({
          id: "ribbon_card",
          version: "2026-04-08",
          spec: `${testPublicUrl}/docs`
        })
      })
    )

    it.effect.skipIf(!schemaAvailable)("validated the profile and the checkouts above", () =>
      Effect.sync(() => expect(validatedCount()).toBeGreaterThanOrEqual(5))
    )
  })
})
