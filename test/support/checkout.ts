import { HttpClientRequest } from "@effect/platform"
import { Effect, Layer, Schedule } from "effect"
import type { Checkout } from "../../src/domain/checkout/Checkout.js"
import { ApiLive, ServicesLive, WorkerLive } from "../../src/layers/Server.js"
import { PublicUrl } from "../../src/services/catalog/Catalog.js"
import type { OutboundPolicy } from "../../src/services/platform/OutboundHttp.js"
import { Signals } from "../../src/services/platform/Signals.js"
import type { FulfillmentSettings } from "../../src/services/simulators/FulfillmentSimulator.js"
import { BaseUrl, onRealPort, shiftedClock, TimeTravel } from "./auth.js"
import { SeededTestDatabase } from "./database.js"
import {
  originPolicyAtPublicUrl,
  RateLimitsMemoryLive,
  raw,
  ribbonClient,
  serveForTest,
  TestSettingsLive,
  testPublicUrl,
  withSimulators
} from "./http.js"

/**
 * The seeded Ribbon API with its background worker (placement, order progress, expiry, callbacks) on a
 * test port, the services exposed to the test. The server runs on wall-clock time plus an offset that
 * `TimeTravel` moves (quote and checkout expiry), so its schedules keep running. `settings` replaces the
 * fulfillment simulator's and callback settings (the simulators run on them).
 */
export const makeCheckoutTestServer = (
  settings: Layer.Layer<FulfillmentSettings | OutboundPolicy> = TestSettingsLive
) =>
  Layer.suspend(() => {
    const { clock, travel } = shiftedClock()
    return serveForTest(ApiLive).pipe(
      Layer.provideMerge(Layer.provideMerge(WorkerLive, Layer.merge(ServicesLive, RateLimitsMemoryLive))),
      Layer.provide(originPolicyAtPublicUrl()),
      Layer.provide([Layer.succeed(PublicUrl, testPublicUrl), Signals.layerInProcess]),
      Layer.provideMerge(withSimulators(settings)),
      Layer.provideMerge(SeededTestDatabase),
      Layer.provideMerge(Layer.succeed(TimeTravel, travel)),
      Layer.provide(Layer.setClock(clock))
    )
  })

export const CheckoutTestServer = makeCheckoutTestServer()

/**
 * The checkout test server on a real loopback port whose address is its public URL (`BaseUrl`), for a
 * browser: the seeded database, the background worker, and `TimeTravel`, as `makeCheckoutTestServer`.
 */
export const makeCheckoutRealPortServer = (
  settings: Layer.Layer<FulfillmentSettings | OutboundPolicy> = TestSettingsLive
) =>
  onRealPort((api, baseUrl, { clock, travel }) =>
    api.pipe(
      Layer.provideMerge(Layer.provideMerge(WorkerLive, Layer.merge(ServicesLive, RateLimitsMemoryLive))),
      Layer.provide(originPolicyAtPublicUrl()),
      Layer.provide([Layer.succeed(PublicUrl, baseUrl), Signals.layerInProcess]),
      Layer.provideMerge(withSimulators(settings)),
      Layer.provideMerge(Layer.succeed(BaseUrl, baseUrl)),
      Layer.provideMerge(SeededTestDatabase),
      Layer.provideMerge(Layer.succeed(TimeTravel, travel)),
      Layer.provide(Layer.setClock(clock))
    )
  )

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
