import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Address1, Address2, AddressCountryCode, City, PostalCode, ProvinceCode } from "../../domain/catalog/Address.js"
import { VariantNotFound } from "../../domain/catalog/Errors.js"
import { Recipient } from "../../domain/checkout/Checkout.js"
import { HexId, RequestSource, Timestamp } from "../../domain/company/Company.js"
import {
  AccountNotFound,
  BillingMethodArchived,
  BillingMethodNotFound,
  CompanyOrderNotFound,
  InsufficientFunds,
  NotShippableToCountry,
  OrderAlreadyClosed,
  OrderKeyReused,
  OrderNotCancellable,
  ShippingAddressInvalid,
  SimulationRefused,
  VariantUnavailable
} from "../../domain/company/Errors.js"
import { CompanyOrderStatus, FulfillmentStatus, ShipmentStatus } from "../../domain/company/Orders.js"
import { IdempotencyInFlight, NotFound } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { mayReplay } from "../OpenApiDocument.js"
import { DateTimeFilter, Links, strictBody, type V3QuerySpec, v3UrlParams } from "../V3Requests.js"
import { ApiKeyAuthV3, Operation } from "./ApiKeyAuth.js"

/**
 * Orders, version 3 (spec "Operations named for version 3"; docs/decisions/0036-company-resources.md,
 * docs/decisions/0039-v3-orders.md; docs/company-api.md "Orders"): placed in one idempotent call, read with the
 * recipient masked unless the key may read it unmasked, cancelled until the carrier has the parcel, and moved by hand
 * in the sandbox.
 */

const Amount = Schema.Struct({ amount: Schema.Int, currency: Schema.String })

const Address = Schema.Struct({
  address1: Schema.NullOr(Schema.String).annotations({
    description:
      "Null when the address is hidden (`recipientAddressHidden`), and for a digital order (delivered online: its " +
      "country alone)"
  }),
  address2: Schema.NullOr(Schema.String),
  city: Schema.NullOr(Schema.String).annotations({ description: "Null for a digital order (its country alone)" }),
  provinceCode: Schema.NullOr(Schema.String),
  postalCode: Schema.NullOr(Schema.String).annotations({
    description: "Null when the address is hidden (`recipientAddressHidden`) or has none"
  }),
  countryCode: Schema.String
})

export class OrderV3 extends Schema.Class<OrderV3>("OrderV3")({
  id: Schema.String,
  accountId: Schema.String,
  billingMethodId: Schema.String,
  status: CompanyOrderStatus,
  fulfillmentStatus: FulfillmentStatus,
  idempotencyKey: Schema.String,
  tags: Schema.Array(Schema.String),
  metadata: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  lineItems: Schema.Array(
    Schema.Struct({
      variantId: Schema.String,
      productId: Schema.String,
      title: Schema.String,
      quantity: Schema.Int,
      price: Amount.annotations({ description: "Landed price of one unit in the destination's currency" })
    })
  ),
  total: Amount,
  recipient: Schema.Struct({
    firstName: Schema.String,
    lastName: Schema.String,
    email: Schema.String,
    phone: Schema.NullOr(Schema.String)
  }),
  shippingAddress: Address,
  recipientAddressHidden: Schema.Boolean.annotations({
    description:
      "Whether the gift's campaign hides the recipient's address: only its city, region and country are shown, whatever the key's read permissions"
  }),
  fulfillments: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      status: ShipmentStatus,
      carrier: Schema.NullOr(Schema.String),
      trackingNumber: Schema.NullOr(Schema.String),
      trackingUrl: Schema.NullOr(Schema.String),
      shippedAt: Schema.NullOr(Timestamp),
      deliveredAt: Schema.NullOr(Timestamp)
    })
  ),
  trackingLink: Schema.NullOr(Schema.String),
  source: Schema.NullOr(RequestSource),
  giftId: Schema.NullOr(Schema.String),
  swappedFrom: Schema.NullOr(Schema.Struct({ productId: Schema.String, title: Schema.String })).annotations({
    description:
      "A gift's order for another product than its campaign's (a swap within budget): the campaign's product, with " +
      "its title; null otherwise. The line item is the product chosen"
  }),
  cancellationDetails: Schema.NullOr(Schema.Struct({ cancelledAt: Timestamp, reason: Schema.String })),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

export class OrderResponseV3 extends Schema.Class<OrderResponseV3>("OrderResponseV3")({ data: OrderV3 }) {}

export class OrderListV3 extends Schema.Class<OrderListV3>("OrderListV3")({
  data: Schema.Array(OrderV3),
  links: Links
}) {}

const MetadataKey = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(40))
const MetadataValue = Schema.String.pipe(Schema.maxLength(500))

/** `POST /v3/orders`: one variant for one recipient (docs/decisions/0039-v3-orders.md). */
export const CreateOrderV3 = strictBody(
  Schema.Struct({
    variantId: HexId,
    recipient: Recipient,
    shippingAddress: Schema.Struct({
      address1: Address1,
      address2: Schema.optional(Address2),
      city: City,
      provinceCode: Schema.optional(ProvinceCode),
      postalCode: Schema.optional(PostalCode),
      countryCode: AddressCountryCode
    }),
    idempotencyKey: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(120)).annotations({
      description: "Stable per logical order; a retry with the same key and body replays the first response"
    }),
    billingMethodId: Schema.optional(HexId.annotations({ description: "Default: the account's default method" })),
    accountId: Schema.optional(HexId.annotations({ description: "Ribbon-Account-Id wins when both are given" })),
    tags: Schema.optionalWith(
      Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(50))).pipe(Schema.maxItems(10)),
      {
        default: () => []
      }
    ),
    metadata: Schema.optional(
      Schema.Record({ key: MetadataKey, value: MetadataValue }).pipe(
        Schema.filter((record) => Object.keys(record).length <= 50 || "At most 50 metadata pairs")
      )
    )
  })
)

export const CancelOrderV3 = strictBody(
  Schema.Struct({ reason: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500))) })
)

export const SimulateOrderV3 = strictBody(
  Schema.Struct({
    fulfillmentStatus: Schema.Literal("processing", "inTransit", "outForDelivery", "delivered", "failed")
  })
)

export const ordersV3Query = {
  filters: ["status", "fulfillmentStatus", "idempotencyKey", "tag", "createdAt][gte", "createdAt][lte"],
  sort: ["createdAt"],
  paging: "number",
  maxPageSize: 300,
  defaultPageSize: 50,
  filterSchemas: {
    status: CompanyOrderStatus,
    fulfillmentStatus: FulfillmentStatus,
    "createdAt][gte": DateTimeFilter,
    "createdAt][lte": DateTimeFilter
  }
} satisfies V3QuerySpec

const OrderPath = Schema.Struct({ orderId: HexId })

const readOrders = {
  permission: ["orders:read:masked", "orders:read:unmasked"],
  rateClass: "marketplace:read"
} as const

export class OrdersV3Api extends HttpApiGroup.make("ordersV3")
  .add(
    HttpApiEndpoint.post("create", "/orders")
      .setPayload(CreateOrderV3)
      .addSuccess(OrderResponseV3, { status: 201 })
      .addError(lineError("v3", AccountNotFound))
      .addError(lineError("v3", BillingMethodNotFound))
      .addError(lineError("v3", VariantNotFound))
      .addError(lineError("v3", NotShippableToCountry))
      .addError(lineError("v3", ShippingAddressInvalid))
      .addError(lineError("v3", InsufficientFunds))
      .addError(lineError("v3", BillingMethodArchived))
      .addError(lineError("v3", VariantUnavailable))
      .addError(lineError("v3", OrderKeyReused))
      .addError(lineError("v3", IdempotencyInFlight))
      .annotate(Operation, { permission: "orders:create", rateClass: "marketplace:write" })
      .annotate(OpenApi.Transform, mayReplay)
      .annotate(OpenApi.Summary, "Place an order for one variant and one recipient, idempotently")
  )
  .add(
    HttpApiEndpoint.get("list", "/orders")
      .setUrlParams(v3UrlParams(ordersV3Query, {}))
      .addSuccess(OrderListV3)
      .annotate(Operation, readOrders)
      .annotate(OpenApi.Summary, "List orders, newest first; the recipient masked unless the key reads it unmasked")
  )
  .add(
    HttpApiEndpoint.get("get", "/orders/:orderId")
      .setPath(OrderPath)
      .addSuccess(OrderResponseV3)
      .addError(lineError("v3", CompanyOrderNotFound))
      .annotate(Operation, readOrders)
      .annotate(OpenApi.Summary, "Retrieve an order")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/orders/:orderId/cancel")
      .setPath(OrderPath)
      .setPayload(CancelOrderV3)
      .addSuccess(OrderResponseV3)
      .addError(lineError("v3", CompanyOrderNotFound))
      .addError(lineError("v3", OrderNotCancellable))
      .addError(lineError("v3", OrderAlreadyClosed))
      .annotate(Operation, { permission: "orders:cancel", rateClass: "marketplace:write" })
      .annotate(OpenApi.Summary, "Cancel an order until its shipment is in transit; the billing method is credited")
  )
  .add(
    HttpApiEndpoint.post("simulate", "/orders/:orderId/simulate")
      .setPath(OrderPath)
      .setPayload(SimulateOrderV3)
      .addSuccess(OrderResponseV3)
      .addError(lineError("v3", CompanyOrderNotFound))
      .addError(lineError("v3", NotFound))
      .addError(lineError("v3", SimulationRefused))
      .annotate(Operation, { permission: "orders:create", rateClass: "marketplace:write", testKeysOnly: true })
      .annotate(
        OpenApi.Summary,
        "Sandbox (test keys only): move a test order's shipment to its next status, or fail it (refunded)"
      )
  )
  .prefix("/public-api/v3")
  .middleware(ApiKeyAuthV3)
  .annotate(OpenApi.Title, "Orders (v3)")
  .annotate(
    OpenApi.Description,
    "Orders placed by a company for its recipients, one idempotent call each. Authenticated with `X-Api-Key`."
  ) {}
