import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Accounts } from "../../services/company/Accounts.js"
import { KeyManagement } from "../../services/company/KeyManagement.js"
import { KeyStore } from "../../services/company/KeyStore.js"
import { Api } from "../Api.js"
import { CurrentCaller } from "./ApiKeyAuth.js"
import { apiKeysV3Query } from "./ApiKeysApi.js"
import { apiKeySummaryV2, apiKeyV2 } from "./v2.js"
import { apiKeyV3, numberedList, rotatedApiKeyV3 } from "./v3.js"

export const ApiKeysV2Live = HttpApiBuilder.group(Api, "apiKeysV2", (handlers) =>
  Effect.gen(function* () {
    const keys = yield* KeyStore
    const management = yield* KeyManagement
    const accounts = yield* Accounts
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const { record, apiKey } = yield* management.create(caller.key, {
            ...payload,
            requestSource: caller.requestSource
          })
          return { ...apiKeyV2(record), apiKey }
        }).pipe(Effect.catchTag("ApiKeyNotFound", Effect.die))
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          // Each account named must be one the caller reaches (404 otherwise), as v2's accountId is elsewhere.
          const named = yield* Effect.forEach(urlParams.accountIds ?? [], (accountId) =>
            accounts.find(caller.scope, accountId)
          )
          const found = yield* keys.list(
            caller.key.companyId,
            caller.key.environment,
            named.map((account) => account.id)
          )
          return { results: found.map(apiKeySummaryV2) }
        })
      )
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => management.revoke(caller.key, path.apiKeyId))
      )
  })
)

export const ApiKeysV3Live = HttpApiBuilder.group(Api, "apiKeysV3", (handlers) =>
  Effect.gen(function* () {
    const keys = yield* KeyStore
    const management = yield* KeyManagement
    return handlers
      .handle("list", () =>
        Effect.flatMap(CurrentCaller, (caller) =>
          numberedList(
            apiKeysV3Query,
            (query) => keys.page(caller.key.companyId, caller.key.environment, query),
            apiKeyV3
          )
        )
      )
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const { rotation, ...body } = payload
          const rotate =
            rotation === undefined
              ? undefined
              : { apiKeyId: rotation.apiKeyId, graceSeconds: rotation.expiresInHours * 3600 }
          const { record, apiKey, rotated } = yield* management.create(
            caller.key,
            { ...body, requestSource: caller.requestSource },
            rotate
          )
          return { data: { ...apiKeyV3(record), apiKey, rotatedApiKey: rotatedApiKeyV3(rotated) } }
        })
      )
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => management.revoke(caller.key, path.apiKeyId))
      )
  })
)
