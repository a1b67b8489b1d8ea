import { Schema } from "effect"
import { OrderStatus } from "../checkout/Checkout.js"

/**
 * The orders Ribbon places with its fulfillment partner: one per placed checkout item (an agent's order) and
 * one per company order (a booking). The fulfillment context keeps them in `orders`, the one system of record
 * of what was ordered, where it stands and how it ships.
 */

/** A row of `orders`, camelCase: an agent's order, with its buyer and checkout. */
export const OrderRecord = Schema.Struct({
  id: Schema.String,
  idempotencyKey: Schema.String,
  userId: Schema.String,
  checkoutId: Schema.String,
  itemIndex: Schema.Int,
  variantId: Schema.String,
  productId: Schema.String,
  productTitle: Schema.String,
  variantTitle: Schema.String,
  quantity: Schema.Int,
  amount: Schema.Int,
  currency: Schema.String,
  /** Where it ships; null only on orders older than the column whose checkout was gone. */
  countryCode: Schema.NullOr(Schema.String),
  status: OrderStatus,
  carrier: Schema.NullOr(Schema.String),
  trackingNumber: Schema.NullOr(Schema.String),
  trackingUrl: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf,
  shippedAt: Schema.NullOr(Schema.DateFromSelf),
  deliveredAt: Schema.NullOr(Schema.DateFromSelf),
  cancelledAt: Schema.NullOr(Schema.DateFromSelf)
})
export interface OrderRecord extends Schema.Schema.Type<typeof OrderRecord> {}

/**
 * An order booked for a company (v3 orders, v2 gifts): an `orders` row without a buyer or checkout
 * (`user_id`, `checkout_id` and `item_index` are null). The company context keeps the rest of it.
 */
export const BookingRecord = OrderRecord.pipe(Schema.omit("userId", "checkoutId", "itemIndex"))
export interface BookingRecord extends Schema.Schema.Type<typeof BookingRecord> {}

/** The step after each status; delivered and cancelled have none. */
export const nextOrderStatus: Readonly<Partial<Record<OrderStatus, OrderStatus>>> = {
  placed: "processing",
  processing: "shipped",
  shipped: "delivered"
}

/** How an order ships, once it has: the carrier, its tracking number and the carrier's tracking page. */
export interface Tracking {
  readonly carrier: string
  readonly trackingNumber: string
  readonly trackingUrl: string
}
