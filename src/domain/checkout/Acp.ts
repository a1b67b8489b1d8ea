import { Schema } from "effect"
import { giftMessageMaxLength } from "../company/Gifts.js"
import { Recipient } from "./Checkout.js"

/**
 * The Agentic Commerce Protocol's checkout objects (version 2026-04-17; docs/decisions/0078-agentic-commerce-protocol.md),
 * with the protocol's own field names. Requests take every field the protocol's JSON Schema defines, those Ribbon
 * does not act on loosely typed; responses declare what Ribbon sends, each object a subset of the protocol's.
 * Amounts are integers in the minor units of `currency`.
 */

/** The protocol versions Ribbon serves, oldest first (the discovery document's order). */
export const ACP_SUPPORTED_VERSIONS = ["2026-04-17"] as const
/** The latest of them. */
export const ACP_VERSION = "2026-04-17"

/** The one shipping option: every physical line ships as Ribbon's fulfillment partner sends it. */
export const SHIPPING_OPTION_ID = "ribbon_shipping"
/** The one digital option: digital lines are sent to the recipient by e-mail. */
export const DIGITAL_OPTION_ID = "ribbon_digital"

const Text = Schema.String.pipe(Schema.maxLength(1000))
const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))
/** A field Ribbon takes as the protocol defines it but does not act on (yet). */
const Passed = Schema.Unknown

// Shared objects.

export const AcpAddress = Schema.Struct({
  name: Text,
  line_one: Text,
  line_two: Schema.optional(Text),
  city: Text,
  state: Text,
  country: Text.annotations({ description: "ISO 3166-1 alpha-2" }),
  postal_code: Text
}).annotations({ identifier: "AcpAddress" })
export type AcpAddress = typeof AcpAddress.Type

export const AcpFulfillmentDetails = Schema.Struct({
  name: Schema.optional(Text),
  phone_number: Schema.optional(Text),
  email: Schema.optional(Text),
  address: Schema.optional(AcpAddress)
}).annotations({ identifier: "AcpFulfillmentDetails" })
export type AcpFulfillmentDetails = typeof AcpFulfillmentDetails.Type

export const AcpBuyer = Schema.Struct({
  first_name: Schema.optional(Text),
  last_name: Schema.optional(Text),
  full_name: Schema.optional(Text),
  email: Text,
  phone_number: Schema.optional(Text),
  customer_id: Schema.optional(Text),
  account_type: Schema.optional(Schema.Literal("guest", "registered", "business")),
  authentication_status: Schema.optional(Schema.Literal("authenticated", "guest", "requires_signin")),
  company: Schema.optional(Passed),
  loyalty: Schema.optional(Passed),
  tax_exemption: Schema.optional(Passed)
}).annotations({ identifier: "AcpBuyer" })
export type AcpBuyer = typeof AcpBuyer.Type

export const AcpItem = Schema.Struct({
  id: Id.annotations({ description: "A Ribbon variant id" }),
  name: Schema.optional(Text),
  unit_amount: Schema.optional(Schema.Int)
}).annotations({ identifier: "AcpItem" })
export type AcpItem = typeof AcpItem.Type

const InterventionType = Schema.Literal("3ds", "biometric", "address_verification")

export const AcpCapabilities = Schema.Struct({
  payment: Schema.optional(Schema.Struct({ handlers: Schema.Array(Passed) })),
  interventions: Schema.optional(
    Schema.Struct({
      supported: Schema.optional(Schema.Array(InterventionType)),
      required: Schema.optional(Schema.Array(Schema.Literal("3ds", "biometric"))),
      enforcement: Schema.optional(Schema.Literal("always", "conditional", "optional")),
      display_context: Schema.optional(Schema.Literal("native", "webview", "modal", "redirect")),
      redirect_context: Schema.optional(Schema.Literal("in_app", "external_browser", "none")),
      max_redirects: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
      max_interaction_depth: Schema.optional(Schema.Int.pipe(Schema.positive()))
    })
  ),
  extensions: Schema.optional(Schema.Array(Passed))
}).annotations({ identifier: "AcpCapabilities" })
export type AcpCapabilities = typeof AcpCapabilities.Type

export const AcpSelectedFulfillmentOption = Schema.Struct({
  type: Schema.Literal("shipping", "digital", "pickup", "local_delivery"),
  option_id: Text,
  item_ids: Schema.Array(Text)
}).annotations({ identifier: "AcpSelectedFulfillmentOption" })
export type AcpSelectedFulfillmentOption = typeof AcpSelectedFulfillmentOption.Type

const OrderNotes = Schema.String.pipe(Schema.maxLength(5000))

// Ribbon's gift extension (docs/agent-protocols.md "Ribbon's gift extension", docs/extensions/gift.schema.json,
// docs/decisions/0085-acp-gift-extension.md).

/** The extension's identifier: reverse-domain, as the protocol asks of an extension from outside it. */
export const GIFT_EXTENSION = "dev.ribbon.gift"
/** Its version: a date, as the protocol versions extensions. */
export const GIFT_EXTENSION_VERSION = "2026-11-29"
/** The name Ribbon declares it by: the identifier at its version. */
export const GIFT_EXTENSION_NAME = `${GIFT_EXTENSION}@${GIFT_EXTENSION_VERSION}`
/** The fields it adds, as the protocol's `extends` JSONPaths. */
export const GIFT_EXTENDS = [
  "$.CheckoutSessionCreateRequest.gift",
  "$.CheckoutSessionUpdateRequest.gift",
  "$.CheckoutSession.gift"
] as const

/** Where Ribbon serves the extension's JSON Schema (docs/extensions/gift.schema.json), without a token. */
export const GIFT_SCHEMA_PATH = `/acp/extensions/${GIFT_EXTENSION}/${GIFT_EXTENSION_VERSION}.json`

/**
 * Whether an agent's request `capabilities.extensions` names the gift extension: bare (the latest version, as the
 * protocol reads an unversioned name) or at the version served.
 */
export const asksForGift = (capabilities: unknown): boolean => {
  const extensions = (capabilities as { extensions?: unknown } | null)?.extensions
  return Array.isArray(extensions) && extensions.some((name) => name === GIFT_EXTENSION || name === GIFT_EXTENSION_NAME)
}

/** The gift's recipient, when not the fulfillment contact: the agent API's recipient, with the protocol's field names. */
export const AcpGiftRecipient = Schema.Struct({
  first_name: Recipient.fields.firstName.annotations({ description: "The recipient's first name" }),
  last_name: Recipient.fields.lastName.annotations({ description: "The recipient's last name" }),
  email: Recipient.fields.email.annotations({ description: "The recipient's e-mail address" }),
  phone_number: Recipient.fields.phone
}).annotations({ identifier: "AcpGiftRecipient" })
export type AcpGiftRecipient = typeof AcpGiftRecipient.Type

export const AcpGift = Schema.Struct({
  recipient: Schema.optional(
    AcpGiftRecipient.annotations({ description: "Who receives the gift; without it, the fulfillment contact" })
  ),
  message: Schema.optional(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(giftMessageMaxLength)).annotations({
      description: "The buyer's note to the recipient"
    })
  )
}).annotations({
  identifier: "AcpGift",
  description: `Ribbon's gift extension (${GIFT_EXTENSION_NAME}), read when the session declares it`
})
export type AcpGift = typeof AcpGift.Type

const giftFieldNote = `Ribbon's gift extension: read when capabilities.extensions names ${GIFT_EXTENSION}`

// Requests.

export const AcpCreateRequest = Schema.Struct({
  buyer: Schema.optional(AcpBuyer),
  line_items: Schema.Array(AcpItem).pipe(Schema.minItems(1), Schema.maxItems(20)),
  currency: Schema.String.pipe(Schema.pattern(/^[A-Za-z]{3}$/)).annotations({ description: "ISO 4217" }),
  fulfillment_details: Schema.optional(AcpFulfillmentDetails),
  capabilities: AcpCapabilities,
  fulfillment_groups: Schema.optional(Schema.Array(Passed)),
  affiliate_attribution: Schema.optional(Passed),
  coupons: Schema.optional(Schema.Array(Schema.String)),
  discounts: Schema.optional(Passed),
  locale: Schema.optional(Schema.String.pipe(Schema.maxLength(35))),
  timezone: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  quote_id: Schema.optional(
    Id.annotations({ description: "A Ribbon quote (POST /v1/quotes) to price its variant with" })
  ),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  order_notes: Schema.optional(OrderNotes),
  gift: Schema.optional(AcpGift.annotations({ description: giftFieldNote }))
}).annotations({ identifier: "AcpCheckoutSessionCreateRequest" })
export type AcpCreateRequest = typeof AcpCreateRequest.Type

/** An update: an absent field is left as it is; `null` clears it (the protocol's rule). */
export const AcpUpdateRequest = Schema.Struct({
  buyer: Schema.optional(Schema.NullOr(AcpBuyer)),
  line_items: Schema.optional(Schema.Array(AcpItem).pipe(Schema.minItems(1), Schema.maxItems(20))),
  fulfillment_details: Schema.optional(Schema.NullOr(AcpFulfillmentDetails)),
  fulfillment_groups: Schema.optional(Schema.Array(Passed)),
  selected_fulfillment_options: Schema.optional(Schema.Array(AcpSelectedFulfillmentOption)),
  coupons: Schema.optional(Schema.Array(Schema.String)),
  discounts: Schema.optional(Passed),
  order_notes: Schema.optional(Schema.NullOr(OrderNotes)),
  gift: Schema.optional(
    Schema.NullOr(AcpGift).annotations({ description: `${giftFieldNote}; replaces the session's, null clears it` })
  )
}).annotations({ identifier: "AcpCheckoutSessionUpdateRequest" })
export type AcpUpdateRequest = typeof AcpUpdateRequest.Type

export const AcpCompleteRequest = Schema.Struct({
  buyer: Schema.optional(AcpBuyer),
  payment_data: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "Taken as the protocol defines it; without delegated payment Ribbon charges nothing with it"
  }),
  authentication_result: Schema.optional(Passed),
  affiliate_attribution: Schema.optional(Passed),
  risk_signals: Schema.optional(Passed),
  marketing_consents: Schema.optional(Schema.Array(Passed)),
  order_notes: Schema.optional(OrderNotes)
}).annotations({ identifier: "AcpCheckoutSessionCompleteRequest" })
export type AcpCompleteRequest = typeof AcpCompleteRequest.Type

export const AcpCancelRequest = Schema.Struct({
  intent_trace: Schema.optional(
    Schema.Struct({
      reason_code: Schema.Literal(
        "price_sensitivity",
        "shipping_cost",
        "shipping_speed",
        "product_fit",
        "trust_security",
        "returns_policy",
        "payment_options",
        "comparison",
        "timing_deferred",
        "other"
      ),
      trace_summary: Schema.optional(Schema.String.pipe(Schema.maxLength(500))),
      metadata: Schema.optional(
        Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
      )
    })
  )
}).annotations({ identifier: "AcpCancelSessionRequest" })
export type AcpCancelRequest = typeof AcpCancelRequest.Type

/** The headers an `/acp` GET reads; the middleware enforces `API-Version` with the protocol's codes. */
export const AcpReadHeaders = Schema.Struct({
  "api-version": Schema.optional(Schema.String.annotations({ description: `The protocol version: ${ACP_VERSION}` })),
  "request-id": Schema.optional(Schema.String.pipe(Schema.maxLength(255)))
})

/** The headers an `/acp` POST reads: `Idempotency-Key` too, which the handlers enforce with the protocol's codes. */
export const AcpHeaders = Schema.Struct({
  ...AcpReadHeaders.fields,
  "idempotency-key": Schema.optional(
    Schema.String.pipe(Schema.maxLength(255)).annotations({
      description: "Required on every POST; an opaque string of at most 255 characters (UUID v4 recommended)"
    })
  )
})

// Responses.

export const AcpTotalType = Schema.Literal(
  "items_base_amount",
  "items_discount",
  "subtotal",
  "discount",
  "fulfillment",
  "tax",
  "fee",
  "gift_wrap",
  "tip",
  "store_credit",
  "total",
  "amount_refunded"
)

export const AcpTotal = Schema.Struct({
  type: AcpTotalType,
  display_text: Schema.String,
  amount: Schema.Int
}).annotations({ identifier: "AcpTotal" })
export type AcpTotal = typeof AcpTotal.Type

export const AcpLineItem = Schema.Struct({
  id: Schema.String,
  item: AcpItem,
  quantity: Schema.Int,
  name: Schema.optional(Schema.String),
  images: Schema.optional(Schema.Array(Schema.String)),
  unit_amount: Schema.optional(Schema.Int),
  product_id: Schema.optional(Schema.String),
  variant_id: Schema.optional(Schema.String),
  availability_status: Schema.optional(
    Schema.Literal("in_stock", "low_stock", "out_of_stock", "backorder", "pre_order")
  ),
  totals: Schema.Array(AcpTotal)
}).annotations({ identifier: "AcpLineItem" })
export type AcpLineItem = typeof AcpLineItem.Type

export const AcpFulfillmentOption = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("shipping"),
    id: Schema.String,
    title: Schema.String,
    description: Schema.optional(Schema.String),
    totals: Schema.Array(AcpTotal)
  }),
  Schema.Struct({
    type: Schema.Literal("digital"),
    id: Schema.String,
    title: Schema.String,
    description: Schema.optional(Schema.String),
    totals: Schema.Array(AcpTotal)
  })
).annotations({ identifier: "AcpFulfillmentOption" })
export type AcpFulfillmentOption = typeof AcpFulfillmentOption.Type

const Resolution = Schema.Literal("recoverable", "requires_buyer_input", "requires_buyer_review")

export const AcpMessage = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("info"),
    resolution: Schema.optional(Resolution),
    param: Schema.optional(Schema.String),
    content_type: Schema.Literal("plain"),
    content: Schema.String
  }),
  Schema.Struct({
    type: Schema.Literal("error"),
    code: Schema.Literal("missing", "invalid", "out_of_stock", "region_restricted", "not_found", "expired"),
    resolution: Schema.optional(Resolution),
    param: Schema.optional(Schema.String),
    content_type: Schema.Literal("plain"),
    content: Schema.String
  })
).annotations({ identifier: "AcpMessage" })
export type AcpMessage = typeof AcpMessage.Type

export const AcpOrderLineItem = Schema.Struct({
  id: Schema.String.annotations({ description: "The Ribbon order id (GET /v1/orders/{orderId})" }),
  title: Schema.String,
  product_id: Schema.String,
  quantity: Schema.Struct({ ordered: Schema.Int, current: Schema.Int, fulfilled: Schema.Int }),
  unit_price: Schema.Int,
  subtotal: Schema.Int,
  status: Schema.String
}).annotations({ identifier: "AcpOrderLineItem" })
export type AcpOrderLineItem = typeof AcpOrderLineItem.Type

export const AcpFulfillment = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("shipping", "digital"),
  status: Schema.String,
  line_items: Schema.Array(Schema.Struct({ id: Schema.String, quantity: Schema.Int })),
  carrier: Schema.optional(Schema.String),
  tracking_number: Schema.optional(Schema.String),
  tracking_url: Schema.optional(Schema.String)
}).annotations({ identifier: "AcpFulfillment" })
export type AcpFulfillment = typeof AcpFulfillment.Type

export const AcpOrder = Schema.Struct({
  type: Schema.Literal("order"),
  id: Schema.String.annotations({ description: "The Ribbon checkout the person paid (GET /v1/checkouts/{id})" }),
  checkout_session_id: Schema.String,
  permalink_url: Schema.String,
  status: Schema.String,
  line_items: Schema.Array(AcpOrderLineItem),
  fulfillments: Schema.Array(AcpFulfillment),
  totals: Schema.Array(AcpTotal)
}).annotations({ identifier: "AcpOrder" })
export type AcpOrder = typeof AcpOrder.Type

export const AcpSessionStatus = Schema.Literal(
  "incomplete",
  "not_ready_for_payment",
  "requires_escalation",
  "authentication_required",
  "ready_for_payment",
  "pending_approval",
  "complete_in_progress",
  "completed",
  "canceled",
  "in_progress",
  "expired"
)
export type AcpSessionStatus = typeof AcpSessionStatus.Type

/** An extension active for a session, as the seller declares it in `capabilities.extensions`. */
export const AcpExtensionDeclaration = Schema.Struct({
  name: Schema.String,
  extends: Schema.optional(Schema.Array(Schema.String)),
  schema: Schema.optional(Schema.String),
  spec: Schema.optional(Schema.String)
}).annotations({ identifier: "AcpExtensionDeclaration" })
export type AcpExtensionDeclaration = typeof AcpExtensionDeclaration.Type

export const AcpCheckoutSession = Schema.Struct({
  id: Schema.String,
  protocol: Schema.Struct({ version: Schema.String }),
  capabilities: Schema.Struct({
    payment: Schema.Struct({ handlers: Schema.Array(Schema.Unknown) }),
    extensions: Schema.optional(Schema.Array(AcpExtensionDeclaration))
  }),
  buyer: Schema.optional(AcpBuyer),
  status: AcpSessionStatus,
  currency: Schema.String,
  locale: Schema.optional(Schema.String),
  line_items: Schema.Array(AcpLineItem),
  fulfillment_details: Schema.optional(AcpFulfillmentDetails),
  fulfillment_options: Schema.Array(AcpFulfillmentOption),
  selected_fulfillment_options: Schema.Array(AcpSelectedFulfillmentOption),
  totals: Schema.Array(AcpTotal),
  messages: Schema.Array(AcpMessage),
  links: Schema.Array(Schema.Struct({ type: Schema.String, url: Schema.String })),
  created_at: Schema.String,
  updated_at: Schema.String,
  expires_at: Schema.optional(Schema.String),
  continue_url: Schema.optional(
    Schema.String.annotations({ description: "Ribbon's hosted payment page, while the session awaits payment" })
  ),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  quote_id: Schema.optional(Schema.String),
  quote_expires_at: Schema.optional(Schema.String),
  order: Schema.optional(AcpOrder),
  gift: Schema.optional(AcpGift)
}).annotations({ identifier: "AcpCheckoutSession" })
export type AcpCheckoutSession = typeof AcpCheckoutSession.Type

/** ACP's discovery document (`/.well-known/acp.json`). */
export const AcpDiscovery = Schema.Struct({
  protocol: Schema.Struct({
    name: Schema.Literal("acp"),
    version: Schema.String,
    supported_versions: Schema.Array(Schema.String),
    documentation_url: Schema.optional(Schema.String)
  }),
  api_base_url: Schema.String,
  transports: Schema.Array(Schema.Literal("rest", "mcp")),
  capabilities: Schema.Struct({
    services: Schema.Array(Schema.Literal("checkout", "orders", "delegate_payment", "carts")),
    extensions: Schema.optional(
      Schema.Array(Schema.Struct({ name: Schema.String, schema: Schema.optional(Schema.String) }))
    ),
    intervention_types: Schema.optional(Schema.Array(InterventionType)),
    supported_currencies: Schema.optional(Schema.Array(Schema.String)),
    supported_locales: Schema.optional(Schema.Array(Schema.String))
  })
}).annotations({ identifier: "AcpDiscovery" })
export type AcpDiscovery = typeof AcpDiscovery.Type

// Stored records (src/services/checkout/AcpSessionsRepo.ts).

/** One line of a session: a variant, how many, and the quote that prices it (none when it could not be priced). */
export const AcpLineRecord = Schema.Struct({
  variantId: Schema.String,
  quantity: Schema.Int,
  quoteId: Schema.NullOr(Schema.String)
})
export type AcpLineRecord = typeof AcpLineRecord.Type

/** What keeps a session from being paid, as the protocol's error message says it. */
export const AcpIssue = Schema.Struct({
  code: Schema.Literal("missing", "invalid", "out_of_stock", "region_restricted"),
  param: Schema.String,
  content: Schema.String
})
export type AcpIssue = typeof AcpIssue.Type

export const AcpSessionRecord = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  /** The OAuth client that created it over ACP, whose order webhook endpoints get its order's events. */
  clientId: Schema.NullOr(Schema.String),
  /** The platform profile of the `UCP-Agent` that created it over UCP, where its order events go (decision 0088). */
  ucpProfileUrl: Schema.NullOr(Schema.String),
  /** The currency the agent asked for; the session's own is its quotes'. */
  currency: Schema.String,
  locale: Schema.NullOr(Schema.String),
  /** jsonb: node-postgres hands it over parsed. */
  buyer: Schema.NullOr(AcpBuyer),
  fulfillmentDetails: Schema.NullOr(AcpFulfillmentDetails),
  lines: Schema.Array(AcpLineRecord),
  issues: Schema.Array(AcpIssue),
  capabilities: Schema.Unknown,
  orderNotes: Schema.NullOr(Schema.String),
  metadata: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  /** The gift extension's fields, kept only while the session declares it (jsonb). */
  gift: Schema.NullOr(AcpGift),
  /** The Ribbon checkout that pays for the session as it now is. */
  checkoutId: Schema.NullOr(Schema.String),
  canceledAt: Schema.NullOr(Schema.DateFromSelf),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf
})
export type AcpSessionRecord = typeof AcpSessionRecord.Type

/** An idempotency key's record: the request's fingerprint, and the response once there is one. */
export const AcpIdempotencyRecord = Schema.Struct({
  fingerprint: Schema.String,
  status: Schema.NullOr(Schema.Int),
  response: Schema.Unknown,
  createdAt: Schema.DateFromSelf
})
export type AcpIdempotencyRecord = typeof AcpIdempotencyRecord.Type
