import { Schema } from "effect"
import {
  Address1,
  Address2,
  AddressCountryCode,
  City,
  PhoneInput,
  PostalCode,
  ProvinceCode
} from "../catalog/Address.js"

/**
 * Quotes, checkouts, checkout items, orders and their events (spec "Quote", "Checkout", "Checkout item",
 * "States and transitions"; docs/decisions/0025-quotes-and-checkouts.md, docs/decisions/0029-events-and-sse.md;
 * docs/checkout.md). Amounts are integers in the minor units of `currency`.
 */

/** Path ids are taken as they come: an id that names nothing is a 404, not a 400. */
export const PathId = Schema.String.pipe(Schema.maxLength(64))

/** The `Last-Event-ID` header of an event stream request. */
export const LastEventId = Schema.Struct({
  "last-event-id": Schema.optional(
    Schema.String.pipe(Schema.pattern(/^\d{1,18}$/)).annotations({
      description: "Replay the events after this id (0: from the start)"
    })
  )
})

/** The quote's price lock. */
export const QUOTE_TTL_MINUTES = 15
/** The payment window of a checkout. */
export const CHECKOUT_TTL_MINUTES = 30

export class Quote extends Schema.Class<Quote>("Quote")({
  id: Schema.String,
  variantId: Schema.String,
  productId: Schema.String,
  productTitle: Schema.String,
  variantTitle: Schema.String,
  imageUrl: Schema.NullOr(Schema.String),
  countryCode: Schema.String,
  quantity: Schema.Number.annotations({ description: "Always 1: a quote prices one unit" }),
  currency: Schema.String,
  itemAmount: Schema.Number,
  shippingAmount: Schema.Number,
  dutiesAmount: Schema.Number,
  serviceFeeAmount: Schema.Number,
  totalAmount: Schema.Number,
  totalDisplay: Schema.String.annotations({ description: "Show to the user before checkout" }),
  shippingRequired: Schema.Boolean,
  expiresAt: Schema.String.annotations({ description: "The quote price is locked for 15 minutes" })
}) {}

export const QuoteRequest = Schema.Struct({
  variantId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  countryCode: Schema.optional(AddressCountryCode.annotations({ description: "Default: the signed-in user's country" }))
})
export type QuoteRequest = typeof QuoteRequest.Type

export const CheckoutStatus = Schema.Literal(
  "pending_payment",
  "paid",
  "placing",
  "confirmed",
  "partially_confirmed",
  "failed",
  "refunded",
  "expired",
  "cancelled"
)
export type CheckoutStatus = typeof CheckoutStatus.Type

/** After these, a checkout's event stream ends. */
export const terminalStatuses: ReadonlySet<CheckoutStatus> = new Set([
  "confirmed",
  "partially_confirmed",
  "failed",
  "refunded",
  "expired",
  "cancelled"
])

export const CheckoutItemStatus = Schema.Literal("pending", "placed", "failed", "refunded")
export type CheckoutItemStatus = typeof CheckoutItemStatus.Type

export class CheckoutItem extends Schema.Class<CheckoutItem>("CheckoutItem")({
  index: Schema.Int,
  quoteId: Schema.String,
  variantId: Schema.String,
  productTitle: Schema.String,
  variantTitle: Schema.String,
  imageUrl: Schema.NullOr(Schema.String),
  amount: Schema.Int.annotations({ description: "The line's all-in amount: quantity × the quote's totalAmount" }),
  amountDisplay: Schema.String,
  status: CheckoutItemStatus,
  orderId: Schema.NullOr(Schema.String),
  failureReason: Schema.NullOr(Schema.String)
}) {}

export class Checkout extends Schema.Class<Checkout>("Checkout")({
  id: Schema.String,
  status: CheckoutStatus,
  items: Schema.Array(CheckoutItem),
  paymentUrl: Schema.NullOr(Schema.String).annotations({
    description: "Hosted payment link; hand it to the user (null once the checkout can no longer be paid)"
  }),
  expiresAt: Schema.String,
  totalAmount: Schema.Number,
  currency: Schema.String,
  totalDisplay: Schema.String,
  refundedAmount: Schema.Int,
  orderIds: Schema.Array(Schema.String),
  failureReason: Schema.NullOr(Schema.String),
  statusUrl: Schema.String,
  eventsUrl: Schema.String,
  nextStep: Schema.String,
  createdAt: Schema.String,
  updatedAt: Schema.String
}) {}

const Email = Schema.String.pipe(
  Schema.maxLength(254),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "Expected an e-mail address" })
)

/** The longest first or last name a recipient may have. */
export const recipientNameMaxLength = 60

const Name = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(recipientNameMaxLength))

export const Recipient = Schema.Struct({
  firstName: Name,
  lastName: Name,
  email: Email,
  phone: PhoneInput.annotations({ description: "E.164, 7 to 20 characters" })
})
export type Recipient = typeof Recipient.Type

export const ShippingAddress = Schema.Struct({
  countryCode: AddressCountryCode,
  address1: Schema.optionalWith(Address1, { nullable: true }),
  address2: Schema.optionalWith(Address2, { nullable: true }),
  city: Schema.optionalWith(City, { nullable: true }),
  provinceCode: Schema.optionalWith(ProvinceCode, { nullable: true }),
  postalCode: Schema.optionalWith(PostalCode, { nullable: true })
})
export type ShippingAddress = typeof ShippingAddress.Type

const HttpsUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((text) => {
    try {
      return new URL(text).protocol === "https:" || "Expected an https URL"
    } catch {
      return "Expected an https URL"
    }
  })
)

export const CheckoutRequest = Schema.Struct({
  items: Schema.Array(
    Schema.Struct({
      quoteId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
      quantity: Schema.optional(Schema.Int.pipe(Schema.between(1, 10)))
    })
  ).pipe(Schema.minItems(1), Schema.maxItems(20)),
  recipient: Recipient,
  shippingAddress: ShippingAddress,
  notify: Schema.optional(
    Schema.Struct({
      email: Schema.optional(Schema.NullOr(Email)),
      sms: Schema.optional(Schema.NullOr(PhoneInput))
    })
  ),
  smsConsent: Schema.optional(Schema.Boolean),
  callbackUrl: Schema.optional(Schema.NullOr(HttpsUrl)),
  idempotencyKey: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(120)))),
  payWith: Schema.optional(
    Schema.Literal("paymentUrl", "allowance").annotations({
      description:
        "paymentUrl (default): the user pays on the hosted page. allowance: paid at once from the user's allowance for this client (scope payments:allowance) when the checkout fits every limit; otherwise allowance_exceeded or allowance_unavailable with the checkout's paymentUrl"
    })
  )
})
export type CheckoutRequest = typeof CheckoutRequest.Type

export const OrderStatus = Schema.Literal("placed", "processing", "shipped", "delivered", "cancelled")
export type OrderStatus = typeof OrderStatus.Type

/** One placed item, as the Fulfillment simulator books it. */
export class Order extends Schema.Class<Order>("Order")({
  id: Schema.String,
  checkoutId: Schema.String,
  itemIndex: Schema.Int,
  status: OrderStatus,
  productId: Schema.String,
  productTitle: Schema.String,
  variantId: Schema.String,
  variantTitle: Schema.String,
  quantity: Schema.Int,
  amount: Schema.Int,
  currency: Schema.String,
  amountDisplay: Schema.String,
  carrier: Schema.NullOr(Schema.String),
  trackingNumber: Schema.NullOr(Schema.String),
  trackingUrl: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
}) {}

export class OrderPage extends Schema.Class<OrderPage>("OrderPage")({
  orders: Schema.Array(Order),
  nextCursor: Schema.NullOr(Schema.String)
}) {}

/**
 * Event types, each appended in the transaction of the change it records. `checkout.*` carry the
 * checkout; `order.*` carry the checkout and the order.
 */
export const EventType = Schema.Literal(
  "checkout.created",
  "checkout.payment_declined",
  "checkout.paid",
  "checkout.placing",
  "checkout.item_placed",
  "checkout.item_failed",
  "checkout.confirmed",
  "checkout.partially_confirmed",
  "checkout.failed",
  "checkout.expired",
  "checkout.cancelled",
  "checkout.refunded",
  "order.processing",
  "order.shipped",
  "order.delivered",
  "order.cancelled"
)
export type EventType = typeof EventType.Type
export const eventTypes: ReadonlyArray<EventType> = EventType.literals

/** The envelope of every event: the SSE `data`, and the body of each callback. */
export class CheckoutEvent extends Schema.Class<CheckoutEvent>("CheckoutEvent")({
  id: Schema.String.annotations({
    description: "Global sequence number: the SSE id; callbacks carry it as webhook-id `evt_{id}`"
  }),
  type: EventType,
  createdAt: Schema.String,
  data: Schema.Struct({ checkout: Checkout, order: Schema.optional(Order) })
}) {}
