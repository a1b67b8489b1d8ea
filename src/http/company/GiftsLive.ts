import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { formatTimestamp } from "../../domain/company/Company.js"
import type { GiftRecord, GiftStatus } from "../../domain/company/Gifts.js"
import { Accounts } from "../../services/company/Accounts.js"
import { toMajor } from "../../services/company/Campaigns.js"
import { type GiftClaim, Gifts } from "../../services/company/Gifts.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Api } from "../Api.js"
import { CurrentCaller } from "./ApiKeyAuth.js"
import { defaultLimit } from "./CampaignsApi.js"
import { listScope } from "./CampaignsLive.js"
import type { ClaimGiftV2 } from "./GiftsApi.js"

/** A gift as v2 shows it (DESIGN.md §4.12): its budget in major units, its link, no personal data. */
export const giftV2 = (gift: GiftRecord, link: string) => ({
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
  deliveryDetails: null,
  source: gift.source,
  createdAt: formatTimestamp(gift.createdAt),
  claimedAt: gift.claimedAt === null ? null : formatTimestamp(gift.claimedAt)
})

/** A v2 claim (`POST /v2/gifts/{id}/claim`, the gift page's form) as the service takes it. */
export const claimOf = (claim: typeof ClaimGiftV2.Type): GiftClaim => {
  const { orderRecipient: who } = claim
  return {
    variantId: claim.variantId.toLowerCase(),
    recipient: { firstName: who.firstName, lastName: who.lastName, email: who.email, phone: who.phone },
    address: {
      address1: who.address.addressLine1,
      address2: who.address.addressLine2,
      city: who.address.city,
      provinceCode: who.address.state,
      postalCode: who.address.zipcode,
      countryCode: who.country
    }
  }
}

const setOf = (text: string | undefined) =>
  (text ?? "")
    .split(",")
    .map((value) => value.trim())
    .filter((value) => value !== "")

export const GiftsV2Live = HttpApiBuilder.group(Api, "giftsV2", (handlers) =>
  Effect.gen(function* () {
    const gifts = yield* Gifts
    const accounts = yield* Accounts
    const policy = yield* CompanyPolicy
    const shown = (gift: GiftRecord) => giftV2(gift, gifts.linkOf(gift))
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const results = yield* gifts.create(
            { scope: caller.scope, account: caller.account, source: caller.requestSource },
            {
              campaignId: payload.campaignId,
              sendingMethod: payload.sendingMethod,
              recipients: payload.recipients.map((recipient) => ({
                firstname: recipient.firstname,
                lastname: recipient.lastname,
                email: recipient.email ?? null,
                phone: recipient.phone ?? null,
                externalId: recipient.externalId ?? null,
                key: recipient.key
              }))
            }
          )
          return {
            results: results.map((result) =>
              result.success
                ? { success: true as const, id: result.gift.id, key: result.gift.key, link: gifts.linkOf(result.gift) }
                : result
            )
          }
        })
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const scope = yield* listScope(caller, urlParams.accountId).pipe(
            Effect.provideService(Accounts, accounts),
            Effect.provideService(CompanyPolicy, policy)
          )
          const skip = urlParams.skip ?? 0
          const limit = urlParams.limit ?? defaultLimit
          const rows = yield* gifts.page(scope, {
            skip,
            limit,
            statuses: setOf(urlParams.statuses) as ReadonlyArray<GiftStatus>,
            campaignIds: setOf(urlParams.campaignIds),
            keys: setOf(urlParams.keys),
            createdBefore: urlParams.createdBefore === undefined ? undefined : new Date(urlParams.createdBefore),
            createdAfter: urlParams.createdAfter === undefined ? undefined : new Date(urlParams.createdAfter)
          })
          return { results: rows.map(shown), skip, limit }
        })
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => Effect.map(gifts.get(caller.scope, path.giftId), shown))
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentCaller, (caller) => Effect.map(gifts.update(caller.scope, path.giftId, payload), shown))
      )
      .handle("cancel", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => Effect.map(gifts.cancel(caller.scope, path.giftId), shown))
      )
      .handle("expire", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => Effect.map(gifts.expire(caller.scope, path.giftId), shown))
      )
      .handle("claim", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const gift = yield* gifts.get(caller.scope, path.giftId)
          const { order } = yield* gifts.claim(gift, claimOf(payload))
          return { orderId: order.id, status: order.status }
        })
      )
      .handle("order", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const { recipient } = payload
          const { gift, order } = yield* gifts.order(
            { scope: caller.scope, account: caller.account, source: caller.requestSource },
            {
              campaignId: payload.campaignId,
              recipient: {
                firstname: recipient.firstname,
                lastname: recipient.lastname,
                email: recipient.email ?? null,
                phone: recipient.phone ?? null,
                externalId: recipient.externalId ?? null,
                key: recipient.key
              },
              claim: claimOf(payload)
            }
          )
          return { orderId: order.id, giftId: gift.id, status: order.status }
        })
      )
  })
)
