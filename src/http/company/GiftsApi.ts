import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Address1, Address2, AddressCountryCode, City, PostalCode, ProvinceCode } from "../../domain/catalog/Address.js"
import { VariantNotFound } from "../../domain/catalog/Errors.js"
import { Recipient } from "../../domain/checkout/Checkout.js"
import { HexId, type Permission, RequestSource, Timestamp } from "../../domain/company/Company.js"
import {
  AccountNotFound,
  BillingMethodArchived,
  BillingMethodNotFound,
  CampaignNotActive,
  CampaignNotFound,
  GiftChoiceRefused,
  GiftClosed,
  GiftNotFound,
  InsufficientFunds,
  NotShippableToCountry,
  OrderKeyReused,
  RecipientAlreadyExists,
  ShippingAddressInvalid,
  VariantUnavailable
} from "../../domain/company/Errors.js"
import { GiftRecipient, GiftStatus, maxGiftsPerRequest, SendingMethod } from "../../domain/company/Gifts.js"
import { IdempotencyInFlight, InvalidRequest } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { ApiKeyAuthV2, Operation } from "./ApiKeyAuth.js"
import { CampaignV2, listParams } from "./CampaignsApi.js"
import { OrderV3 } from "./OrdersApi.js"
import { RecipientV2 } from "./RecipientsApi.js"

/**
 * Gifts, version 2 (docs/decisions/0047-v2-gifts.md; docs/company-api.md "Gifts"): sent to up to 100 recipients in one
 * call with an outcome per recipient, read, changed (expiry, metadata), cancelled, expired and claimed; and
 * `POST /v2/orders`, a gift sent and claimed in one idempotent call. Unknown body properties are ignored,
 * as v2 always has.
 */

const Metadata = Schema.Record({
  key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(40)),
  value: Schema.String.pipe(Schema.maxLength(500))
}).pipe(Schema.filter((record) => Object.keys(record).length <= 50 || "At most 50 metadata pairs"))

/** `POST /v2/gifts`. */
export const CreateGiftsV2 = Schema.Struct({
  campaignId: HexId,
  recipients: Schema.Array(GiftRecipient).pipe(Schema.minItems(1), Schema.maxItems(maxGiftsPerRequest)),
  sendingMethod: Schema.optionalWith(SendingMethod, { default: () => "link" as const }).annotations({
    description: "How the link reaches the recipient: email, sms, or link (the company sends it; default)"
  })
})

/** Who receives a claimed gift and where, in v2's words (`POST /v2/gifts/{id}/claim`, the gift page). */
export const OrderRecipientV2 = Schema.Struct({
  ...Recipient.fields,
  country: AddressCountryCode,
  address: Schema.Struct({
    addressLine1: Address1,
    addressLine2: Schema.optional(Address2),
    city: City,
    state: Schema.optional(ProvinceCode),
    zipcode: Schema.optional(PostalCode)
  })
})
export type OrderRecipientV2 = typeof OrderRecipientV2.Type

/**
 * A digital gift's claim on the gift page (offered where nothing the campaign allows can be delivered): who receives
 * it and the country, no address.
 */
export const DigitalClaimV2 = Schema.Struct({
  variantId: HexId,
  orderRecipient: Schema.Struct({ ...Recipient.fields, country: AddressCountryCode })
})

/** `POST /v2/gifts/{id}/claim`. */
export const ClaimGiftV2 = Schema.Struct({ variantId: HexId, orderRecipient: OrderRecipientV2 })

/** `POST /v2/orders`: a gift made and claimed in one call; `recipient.key` is its idempotency key. */
export const CreateOrderV2 = Schema.Struct({
  campaignId: HexId,
  variantId: HexId,
  recipient: GiftRecipient,
  orderRecipient: OrderRecipientV2
})

export class ClaimedV2 extends Schema.Class<ClaimedV2>("ClaimedV2")({
  orderId: Schema.String,
  status: Schema.String.annotations({ description: "The order's status, as v3 reads it" })
}) {}

export class OrderCreatedV2 extends Schema.Class<OrderCreatedV2>("OrderCreatedV2")({
  orderId: Schema.String,
  giftId: Schema.String,
  status: Schema.String.annotations({ description: "The order's status, as v3 reads it" })
}) {}

/** `PATCH /v2/gifts/{id}`: absent fields stay; `metadata: null` clears it. */
export const UpdateGiftV2 = Schema.Struct({
  expirationDate: Schema.optional(
    Schema.Date.annotations({
      description: "A new expiry, in the future and at most 365 days ahead (an ISO 8601 date-time)"
    })
  ),
  metadata: Schema.optional(Schema.NullOr(Metadata))
})

const Budget = Schema.Struct({ min: Schema.Number, max: Schema.Number }).annotations({
  description: "In major units of the campaign's currency, judged against the landed total"
})

export class GiftV2 extends Schema.Class<GiftV2>("GiftV2")({
  id: Schema.String,
  campaignId: Schema.String,
  accountId: Schema.String,
  recipientId: Schema.String,
  key: Schema.String,
  status: GiftStatus,
  link: Schema.String.annotations({ description: "The gift page the recipient opens; anyone with it can claim" }),
  budget: Budget,
  expirationDate: Timestamp,
  sendingMethod: SendingMethod,
  metadata: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  orderId: Schema.NullOr(Schema.String),
  deliveryDetails: Schema.NullOr(
    Schema.Struct({
      status: Schema.String,
      fulfillmentStatus: Schema.String,
      countryCode: Schema.String,
      carrier: Schema.NullOr(Schema.String),
      trackingNumber: Schema.NullOr(Schema.String),
      trackingUrl: Schema.NullOr(Schema.String)
    })
  ).annotations({ description: "Once claimed: its order's shipment (no personal data)" }),
  swappedFrom: Schema.NullOr(Schema.Struct({ productId: Schema.String, title: Schema.String })).annotations({
    description:
      "Once claimed for another product than the campaign's (a swap within budget): the campaign's product, with its " +
      "title; null otherwise"
  }),
  recipient: Schema.optional(RecipientV2.annotations({ description: "With expand[]=recipient" })),
  campaign: Schema.optional(CampaignV2.annotations({ description: "With expand[]=campaign" })),
  orders: Schema.optional(Schema.Array(OrderV3).annotations({ description: "With expand[]=orders" })),
  thankYouNote: Schema.NullOr(
    Schema.Struct({
      message: Schema.String.annotations({ description: "Plain text, 1 to 500 characters" }),
      createdAt: Timestamp.annotations({ description: "When the recipient first wrote it" })
    })
  ).annotations({
    description:
      "The recipient's thank-you note to the sender, written on the gift page once the gift is claimed (null until " +
      "then); it may be changed for 24 hours after it was first written. Shown with masked and unmasked reads alike"
  }),
  source: Schema.NullOr(RequestSource),
  createdAt: Timestamp,
  claimedAt: Schema.NullOr(Timestamp)
}) {}

export class GiftResultsV2 extends Schema.Class<GiftResultsV2>("GiftResultsV2")({
  results: Schema.Array(
    Schema.Union(
      Schema.Struct({ success: Schema.Literal(true), id: Schema.String, key: Schema.String, link: Schema.String }),
      Schema.Struct({
        success: Schema.Literal(false),
        key: Schema.String,
        errorCode: Schema.String,
        message: Schema.String
      })
    )
  ).annotations({ description: "One per recipient, in the request's order" })
}) {}

/**
 * A gift as a read answers it: every field, unless `fields` narrows it to some of them (the id and what
 * `expand[]` adds always come).
 */
export const GiftReadV2 = Schema.Struct({ id: Schema.String })
  .pipe(Schema.extend(Schema.partial(Schema.Struct(GiftV2.fields).pipe(Schema.omit("id")))))
  .annotations({
    identifier: "GiftReadV2",
    description: "A gift; every field is present unless `fields` asked for some of them"
  })

export class GiftListV2 extends Schema.Class<GiftListV2>("GiftListV2")({
  results: Schema.Array(GiftReadV2),
  skip: Schema.Int,
  limit: Schema.Int
}) {}

/** A comma-separated set of values (`statuses=opened,claimed`), each checked. */
const setOf = (item: Schema.Schema.AnyNoContext, description: string) =>
  Schema.String.pipe(
    Schema.filter((text) => {
      const bad = text.split(",").find((value) => !Schema.is(item)(value.trim()))
      return bad === undefined || `Unexpected value "${bad}"`
    })
  ).annotations({ description })

const DateTimeParam = Schema.String.pipe(
  Schema.filter((value) => !Number.isNaN(Date.parse(value)) || "Expected an ISO 8601 date-time")
)

const GiftPath = Schema.Struct({ giftId: HexId })

export const giftExpansions = ["recipient", "orders", "campaign"] as const

/**
 * What each expansion needs: the expanded resource's own read permission (any one of them), as reading it at
 * its own route would. Without it the read is 403; the resource is then shown in its own masking mode.
 */
export const expansionPermissions: Record<(typeof giftExpansions)[number], ReadonlyArray<Permission>> = {
  recipient: ["recipients:read:masked", "recipients:read:unmasked"],
  orders: ["orders:read:masked", "orders:read:unmasked"],
  campaign: ["campaigns:read"]
}

/** The fields a gift read may be narrowed to with `fields`. */
export const giftFields = Object.keys(GiftV2.fields).filter(
  (name) => name !== "id" && !(giftExpansions as ReadonlyArray<string>).includes(name)
)

const Fields = Schema.String.pipe(
  Schema.filter((text) => {
    const unknown = text.split(",").find((name) => !giftFields.includes(name.trim()))
    return unknown === undefined || `Unknown field "${unknown}"; expected some of ${giftFields.join(", ")}`
  })
).annotations({ description: "Comma-separated: only these fields of each gift, with its id and what expand[] adds" })

/** `expand[]` (repeatable): what a gift read carries besides its own fields (v3's `include` replaced it). */
const Expand = {
  fields: Schema.optional(Fields),
  "expand[]": Schema.optional(
    Schema.Union(Schema.Literal(...giftExpansions), Schema.Array(Schema.Literal(...giftExpansions)))
  ).annotations({
    description:
      "recipient (needs recipients:read:masked or :unmasked, masked unless :unmasked), orders (likewise with " +
      "orders:read:…), campaign (needs campaigns:read); repeatable. A missing permission is a 403"
  })
}

const read = { permission: ["gifts:read:masked", "gifts:read:unmasked"], rateClass: "administration:read" } as const
const update = { permission: "gifts:update", rateClass: "administration:write" } as const

export class GiftsV2Api extends HttpApiGroup.make("giftsV2")
  .add(
    HttpApiEndpoint.post("create", "/gifts")
      .setPayload(CreateGiftsV2)
      .addSuccess(GiftResultsV2)
      .addError(lineError("v2", CampaignNotFound))
      .addError(lineError("v2", CampaignNotActive))
      .annotate(Operation, { permission: "gifts:create", rateClass: "administration:write" })
      .annotate(
        OpenApi.Summary,
        "Send a campaign's gift to 1 to 100 recipients; each gets its own outcome, a repeated key its gift"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/gifts")
      .setUrlParams(
        Schema.Struct({
          ...listParams,
          statuses: Schema.optional(setOf(GiftStatus, "Comma-separated statuses")),
          campaignIds: Schema.optional(setOf(HexId, "Comma-separated campaign ids")),
          keys: Schema.optional(Schema.String.annotations({ description: "Comma-separated gift keys" })),
          createdBefore: Schema.optional(DateTimeParam),
          createdAfter: Schema.optional(DateTimeParam),
          ...Expand
        })
      )
      .addSuccess(GiftListV2)
      .addError(lineError("v2", AccountNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "List the gifts of the accounts the key reaches, newest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/gifts/:giftId")
      .setPath(GiftPath)
      .setUrlParams(Schema.Struct(Expand))
      .addSuccess(GiftReadV2)
      .addError(lineError("v2", GiftNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "Retrieve a gift")
  )
  .add(
    HttpApiEndpoint.patch("update", "/gifts/:giftId")
      .setPath(GiftPath)
      .setPayload(UpdateGiftV2)
      .addSuccess(GiftV2)
      .addError(lineError("v2", GiftNotFound))
      .addError(lineError("v2", GiftClosed))
      .annotate(Operation, update)
      .annotate(OpenApi.Summary, "Change an open gift's expiry or metadata")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/gifts/:giftId/cancel")
      .setPath(GiftPath)
      .addSuccess(GiftV2)
      .addError(lineError("v2", GiftNotFound))
      .addError(lineError("v2", GiftClosed))
      .annotate(Operation, update)
      .annotate(OpenApi.Summary, "Cancel an unclaimed gift; its reserved budget is released")
  )
  .add(
    HttpApiEndpoint.post("expire", "/gifts/:giftId/expire")
      .setPath(GiftPath)
      .addSuccess(GiftV2)
      .addError(lineError("v2", GiftNotFound))
      .addError(lineError("v2", GiftClosed))
      .annotate(Operation, update)
      .annotate(OpenApi.Summary, "Expire an unclaimed gift now; its reserved budget is released")
  )
  .addError(lineError("v2", InvalidRequest))
  .prefix("/public-api/v2")
  .middleware(ApiKeyAuthV2)
  .annotate(OpenApi.Title, "Gifts (v2)")
  .annotate(
    OpenApi.Description,
    "Gifts, version 2: a campaign's gift sent to recipients as a link they open to choose and claim. " +
      "Authenticated with `X-Api-Key`."
  ) {}

/**
 * Claims, version 2: a gift's claim and `POST /v2/orders` (a gift sent and claimed in one call). Each places a
 * v3 order, so each may be refused for what `POST /v3/orders` is, besides the gift's own refusals.
 */
export class GiftClaimsV2Api extends HttpApiGroup.make("giftClaimsV2")
  .add(
    HttpApiEndpoint.post("claim", "/gifts/:giftId/claim")
      .setPath(GiftPath)
      .setPayload(ClaimGiftV2)
      .addSuccess(ClaimedV2)
      .addError(lineError("v2", GiftNotFound))
      .annotate(OpenApi.Summary, "Claim a gift for its recipient: the chosen variant, to their address")
  )
  .add(
    HttpApiEndpoint.post("order", "/orders")
      .setPayload(CreateOrderV2)
      .addSuccess(OrderCreatedV2)
      .addError(lineError("v2", CampaignNotFound))
      .addError(lineError("v2", CampaignNotActive))
      .addError(lineError("v2", RecipientAlreadyExists))
      .annotate(
        OpenApi.Summary,
        "Send a gift and claim it in one call; recipient.key makes it idempotent (a replay finds the same order)"
      )
  )
  .addError(lineError("v2", GiftClosed))
  .addError(lineError("v2", GiftChoiceRefused))
  .addError(lineError("v2", AccountNotFound))
  .addError(lineError("v2", BillingMethodNotFound))
  .addError(lineError("v2", VariantNotFound))
  .addError(lineError("v2", NotShippableToCountry))
  .addError(lineError("v2", ShippingAddressInvalid))
  .addError(lineError("v2", InsufficientFunds))
  .addError(lineError("v2", BillingMethodArchived))
  .addError(lineError("v2", VariantUnavailable))
  .addError(lineError("v2", OrderKeyReused))
  .addError(lineError("v2", IdempotencyInFlight))
  .addError(lineError("v2", InvalidRequest))
  .annotate(Operation, { permission: "orders:create", rateClass: "marketplace:write" })
  .prefix("/public-api/v2")
  .middleware(ApiKeyAuthV2)
  .annotate(OpenApi.Title, "Gift claims (v2)")
  .annotate(
    OpenApi.Description,
    "Claiming gifts, version 2: each claim places an order. Authenticated with `X-Api-Key`."
  ) {}
