import { Effect } from "effect"
import type { AccountsAccess, Permission, Principal, RequestSource } from "../../domain/company/Company.js"
import { KeyStore } from "./KeyStore.js"
import { CompanyPolicy } from "./Policy.js"

/**
 * API keys as a principal manages them: an API key through the API, a member through the dashboard. Both are
 * held to the same rule (`CompanyPolicy.canManageKey`): a key made, rotated out or revoked reaches no further
 * than the principal, in the principal's environment.
 */

export interface NewKey {
  readonly name: string
  readonly expirationInDays: number
  readonly enforceMtls: boolean
  readonly permissions: ReadonlyArray<Permission>
  readonly accountsAccess: AccountsAccess
  readonly requestSource: RequestSource | null
}

export class KeyManagement extends Effect.Service<KeyManagement>()("KeyManagement", {
  dependencies: [KeyStore.Default, CompanyPolicy.Default],
  effect: Effect.gen(function* () {
    const keys = yield* KeyStore
    const policy = yield* CompanyPolicy

    /** A new key for the principal's company and environment, rotating out `rotate.apiKeyId` if given. */
    const create = Effect.fn("KeyManagement.create")(function* (
      principal: Principal,
      key: NewKey,
      rotate?: { readonly apiKeyId: string; readonly graceSeconds: number }
    ) {
      yield* policy.canManageKey(principal, key, "create")
      return yield* keys.create({
        companyId: principal.companyId,
        environment: principal.environment,
        name: key.name,
        expirationInDays: key.expirationInDays,
        enforceMtls: key.enforceMtls,
        permissions: key.permissions,
        accountsAccess: key.accountsAccess,
        requestSource: key.requestSource,
        rotate:
          rotate === undefined
            ? undefined
            : { ...rotate, guard: (old) => policy.canManageKey(principal, old, "rotate") }
      })
    })

    /** Revokes a key of the principal's environment (a key may always revoke itself). */
    const revoke = Effect.fn("KeyManagement.revoke")((principal: Principal, apiKeyId: string) =>
      keys.revoke(principal.companyId, apiKeyId, {
        environment: principal.environment,
        guard: (key) => policy.canManageKey(principal, key, "revoke")
      })
    )

    return { create, revoke } as const
  })
}) {}
