import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { formatTimestamp } from "../../domain/company/Company.js"
import { PermissionDenied } from "../../domain/company/Errors.js"
import type { GiftRecord, GiftStatus } from "../../domain/company/Gifts.js"
import { type CompanyOrderRecord, fulfillmentStatusOf } from "../../domain/company/Orders.js"
import { Campaigns, toMajor } from "../../services/company/Campaigns.js"
import { CompanyOrders } from "../../services/company/CompanyOrders.js"
import { type GiftClaim, Gifts } from "../../services/company/Gifts.js"
import { readMode } from "../../services/company/Masking.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Recipients } from "../../services/company/Recipients.js"
import { Api } from "../Api.js"
import { type Caller, CurrentCaller } from "./ApiKeyAuth.js"
import { defaultLimit } from "./CampaignsApi.js"
import { campaignV2, listScope } from "./CampaignsLive.js"
import { type ClaimGiftV2, expansionPermissions, giftExpansions } from "./GiftsApi.js"
import { recipientV2 } from "./RecipientsLive.js"
import { orderV3 } from "./v3.js"

/**
 * A gift as v2 shows it (docs/decisions/0047-v2-gifts.md): its budget in major units, its link, its order's shipment.
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
  source: gift.source,
  createdAt: formatTimestamp(gift.createdAt),
  claimedAt: gift.claimedAt === null ? null : formatTimestamp(gift.claimedAt)
})

type GiftExpansion = (typeof giftExpansions)[number]

/** A gift narrowed to `fields` (checked by the API), with its id and what `expand[]` added; whole without. */
const onlyFields =
  (fields: string | undefined) =>
  <G extends { readonly id: string }>(gift: G): { readonly id: string } & Partial<G> => {
    if (fields === undefined) return gift
    const wanted = new Set<string>(["id", ...giftExpansions, ...fields.split(",").map((name) => name.trim())])
    const kept = Object.fromEntries(Object.entries(gift).filter(([name]) => wanted.has(name))) as Partial<G>
    return { ...kept, id: gift.id }
  }

/** `expand[]` as given: one value or several. */
const expansionsOf = (
  expand: GiftExpansion | ReadonlyArray<GiftExpansion> | undefined
): ReadonlyArray<GiftExpansion> => (expand === undefined ? [] : typeof expand === "string" ? [expand] : expand)

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
    const orders = yield* CompanyOrders
    const recipients = yield* Recipients
    const campaigns = yield* Campaigns
    const policy = yield* CompanyPolicy

    /** Each expansion asked for needs the expanded resource's read permission (403 otherwise). */
    const canExpand = (caller: Caller, expand: ReadonlyArray<GiftExpansion>) =>
      Effect.forEach(
        expand,
        (expansion) => {
          const allowed: Effect.Effect<void, PermissionDenied> = policy.canPerform(
            caller.key,
            expansionPermissions[expansion]
          )
          return allowed.pipe(
            Effect.mapError(
              (denied) =>
                new PermissionDenied({
                  message: `expand[]=${expansion} needs the ${denied.permission} permission, which this API key lacks.`,
                  permission: denied.permission
                })
            )
          )
        },
        { discard: true }
      )

    /** How the caller reads a resource's personal data: its own permission's mode (checked by `canExpand`). */
    const modeOf = (caller: Caller, domain: "orders" | "recipients") =>
      readMode(caller.key.permissions, domain) === "unmasked" ? "unmasked" : "masked"

    /**
     * A gift as the caller reads it, with what `expand` asks for (allowed by `canExpand`): the recipient and
     * the order each masked unless the key reads that resource unmasked, the campaign.
     */
    const present = (caller: Caller, expand: ReadonlyArray<GiftExpansion>) => (gift: GiftRecord) =>
      Effect.gen(function* () {
        const order = gift.orderId === null ? null : yield* orders.get(caller.scope, gift.orderId).pipe(Effect.orDie)
        return {
          ...giftV2(gift, gifts.linkOf(gift), order),
          ...(expand.includes("recipient")
            ? {
                recipient: recipientV2(
                  yield* recipients.get(caller.scope, gift.recipientId, { includeDeleted: true }).pipe(Effect.orDie),
                  modeOf(caller, "recipients")
                )
              }
            : {}),
          ...(expand.includes("campaign")
            ? { campaign: campaignV2(yield* campaigns.get(caller.scope, gift.campaignId).pipe(Effect.orDie)) }
            : {}),
          ...(expand.includes("orders")
            ? { orders: order === null ? [] : [orderV3(order, modeOf(caller, "orders"))] }
            : {})
        }
      })
    /** The gift as read back after a change: no expansions. */
    const shown = (gift: GiftRecord) => Effect.flatMap(CurrentCaller, (caller) => present(caller, [])(gift))
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
          const scope = yield* listScope(caller, urlParams.accountId)
          const expand = expansionsOf(urlParams["expand[]"])
          yield* canExpand(caller, expand)
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
          const expanded = yield* Effect.forEach(rows, (gift) =>
            Effect.map(present(caller, expand)(gift), onlyFields(urlParams.fields))
          )
          return { results: expanded, skip, limit }
        })
      )
      .handle("get", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const expand = expansionsOf(urlParams["expand[]"])
          yield* canExpand(caller, expand)
          const gift = yield* gifts.get(caller.scope, path.giftId)
          return onlyFields(urlParams.fields)(yield* present(caller, expand)(gift))
        })
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentCaller, (caller) =>
          Effect.flatMap(gifts.update(caller.scope, path.giftId, payload), shown)
        )
      )
      .handle("cancel", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => Effect.flatMap(gifts.cancel(caller.scope, path.giftId), shown))
      )
      .handle("expire", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => Effect.flatMap(gifts.expire(caller.scope, path.giftId), shown))
      )
  })
)

export const GiftClaimsV2Live = HttpApiBuilder.group(Api, "giftClaimsV2", (handlers) =>
  Effect.gen(function* () {
    const gifts = yield* Gifts
    return handlers
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
