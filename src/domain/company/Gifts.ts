import { Schema } from "effect"
import { PhoneInput } from "../catalog/Address.js"
import { Environment, RequestSource } from "./Company.js"
import { ExternalId, RecipientEmail } from "./Recipients.js"

/**
 * Gifts, version 2 (docs/decisions/0047-v2-gifts.md, docs/company-api.md "Gifts"): one recipient's gift from one
 * campaign, sent as a link the recipient opens to choose within the budget and claim. While it is open, the budget's
 * maximum is held on the campaign's billing method; claiming, expiring or cancelling it lets that go.
 */

export const GiftStatus = Schema.Literal("unopened", "opened", "unwrapped", "claimed", "expired", "cancelled")
export type GiftStatus = typeof GiftStatus.Type

/** The statuses of a gift that can still be claimed (and be cancelled, expire or change). */
export const openGiftStatuses: ReadonlyArray<GiftStatus> = ["unopened", "opened", "unwrapped"]

export const isOpenGift = (status: GiftStatus) => openGiftStatuses.includes(status)

export const SendingMethod = Schema.Literal("email", "sms", "link")
export type SendingMethod = typeof SendingMethod.Type

/** Recipients in one `POST /v2/gifts`. */
export const maxGiftsPerRequest = 100

export const GiftRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  environment: Environment,
  campaignId: Schema.String,
  accountId: Schema.String,
  billingMethodId: Schema.String,
  recipientId: Schema.String,
  key: Schema.String,
  status: GiftStatus,
  token: Schema.String,
  /** Minor units of `currency`, copied from the campaign when the gift was made. */
  budgetMin: Schema.Int,
  budgetMax: Schema.Int,
  currency: Schema.String,
  /** What the gift holds on the billing method's ledger now: `budgetMax` while open, then 0. */
  reserved: Schema.Int,
  sendingMethod: SendingMethod,
  metadata: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  orderId: Schema.NullOr(Schema.String),
  source: Schema.NullOr(RequestSource),
  expiresAt: Schema.DateFromSelf,
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf,
  openedAt: Schema.NullOr(Schema.DateFromSelf),
  unwrappedAt: Schema.NullOr(Schema.DateFromSelf),
  claimedAt: Schema.NullOr(Schema.DateFromSelf),
  closedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type GiftRecord = typeof GiftRecord.Type

/** A gift with its recipient's name and addresses as stored (the dashboard's list; the reader masks them). */
export const GiftWithRecipient = Schema.Struct({
  ...GiftRecord.fields,
  recipientFirstName: Schema.NullOr(Schema.String),
  recipientLastName: Schema.NullOr(Schema.String),
  recipientEmail: Schema.NullOr(Schema.String),
  recipientMobilePhone: Schema.NullOr(Schema.String)
})
export type GiftWithRecipient = typeof GiftWithRecipient.Type

const GiftName = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))

/** The company's key of a gift: unique in its campaign, so sending the same key again finds the gift. */
export const GiftKey = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(120)).annotations({
  description: "The company's key for this gift, unique in the campaign: sending it again finds the gift"
})

/**
 * One recipient of `POST /v2/gifts`, with its bounds: the one definition the API and the dashboard's gift upload
 * both judge a recipient by.
 */
export const GiftRecipient = Schema.Struct({
  firstname: GiftName,
  lastname: GiftName,
  email: Schema.optional(RecipientEmail),
  phone: Schema.optional(PhoneInput),
  externalId: Schema.optional(ExternalId),
  key: GiftKey
})

/** Who a gift is for, as `POST /v2/gifts` names them (v2's lower-case `firstname`/`lastname`). */
export interface GiftRecipientInput {
  readonly firstname: string
  readonly lastname: string
  readonly email: string | null
  readonly phone: string | null
  readonly externalId: string | null
  readonly key: string
  /** Where the recipient lives, when the sender says (the dashboard's upload does; the API does not). */
  readonly country?: string | null
}

/** One recipient's outcome of `POST /v2/gifts`: a gift (new or found by its key), or why not. */
export type GiftResult =
  | { readonly success: true; readonly gift: GiftRecord; readonly created: boolean }
  | { readonly success: false; readonly key: string; readonly errorCode: string; readonly message: string }

/**
 * How far the gifts sent in a period went (docs/decisions/0063-dashboard-home-charts.md): cumulative stages, each
 * a part of the one before (`sent` ⊇ `opened` ⊇ `claimed` ⊇ `delivered`), and the gifts that ended unclaimed.
 */
export const GiftFunnel = Schema.Struct({
  sent: Schema.Int,
  opened: Schema.Int,
  claimed: Schema.Int,
  delivered: Schema.Int,
  expired: Schema.Int,
  cancelled: Schema.Int
})
export type GiftFunnel = typeof GiftFunnel.Type
