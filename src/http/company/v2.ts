import type { CampaignRecord } from "../../domain/company/Campaigns.js"
import { type ApiKeyRecord, formatTimestamp } from "../../domain/company/Company.js"
import { type GiftRecord, thankYouNoteOf } from "../../domain/company/Gifts.js"
import { type CompanyOrderRecord, fulfillmentStatusOf } from "../../domain/company/Orders.js"
import type { RecipientRecord } from "../../domain/company/Recipients.js"
import { toMajor } from "../../services/company/Campaigns.js"
import { maskEmail, maskName, maskPhone } from "../../services/company/Masking.js"
import type { ReadModes } from "./ApiKeyAuth.js"
import { giftExpansions } from "./GiftsApi.js"
import { apiKeyV3, orderV3, swappedFromOf } from "./v3.js"

/**
 * The company API's version 2 presentation of the company context's records (docs/company-api.md): bare
 * resources, `{results, skip, limit}` lists, budgets in major units of the billing currency.
 */

/** An API key in a v2 list: never its permissions or secret. */
export const apiKeySummaryV2 = (key: ApiKeyRecord) => ({
  id: key.id,
  expirationDate: formatTimestamp(key.expiresAt),
  createdAt: formatTimestamp(key.createdAt),
  enforceMtls: key.enforceMtls,
  name: key.name
})

/** An API key whole, as v3 shows it too (never its secret). */
export const apiKeyV2 = apiKeyV3

/** A campaign as v2 shows it (docs/decisions/0045-v2-campaigns.md): budgets in major units, the gift's one id, its one expiration. */
export const campaignV2 = (campaign: CampaignRecord) => ({
  id: campaign.id,
  name: campaign.name,
  status: campaign.status,
  type: campaign.type,
  source: campaign.source,
  accountId: campaign.accountId,
  billingMethodId: campaign.billingMethodId,
  hideRecipientAddress: campaign.hideRecipientAddress,
  customization: {
    giftProperties: {
      selectedGiftType: campaign.giftType,
      ...(campaign.productId === null ? {} : { productId: campaign.productId }),
      ...(campaign.collectionId === null ? {} : { collectionId: campaign.collectionId }),
      budget: { min: toMajor(campaign.budgetMin), max: toMajor(campaign.budgetMax) },
      swap: campaign.swap,
      expiration:
        campaign.expirationDate === null
          ? { daysFromSend: campaign.expirationDays ?? 0 }
          : { date: formatTimestamp(campaign.expirationDate) }
    },
    notificationPolicy: {
      sendingChannels: campaign.sendingChannels,
      disableReminders: campaign.disableReminders
    },
    message: campaign.message
  },
  createdAt: formatTimestamp(campaign.createdAt),
  updatedAt: formatTimestamp(campaign.updatedAt)
})

const maskedOr = (value: string | null, mask: ((value: string) => string) | undefined) =>
  value === null ? null : mask === undefined ? value : mask(value)

/**
 * A recipient as v2 shows it (docs/decisions/0046-v2-recipients.md): names, e-mail and phone masked unless `mode` is unmasked. A deleted recipient
 * (never served by the recipients routes, but named by gifts) shows empty names.
 */
export const recipientV2 = (recipient: RecipientRecord, mode: "masked" | "unmasked") => {
  const masked = mode === "masked"
  return {
    id: recipient.id,
    firstName: maskedOr(recipient.firstName, masked ? maskName : undefined) ?? "",
    lastName: maskedOr(recipient.lastName, masked ? maskName : undefined) ?? "",
    email: maskedOr(recipient.email, masked ? maskEmail : undefined),
    mobilePhone: maskedOr(recipient.mobilePhone, masked ? maskPhone : undefined),
    country: recipient.country,
    externalId: recipient.externalId,
    accounts: recipient.accountIds,
    source: recipient.source,
    createdAt: formatTimestamp(recipient.createdAt),
    updatedAt: formatTimestamp(recipient.updatedAt)
  }
}

/** A gift's thank-you note as v2 shows it (docs/decisions/0070-gift-thank-you-notes.md), in every read mode. */
const thankYouNoteV2 = (gift: GiftRecord) => {
  const note = thankYouNoteOf(gift)
  return note === null ? null : { message: note.message, createdAt: formatTimestamp(note.createdAt) }
}

/**
 * A gift as v2 shows it (docs/decisions/0047-v2-gifts.md): its budget in major units, its link, its order's shipment,
 * its thank-you note.
 */
export const giftV2 = (gift: GiftRecord, link: string, order: CompanyOrderRecord | null) => ({
  id: gift.id,
  campaignId: gift.campaignId,
  accountId: gift.accountId,
  recipientId: gift.recipientId,
  key: gift.key,
  status: gift.status,
  link,
  budget: { min: toMajor(gift.budgetMin), max: toMajor(gift.budgetMax) },
  expirationDate: formatTimestamp(gift.expiresAt),
  sendingMethod: gift.sendingMethod,
  metadata: gift.metadata,
  orderId: gift.orderId,
  deliveryDetails:
    order === null
      ? null
      : {
          status: order.shipmentStatus,
          fulfillmentStatus: fulfillmentStatusOf(order.shipmentStatus),
          countryCode: order.countryCode,
          carrier: order.carrier,
          trackingNumber: order.trackingNumber,
          trackingUrl: order.trackingUrl
        },
  swappedFrom: order === null ? null : swappedFromOf(order),
  thankYouNote: thankYouNoteV2(gift),
  source: gift.source,
  createdAt: formatTimestamp(gift.createdAt),
  claimedAt: gift.claimedAt === null ? null : formatTimestamp(gift.claimedAt)
})

export type GiftExpansion = (typeof giftExpansions)[number]

/** What a gift read shows beside the gift: its order, and the resources `expand[]` asked for, read. */
export interface GiftExpanded {
  readonly order: CompanyOrderRecord | null
  readonly expand: ReadonlyArray<GiftExpansion>
  readonly recipient: RecipientRecord | undefined
  readonly campaign: CampaignRecord | undefined
}

/**
 * A gift with what `expand[]` asked for: the recipient and the order each in the caller's read mode of that
 * resource, the campaign.
 */
export const expandedGiftV2 = (gift: GiftRecord, link: string, expanded: GiftExpanded, modes: ReadModes) => {
  const { order, expand, recipient, campaign } = expanded
  return {
    ...giftV2(gift, link, order),
    ...(expand.includes("recipient") && recipient !== undefined
      ? { recipient: recipientV2(recipient, modes.recipients) }
      : {}),
    ...(expand.includes("campaign") && campaign !== undefined ? { campaign: campaignV2(campaign) } : {}),
    ...(expand.includes("orders") ? { orders: order === null ? [] : [orderV3(order, modes.orders)] } : {})
  }
}

/** A gift narrowed to `fields` (checked by the API), with its id and what `expand[]` added; whole without. */
export const onlyFields =
  (fields: string | undefined) =>
  <G extends { readonly id: string }>(gift: G): { readonly id: string } & Partial<G> => {
    if (fields === undefined) return gift
    const wanted = new Set<string>(["id", ...giftExpansions, ...fields.split(",").map((name) => name.trim())])
    const kept = Object.fromEntries(Object.entries(gift).filter(([name]) => wanted.has(name))) as Partial<G>
    return { ...kept, id: gift.id }
  }
