import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { SignedInUser, signedIn } from "../../support/auth.js"
import { londonAddress, makeCheckoutTestServer, recipient } from "../../support/checkout.js"
import { postText, ribbonClient } from "../../support/http.js"

/**
 * A checkout's `callbackUrl` is screened when the checkout is created, under the outbound policy deliveries
 * follow (docs/webhooks.md "Which URLs are allowed"). The other tests allow loopback receivers; this server
 * keeps production's policy, so loopback is refused as any private address is (checkoutRules.test.ts).
 */

const ProductionPolicy = Layer.mergeAll(FulfillmentSettings.Default, OutboundPolicy.Default)

describe("callbackUrl screening, under production's outbound policy", () => {
  it.layer(makeCheckoutTestServer(ProductionPolicy).pipe(signedIn({ defaultCountry: "GB" })), { timeout: 180_000 })(
    (it) => {
      it.effect("a callbackUrl on a loopback address, however spelt, is a 400 at once and creates nothing", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const { userId } = yield* SignedInUser
          const [variant] = yield* sql<{ id: string }>`
            SELECT v.id FROM variants v JOIN variant_locations vl ON vl.variant_id = v.id
            WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND vl.stock >= 10 AND 'GB' = ANY (vl.ships_to)
            ORDER BY v.id LIMIT 1`
          const quote = yield* Effect.flatMap(ribbonClient, (client) =>
            client.quotes.createQuote({ payload: { variantId: variant!.id, countryCode: "GB" } })
          )
          for (const callbackUrl of [
            "https://127.0.0.1/hook",
            "https://localhost/hook",
            "https://[::1]/hook",
            "https://[::ffff:127.0.0.1]/hook",
            "https://2130706433/hook"
          ]) {
            const body = { items: [{ quoteId: quote.id }], recipient, shippingAddress: londonAddress, callbackUrl }
            const response = yield* postText("/v1/checkouts", JSON.stringify(body))
            expect(response.status, `${callbackUrl}: ${response.text}`).toBe(400)
            expect(response.body).toMatchObject({ status: 400, code: "invalid_request" })
            expect(response.body.errors).toEqual([
              { path: "callbackUrl", message: expect.stringContaining("loopback") }
            ])
          }
          const [created] = yield* sql<{ checkouts: number; events: number; claimed: number }>`
            SELECT (SELECT count(*)::int FROM checkouts WHERE user_id = ${userId}) AS checkouts,
              (SELECT count(*)::int FROM events WHERE user_id = ${userId}) AS events,
              (SELECT count(*)::int FROM quotes WHERE id = ${quote.id} AND checkout_id IS NOT NULL) AS claimed`
          expect(created).toEqual({ checkouts: 0, events: 0, claimed: 0 })
        })
      )
    }
  )
})
