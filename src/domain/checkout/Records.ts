import { Schema, Struct } from "effect"
import { CheckoutItemStatus, CheckoutStatus, Quote } from "./Checkout.js"

/**
 * The checkout context's stored records, as its repositories decode them from their rows (columns are
 * snake_case in SQL and camelCase here). Services work on these; each API line presents them its own way.
 */

/** A quote: one unit of a variant priced for a country, locked until `expiresAt`. */
export const QuoteRecord = Schema.Struct({
  ...Struct.pick(
    Quote.fields,
    "id",
    "variantId",
    "productId",
    "productTitle",
    "variantTitle",
    "imageUrl",
    "countryCode",
    "currency",
    "itemAmount",
    "shippingAmount",
    "dutiesAmount",
    "serviceFeeAmount",
    "totalAmount",
    "totalDisplay",
    "shippingRequired"
  ),
  userId: Schema.String,
  /** The checkout the quote backs, once one claimed it. */
  checkoutId: Schema.NullOr(Schema.String),
  expiresAt: Schema.DateFromSelf,
  createdAt: Schema.DateFromSelf
})
export type QuoteRecord = typeof QuoteRecord.Type

/** The recipient as stored: validated at creation, the phone in E.164. */
export const StoredRecipient = Schema.Struct({
  firstName: Schema.String,
  lastName: Schema.String,
  email: Schema.String,
  phone: Schema.String
})

/** The shipping address as stored: verified at creation, or the country alone when nothing ships. */
export const StoredAddress = Schema.Struct({
  countryCode: Schema.String,
  address1: Schema.optionalWith(Schema.String, { nullable: true }),
  address2: Schema.optionalWith(Schema.String, { nullable: true }),
  city: Schema.optionalWith(Schema.String, { nullable: true }),
  provinceCode: Schema.optionalWith(Schema.String, { nullable: true }),
  postalCode: Schema.optionalWith(Schema.String, { nullable: true })
})

export const CheckoutRecord = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  status: CheckoutStatus,
  countryCode: Schema.String,
  currency: Schema.String,
  locale: Schema.String,
  totalAmount: Schema.Int,
  refundedAmount: Schema.Int,
  shippingRequired: Schema.Boolean,
  /** jsonb: node-postgres hands it over parsed. */
  recipient: StoredRecipient,
  shippingAddress: StoredAddress,
  notifyEmail: Schema.NullOr(Schema.String),
  notifySms: Schema.NullOr(Schema.String),
  smsConsent: Schema.Boolean,
  callbackUrl: Schema.NullOr(Schema.String),
  idempotencyKey: Schema.NullOr(Schema.String),
  /** SHA-256 of the creating request, for idempotent replays. */
  requestHash: Schema.NullOr(Schema.String),
  paymentToken: Schema.String,
  chargeId: Schema.NullOr(Schema.String),
  failureReason: Schema.NullOr(Schema.String),
  expiresAt: Schema.DateFromSelf,
  paidAt: Schema.NullOr(Schema.DateFromSelf),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf
})
export type CheckoutRecord = typeof CheckoutRecord.Type

/** One line of a checkout: the quote it was made from, times its quantity, and what became of it. */
export const CheckoutItemRecord = Schema.Struct({
  // What the line's quote said of the variant, its amounts times the quantity.
  ...Struct.pick(
    QuoteRecord.fields,
    "variantId",
    "productId",
    "productTitle",
    "variantTitle",
    "imageUrl",
    "itemAmount",
    "shippingAmount",
    "dutiesAmount",
    "serviceFeeAmount",
    "shippingRequired"
  ),
  checkoutId: Schema.String,
  index: Schema.Int,
  quoteId: Schema.String,
  quantity: Schema.Int,
  unitAmount: Schema.Int,
  amount: Schema.Int,
  status: CheckoutItemStatus,
  orderId: Schema.NullOr(Schema.String),
  failureReason: Schema.NullOr(Schema.String)
})
export type CheckoutItemRecord = typeof CheckoutItemRecord.Type
