import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { BillingMethodRecord, NewBillingMethod } from "../../domain/company/Billing.js"
import { type Account, AccountRecord, type AccountScope } from "../../domain/company/Company.js"
import { AccountNameTaken, AccountNotFound } from "../../domain/company/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { jsonRecordOf, rowsOf } from "../platform/Rows.js"
import { nowDate } from "../platform/Time.js"
import { compileV3Query, likeEscape, type V3Columns, v3Page } from "../platform/V3QuerySql.js"
import { Billing, MethodJson, methodsOf } from "./Billing.js"
import { accountsIn } from "./Scope.js"

/**
 * A company's accounts (docs/decisions/0041-v3-accounts-and-billing.md, docs/company-api.md "Accounts and billing"):
 * created in the key's environment with a name unique there, and optionally a first billing method, in one transaction.
 */

const accountColumns = "id, company_id, environment, name, is_default"

/** An account with its default billing method (null when it has none). */
const AccountWithMethod = Schema.Struct({ ...AccountRecord.fields, defaultMethod: Schema.NullOr(MethodJson) })

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
  dependencies: [Billing.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const billing = yield* Billing
    const accountRows = rowsOf(AccountRecord)
    const withMethodRows = rowsOf(AccountWithMethod)
    const methods = methodsOf(sql)
    const listColumns: V3Columns<Account> = {
      paging: "number",
      filters: { name: (value) => sql`name ILIKE ${`%${likeEscape(value)}%`}` },
      sort: { createdAt: "created_at", name: "name" },
      defaultOrder: [{ column: "created_at", descending: false }],
      id: "id"
    }

    /** A new account in the scope's company and environment, with its first billing method if given (409 on a taken name). */
    const create = Effect.fn("Accounts.create")(function* (
      scope: AccountScope,
      input: { readonly name: string; readonly billingMethod: NewBillingMethod | undefined }
    ) {
      const id = yield* makeId
      const now = yield* nowDate
      const insert = Effect.gen(function* () {
        const inserted = yield* accountRows(sql`INSERT INTO accounts (id, company_id, environment, name, created_at)
          VALUES (${id}, ${scope.companyId}, ${scope.environment}, ${input.name}, ${now})
          ON CONFLICT (company_id, environment, name) DO NOTHING
          RETURNING ${sql.literal(accountColumns)}`)
        const account = inserted[0]
        if (account === undefined) {
          return yield* new AccountNameTaken({
            message: `An account named "${input.name}" already exists.`,
            name: input.name
          })
        }
        if (input.billingMethod !== undefined) yield* billing.create(account.id, input.billingMethod)
        return account
      })
      return yield* sql.withTransaction(insert).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** An account the scope reaches (404 otherwise). */
    const find = Effect.fn("Accounts.find")(function* (scope: AccountScope, accountId: string) {
      const [found] = yield* accountRows(sql`SELECT ${sql.literal(accountColumns)} FROM accounts
        WHERE id = ${accountId.toLowerCase()} AND ${accountsIn(sql, scope, "id")}`).pipe(Effect.orDie)
      if (found === undefined) return yield* unreachable(accountId)
      return found
    })

    /** The account a request means when it names none: the only one its scope reaches, else the default one. */
    const defaultIn = Effect.fn("Accounts.defaultIn")(function* (scope: AccountScope) {
      const rows = yield* accountRows(sql`SELECT ${sql.literal(accountColumns)} FROM accounts
        WHERE ${accountsIn(sql, scope, "id")} ORDER BY is_default DESC, created_at LIMIT 2`).pipe(Effect.orDie)
      return meant(rows)
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
      const rows = yield* withMethodRows(sql`SELECT ${sql.literal(accountColumns)},
          (SELECT ${jsonRecordOf(sql, MethodJson, "methods")} FROM ${methods}
            WHERE methods.account_id = accounts.id AND methods.is_default) AS default_method
        FROM accounts
        WHERE ${accountsIn(sql, scope, "id")}
          ${accountId === undefined ? sql`` : sql`AND id = ${accountId.toLowerCase()}`}
        ORDER BY is_default DESC, created_at LIMIT 2`).pipe(Effect.orDie)
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
    const page = Effect.fn("Accounts.page")(function* (scope: AccountScope, query: V3Query) {
      const { where, orderBy, limit } = compileV3Query(sql, query, listColumns)
      const rows = yield* accountRows(
        sql`SELECT ${sql.literal(accountColumns)} FROM accounts WHERE ${accountsIn(sql, scope, "id")} AND ${where}
          ORDER BY ${orderBy} LIMIT ${limit}`
      ).pipe(Effect.orDie)
      return v3Page(rows, query, listColumns)
    })

    return { create, find, defaultIn, withDefaultMethod, page } as const
  })
}) {}
