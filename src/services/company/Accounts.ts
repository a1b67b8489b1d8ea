import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { BillingMethodRecord, NewBillingMethod } from "../../domain/company/Billing.js"
import type { Account, AccountScope } from "../../domain/company/Company.js"
import { AccountNameTaken, AccountNotFound } from "../../domain/company/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { nowDate } from "../platform/Time.js"
import { Audit } from "./Audit.js"
import { Billing } from "./Billing.js"
import { CompaniesRepo } from "./CompaniesRepo.js"

/**
 * A company's accounts (docs/decisions/0041-v3-accounts-and-billing.md, docs/company-api.md "Accounts and billing"):
 * created in the key's environment with a name unique there, and optionally a first billing method, in one transaction.
 * The rows are `CompaniesRepo`'s.
 */

/** An account and its default billing method, if it has one. */
export interface AccountWithDefaultMethod {
  readonly account: Account
  readonly method: Option.Option<BillingMethodRecord>
}

const unreachable = (accountId: string) =>
  new AccountNotFound({ message: `No account ${accountId} is reachable with this key.`, accountId })

/** Of the accounts a scope reaches (the default first, then the oldest), the one a request that names none means. */
const meant = <A extends { readonly isDefault: boolean }>(rows: ReadonlyArray<A>) =>
  Option.fromNullable(rows.length === 1 ? rows[0] : rows.find((account) => account.isDefault))

export class Accounts extends Effect.Service<Accounts>()("Accounts", {
  dependencies: [CompaniesRepo.Default, Billing.Default, Audit.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* CompaniesRepo
    const billing = yield* Billing
    const audit = yield* Audit

    /** A new account in the scope's company and environment, with its first billing method if given (409 on a taken name). */
    const create = Effect.fn("Accounts.create")(function* (
      scope: AccountScope,
      input: { readonly name: string; readonly billingMethod: NewBillingMethod | undefined }
    ) {
      const id = yield* makeId
      const now = yield* nowDate
      const insert = Effect.gen(function* () {
        const inserted = yield* repo.insertAccount({
          id,
          companyId: scope.companyId,
          environment: scope.environment,
          name: input.name,
          at: now
        })
        if (Option.isNone(inserted)) {
          return yield* new AccountNameTaken({
            message: `An account named "${input.name}" already exists.`,
            name: input.name
          })
        }
        const account = inserted.value
        if (input.billingMethod !== undefined) yield* billing.create(account.id, input.billingMethod)
        yield* audit.record({
          companyId: account.companyId,
          environment: account.environment,
          accountId: account.id,
          action: "account.created",
          target: account.id
        })
        return account
      })
      return yield* sql.withTransaction(insert).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** An account the scope reaches (404 otherwise). */
    const find = Effect.fn("Accounts.find")(function* (scope: AccountScope, accountId: string) {
      const found = yield* repo.accountIn(scope, accountId.toLowerCase())
      if (Option.isNone(found)) return yield* unreachable(accountId)
      return found.value
    })

    /** The account a request means when it names none: the only one its scope reaches, else the default one. */
    const defaultIn = Effect.fn("Accounts.defaultIn")(function* (scope: AccountScope) {
      return meant(yield* repo.firstAccountsIn(scope))
    })

    /**
     * In one read, the account `accountId` names (404 when the scope does not reach it), or with none the one
     * `defaultIn` gives (none when there is none), each with its default billing method: what `find` or
     * `defaultIn`, then `Billing.defaultOf`, answer.
     */
    const withDefaultMethod = Effect.fn("Accounts.withDefaultMethod")(function* (
      scope: AccountScope,
      accountId: string | undefined
    ) {
      const rows = yield* repo.firstAccountsWithMethodIn(scope, accountId?.toLowerCase())
      const found = meant(rows)
      if (Option.isNone(found) && accountId !== undefined) return yield* unreachable(accountId)
      return Option.map(
        found,
        ({ defaultMethod, ...account }): AccountWithDefaultMethod => ({
          account,
          method: Option.fromNullable(defaultMethod)
        })
      )
    })

    /** The accounts the scope reaches, sorted and paged in SQL. */
    const page = Effect.fn("Accounts.page")((scope: AccountScope, query: V3Query) => repo.accountPage(scope, query))

    return { create, find, defaultIn, withDefaultMethod, page } as const
  })
}) {}
