import { Schema } from "effect"
import type { OrderRecord } from "../fulfillment/Orders.js"
import { type AcpFulfillment, AcpOrder, type AcpOrderLineItem } from "./Acp.js"
import type { CheckoutStatus, EventType } from "./Checkout.js"
import type { CheckoutItemRecord, CheckoutRecord } from "./Records.js"

/**
 * The Agentic Commerce Protocol's Order (docs/decisions/0078-agentic-commerce-protocol.md,
 * docs/decisions/0084-acp-order-webhooks.md): what a completed session shows as its `order`, and what an order
 * webhook carries. One builder for both, so a platform reads the same order in either.
 */

/** The checkout statuses at which a session's order exists: from payment on, placement's failure included. */
const withOrder: ReadonlySet<CheckoutStatus> = new Set<CheckoutStatus>([
  "paid",
  "placing",
  "confirmed",
  "partially_confirmed",
  "failed",
  "refunded"
])

/** Whether a session paid by a checkout of this status has its order. */
export const hasAcpOrder = (status: CheckoutStatus) => withOrder.has(status)

/** How a Ribbon order's progress reads as an ACP fulfillment's status. */
const fulfillmentStatus: Readonly<Record<OrderRecord["status"], string>> = {
  placed: "pending",
  processing: "processing",
  shipped: "shipped",
  delivered: "delivered",
  cancelled: "canceled"
}

const sent = (order: OrderRecord | undefined) => order?.status === "shipped" || order?.status === "delivered"

/**
 * The order of a session paid by `checkout`: one line per placed Ribbon order (`orders`, by id: their progress and
 * tracking, when read), its total what the person paid.
 */
export const acpOrderOf = (input: {
  readonly baseUrl: string
  readonly sessionId: string
  readonly checkout: CheckoutRecord
  readonly items: ReadonlyArray<CheckoutItemRecord>
  readonly orders: ReadonlyArray<OrderRecord>
}): AcpOrder => {
  const { checkout } = input
  const byId = new Map(input.orders.map((order) => [order.id, order]))
  const lines = input.items.flatMap((item) => {
    if (item.orderId === null) return []
    const order = byId.get(item.orderId)
    const current = item.status === "placed" && order?.status !== "cancelled" ? item.quantity : 0
    const fulfilled = current > 0 && sent(order) ? current : 0
    const line: AcpOrderLineItem = {
      id: item.orderId,
      title: `${item.productTitle} (${item.variantTitle})`,
      product_id: item.productId,
      quantity: { ordered: item.quantity, current, fulfilled },
      unit_price: item.unitAmount,
      subtotal: item.amount,
      // The protocol's rule: removed when none is left, fulfilled when all is sent, processing otherwise.
      status: current === 0 ? "removed" : fulfilled === current ? "fulfilled" : "processing"
    }
    return [{ line, order, digital: !item.shippingRequired }]
  })
  const active = lines.filter(({ line }) => line.quantity.current > 0)
  const settled = checkout.status === "confirmed" || checkout.status === "partially_confirmed"
  const status =
    checkout.status === "refunded" || checkout.status === "failed" || (settled && active.length === 0)
      ? "canceled"
      : !settled
        ? "processing"
        : active.every(({ order }) => order?.status === "delivered")
          ? "completed"
          : active.some(({ order }) => sent(order))
            ? "shipped"
            : "confirmed"
  const fulfillments = lines.flatMap(
    ({ line, order, digital }): Array<AcpFulfillment> =>
      order === undefined
        ? []
        : [
            {
              id: `ful_${order.id}`,
              type: digital ? "digital" : "shipping",
              status: fulfillmentStatus[order.status],
              line_items: [{ id: line.id, quantity: line.quantity.ordered }],
              ...(order.carrier === null ? {} : { carrier: order.carrier }),
              ...(order.trackingNumber === null ? {} : { tracking_number: order.trackingNumber }),
              ...(order.trackingUrl === null ? {} : { tracking_url: order.trackingUrl })
            }
          ]
  )
  return {
    type: "order",
    id: checkout.id,
    checkout_session_id: input.sessionId,
    permalink_url: `${input.baseUrl}/v1/checkouts/${checkout.id}`,
    status,
    line_items: lines.map(({ line }) => line),
    fulfillments,
    totals: [
      { type: "total", display_text: "Total", amount: checkout.totalAmount },
      ...(checkout.refundedAmount > 0
        ? [{ type: "amount_refunded" as const, display_text: "Refunded", amount: checkout.refundedAmount }]
        : [])
    ]
  }
}

/** The protocol's order event types. */
export const AcpOrderEventType = Schema.Literal("order_create", "order_update")
export type AcpOrderEventType = typeof AcpOrderEventType.Type

/** The body of an order webhook: the protocol's WebhookEvent, the full order in `data`. */
export const AcpOrderEvent = Schema.Struct({
  type: AcpOrderEventType,
  data: AcpOrder
}).annotations({ identifier: "AcpOrderEvent" })
export type AcpOrderEvent = typeof AcpOrderEvent.Type

/** An agent platform's registered URL for order webhooks, as stored (the secret is never shown after creation). */
export const AcpWebhookEndpointRecord = Schema.Struct({
  id: Schema.String,
  clientId: Schema.String,
  url: Schema.String,
  createdAt: Schema.DateFromSelf
})
export type AcpWebhookEndpointRecord = typeof AcpWebhookEndpointRecord.Type

/** An endpoint as the API shows it; `secret` only in the answer that created it. */
export const AcpWebhookEndpoint = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(AcpOrderEventType),
  created_at: Schema.String,
  secret: Schema.optional(
    Schema.String.annotations({
      description: "The signing secret (whsec_…): shown once, in the answer that creates the endpoint"
    })
  )
}).annotations({ identifier: "AcpWebhookEndpoint" })
export type AcpWebhookEndpoint = typeof AcpWebhookEndpoint.Type

export const AcpWebhookEndpointList = Schema.Struct({
  data: Schema.Array(AcpWebhookEndpoint)
}).annotations({ identifier: "AcpWebhookEndpointList" })

export const AcpWebhookEndpointCreate = Schema.Struct({
  url: Schema.String.pipe(Schema.maxLength(2048)).annotations({
    description: "An https URL on the public internet that receives order_create and order_update events"
  })
}).annotations({ identifier: "AcpWebhookEndpointCreate" })

/**
 * The order event a checkout event makes, for a session's platform: `order_create` when the checkout is paid (the
 * order exists from then on), `order_update` for every later change of it; none before payment, nor for the start
 * of placement, which changes nothing the order shows.
 */
export const acpOrderEventOf = (type: EventType, status: CheckoutStatus): AcpOrderEventType | undefined =>
  !hasAcpOrder(status) || type === "checkout.placing"
    ? undefined
    : type === "checkout.paid"
      ? "order_create"
      : "order_update"
