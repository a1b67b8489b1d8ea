import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { PaymentsInFlight } from "../../../src/services/checkout/Placement.js"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { signedIn } from "../../support/auth.js"
import {
  availableVariants,
  londonAddress,
  makeCheckoutTestServer,
  payWith,
  recipient,
  settled
} from "../../support/checkout.js"
import { ribbonClient } from "../../support/http.js"

/**
 * `PAYMENTS_IN_FLIGHT` (docs/checkout.md "Payment"): an instance holds at most that many checkouts from
 * payment to the end of their placement, and further payments wait their turn in front of the payment.
 * Here one at a time, with a supplier slow enough (300 ms an order) for the two payments to overlap.
 */
const OneInFlightServer = makeCheckoutTestServer(
  Layer.mergeAll(
    FulfillmentSettings.layer({ latency: "300 millis" }),
    OutboundPolicy.layer({ allowLoopback: true }),
    Layer.succeed(PaymentsInFlight, 1)
  )
)

describe("payments in flight", () => {
  it.layer(OneInFlightServer.pipe(signedIn({ defaultCountry: "GB" })), { timeout: 60_000 })((it) => {
    it.effect("a payment waits until the checkout paid before it is placed, then is placed itself", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const sql = yield* SqlClient.SqlClient
        const variants = yield* availableVariants("GB", "mug", 2)
        const checkouts = yield* Effect.forEach([0, 1], () =>
          Effect.gen(function* () {
            const quoted = yield* Effect.forEach(variants, (variantId) =>
              client.quotes.createQuote({ payload: { variantId, countryCode: "GB" } })
            )
            return yield* client.checkouts.createCheckout({
              payload: {
                items: quoted.map((q) => ({ quoteId: q.id })),
                recipient,
                shippingAddress: londonAddress
              }
            })
          })
        )

        const answers = yield* Effect.forEach(checkouts, (checkout) => payWith(checkout), { concurrency: 2 })
        expect(answers.map((answer) => answer.status)).toEqual([200, 200])
        for (const checkout of checkouts) expect((yield* settled(checkout.id)).status).toBe("confirmed")

        // Whichever was paid first was confirmed before the other was paid.
        const rows = yield* sql<{ checkoutId: string; type: string; createdAt: Date }>`
          SELECT checkout_id, type, created_at FROM events
          WHERE checkout_id IN ${sql.in(checkouts.map((c) => c.id))}
            AND type IN ('checkout.paid', 'checkout.confirmed')
          ORDER BY id`
        const at = (checkoutId: string, type: string) =>
          rows.find((row) => row.checkoutId === checkoutId && row.type === type)!.createdAt.getTime()
        const [first, second] = [...checkouts].sort((a, b) => at(a.id, "checkout.paid") - at(b.id, "checkout.paid"))
        expect(at(second!.id, "checkout.paid")).toBeGreaterThanOrEqual(at(first!.id, "checkout.confirmed"))
        expect(rows.map((row) => `${row.checkoutId === first!.id ? "first" : "second"} ${row.type}`)).toEqual([
          "first checkout.paid",
          "first checkout.confirmed",
          "second checkout.paid",
          "second checkout.confirmed"
        ])
      })
    )
  })
})
