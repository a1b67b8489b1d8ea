import { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import type { Checkout } from "../../src/domain/Checkout.js"
import { Fulfillment } from "../../src/services/Fulfillment.js"
import { Notifications } from "../../src/services/Notifications.js"
import { Orders } from "../../src/services/Orders.js"
import { signedIn } from "../support/auth.js"
import { CheckoutTestServer } from "../support/checkout.js"
import { get, raw, ribbonClient } from "../support/http.js"

/**
 * Quotes, checkouts, the payment page, placement and orders through HTTP (docs/checkout.md): the derived
 * client for the JSON API, form posts for the payment page, the background worker running.
 */

export const recipient = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+44 20 7946 0958" }
export const londonAddress = {
  countryCode: "GB",
  address1: "10 Downing Street",
  city: "London",
  postalCode: "SW1A 2AA"
}

/**
 * Physical variants available in `country`, as an agent finds them: search, then each product's variants,
 * then their availability there.
 */
export const availableVariants = (country: string, q = "mug", wanted = 2) =>
  Effect.gen(function* () {
    const client = yield* ribbonClient
    const found = yield* client.catalog.search({ urlParams: { q, country, limit: 20 } })
    const picked: Array<string> = []
    for (const product of found.products) {
      if (picked.length >= wanted) break
      const detail = yield* client.catalog.product({ path: { productId: product.id }, urlParams: { country } })
      for (const variant of detail.variants) {
        if (!variant.shippingRequired) continue
        const {
          countries: [entry]
        } = yield* client.catalog.availability({ path: { variantId: variant.id }, urlParams: { countries: [country] } })
        if (entry?.available === true) {
          picked.push(variant.id)
          break
        }
      }
    }
    return picked
  })

/** Posts the payment form of a checkout's `paymentUrl`. */
export const payWith = (
  checkout: Checkout,
  card: Partial<Record<"number" | "expiry" | "cvc" | "name", string>> = {}
) => {
  const url = new URL(checkout.paymentUrl!)
  const form = new URLSearchParams({
    t: url.searchParams.get("t")!,
    number: "4242 4242 4242 4242",
    expiry: "12/34",
    cvc: "123",
    name: "Ada Lovelace",
    ...card
  })
  return raw(
    HttpClientRequest.post(url.pathname).pipe(
      HttpClientRequest.bodyText(form.toString(), "application/x-www-form-urlencoded")
    )
  )
}

/** Polls `statusUrl` (every 50 ms) until the checkout leaves `paid`/`placing`. */
export const settled = (checkoutId: string) =>
  Effect.flatMap(ribbonClient, (client) =>
    client.checkouts
      .getCheckout({ path: { checkoutId } })
      .pipe(
        Effect.repeat(
          Schedule.recurWhile((c: Checkout) => c.status === "paid" || c.status === "placing").pipe(
            Schedule.addDelay(() => "50 millis")
          )
        )
      )
  )

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
