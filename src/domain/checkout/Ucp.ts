import { Schema } from "effect"

/**
 * The Universal Commerce Protocol's objects Ribbon takes and gives (release 2026-04-08;
 * docs/decisions/0080-universal-commerce-protocol.md): the checkout capability with its fulfillment extension, over
 * the REST binding. Requests are decoded as far as Ribbon acts on them; other protocol fields pass through unread
 * (an excess property is ignored, not refused, as the protocol's schemas allow).
 */

/** The protocol release served (its versions are dates). */
export const UCP_VERSION = "2026-04-08"

/** The protocol's reverse-domain names of what Ribbon serves. */
export const UCP_SHOPPING = "dev.ucp.shopping"
export const UCP_CHECKOUT = "dev.ucp.shopping.checkout"
export const UCP_FULFILLMENT = "dev.ucp.shopping.fulfillment"

const Text = Schema.String.pipe(Schema.maxLength(1000))
const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))
const Note = (description: string) => Text.annotations({ description })

/** A postal address as the protocol writes it (schema.org's names), with the recipient's name and phone. */
export const UcpPostalAddress = Schema.Struct({
  id: Schema.optional(Note("The destination's id, for selected_destination_id")),
  street_address: Schema.optional(Note("Street and number")),
  extended_address: Schema.optional(Note("Flat, suite or building")),
  address_locality: Schema.optional(Note("City")),
  address_region: Schema.optional(Note("State, province or region code")),
  address_country: Schema.optional(Note("Country, ISO 3166-1 alpha-2")),
  postal_code: Schema.optional(Note("Postal code")),
  first_name: Schema.optional(Note("The recipient's first name")),
  last_name: Schema.optional(Note("The recipient's last name")),
  phone_number: Schema.optional(Note("The recipient's phone number, E.164"))
}).annotations({ identifier: "UcpPostalAddress" })
export type UcpPostalAddress = typeof UcpPostalAddress.Type

export const UcpBuyer = Schema.Struct({
  first_name: Schema.optional(Note("First name")),
  last_name: Schema.optional(Note("Last name")),
  email: Schema.optional(Note("Email address: the recipient's too, for the delivery and the receipt")),
  phone_number: Schema.optional(Note("Phone number, E.164"))
}).annotations({ identifier: "UcpBuyer" })
export type UcpBuyer = typeof UcpBuyer.Type

export const UcpLineItemRequest = Schema.Struct({
  id: Schema.optional(Note("The line's id (ignored: Ribbon names lines li_<variant id>)")),
  item: Schema.Struct({ id: Id.annotations({ description: "A Ribbon variant id" }) }).annotations({
    description: "The item bought"
  }),
  quantity: Schema.Int.pipe(Schema.between(1, 20)).annotations({ description: "How many, 1 to 20" })
}).annotations({ identifier: "UcpLineItemRequest" })

/** The fulfillment extension as requested: Ribbon ships, so one `shipping` method with one destination counts. */
export const UcpFulfillmentRequest = Schema.Struct({
  methods: Schema.optional(
    Schema.Array(
      Schema.Struct({
        id: Schema.optional(Note("The method's id")),
        type: Schema.optional(
          Schema.Literal("shipping", "pickup").annotations({ description: "shipping: Ribbon does not offer pickup" })
        ),
        line_item_ids: Schema.optional(
          Schema.Array(Text).annotations({ description: "The lines it is for (Ribbon ships every line)" })
        ),
        destinations: Schema.optional(
          Schema.Array(UcpPostalAddress)
            .pipe(Schema.maxItems(5))
            .annotations({ description: "Where to deliver: the recipient and the address" })
        ),
        selected_destination_id: Schema.optional(
          Schema.NullOr(Text).annotations({ description: "The destination chosen (default: the first)" })
        )
      })
    )
      .pipe(Schema.maxItems(5))
      .annotations({ description: "How the items are delivered: one shipping method" })
  )
}).annotations({ identifier: "UcpFulfillmentRequest" })
export type UcpFulfillmentRequest = typeof UcpFulfillmentRequest.Type

/** The headers a `/ucp` write reads: `Idempotency-Key`, honoured when given (the binding's "when provided"). */
export const UcpWriteHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)).annotations({
      description:
        "A retry with the same key and body gets the first answer (kept 24 hours); another body is a 409. UUID v4 recommended"
    })
  )
})

/** Create and update take the same body: an update replaces the session's buyer, items and fulfillment. */
export const UcpCheckoutRequest = Schema.Struct({
  line_items: Schema.Array(UcpLineItemRequest)
    .pipe(Schema.minItems(1), Schema.maxItems(20))
    .annotations({ description: "The items: Ribbon variant ids with quantities" }),
  buyer: Schema.optional(UcpBuyer.annotations({ description: "Who is buying" })),
  fulfillment: Schema.optional(
    UcpFulfillmentRequest.annotations({ description: "The delivery (fulfillment extension)" })
  ),
  context: Schema.optional(Schema.Unknown.annotations({ description: "Buyer context signals, passed through" })),
  signals: Schema.optional(Schema.Unknown.annotations({ description: "Platform signals, passed through" })),
  payment: Schema.optional(
    Schema.Unknown.annotations({ description: "Payment instruments; complete is where a token pays" })
  )
}).annotations({ identifier: "UcpCheckoutRequest" })
export type UcpCheckoutRequest = typeof UcpCheckoutRequest.Type

/**
 * Complete: the protocol's payment instruments. One of Ribbon's handler (`ribbon_card`, a `card` with credential
 * `{type: "token", token: "vt_…"}` from delegated payment) pays the checkout; without one the person pays at
 * continue_url (src/services/checkout/UcpPresent.ts reads them).
 */
export const UcpCompleteRequest = Schema.Struct({
  payment: Schema.optional(
    Schema.Unknown.annotations({
      description:
        "{instruments: [{id, handler_id: ribbon_card, type: card, selected: true, credential: {type: token, token}}]}"
    })
  ),
  signals: Schema.optional(Schema.Unknown.annotations({ description: "Platform signals, passed through" }))
}).annotations({ identifier: "UcpCompleteRequest" })

export const UcpCheckoutStatus = Schema.Literal(
  "incomplete",
  "requires_escalation",
  "ready_for_complete",
  "complete_in_progress",
  "completed",
  "canceled"
)
export type UcpCheckoutStatus = typeof UcpCheckoutStatus.Type

const Total = Schema.Struct({ type: Schema.String, display_text: Schema.optional(Schema.String), amount: Schema.Int })
const Versioned = Schema.Array(Schema.Struct({ version: Schema.String }, { key: Schema.String, value: Schema.Unknown }))

/** The `ucp` metadata every checkout response carries: the version and the capabilities it was answered with. */
export const UcpResponseMeta = Schema.Struct({
  version: Schema.String,
  status: Schema.optional(Schema.Literal("success", "error")),
  capabilities: Schema.Record({ key: Schema.String, value: Versioned }),
  payment_handlers: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Unknown) })
}).annotations({ identifier: "UcpResponseMeta" })

/** A line's item as answered: the variant, its title, unit price and picture. */
const UcpItem = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  price: Schema.Int,
  image_url: Schema.optional(Schema.String)
})

export const UcpCheckout = Schema.Struct({
  ucp: UcpResponseMeta,
  id: Schema.String,
  status: UcpCheckoutStatus,
  currency: Schema.String.annotations({ description: "ISO 4217, upper case" }),
  buyer: Schema.optional(UcpBuyer),
  line_items: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      item: UcpItem,
      quantity: Schema.Int,
      totals: Schema.Array(Total)
    })
  ),
  fulfillment: Schema.optional(Schema.Unknown),
  totals: Schema.Array(Total),
  messages: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  links: Schema.Array(Schema.Struct({ type: Schema.String, url: Schema.String })),
  expires_at: Schema.optional(Schema.String),
  continue_url: Schema.optional(
    Schema.String.annotations({ description: "Ribbon's hosted payment page, while the session awaits payment" })
  ),
  order: Schema.optional(
    Schema.Struct({ id: Schema.String, label: Schema.optional(Schema.String), permalink_url: Schema.String })
  )
}).annotations({ identifier: "UcpCheckout" })
export type UcpCheckout = typeof UcpCheckout.Type

/** The business profile (`/.well-known/ucp`). */
export const UcpProfile = Schema.Struct({
  ucp: Schema.Struct({
    version: Schema.String,
    services: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Unknown) }),
    capabilities: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Unknown) }),
    payment_handlers: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Unknown) })
  }),
  signing_keys: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.String }))
}).annotations({ identifier: "UcpProfile" })

/** The order capability (order.md, order-rest.md): `GET /orders/{id}` of a paid checkout. */
export const UCP_ORDER = "dev.ucp.shopping.order"

const OrderLineRef = Schema.Struct({ id: Schema.String, quantity: Schema.Int })

/** An order: what the paid checkout bought, where it ships, and what has shipped. */
export const UcpOrder = Schema.Struct({
  ucp: Schema.Struct({ version: Schema.String, capabilities: Schema.Record({ key: Schema.String, value: Versioned }) }),
  id: Schema.String.annotations({ description: "The Ribbon checkout the person paid (GET /v1/checkouts/{id})" }),
  checkout_id: Schema.String,
  permalink_url: Schema.String,
  currency: Schema.String,
  line_items: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      item: UcpItem,
      quantity: Schema.Struct({ original: Schema.Int, total: Schema.Int, fulfilled: Schema.Int }),
      totals: Schema.Array(Total),
      status: Schema.Literal("processing", "partial", "fulfilled", "removed")
    })
  ),
  fulfillment: Schema.Struct({
    expectations: Schema.Array(
      Schema.Struct({
        id: Schema.String,
        line_items: Schema.Array(OrderLineRef),
        method_type: Schema.Literal("shipping"),
        destination: Schema.Record({ key: Schema.String, value: Schema.Unknown })
      })
    ),
    events: Schema.Array(
      Schema.Struct({
        id: Schema.String,
        occurred_at: Schema.String,
        type: Schema.String,
        line_items: Schema.Array(OrderLineRef),
        tracking_number: Schema.optional(Schema.String),
        tracking_url: Schema.optional(Schema.String),
        carrier: Schema.optional(Schema.String)
      })
    )
  }),
  totals: Schema.Array(Total)
}).annotations({ identifier: "UcpOrder" })
export type UcpOrder = typeof UcpOrder.Type
