import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Fulfillment } from "../../src/services/Fulfillment.js"
import { Notifications } from "../../src/services/Notifications.js"
import { Orders } from "../../src/services/Orders.js"
import { signedIn } from "../support/auth.js"
import {
  availableVariants,
  CheckoutTestServer,
  londonAddress,
  payWith,
  recipient,
  settled
} from "../support/checkout.js"
import { get, ribbonClient } from "../support/http.js"

/**
 * Quotes, checkouts, the payment page, placement and orders through HTTP (docs/checkout.md): the derived
 * client for the JSON API, form posts for the payment page, the background worker running.
 */

describe("checkout flow", () => {
  it.layer(CheckoutTestServer.pipe(signedIn({ defaultCountry: "GB" })), { timeout: 120_000 })((it) => {
    it.effect("quotes two items, checks out, pays on the hosted page, ends confirmed with one order per item", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const [first, second] = yield* availableVariants("GB", "mug")
        const q1 = yield* client.quotes.createQuote({ payload: { variantId: first!, countryCode: "GB" } })
        const q2 = yield* client.quotes.createQuote({ payload: { variantId: second! } })
        expect(q1.countryCode).toBe("GB")
        expect(q2.countryCode).toBe("GB")
        expect(q1.totalAmount).toBe(q1.itemAmount + q1.shippingAmount + q1.dutiesAmount + q1.serviceFeeAmount)
        expect(yield* client.quotes.getQuote({ path: { quoteId: q1.id } })).toEqual(q1)

        const checkout = yield* client.checkouts.createCheckout({
          payload: {
            items: [{ quoteId: q1.id, quantity: 2 }, { quoteId: q2.id }],
            recipient,
            shippingAddress: londonAddress
          }
        })
        expect(checkout.status).toBe("pending_payment")
        expect(checkout.totalAmount).toBe(2 * q1.totalAmount + q2.totalAmount)
        expect(checkout.items.map((i) => i.status)).toEqual(["pending", "pending"])
        expect(checkout.paymentUrl).toMatch(new RegExp(`/pay/${checkout.id}\\?t=`))

        const page = yield* get(new URL(checkout.paymentUrl!).pathname + new URL(checkout.paymentUrl!).search)
        expect(page.status).toBe(200)
        expect(page.text).toContain(`Pay ${checkout.totalDisplay}`)

        const paid = yield* payWith(checkout)
        expect(paid.status, paid.text.match(/role="alert"[\s\S]{0,600}/)?.[0]).toBe(200)
        expect(paid.text).toContain("Payment received")

        const final = yield* settled(checkout.id)
        expect(final.status).toBe("confirmed")
        expect(final.orderIds).toHaveLength(2)
        expect(final.items.map((i) => i.status)).toEqual(["placed", "placed"])
        expect(final.paymentUrl).toBeNull()

        const orders = yield* client.orders.listOrders({ urlParams: {} })
        expect(orders.orders.map((o) => o.id).sort()).toEqual([...final.orderIds].sort())

        // Paying again is refused with a clear page, and changes nothing.
        const again = yield* payWith(checkout)
        expect(again.status).toBe(409)
        expect((yield* client.checkouts.getCheckout({ path: { checkoutId: checkout.id } })).status).toBe("confirmed")

        const outbox = yield* Effect.flatMap(Notifications, (n) => n.forCheckout(checkout.id))
        expect(outbox.map((n) => `${n.kind}:${n.channel}`)).toEqual(["receipt:email", "confirmation:email"])
        void Fulfillment
        void Orders
      })
    )
  })
})
