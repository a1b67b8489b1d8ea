import { Schema } from "effect"
import { Environment, RequestSource } from "./Company.js"

/**
 * Campaigns, version 2 (docs/decisions/0045-v2-campaigns.md, docs/company-api.md "Campaigns"): what a company's gifts
 * are made from. A campaign belongs to one account and is charged to a billing method of it (the account's default
 * when it was made); its gift properties say what a recipient may choose (one product, or any product of a
 * collection), up to what budget, and until when; its notification policy how the gift reaches them.
 */

export const CampaignStatus = Schema.Literal("draft", "active", "paused", "completed", "archived")
export type CampaignStatus = typeof CampaignStatus.Type

export const GiftType = Schema.Literal("product", "collection")
export type GiftType = typeof GiftType.Type

/**
 * Whether the recipient of a product gift may take another product instead, landed within the same budget in their
 * country (docs/decisions/0072-swapping-a-gift-within-budget.md). A collection's recipient already chooses: swapping
 * is for product gifts only.
 */
export const SwapSetting = Schema.Literal("disabled", "within_budget")
export type SwapSetting = typeof SwapSetting.Type

/** The swap a campaign has when its gift type is set and `swap` is not given. */
export const defaultSwapOf = (giftType: GiftType): SwapSetting =>
  giftType === "product" ? "within_budget" : "disabled"

/** Whether gifts of the campaign may be swapped on the gift page (and claimed for another product). */
export const allowsSwap = (campaign: { readonly giftType: GiftType; readonly swap: SwapSetting }) =>
  campaign.giftType === "product" && campaign.swap === "within_budget"

/** How many other products the gift page offers a swapping recipient at most. */
export const swapChoicesShown = 6

export const SendingChannel = Schema.Literal("email", "sms", "link")
export type SendingChannel = typeof SendingChannel.Type

/** The statuses a campaign may move to from each status; staying put is always allowed. */
export const campaignTransitions: Readonly<Record<CampaignStatus, ReadonlyArray<CampaignStatus>>> = {
  draft: ["active", "archived"],
  active: ["paused", "completed", "archived"],
  paused: ["active", "completed", "archived"],
  completed: ["archived"],
  archived: []
}

export const canMoveCampaign = (from: CampaignStatus, to: CampaignStatus) =>
  from === to || campaignTransitions[from].includes(to)

/** The budget bounds of the v2 line, in major units of the billing currency (docs/decisions/0045-v2-campaigns.md). */
export const minBudget = 1
export const maxBudget = 20_000

/** A new campaign hides its recipients' street lines and postal codes unless told otherwise. */
export const defaultHideRecipientAddress = true

/** The expiration bounds: 1 to 365 days after sending, or a date at most 365 days ahead. */
export const maxExpirationDays = 365

/**
 * A stored campaign as the services see it. Budgets are in minor units of `currency` (the billing currency,
 * USD): `budgetMin`/`budgetMax` 100–2,000,000 cents for the 1–20000 of the API. Exactly one of
 * `expirationDays` (counted from when a gift is sent) and `expirationDate` is set, and exactly one of
 * `productId` (`giftType` product) and `collectionId` (`giftType` collection).
 */
export const CampaignRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  environment: Environment,
  accountId: Schema.String,
  billingMethodId: Schema.String,
  name: Schema.String,
  status: CampaignStatus,
  type: Schema.Literal("oneOffs"),
  giftType: GiftType,
  productId: Schema.NullOr(Schema.String),
  collectionId: Schema.NullOr(Schema.String),
  budgetMin: Schema.Int,
  budgetMax: Schema.Int,
  swap: SwapSetting,
  currency: Schema.String,
  expirationDays: Schema.NullOr(Schema.Int),
  expirationDate: Schema.NullOr(Schema.DateFromSelf),
  sendingChannels: Schema.Array(SendingChannel),
  disableReminders: Schema.Boolean,
  message: Schema.NullOr(Schema.String),
  /**
   * Whether the company sees only the city, region and country of its recipients' addresses
   * (docs/decisions/0071-recipient-address-privacy.md): on unless the campaign turns it off.
   */
  hideRecipientAddress: Schema.Boolean,
  source: Schema.NullOr(RequestSource),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf
})
export type CampaignRecord = typeof CampaignRecord.Type

const dayMillis = 24 * 60 * 60 * 1000

/**
 * Why `at` cannot be an expiry date set at `now`, or `undefined` when it can: a campaign's date and a gift's
 * share the bound, in the future and at most 365 days ahead, so no gift holds its budget longer.
 */
export const expiryDateProblem = (at: Date, now: Date): string | undefined =>
  at.getTime() <= now.getTime()
    ? "The expiration date must be in the future."
    : at.getTime() > now.getTime() + maxExpirationDays * dayMillis
      ? `The expiration date must be within ${maxExpirationDays} days.`
      : undefined

/** When a gift of the campaign sent at `sentAt` expires: `expirationDays` after sending, or the campaign's date. */
export const giftExpirationOf = (campaign: CampaignRecord, sentAt: Date): Date =>
  campaign.expirationDate ?? new Date(sentAt.getTime() + (campaign.expirationDays ?? maxExpirationDays) * dayMillis)

/** Whether gifts may be sent from the campaign now. */
export const sendsGifts = (campaign: CampaignRecord) => campaign.status === "active"
