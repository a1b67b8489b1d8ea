import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Campaigns } from "../../services/company/Campaigns.js"
import { Api } from "../Api.js"
import { CurrentCaller } from "./ApiKeyAuth.js"
import { defaultLimit } from "./CampaignsApi.js"
import { listScope } from "./requests.js"
import { campaignV2 } from "./v2.js"

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
              message: customization.message,
              hideRecipientAddress: payload.hideRecipientAddress
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
            message: payload.customization?.message,
            hideRecipientAddress: payload.hideRecipientAddress
          })
          return campaignV2(updated)
        })
      )
  })
)
