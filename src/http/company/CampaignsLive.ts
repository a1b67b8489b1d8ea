import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import type { CampaignRecord } from "../../domain/company/Campaigns.js"
import type { AccountScope } from "../../domain/company/Company.js"
import { formatTimestamp } from "../../domain/company/Company.js"
import { Accounts } from "../../services/company/Accounts.js"
import { Campaigns, toMajor } from "../../services/company/Campaigns.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Api } from "../Api.js"
import { type Caller, CurrentCaller } from "./ApiKeyAuth.js"
import { defaultLimit } from "./CampaignsApi.js"

/**
 * A campaign as v2 shows it (docs/decisions/0045-v2-campaigns.md): budgets in major units, the gift's one id, its one
 * expiration.
 */
export const campaignV2 = (campaign: CampaignRecord) => ({
  id: campaign.id,
  name: campaign.name,
  status: campaign.status,
  type: campaign.type,
  source: campaign.source,
  accountId: campaign.accountId,
  billingMethodId: campaign.billingMethodId,
  customization: {
    giftProperties: {
      selectedGiftType: campaign.giftType,
      ...(campaign.productId === null ? {} : { productId: campaign.productId }),
      ...(campaign.collectionId === null ? {} : { collectionId: campaign.collectionId }),
      budget: { min: toMajor(campaign.budgetMin), max: toMajor(campaign.budgetMax) },
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

/**
 * The scope of a v2 list: the caller's, narrowed to the `accountId` query parameter when there is one (404
 * when the caller does not reach it), as docs/decisions/0033-scoping-and-masking.md has v2 narrow.
 */
export const listScope = (caller: Caller, accountId: string | undefined) =>
  Effect.gen(function* () {
    if (accountId === undefined) return caller.scope
    const account = yield* Effect.flatMap(Accounts, (accounts) => accounts.find(caller.scope, accountId))
    return yield* Effect.map(CompanyPolicy, (policy): AccountScope => policy.scopeOf(caller.key, Option.some(account)))
  })

export const CampaignsV2Live = HttpApiBuilder.group(Api, "campaignsV2", (handlers) =>
  Effect.gen(function* () {
    const campaigns = yield* Campaigns
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const { customization } = payload
          const created = yield* campaigns.create(
            { scope: caller.scope, account: caller.account, source: caller.requestSource },
            {
              name: payload.name,
              status: payload.status,
              accountId: payload.accountId,
              billingMethodId: payload.billingMethodId,
              giftProperties: customization.giftProperties,
              notificationPolicy: customization.notificationPolicy,
              message: customization.message
            }
          )
          return campaignV2(created)
        })
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const scope = yield* listScope(caller, urlParams.accountId)
          const skip = urlParams.skip ?? 0
          const limit = urlParams.limit ?? defaultLimit
          const rows = yield* campaigns.page(scope, { skip, limit })
          return { results: rows.map(campaignV2), skip, limit }
        })
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return campaignV2(yield* campaigns.get(caller.scope, path.campaignId))
        })
      )
      .handle("update", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const updated = yield* campaigns.update(caller.scope, path.campaignId, {
            name: payload.name,
            status: payload.status,
            giftProperties: payload.customization?.giftProperties,
            notificationPolicy: payload.customization?.notificationPolicy,
            message: payload.customization?.message
          })
          return campaignV2(updated)
        })
      )
  })
)
