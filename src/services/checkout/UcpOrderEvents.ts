import { Effect, Schema } from "effect"
import { acpOrderEventOf } from "../../domain/checkout/AcpOrders.js"
import { JobKind, Jobs } from "../platform/Jobs.js"
import { AcpSessionsRepo } from "./AcpSessionsRepo.js"
import type { RecordedEvent } from "./AcpWebhooks.js"

/**
 * UCP order events (docs/decisions/0088-ucp-order-webhooks.md): a change of the order of a checkout whose session was
 * created over UCP (ACP's `order_create` and `order_update` moments) queues a `ucp.order_event` job in the change's
 * transaction. The job (UcpOrders) reads the platform's profile, which cannot be fetched inside the transaction, and
 * sends the order as it then stands to the profile's `webhook_url` through the delivery engine.
 */

export const UcpOrderEvent = JobKind.make(
  "ucp.order_event",
  Schema.Struct({
    checkoutId: Schema.String,
    userId: Schema.String,
    profileUrl: Schema.String,
    eventId: Schema.String,
    eventType: Schema.String
  })
)
export type UcpOrderEvent = typeof UcpOrderEvent.payload.Type

export class UcpOrderEvents extends Effect.Service<UcpOrderEvents>()("UcpOrderEvents", {
  dependencies: [AcpSessionsRepo.Default, Jobs.Default],
  effect: Effect.gen(function* () {
    const sessions = yield* AcpSessionsRepo
    const jobs = yield* Jobs

    /** Queues the order events of checkout events just recorded; joins the caller's transaction (Checkouts.recordAll). */
    const emit = Effect.fn("UcpOrderEvents.emit")(function* (events: ReadonlyArray<RecordedEvent>) {
      for (const event of events) {
        const eventType = acpOrderEventOf(event.type, event.row.status)
        if (eventType === undefined) continue
        const session = yield* sessions.ucpByCheckout(event.row.id)
        if (session._tag === "None") continue
        const eventId = `ucp_evt_${event.id}`
        const { userId, ucpProfileUrl } = session.value
        yield* jobs.enqueue(
          UcpOrderEvent,
          { checkoutId: event.row.id, userId, profileUrl: ucpProfileUrl, eventId, eventType },
          { key: eventId }
        )
      }
    })

    return { emit } as const
  })
}) {}
