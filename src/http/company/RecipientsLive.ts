import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Recipients } from "../../services/company/Recipients.js"
import { Api } from "../Api.js"
import { CurrentCaller } from "./ApiKeyAuth.js"
import { defaultLimit } from "./CampaignsApi.js"
import { listScope } from "./requests.js"
import { recipientV2 } from "./v2.js"

export const RecipientsV2Live = HttpApiBuilder.group(Api, "recipientsV2", (handlers) =>
  Effect.gen(function* () {
    const recipients = yield* Recipients
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const created = yield* recipients.create(
            { scope: caller.scope, account: caller.account, source: caller.requestSource },
            {
              firstName: payload.firstName,
              lastName: payload.lastName,
              email: payload.email ?? null,
              mobilePhone: payload.mobilePhone ?? null,
              country: payload.country ?? null,
              externalId: payload.externalId ?? null,
              accountIds: payload.accounts ?? []
            }
          )
          // Creating needs `recipients:create` only; the answer is masked unless the key reads unmasked.
          return recipientV2(created, caller.readModes.recipients)
        })
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const scope = yield* listScope(caller, urlParams.accountId)
          const skip = urlParams.skip ?? 0
          const limit = urlParams.limit ?? defaultLimit
          const rows = yield* recipients.page(scope, {
            skip,
            limit,
            externalId: urlParams.externalId,
            email: urlParams.email
          })
          return { results: rows.map((row) => recipientV2(row, caller.readModes.recipients)), skip, limit }
        })
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return recipientV2(yield* recipients.get(caller.scope, path.recipientId), caller.readModes.recipients)
        })
      )
      .handle("update", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const { accounts: accountIds, ...fields } = payload
          const updated = yield* recipients.update(caller.scope, path.recipientId, { ...fields, accountIds })
          return recipientV2(updated, caller.readModes.recipients)
        })
      )
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => recipients.remove(caller.scope, path.recipientId))
      )
  })
)
