import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import type { AccountsAccess, Permission } from "../../domain/company/Company.js"
import { Accounts } from "../../services/company/Accounts.js"
import { KeyStore } from "../../services/company/KeyStore.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Api } from "../Api.js"
import { type Caller, CurrentCaller } from "./ApiKeyAuth.js"
import { apiKeysV3Query } from "./ApiKeysApi.js"
import { apiKeySummaryV2, apiKeyV2 } from "./v2.js"
import { apiKeyV3, numberedList, rotatedApiKeyV3 } from "./v3.js"

interface CreateBody {
  readonly name: string
  readonly expirationInDays: number
  readonly enforceMtls: boolean
  readonly permissions: ReadonlyArray<Permission>
  readonly accountsAccess: AccountsAccess
}

/**
 * A new key for the caller's company and environment, rotating out `rotate.apiKeyId` if given; both keys
 * within the caller's reach (`CompanyPolicy.canManageKey`).
 */
const createFor = (caller: Caller, body: CreateBody, rotate?: { apiKeyId: string; graceSeconds: number }) =>
  Effect.gen(function* () {
    const policy = yield* CompanyPolicy
    yield* policy.canManageKey(caller.key, body, "create")
    const keys = yield* KeyStore
    return yield* keys.create({
      companyId: caller.key.companyId,
      environment: caller.key.environment,
      name: body.name,
      expirationInDays: body.expirationInDays,
      enforceMtls: body.enforceMtls,
      permissions: body.permissions,
      accountsAccess: body.accountsAccess,
      requestSource: caller.requestSource,
      rotate:
        rotate === undefined ? undefined : { ...rotate, guard: (old) => policy.canManageKey(caller.key, old, "rotate") }
    })
  })

/** Revokes a key of the caller's environment within the caller's reach (itself included). */
const revokeFor = (caller: Caller, apiKeyId: string) =>
  Effect.gen(function* () {
    const policy = yield* CompanyPolicy
    const keys = yield* KeyStore
    yield* keys.revoke(caller.key.companyId, apiKeyId, {
      environment: caller.key.environment,
      guard: (key) => policy.canManageKey(caller.key, key, "revoke")
    })
  })

export const ApiKeysV2Live = HttpApiBuilder.group(Api, "apiKeysV2", (handlers) =>
  Effect.gen(function* () {
    const keys = yield* KeyStore
    const accounts = yield* Accounts
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const { record, apiKey } = yield* createFor(caller, payload).pipe(Effect.provideService(KeyStore, keys))
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
        Effect.flatMap(CurrentCaller, (caller) => revokeFor(caller, path.apiKeyId)).pipe(
          Effect.provideService(KeyStore, keys)
        )
      )
  })
)

export const ApiKeysV3Live = HttpApiBuilder.group(Api, "apiKeysV3", (handlers) =>
  Effect.gen(function* () {
    const keys = yield* KeyStore
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
          const { record, apiKey, rotated } = yield* createFor(caller, body, rotate).pipe(
            Effect.provideService(KeyStore, keys)
          )
          return { data: { ...apiKeyV3(record), apiKey, rotatedApiKey: rotatedApiKeyV3(rotated) } }
        })
      )
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => revokeFor(caller, path.apiKeyId)).pipe(
          Effect.provideService(KeyStore, keys)
        )
      )
  })
)
