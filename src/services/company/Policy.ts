import { Effect, Option } from "effect"
import type { Account, AccountScope, ApiKeyRecord, Environment, Permission } from "../../domain/company/Company.js"
import {
  AccountNotFound,
  AccountsAccessDenied,
  CompanyMismatch,
  EnvironmentMismatch,
  PermissionDenied
} from "../../domain/company/Errors.js"
import { Companies } from "./Companies.js"

/**
 * Who may do what on the company API (docs/decisions/0033-scoping-and-masking.md, docs/permissions.md), in one place.
 * Every company request passes these checks in the API-key middleware, and a handler gets the accounts it may touch
 * only as an `AccountScope` made here, so no company query can forget the caller's scope.
 */

export class CompanyPolicy extends Effect.Service<CompanyPolicy>()("CompanyPolicy", {
  dependencies: [Companies.Default],
  effect: Effect.gen(function* () {
    const companies = yield* Companies

    /** The operation's permission, or one of its permissions (`null`: any valid key of the company). */
    const canPerform = (key: ApiKeyRecord, permission: Permission | ReadonlyArray<Permission> | null) => {
      if (permission === null) return Effect.void
      const anyOf: ReadonlyArray<Permission> = typeof permission === "string" ? [permission] : permission
      const needed = anyOf.join(" or ")
      return anyOf.some((p) => key.permissions.includes(p))
        ? Effect.void
        : Effect.fail(
            new PermissionDenied({ message: `This API key lacks the ${needed} permission.`, permission: needed })
          )
    }

    /**
     * A key creates, rotates or revokes only keys that reach no further than itself: their permissions and
     * their accounts a subset of its own. Otherwise a key limited to some accounts could mint one for all
     * of them, or a key without permissions revoke the admin's. A key is within its own reach, so it can
     * always revoke itself.
     */
    const canManageKey = (
      key: ApiKeyRecord,
      target: Pick<ApiKeyRecord, "permissions" | "accountsAccess">,
      action: "create" | "rotate" | "revoke"
    ) => {
      const missing = target.permissions.find((permission) => !key.permissions.includes(permission))
      if (missing !== undefined) {
        return Effect.fail(
          new PermissionDenied({
            message: `This API key cannot ${action} a key holding ${missing}, a permission it does not hold.`,
            permission: missing
          })
        )
      }
      if (key.accountsAccess.scope === "all-accounts") return Effect.void
      if (target.accountsAccess.scope === "all-accounts") {
        return Effect.fail(
          new AccountsAccessDenied({
            message: `This API key reaches only selected accounts; it cannot ${action} a key reaching all accounts.`
          })
        )
      }
      const outside = target.accountsAccess.ids.find(
        (accountId) => !key.accountsAccess.ids.includes(accountId.toLowerCase())
      )
      return outside === undefined
        ? Effect.void
        : Effect.fail(
            new AccountsAccessDenied({
              message: `This API key cannot ${action} a key reaching account ${outside}, which it does not reach.`
            })
          )
    }

    /** A `companyId` the request names must be the key's own company. */
    const canActFor = (key: ApiKeyRecord, companyId: string) =>
      companyId.toLowerCase() === key.companyId
        ? Effect.void
        : Effect.fail(new CompanyMismatch({ message: "companyId names a company other than this API key's." }))

    /** A resource of the other environment is out of the key's reach: 403. */
    const sameEnvironment = (key: ApiKeyRecord, resource: { readonly environment: Environment }, what: string) =>
      resource.environment === key.environment
        ? Effect.void
        : Effect.fail(
            new EnvironmentMismatch({
              message: `${what} belongs to the ${resource.environment} environment; this key is for ${key.environment}.`
            })
          )

    /** The account `accountId` names, if the key reaches it: 404 otherwise, 403 across environments. */
    const canAccessAccount = Effect.fn("CompanyPolicy.canAccessAccount")(function* (
      key: ApiKeyRecord,
      accountId: string
    ) {
      const account = yield* companies.account(key.companyId, accountId)
      const reachable = (found: Account) =>
        key.accountsAccess.scope === "all-accounts" || key.accountsAccess.ids.includes(found.id)
      if (Option.isNone(account) || !reachable(account.value)) {
        return yield* new AccountNotFound({ message: `No account ${accountId} is reachable with this key.`, accountId })
      }
      yield* sameEnvironment(key, account.value, `Account ${accountId}`)
      return account.value
    })

    /** The scope of a request: the account it named (already checked), or every account its key reaches. */
    const scopeOf = (key: ApiKeyRecord, account: Option.Option<Account>): AccountScope =>
      ({
        companyId: key.companyId,
        environment: key.environment,
        accountIds: Option.match(account, {
          onSome: (named) => [named.id],
          onNone: () => (key.accountsAccess.scope === "all-accounts" ? "all" : key.accountsAccess.ids)
        })
      }) as AccountScope

    /**
     * The scope a gift's link grants its holder: the one account of the gift, to read what the gift page
     * shows (its campaign and recipient) and to claim it. The token was checked by whoever found the gift.
     */
    const scopeOfGift = (gift: {
      readonly companyId: string
      readonly environment: Environment
      readonly accountId: string
    }): AccountScope => {
      const accountIds: ReadonlyArray<string> = [gift.accountId]
      return { companyId: gift.companyId, environment: gift.environment, accountIds } as AccountScope
    }

    return { canPerform, canManageKey, canActFor, sameEnvironment, canAccessAccount, scopeOf, scopeOfGift } as const
  })
}) {}
