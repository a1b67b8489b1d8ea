import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CollectionNotFound, ProductNotFound } from "../../domain/catalog/Errors.js"
import {
  CampaignStatus,
  defaultHideRecipientAddress,
  GiftType,
  maxBudget,
  maxExpirationDays,
  minBudget,
  SendingChannel,
  SwapSetting
} from "../../domain/company/Campaigns.js"
import { CompanyId, HexId, RequestSource, Timestamp } from "../../domain/company/Company.js"
import {
  AccountNotFound,
  BillingMethodNotFound,
  CampaignArchived,
  CampaignNotFound,
  CampaignTransitionRefused
} from "../../domain/company/Errors.js"
import { giftMessageMaxLength } from "../../domain/company/Gifts.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { queryInt } from "../QueryParams.js"
import { ApiKeyAuthV2, Operation } from "./ApiKeyAuth.js"

/**
 * Campaigns, version 2 (docs/decisions/0045-v2-campaigns.md; docs/company-api.md "Campaigns"): what gifts are made
 * from. A campaign's customization says what a recipient may choose (one product, or a product of a collection), the
 * budget (major units of the billing currency, 1–20000, judged against the landed total), when the gift
 * expires, how it is sent and the sender's note shown on the gift page. Unknown body properties are ignored,
 * as v2 always has.
 */

const Name = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))

/** Two decimal places at most: the billing currency's minor units. */
const twoDecimals = (n: number) => Math.abs(n * 100 - Math.round(n * 100)) < 1e-6 || "At most two decimal places"

const BudgetAmount = Schema.Number.pipe(
  Schema.finite(),
  Schema.between(minBudget, maxBudget),
  Schema.filter(twoDecimals)
).annotations({
  description: "Major units of the billing currency (USD), 1 to 20000, judged against the landed total"
})

const BudgetInput = Schema.Struct({
  min: Schema.optionalWith(BudgetAmount, { exact: true, default: () => minBudget }).annotations({
    description: "Default 1; at most `max`"
  }),
  max: BudgetAmount
})

/** ISO 8601: a date (`2026-12-31`, the end of that day in UTC) or a date-time with its offset. */
const ExpirationDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/, {
    message: () => "Expected an ISO 8601 date (YYYY-MM-DD) or date-time with an offset"
  })
).annotations({ description: "In the future, at most 365 days ahead; a date alone means the end of that day, UTC" })

const ExpirationInput = Schema.Struct({
  daysFromSend: Schema.optional(Schema.Int.pipe(Schema.between(1, maxExpirationDays))),
  date: Schema.optional(ExpirationDate)
}).annotations({ description: "Exactly one of `daysFromSend` (1 to 365) and `date`" })

const giftFields = {
  selectedGiftType: GiftType,
  productId: Schema.optional(HexId.annotations({ description: "For `selectedGiftType` product" })),
  collectionId: Schema.optional(HexId.annotations({ description: "For `selectedGiftType` collection" }))
}

const Swap = SwapSetting.annotations({
  description:
    "Whether the recipient may take another product landed within the same budget in their country: `within_budget` " +
    "(the default for product gifts) or `disabled` (the default, and the only value, for collection gifts)"
})

const SendingChannels = Schema.Array(SendingChannel).pipe(Schema.minItems(1), Schema.maxItems(3))

const Message = Schema.NullOr(Schema.String.pipe(Schema.maxLength(giftMessageMaxLength))).annotations({
  description: `The sender's note shown on the gift page (at most ${giftMessageMaxLength} characters)`
})

const defaultPolicy = { sendingChannels: ["email" as const], disableReminders: false }

const HideRecipientAddress = Schema.Boolean.annotations({
  description:
    "Whether the company sees only the city, region and country of the addresses its recipients give (no street lines, no postal code), whatever its keys' and members' read permissions; the carrier always gets the full address. Default true"
})

/** `POST /v2/campaigns`. */
export const CreateCampaignV2 = Schema.Struct({
  name: Name,
  status: Schema.optionalWith(Schema.Literal("draft", "active"), { exact: true, default: () => "active" as const }),
  type: Schema.optional(Schema.Literal("oneOffs")),
  accountId: Schema.optional(
    HexId.annotations({ description: "Default: Ribbon-Account-Id, else the key's only or default account" })
  ),
  billingMethodId: Schema.optional(HexId.annotations({ description: "Default: the account's default method" })),
  hideRecipientAddress: Schema.optionalWith(HideRecipientAddress, {
    exact: true,
    default: () => defaultHideRecipientAddress
  }),
  customization: Schema.Struct({
    giftProperties: Schema.Struct({
      ...giftFields,
      budget: BudgetInput,
      swap: Schema.optional(Swap),
      expiration: Schema.optionalWith(ExpirationInput, { exact: true, default: () => ({ daysFromSend: 30 }) })
    }),
    notificationPolicy: Schema.optionalWith(
      Schema.Struct({
        sendingChannels: SendingChannels,
        disableReminders: Schema.optionalWith(Schema.Boolean, { exact: true, default: () => false })
      }),
      { exact: true, default: () => defaultPolicy }
    ),
    message: Schema.optionalWith(Message, { exact: true, default: () => null })
  })
})

/** `PATCH /v2/campaigns/{id}`: absent fields stay; `budget` and `expiration` are replaced whole. */
export const UpdateCampaignV2 = Schema.Struct({
  name: Schema.optional(Name),
  status: Schema.optional(CampaignStatus),
  hideRecipientAddress: Schema.optional(HideRecipientAddress),
  customization: Schema.optional(
    Schema.Struct({
      giftProperties: Schema.optional(
        Schema.Struct({
          selectedGiftType: Schema.optional(GiftType),
          productId: giftFields.productId,
          collectionId: giftFields.collectionId,
          budget: Schema.optional(BudgetInput),
          swap: Schema.optional(
            Swap.annotations({ description: "Absent: it stays, or becomes the new gift type's default" })
          ),
          expiration: Schema.optional(ExpirationInput)
        })
      ),
      notificationPolicy: Schema.optional(
        Schema.Struct({
          sendingChannels: Schema.optional(SendingChannels),
          disableReminders: Schema.optional(Schema.Boolean)
        })
      ),
      message: Schema.optional(Message)
    })
  )
})

export class CampaignV2 extends Schema.Class<CampaignV2>("CampaignV2")({
  id: Schema.String,
  name: Schema.String,
  status: CampaignStatus,
  type: Schema.Literal("oneOffs"),
  source: Schema.NullOr(RequestSource),
  accountId: Schema.String,
  billingMethodId: Schema.String,
  hideRecipientAddress: HideRecipientAddress,
  customization: Schema.Struct({
    giftProperties: Schema.Struct({
      selectedGiftType: GiftType,
      productId: Schema.optional(Schema.String),
      collectionId: Schema.optional(Schema.String),
      budget: Schema.Struct({ min: Schema.Number, max: Schema.Number }).annotations({
        description: "Major units of the billing currency (USD), judged against the landed total"
      }),
      swap: Swap,
      expiration: Schema.Union(Schema.Struct({ daysFromSend: Schema.Int }), Schema.Struct({ date: Timestamp }))
    }),
    notificationPolicy: Schema.Struct({
      sendingChannels: Schema.Array(SendingChannel),
      disableReminders: Schema.Boolean
    }),
    message: Schema.NullOr(Schema.String)
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

export class CampaignListV2 extends Schema.Class<CampaignListV2>("CampaignListV2")({
  results: Schema.Array(CampaignV2),
  skip: Schema.Int,
  limit: Schema.Int
}) {}

/** v2 pagination (spec "Versioning"): `skip` rows, then at most `limit` (1 to 100, default 20). */
export const defaultLimit = 20

/** A v2 list's query: the company (checked by the middleware), an account to narrow to, and the page. */
export const listParams = {
  companyId: Schema.optional(CompanyId),
  accountId: Schema.optional(HexId.annotations({ description: "Only this account's (404 when out of reach)" })),
  skip: Schema.optional(queryInt({ min: 0, max: Number.MAX_SAFE_INTEGER, description: "Rows to skip (default 0)" })),
  limit: Schema.optional(queryInt({ min: 1, max: 100, description: "Rows per page, 1 to 100 (default 20)" }))
}

const CampaignPath = Schema.Struct({ campaignId: HexId })

const read = { permission: "campaigns:read", rateClass: "administration:read" } as const

export class CampaignsV2Api extends HttpApiGroup.make("campaignsV2")
  .add(
    HttpApiEndpoint.post("create", "/campaigns")
      .setPayload(CreateCampaignV2)
      .addSuccess(CampaignV2, { status: 201 })
      .addError(lineError("v2", AccountNotFound))
      .addError(lineError("v2", BillingMethodNotFound))
      .addError(lineError("v2", ProductNotFound))
      .addError(lineError("v2", CollectionNotFound))
      .annotate(Operation, { permission: "campaigns:create", rateClass: "administration:write" })
      .annotate(OpenApi.Summary, "Create a campaign, charged to the account's default billing method")
  )
  .add(
    HttpApiEndpoint.get("list", "/campaigns")
      .setUrlParams(Schema.Struct(listParams))
      .addSuccess(CampaignListV2)
      .addError(lineError("v2", AccountNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "List the campaigns of the accounts the key reaches, newest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/campaigns/:campaignId")
      .setPath(CampaignPath)
      .addSuccess(CampaignV2)
      .addError(lineError("v2", CampaignNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "Retrieve a campaign")
  )
  .add(
    HttpApiEndpoint.patch("update", "/campaigns/:campaignId")
      .setPath(CampaignPath)
      .setPayload(UpdateCampaignV2)
      .addSuccess(CampaignV2)
      .addError(lineError("v2", CampaignNotFound))
      .addError(lineError("v2", ProductNotFound))
      .addError(lineError("v2", CollectionNotFound))
      .addError(lineError("v2", CampaignTransitionRefused))
      .addError(lineError("v2", CampaignArchived))
      .annotate(Operation, { permission: "campaigns:update", rateClass: "administration:write" })
      .annotate(OpenApi.Summary, "Change a campaign's name, status or customization")
  )
  .addError(lineError("v2", InvalidRequest))
  .prefix("/public-api/v2")
  .middleware(ApiKeyAuthV2)
  .annotate(OpenApi.Title, "Campaigns (v2)")
  .annotate(
    OpenApi.Description,
    "Campaigns, version 2: what a company's gifts are made from. Authenticated with `X-Api-Key`."
  ) {}
