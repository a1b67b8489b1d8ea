import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { orderWebhookUrl } from "../../domain/checkout/UcpPlatformProfile.js"
import { PublicUrl } from "../catalog/Catalog.js"
import { Fulfillment } from "../fulfillment/Fulfillment.js"
import { JobAbandoned } from "../platform/Jobs.js"
import { AcpSessions } from "./AcpSessions.js"
import { CheckoutPresenter } from "./Checkouts.js"
import { UcpOrderEvent, type UcpOrderEvent as UcpOrderEventPayload } from "./UcpOrderEvents.js"
import { UcpPlatformProfiles } from "./UcpPlatformProfiles.js"
import { presentOrder, sessionOf } from "./UcpPresent.js"
import { WebhookDeliveries } from "./WebhookDeliveries.js"

/**
 * UCP's order capability (docs/decisions/0087-ucp-message-signatures.md, 0088-ucp-order-webhooks.md): the order of a
 * paid checkout, one builder for `GET /ucp/orders/{id}` and the order event webhook, and the `ucp.order_event` job
 * that sends it to the platform's `webhook_url`.
 */
export class UcpOrders extends Effect.Service<UcpOrders>()("UcpOrders", {
  dependencies: [AcpSessions.Default, Fulfillment.Default, UcpPlatformProfiles.Default, WebhookDeliveries.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const sessions = yield* AcpSessions
    const fulfillment = yield* Fulfillment
    const presenter = yield* CheckoutPresenter
    const profiles = yield* UcpPlatformProfiles
    const webhooks = yield* WebhookDeliveries
    const baseUrl = yield* PublicUrl

    /**
     * The order of the person's checkout `orderId` (the paid Ribbon checkout) as it now stands, with the Ribbon orders
     * placed so far (none while the checkout is still being placed); `OrderNotFound` before it is paid.
     */
    const get = Effect.fn("UcpOrders.get")(function* (userId: string, orderId: string) {
      const view = yield* sessions.order(userId, orderId)
      const orders = yield* fulfillment.forCheckout(orderId)
      return presentOrder(baseUrl, sessionOf(baseUrl, presenter, view), orders)
    })

    /**
     * Sends one order event: the platform's profile read now (a profile that cannot be reached is retried with the
     * job; one that may not be fetched or is not a profile ends it), and without a `webhook_url` nothing is sent. The
     * order as it stands when the job runs, the protocol's current-state snapshot, goes through the delivery engine
     * (its retries, SSRF guard and log), signed with Ribbon's UCP key.
     */
    const send = Effect.fn("UcpOrders.send")(function* (event: UcpOrderEventPayload) {
      yield* Effect.annotateCurrentSpan({ "ucp.profile_url": event.profileUrl, "ucp.event_id": event.eventId })
      const profile = yield* profiles.profile(event.profileUrl).pipe(
        Effect.catchTags({
          UcpAgentMissing: (e) => new JobAbandoned({ message: e.message }),
          UcpProfileMalformed: (e) => new JobAbandoned({ message: e.message })
        })
      )
      const url = orderWebhookUrl(profile)
      if (url === undefined) return yield* Effect.logDebug("UCP order event not sent: the profile has no webhook_url")
      const order = yield* get(event.userId, event.checkoutId).pipe(Effect.orDie)
      yield* sql
        .withTransaction(
          webhooks.enqueue({ url, eventId: event.eventId, eventType: event.eventType, payload: order, ucp: true })
        )
        .pipe(Effect.orDie)
    })

    /** The `ucp.order_event` handler, for the worker. */
    const handler = UcpOrderEvent.handle((event) => send(event))

    return { get, handler } as const
  })
}) {}
