import { Layer } from "effect"
import { ApiLive, ServicesLive, WorkerLive } from "../../src/layers/Server.js"
import { PublicUrl } from "../../src/services/Catalog.js"
import type { FulfillmentSettings } from "../../src/services/Fulfillment.js"
import type { OutboundPolicy } from "../../src/services/OutboundHttp.js"
import { Signals } from "../../src/services/Signals.js"
import { shiftedClock, TimeTravel } from "./auth.js"
import { RateLimitsMemoryLive, SeededTestDatabase, serveForTest, TestSettingsLive, testPublicUrl } from "./http.js"

/**
 * The seeded Ribbon API with its background worker (placement, order progress, expiry, callbacks) on a
 * test port, the services exposed to the test. The server runs on wall-clock time plus an offset that
 * `TimeTravel` moves (quote and checkout expiry), so its schedules keep running. `settings` replaces the
 * simulator and callback settings.
 */
export const makeCheckoutTestServer = (
  settings: Layer.Layer<FulfillmentSettings | OutboundPolicy> = TestSettingsLive
) =>
  Layer.suspend(() => {
    const { clock, travel } = shiftedClock()
    return serveForTest(ApiLive).pipe(
      Layer.provideMerge(Layer.provideMerge(WorkerLive, Layer.merge(ServicesLive, RateLimitsMemoryLive))),
      Layer.provide([Layer.succeed(PublicUrl, testPublicUrl), Signals.layerInProcess]),
      Layer.provideMerge(settings),
      Layer.provideMerge(SeededTestDatabase),
      Layer.provideMerge(Layer.succeed(TimeTravel, travel)),
      Layer.provide(Layer.setClock(clock))
    )
  })

export const CheckoutTestServer = makeCheckoutTestServer()
