import { Effect, Option } from "effect"
import {
  type Account,
  type AccountScope,
  type ApiKeyRecord,
  type Environment,
  overreach,
  type Permission,
  type Principal
} from "../../domain/company/Company.js"
import {
  AccountNotFound,
  AccountsAccessDenied,
  CompanyMismatch,
  EnvironmentMismatch,
  PermissionDenied
} from "../../domain/company/Errors.js"
import { type Member, type MemberRight, principalOf, reachOf, roleRights } from "../../domain/company/Members.js"
import { Companies } from "./Companies.js"

/**
 * Who may do what on the company API (docs/decisions/0033-scoping-and-masking.md, docs/permissions.md), in one place.
 * Every company request passes these checks in the API-key middleware, and a handler gets the accounts it may touch
 * only as an `AccountScope` made here, so no company query can forget the caller's scope. A dashboard member is
 * judged by the same checks as a `Principal` (docs/decisions/0054-company-members-and-roles.md); only the words
 * of the messages differ.
 */

/** How messages name the principal: an API key in the third person, a member in the second. */
const wordsFor = (principal: Pick<Principal, "kind">) =>
  principal.kind === "member"
    ? {
        who: "You",
        lacks: "lack",
        reaches: "reach",
        it: "you",
        itDoes: "you do",
        whose: "yours",
        reachable: "for you",
        environment: (environment: Environment) => `you are working in ${environment}`
      }
    : {
        who: "This API key",
        lacks: "lacks",
        reaches: "reaches",
        it: "it",
        itDoes: "it does",
        whose: "this API key's",
        reachable: "with this key",
        environment: (environment: Environment) => `this key is for ${environment}`
      }

export class CompanyPolicy extends Effect.Service<CompanyPolicy>()("CompanyPolicy", {
  dependencies: [Companies.Default],
  effect: Effect.gen(function* () {
    const companies = yield* Companies

    /** The operation's permission, or one of its permissions (`null`: any valid key of the company). */
    const canPerform = (principal: Principal, permission: Permission | ReadonlyArray<Permission> | null) => {
      if (permission === null) return Effect.void
      const anyOf: ReadonlyArray<Permission> = typeof permission === "string" ? [permission] : permission
      const needed = anyOf.join(" or ")
      const words = wordsFor(principal)
      return anyOf.some((p) => principal.permissions.includes(p))
        ? Effect.void
        : Effect.fail(
            new PermissionDenied({
              message: `${words.who} ${words.lacks} the ${needed} permission.`,
              permission: needed
            })
          )
    }

    /**
     * A key creates, rotates or revokes only keys that reach no further than itself: their permissions and
     * their accounts a subset of its own. Otherwise a key limited to some accounts could mint one for all
     * of them, or a key without permissions revoke the admin's. A key is within its own reach, so it can
     * always revoke itself. A member managing keys from the dashboard is held to the same rule.
     */
    const canManageKey = (
      principal: Principal,
      target: Pick<ApiKeyRecord, "permissions" | "accountsAccess">,
      action: "create" | "rotate" | "revoke"
    ): Effect.Effect<void, PermissionDenied | AccountsAccessDenied> => {
      const beyond = overreach(principal, target)
      if (beyond === undefined) return Effect.void
      const { who, reaches, it, itDoes } = wordsFor(principal)
      switch (beyond._tag) {
        case "Permission":
          return Effect.fail(
            new PermissionDenied({
              message: `${who} cannot ${action} a key holding ${beyond.permission}, a permission ${itDoes} not hold.`,
              permission: beyond.permission
            })
          )
        case "AllAccounts":
          return Effect.fail(
            new AccountsAccessDenied({
              message: `${who} ${reaches} only selected accounts; ${it} cannot ${action} a key reaching all accounts.`
            })
          )
        case "Account":
          return Effect.fail(
            new AccountsAccessDenied({
              message: `${who} cannot ${action} a key reaching account ${beyond.accountId}, which ${itDoes} not reach.`
            })
          )
      }
    }

    /** A member right (managing members, billing, developer settings, the company) the member's role holds. */
    const canExercise = (member: Pick<Member, "role">, right: MemberRight) =>
      roleRights[member.role].includes(right)
        ? Effect.void
        : Effect.fail(
            new PermissionDenied({
              message: `You lack the ${right} right: your role is ${member.role}.`,
              permission: right
            })
          )

    /**
     * A member invites, changes, limits or removes only members (and gives only roles and accounts) within its
     * own reach, rights included, by the same subset rule as keys: so only an owner makes or touches an owner,
     * and a member limited to some accounts cannot invite someone to all of them. `action` completes "You
     * cannot …" ("invite an admin").
     */
    const canManageMember = (
      by: Pick<Member, "role" | "accountsAccess">,
      target: Pick<Member, "role" | "accountsAccess">,
      action: string
    ): Effect.Effect<void, PermissionDenied | AccountsAccessDenied> => {
      if (target.role === "owner" && !roleRights[by.role].includes("company:manage")) {
        return Effect.fail(
          new PermissionDenied({ message: `You cannot ${action}: only an owner can.`, permission: "company:manage" })
        )
      }
      const beyond = overreach(reachOf(by), reachOf(target))
      if (beyond === undefined) return Effect.void
      switch (beyond._tag) {
        case "Permission":
          return Effect.fail(
            new PermissionDenied({
              message: `You cannot ${action}: that reaches ${beyond.permission}, which your role (${by.role}) does not hold.`,
              permission: beyond.permission
            })
          )
        case "AllAccounts":
          return Effect.fail(
            new AccountsAccessDenied({
              message: `You cannot ${action}: that reaches all accounts, and you reach only selected ones.`
            })
          )
        case "Account":
          return Effect.fail(
            new AccountsAccessDenied({
              message: `You cannot ${action}: that reaches account ${beyond.accountId}, which you do not reach.`
            })
          )
      }
    }

    /** A `companyId` the request names must be the key's own company. */
    const canActFor = (principal: Principal, companyId: string) =>
      companyId.toLowerCase() === principal.companyId
        ? Effect.void
        : Effect.fail(
            new CompanyMismatch({ message: `companyId names a company other than ${wordsFor(principal).whose}.` })
          )

    /** A resource of the other environment is out of the key's reach: 403. */
    const sameEnvironment = (principal: Principal, resource: { readonly environment: Environment }, what: string) =>
      resource.environment === principal.environment
        ? Effect.void
        : Effect.fail(
            new EnvironmentMismatch({
              message: `${what} belongs to the ${resource.environment} environment; ${wordsFor(principal).environment(
                principal.environment
              )}.`
            })
          )

    /** The account `accountId` names, if the key reaches it: 404 otherwise, 403 across environments. */
    const canAccessAccount = Effect.fn("CompanyPolicy.canAccessAccount")(function* (
      principal: Principal,
      accountId: string
    ) {
      const account = yield* companies.account(principal.companyId, accountId)
      const reachable = (found: Account) =>
        principal.accountsAccess.scope === "all-accounts" || principal.accountsAccess.ids.includes(found.id)
      if (Option.isNone(account) || !reachable(account.value)) {
        return yield* new AccountNotFound({
          message: `No account ${accountId} is reachable ${wordsFor(principal).reachable}.`,
          accountId
        })
      }
      yield* sameEnvironment(principal, account.value, `Account ${accountId}`)
      return account.value
    })

    /** The scope of a request: the account it named (already checked), or every account its key reaches. */
    const scopeOf = (principal: Principal, account: Option.Option<Account>): AccountScope =>
      ({
        companyId: principal.companyId,
        environment: principal.environment,
        accountIds: Option.match(account, {
          onSome: (named) => [named.id],
          onNone: () => (principal.accountsAccess.scope === "all-accounts" ? "all" : principal.accountsAccess.ids)
        })
      }) as AccountScope

    /**
     * The scope a member works in from the dashboard, in one environment: one account it names (checked as a
     * key's `Ribbon-Account-Id` is), or every account it reaches. The services take it as they take a key's.
     */
    const scopeForMember = Effect.fn("CompanyPolicy.scopeForMember")(function* (
      member: Member,
      environment: Environment,
      accountId?: string
    ) {
      const principal = principalOf(member, environment)
      const account =
        accountId === undefined ? Option.none() : Option.some(yield* canAccessAccount(principal, accountId))
      return scopeOf(principal, account)
    })

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

    return {
      canPerform,
      canManageKey,
      canExercise,
      canManageMember,
      canActFor,
      sameEnvironment,
      canAccessAccount,
      scopeOf,
      scopeForMember,
      scopeOfGift
    } as const
  })
}) {}
