import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { type AcpOrderEvent, acpOrderEventOf, acpOrderOf } from "../../domain/checkout/AcpOrders.js"
import type { EventType } from "../../domain/checkout/Checkout.js"
import type { CheckoutItemRecord, CheckoutRecord } from "../../domain/checkout/Records.js"
import type { OrderRecord } from "../../domain/fulfillment/Orders.js"
import { InvalidRequest, NotFound } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { PublicUrl } from "../catalog/Catalog.js"
import { Fulfillment } from "../fulfillment/Fulfillment.js"
import { OutboundHttp } from "../platform/OutboundHttp.js"
import { nowDate } from "../platform/Time.js"
import { AcpSessionsRepo } from "./AcpSessionsRepo.js"
import { type AcpSigningEndpoint, AcpWebhookEndpointsRepo } from "./AcpWebhookEndpointsRepo.js"
import { WebhookDeliveries } from "./WebhookDeliveries.js"

/**
 * Agentic Commerce Protocol order webhooks (docs/decisions/0084-acp-order-webhooks.md, docs/agent-protocols.md): an
 * agent platform (an OAuth client) registers URLs with its own bearer tokens, and each session it created sends
 * `order_create` once paid and `order_update` on every later change of its order, to each of them. Deliveries go
 * through the one delivery engine (WebhookDeliveries: outbox, retries, SSRF guard, attempts log), signed with the
 * endpoint's secret in the protocol's `Merchant-Signature` header.
 */

/** A new signing secret: 32 random bytes, base64, `whsec_`-prefixed as Ribbon's other webhook secrets. */
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`

/** An event as Checkouts records it: the checkout as it leaves it, with its items. */
export interface RecordedEvent {
  readonly id: string
  readonly type: EventType
  readonly row: CheckoutRecord
  readonly items: ReadonlyArray<CheckoutItemRecord>
}

/** Where a checkout's order events go: its session, the endpoints of that session's client, and its orders. */
interface Target {
  readonly sessionId: string
  readonly endpoints: ReadonlyArray<AcpSigningEndpoint>
  readonly orders: ReadonlyArray<OrderRecord>
}

export class AcpWebhooks extends Effect.Service<AcpWebhooks>()("AcpWebhooks", {
  dependencies: [
    AcpWebhookEndpointsRepo.Default,
    AcpSessionsRepo.Default,
    Fulfillment.Default,
    OutboundHttp.Default,
    WebhookDeliveries.Default
  ],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* AcpWebhookEndpointsRepo
    const sessions = yield* AcpSessionsRepo
    const fulfillment = yield* Fulfillment
    const outbound = yield* OutboundHttp
    const webhooks = yield* WebhookDeliveries
    const baseUrl = yield* PublicUrl

    /**
     * Registers `url` for the client's order events: screened by the outbound policy deliveries follow (https, public
     * addresses, a host that resolves), at most one live endpoint per URL. The endpoint and its secret, which is
     * shown this once.
     */
    const register = Effect.fn("AcpWebhooks.register")(function* (clientId: string, url: string) {
      // Outside any transaction: DNS may take a while.
      yield* outbound.screen("url", url)
      const secret = newSecret()
      const inserted = yield* repo.insert({ id: yield* makeId, clientId, url, secret, at: yield* nowDate })
      if (inserted === undefined) {
        return yield* InvalidRequest.field("url", "An endpoint with this URL is registered already.")
      }
      return { endpoint: inserted, secret }
    })

    /** The client's live endpoints, oldest first. */
    const list = Effect.fn("AcpWebhooks.list")(function* (clientId: string) {
      return yield* repo.live(clientId)
    })

    /** Deletes an endpoint of the client: its pending deliveries are not sent, and its secret is erased. */
    const remove = Effect.fn("AcpWebhooks.remove")(function* (clientId: string, endpointId: string) {
      const at = yield* nowDate
      const removed = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const found = yield* repo.remove(clientId, endpointId, at)
            if (found) yield* webhooks.closeEndpoint(endpointId, "deleted", "acp")
            return found
          })
        )
        .pipe(Effect.orDie)
      if (!removed) return yield* new NotFound({ message: `No webhook endpoint ${endpointId}.` })
    })

    /**
     * Queues the order events of checkout events just recorded, to the endpoints of the client whose session the
     * checkout pays for. Joins the caller's transaction (Checkouts.recordAll), so they commit with the change.
     */
    const emit = Effect.fn("AcpWebhooks.emit")(function* (events: ReadonlyArray<RecordedEvent>) {
      const relevant = events.flatMap((event) => {
        const type = acpOrderEventOf(event.type, event.row.status)
        return type === undefined ? [] : [{ ...event, orderEvent: type }]
      })
      if (relevant.length === 0) return
      // One checkout per recording batch in practice: its session, endpoints and orders are read once.
      const byCheckout = new Map<string, Option.Option<Target>>()
      const targetOf = (checkoutId: string) =>
        Effect.gen(function* () {
          const known = byCheckout.get(checkoutId)
          if (known !== undefined) return known
          const session = yield* sessions.byCheckout(checkoutId)
          const endpoints = Option.isNone(session) ? [] : yield* repo.signing(session.value.clientId)
          const target =
            Option.isNone(session) || endpoints.length === 0
              ? Option.none<Target>()
              : Option.some({
                  sessionId: session.value.id,
                  endpoints,
                  orders: yield* fulfillment.forCheckout(checkoutId)
                })
          byCheckout.set(checkoutId, target)
          return target
        })
      for (const event of relevant) {
        const found = yield* targetOf(event.row.id)
        if (Option.isNone(found)) continue
        const { sessionId, endpoints, orders } = found.value
        const payload: AcpOrderEvent = {
          type: event.orderEvent,
          data: acpOrderOf({
            baseUrl,
            sessionId,
            checkout: event.row,
            items: event.items,
            orders
          })
        }
        for (const endpoint of endpoints) {
          yield* webhooks.enqueue({
            url: endpoint.url,
            eventId: `acp_evt_${event.id}`,
            eventType: event.orderEvent,
            payload,
            acpEndpoint: { id: endpoint.id, secret: endpoint.secret }
          })
        }
      }
    })

    return { register, list, remove, emit } as const
  })
}) {}
