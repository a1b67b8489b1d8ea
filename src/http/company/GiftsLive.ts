import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import type { GiftRecord } from "../../domain/company/Gifts.js"
import { Campaigns } from "../../services/company/Campaigns.js"
import { CompanyOrders } from "../../services/company/CompanyOrders.js"
import { Gifts } from "../../services/company/Gifts.js"
import { Recipients } from "../../services/company/Recipients.js"
import { Api } from "../Api.js"
import { type Caller, CurrentCaller } from "./ApiKeyAuth.js"
import { defaultLimit } from "./CampaignsApi.js"
import { canExpand, claimOf, expansionsOf, giftListQueryOf, giftRecipientOf, listScope } from "./requests.js"
import { expandedGiftV2, type GiftExpansion, onlyFields } from "./v2.js"

export const GiftsV2Live = HttpApiBuilder.group(Api, "giftsV2", (handlers) =>
  Effect.gen(function* () {
    const gifts = yield* Gifts
    const orders = yield* CompanyOrders
    const recipients = yield* Recipients
    const campaigns = yield* Campaigns

    /**
     * A gift as the caller reads it, with what `expand` asks for (allowed by `canExpand`): its order, then the
     * recipient and the campaign when asked, read in that order.
     */
    const present = (caller: Caller, expand: ReadonlyArray<GiftExpansion>) => (gift: GiftRecord) =>
      Effect.gen(function* () {
        const order = gift.orderId === null ? null : yield* orders.get(caller.scope, gift.orderId).pipe(Effect.orDie)
        const recipient = expand.includes("recipient")
          ? yield* recipients.get(caller.scope, gift.recipientId, { includeDeleted: true }).pipe(Effect.orDie)
          : undefined
        const campaign = expand.includes("campaign")
          ? yield* campaigns.get(caller.scope, gift.campaignId).pipe(Effect.orDie)
          : undefined
        return expandedGiftV2(gift, gifts.linkOf(gift), { order, expand, recipient, campaign }, caller.readModes)
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
              recipients: payload.recipients.map(giftRecipientOf)
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
          const rows = yield* gifts.page(scope, giftListQueryOf(urlParams, skip, limit))
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
          const { gift, order } = yield* gifts.order(
            { scope: caller.scope, account: caller.account, source: caller.requestSource },
            {
              campaignId: payload.campaignId,
              recipient: giftRecipientOf(payload.recipient),
              claim: claimOf(payload)
            }
          )
          return { orderId: order.id, giftId: gift.id, status: order.status }
        })
      )
  })
)
