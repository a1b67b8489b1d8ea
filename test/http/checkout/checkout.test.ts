import { createPublicKey, verify } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { Notifications } from "../../../src/services/checkout/Notifications.js"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { signedIn, TimeTravel } from "../../support/auth.js"
import {
  availableVariants,
  londonAddress,
  makeCheckoutTestServer,
  payWith,
  recipient,
  settled
} from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { get, ribbonClient, testPublicUrl } from "../../support/http.js"
import { certificate, httpsReceiver, type Received } from "../../support/receiver.js"

/**
 * Quotes, checkouts, the payment page, placement and orders through HTTP (docs/checkout.md): the derived
 * client for the JSON API, form posts for the payment page, the background worker running.
 */

/** The JWKS key that verifies a Standard Webhooks `v1a` signature of a received callback. */
const verifiesWith = (jwk: Record<string, string>, request: Received) => {
  const id = String(request.headers["webhook-id"])
  const timestamp = String(request.headers["webhook-timestamp"])
  const signatures = String(request.headers["webhook-signature"]).split(" ")
  const key = createPublicKey({ key: jwk as never, format: "jwk" })
  return signatures.some(
    (signature) =>
      signature.startsWith("v1a,") &&
      verify(null, Buffer.from(`${id}.${timestamp}.${request.body}`), key, Buffer.from(signature.slice(4), "base64"))
  )
}

/** Parses a whole `text/event-stream` body. */
const parseEvents = (text: string) =>
  text
    .split("\n\n")
    .filter((block) => block.includes("data: "))
    .map((block) => {
      const field = (name: string) =>
        block
          .split("\n")
          .find((line) => line.startsWith(`${name}: `))
          ?.slice(name.length + 2)
      return { id: field("id")!, event: field("event")!, data: JSON.parse(field("data")!) }
    })

/**
 * The simulator's default pace: an order moves one step per minute of the test's clock, which only the
 * tests move on (`TimeTravel`), so no order ships while a test asserts what came before.
 */
const FlowServer = makeCheckoutTestServer(
  Layer.merge(
    FulfillmentSettings.Default,
    OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })
  )
)

/** The agent's view of these orders, in the order of `ids`. */
const ordersOf = (ids: ReadonlyArray<string>) =>
  Effect.flatMap(ribbonClient, (client) => client.orders.listOrders({ urlParams: {} })).pipe(
    Effect.map((page) => ids.map((id) => page.orders.find((o) => o.id === id)!))
  )

/** Moves the clock on one simulator step at a time until every order of `ids` has shipped. */
const shipAll = (ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const travel = yield* TimeTravel
    for (const status of ["processing", "shipped"]) {
      yield* travel.advance("1 minute")
      yield* eventually(ordersOf(ids), (orders) => orders.every((o) => o.status === status), status)
    }
    return yield* ordersOf(ids)
  })

describe("checkout flow", () => {
  it.layer(FlowServer.pipe(signedIn({ defaultCountry: "GB" })), { timeout: 120_000 })((it) => {
    it.scoped(
      "search → availability → two quotes → checkout → paid on the page → confirmed; the stream replays every transition; signed callbacks verify; orders ship with tracking",
      () =>
        Effect.gen(function* () {
          const client = yield* ribbonClient
          const receiver = yield* httpsReceiver()
          const [first, second] = yield* availableVariants("GB", "mug")
          const quotes = yield* Effect.forEach([first!, second!], (variantId) =>
            client.quotes.createQuote({ payload: { variantId } })
          )
          const checkout = yield* client.checkouts.createCheckout({
            payload: {
              items: quotes.map((quote) => ({ quoteId: quote.id })),
              recipient,
              shippingAddress: londonAddress,
              callbackUrl: receiver.url("/ribbon/callbacks"),
              idempotencyKey: "flow-1"
            }
          })
          expect(checkout.statusUrl).toBe(`${testPublicUrl}/v1/checkouts/${checkout.id}`)
          expect(checkout.eventsUrl).toBe(`${testPublicUrl}/v1/checkouts/${checkout.id}/events`)
          expect((yield* payWith(checkout)).status).toBe(200)
          const final = yield* settled(checkout.id)
          expect(final.status).toBe("confirmed")
          expect(final.nextStep).toMatch(/ordered/)

          // The stream, replayed from the start, lists every transition in order and ends by itself.
          const stream = yield* get(`/v1/checkouts/${checkout.id}/events`, { "last-event-id": "0" })
          expect(stream.headers["content-type"]).toMatch(/^text\/event-stream/)
          const streamed = parseEvents(stream.text)
          expect(streamed.map((e) => e.event).filter((type) => type.startsWith("checkout."))).toEqual([
            "checkout.created",
            "checkout.paid",
            "checkout.placing",
            "checkout.item_placed",
            "checkout.item_placed",
            "checkout.confirmed"
          ])
          const ids = streamed.map((e) => Number(e.id))
          expect(ids).toEqual([...ids].sort((a, b) => a - b))
          expect(streamed.at(-1)!.data.data.checkout).toMatchObject({ id: checkout.id, status: "confirmed" })
          // Replaying after the third event skips the first three.
          const resumed = parseEvents(
            (yield* get(`/v1/checkouts/${checkout.id}/events`, { "last-event-id": streamed[2]!.id })).text
          )
          expect(resumed[0]!.id, JSON.stringify(resumed.map((e) => [e.id, e.event]))).toBe(streamed[3]!.id)

          // Callbacks: one per event, each signed with the key published in the JWKS.
          const { body: jwks } = yield* get("/.well-known/jwks.json")
          const confirmedCallback = yield* Effect.sync(() =>
            receiver.received.find((r) => JSON.parse(r.body).type === "checkout.confirmed")
          ).pipe(
            Effect.flatMap((found) => (found === undefined ? Effect.fail("not yet") : Effect.succeed(found))),
            Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("20 seconds")))
          )
          expect(confirmedCallback.path).toBe("/ribbon/callbacks")
          expect(JSON.parse(confirmedCallback.body).data.checkout.status).toBe("confirmed")
          for (const request of receiver.received) {
            expect(request.headers["webhook-id"]).toMatch(/^evt_\d+$/)
            expect(verifiesWith(jwks.keys[0], request)).toBe(true)
            // Any change to the body breaks the signature.
            expect(verifiesWith(jwks.keys[0], { ...request, body: `${request.body} ` })).toBe(false)
          }

          // The orders progress on the simulator's schedule: shipped, with carrier and tracking.
          const shipped = yield* shipAll(final.orderIds)
          expect(shipped).toHaveLength(2)
          for (const order of shipped) {
            expect(order.status).toBe("shipped")
            expect(order.carrier).not.toBeNull()
            expect(order.trackingNumber).not.toBeNull()
            expect(order.trackingUrl).toMatch(/^https:\/\//)
          }
        })
    )

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

        // Newest first: this checkout's two orders lead the list.
        const orders = yield* client.orders.listOrders({ urlParams: {} })
        expect(
          orders.orders
            .slice(0, 2)
            .map((o) => o.id)
            .sort()
        ).toEqual([...final.orderIds].sort())

        // Paying again is refused with a clear page, and changes nothing.
        const again = yield* payWith(checkout)
        expect(again.status).toBe(409)
        expect((yield* client.checkouts.getCheckout({ path: { checkoutId: checkout.id } })).status).toBe("confirmed")

        const outbox = yield* Effect.flatMap(Notifications, (n) => n.forCheckout(checkout.id))
        expect(outbox.map((n) => `${n.kind}:${n.channel}`)).toEqual(["receipt:email", "confirmation:email"])

        // Once the orders ship, each order's shipping message joins them, once.
        yield* shipAll(final.orderIds)
        const later = yield* Effect.flatMap(Notifications, (n) => n.forCheckout(checkout.id))
        expect(later.map((n) => `${n.kind}:${n.channel}`).sort()).toEqual(
          ["receipt:email", "confirmation:email", ...final.orderIds.map((id) => `shipped:${id}:email`)].sort()
        )
      })
    )
  })
})
