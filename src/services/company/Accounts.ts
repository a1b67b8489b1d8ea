import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { NewBillingMethod } from "../../domain/company/Billing.js"
import { type Account, AccountRecord, type AccountScope } from "../../domain/company/Company.js"
import { AccountNameTaken, AccountNotFound } from "../../domain/company/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { rowsOf } from "../platform/Rows.js"
import { nowDate } from "../platform/Time.js"
import { compileV3Query, likeEscape, type V3Columns, v3Page } from "../platform/V3QuerySql.js"
import { Billing } from "./Billing.js"
import { accountsIn } from "./Scope.js"

/**
 * A company's accounts (DESIGN.md §4.10, docs/company-api.md "Accounts and billing"): created in the key's
 * environment with a name unique there, and optionally a first billing method, in one transaction.
 */

const accountColumns = "id, company_id, environment, name, is_default"

export class Accounts extends Effect.Service<Accounts>()("Accounts", {
  dependencies: [Billing.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const billing = yield* Billing
    const accountRows = rowsOf(AccountRecord)
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
      if (found === undefined) {
        return yield* new AccountNotFound({ message: `No account ${accountId} is reachable with this key.`, accountId })
      }
      return found
    })

    /** The account a request means when it names none: the only one its scope reaches, else the default one. */
    const defaultIn = Effect.fn("Accounts.defaultIn")(function* (scope: AccountScope) {
      const rows = yield* accountRows(sql`SELECT ${sql.literal(accountColumns)} FROM accounts
        WHERE ${accountsIn(sql, scope, "id")} ORDER BY is_default DESC, created_at LIMIT 2`).pipe(Effect.orDie)
      const only = rows.length === 1 ? rows[0] : rows.find((account) => account.isDefault)
      return Option.fromNullable(only)
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

    return { create, find, defaultIn, page } as const
  })
}) {}
