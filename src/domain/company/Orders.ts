import { Schema } from "effect"
import { Environment, RequestSource } from "./Company.js"

/**
 * Company orders, version 3 (docs/decisions/0039-v3-orders.md): one variant for one recipient, placed in one idempotent
 * call, debited from a billing method, booked with the Fulfillment simulator and followed to delivery.
 */

export const CompanyOrderStatus = Schema.Literal("active", "completed", "cancelled", "refunded")
export type CompanyOrderStatus = typeof CompanyOrderStatus.Type

/** Where the shipment is; `failed` (lost or refused: refunded) and `cancelled` end it early. */
export const ShipmentStatus = Schema.Literal(
  "orderReceived",
  "processing",
  "inTransit",
  "outForDelivery",
  "delivered",
  "failed",
  "cancelled"
)
export type ShipmentStatus = typeof ShipmentStatus.Type

export const FulfillmentStatus = Schema.Literal("unfulfilled", "fulfilled", "cancelled")
export type FulfillmentStatus = typeof FulfillmentStatus.Type

/** The shipment's steps, in order; each step after `orderReceived` is one move of the simulator. */
export const shipmentSteps = ["orderReceived", "processing", "inTransit", "outForDelivery", "delivered"] as const

/** The step after `status`, if the shipment can still move on. */
export const nextShipmentStatus = (status: ShipmentStatus): ShipmentStatus | undefined => {
  const index = (shipmentSteps as ReadonlyArray<ShipmentStatus>).indexOf(status)
  return index < 0 ? undefined : shipmentSteps[index + 1]
}

/** A company may cancel until the carrier has the parcel (`inTransit`). */
export const cancellable = (status: ShipmentStatus) => status === "orderReceived" || status === "processing"

/** The order's status that goes with its shipment's. */
export const orderStatusOf = (shipment: ShipmentStatus): CompanyOrderStatus =>
  shipment === "delivered"
    ? "completed"
    : shipment === "cancelled"
      ? "cancelled"
      : shipment === "failed"
        ? "refunded"
        : "active"

export const fulfillmentStatusOf = (shipment: ShipmentStatus): FulfillmentStatus =>
  shipment === "delivered"
    ? "fulfilled"
    : shipment === "cancelled" || shipment === "failed"
      ? "cancelled"
      : "unfulfilled"

/** Up to 50 metadata pairs: keys up to 40 characters, string values up to 500. */
export const Metadata = Schema.Record({ key: Schema.String, value: Schema.String })
export type Metadata = typeof Metadata.Type

/** A stored company order, as the services see it. */
export const CompanyOrderRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  environment: Environment,
  accountId: Schema.String,
  billingMethodId: Schema.String,
  idempotencyKey: Schema.String,
  fingerprint: Schema.String,
  status: CompanyOrderStatus,
  shipmentStatus: ShipmentStatus,
  supplierOrderId: Schema.String,
  variantId: Schema.String,
  productId: Schema.String,
  title: Schema.String,
  quantity: Schema.Int,
  unitPrice: Schema.NumberFromString,
  total: Schema.NumberFromString,
  currency: Schema.String,
  charged: Schema.NumberFromString,
  recipientFirstName: Schema.String,
  recipientLastName: Schema.String,
  recipientEmail: Schema.String,
  recipientPhone: Schema.NullOr(Schema.String),
  /** Null for a digital order: it is delivered online, and keeps its country alone. */
  address1: Schema.NullOr(Schema.String),
  address2: Schema.NullOr(Schema.String),
  city: Schema.NullOr(Schema.String),
  provinceCode: Schema.NullOr(Schema.String),
  postalCode: Schema.NullOr(Schema.String),
  countryCode: Schema.String,
  tags: Schema.Array(Schema.String),
  metadata: Schema.NullOr(Metadata),
  source: Schema.NullOr(RequestSource),
  giftId: Schema.NullOr(Schema.String),
  /** Whether the gift's campaign hid the address when the recipient gave it: a promise the order keeps. */
  addressHiddenAtClaim: Schema.Boolean,
  /**
   * Whether the company sees only the address's city, region and country (docs/decisions/0071-recipient-address-privacy.md):
   * hidden when the recipient gave it, or its campaign hides addresses now. Read, never written.
   */
  addressHidden: Schema.Boolean,
  /** A swapped gift's order: the campaign's product it was swapped from, and that product's title (else null). */
  swappedFromProductId: Schema.NullOr(Schema.String),
  swappedFromTitle: Schema.NullOr(Schema.String),
  carrier: Schema.NullOr(Schema.String),
  trackingNumber: Schema.NullOr(Schema.String),
  trackingUrl: Schema.NullOr(Schema.String),
  shippedAt: Schema.NullOr(Schema.DateFromSelf),
  deliveredAt: Schema.NullOr(Schema.DateFromSelf),
  cancelledAt: Schema.NullOr(Schema.DateFromSelf),
  cancellationReason: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf
})
export type CompanyOrderRecord = typeof CompanyOrderRecord.Type

/** When an order's shipment reached one of its statuses (`company_order_statuses`). */
export const ShipmentStatusReached = Schema.Struct({
  shipmentStatus: ShipmentStatus,
  reachedAt: Schema.DateFromSelf
})
export type ShipmentStatusReached = typeof ShipmentStatusReached.Type

/** An order with the statuses its shipment reached, oldest first: what the dashboard's timeline shows. */
export interface CompanyOrderTimeline {
  readonly order: CompanyOrderRecord
  readonly statuses: ReadonlyArray<ShipmentStatusReached>
}

/**
 * The order as its first response showed it (a replay answers with that, docs/decisions/0035-idempotency.md): what the
 * shipment and cancellation have changed since is set back to how the order was placed.
 */
export const asPlaced = (order: CompanyOrderRecord): CompanyOrderRecord => ({
  ...order,
  status: "active",
  shipmentStatus: "orderReceived",
  carrier: null,
  trackingNumber: null,
  trackingUrl: null,
  shippedAt: null,
  deliveredAt: null,
  cancelledAt: null,
  cancellationReason: null,
  updatedAt: order.createdAt
})
