import { Effect, Layer, Logger, LogLevel } from "effect"
import { deliverWebhookHandler, WebhookDeliveries } from "../../src/services/checkout/WebhookDeliveries.js"
import { CompanyWebhooks } from "../../src/services/company/CompanyWebhooks.js"
import { Jobs } from "../../src/services/platform/Jobs.js"
import { OutboundPolicy } from "../../src/services/platform/OutboundHttp.js"
import { Signals } from "../../src/services/platform/Signals.js"
import { TestDatabase } from "./database.js"
import { serveRibbon } from "./http.js"
import { certificate, type Received } from "./receiver.js"

/**
 * Company webhooks delivered for real in a test: the served API, and beside it on the same database the delivery
 * engine's services and a Jobs worker whose outbound calls trust the loopback receiver's certificate
 * (test/support/receiver.ts).
 */

// On real Postgres the workers are woken through LISTEN/NOTIFY, as in production.
const SignalsLive = process.env.DATABASE_URL === undefined ? Signals.layerInProcess : Signals.layerPostgres

/**
 * The services a test calls, beside the served API: fresh, so that they are not the server's own instances (layers
 * are shared by reference within a build), which trust no test certificate.
 */
const TestServices = Layer.fresh(
  Layer.mergeAll(CompanyWebhooks.Default, WebhookDeliveries.Default).pipe(
    Layer.provideMerge(Jobs.Default),
    Layer.provide(OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })),
    Layer.provideMerge(SignalsLive)
  )
)

/** The served API on a fresh database, with `CompanyWebhooks`, `WebhookDeliveries`, `Jobs` and `Signals` beside it. */
export const CompanyWebhooksTestLayer = TestServices.pipe(
  Layer.provideMerge(serveRibbon(TestDatabase)),
  Layer.merge(Logger.minimumLogLevel(process.env.TEST_LOG === undefined ? LogLevel.None : LogLevel.Debug))
)

/** A worker for deliveries for the rest of the test's scope; woken by the jobs signal, not by polling. */
export const startDeliveryWorker = Effect.flatMap(Jobs, (jobs) =>
  jobs.run([deliverWebhookHandler], { concurrency: 2, pollInterval: "1 hour" })
)

/** The Standard Webhooks headers of a received request, for `new Webhook(secret).verify(body, headers)`. */
export const signatureHeaders = (request: Received) => ({
  "webhook-id": String(request.headers["webhook-id"]),
  "webhook-timestamp": String(request.headers["webhook-timestamp"]),
  "webhook-signature": String(request.headers["webhook-signature"])
})
