import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import {
  type BillingMethodRecord as BillingMethod,
  BillingMethodRecord,
  BillingType,
  billingCurrency,
  DaySpend,
  LedgerEntry,
  type LedgerFilter,
  LedgerSubject,
  type NewBillingMethod
} from "../../domain/company/Billing.js"
import type { AccountScope } from "../../domain/company/Company.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { compileV3Query, type V3Columns, v3Page } from "../platform/V3QuerySql.js"
import { accountsIn, QueryParam, ScopeParam } from "./Scope.js"

/**
 * Billing methods as their records read, each with its remaining funds (its limit less what its entries
 * spent; null: uncapped): a subquery named `methods`, for a statement of this module or of `CompaniesRepo`.
 */
export const methodsOf = (sql: SqlClient.SqlClient) => sql`(
  SELECT m.id, m.account_id, a.environment, a.company_id, m.name, m.type, m.status, m.is_default, m.currency,
    m.spending_limit::int AS spending_limit, m.created_at, (m.spending_limit - m.spent)::int AS remaining
  FROM billing_methods m JOIN accounts a ON a.id = m.account_id
) AS methods`

/** A method record as `jsonRecordOf` gives it: the same fields, its time as JSON text. */
export const MethodJson = Schema.Struct({ ...BillingMethodRecord.fields, createdAt: Schema.Date })

/**
 * The `billing_methods` and `billing_entries` tables: the methods and their ledger. Only the Billing service
 * uses it; every other service moves money through that service. Its statements run in the caller's
 * transaction. Unexpected database errors are defects.
 */
export class BillingRepo extends Effect.Service<BillingRepo>()("BillingRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** A method with its remaining funds: its limit less what its entries spent (null: uncapped). */
    const methods = methodsOf(sql)

    const listColumns: V3Columns<BillingMethod> = {
      paging: "number",
      filters: {
        accountId: (value) => sql`account_id = ${value.toLowerCase()}`,
        status: (value) => sql`status = ${value}`,
        type: (value) => sql`type = ${value}`
      },
      sort: { createdAt: "created_at", name: "name" },
      defaultOrder: [{ column: "created_at", descending: false }],
      id: "id"
    }

    /** The first method of an account is its default. */
    const insertMethod = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        accountId: Schema.String,
        name: Schema.String,
        type: BillingType,
        spendingLimit: Schema.NullOr(Schema.Number),
        at: Schema.DateFromSelf
      }),
      execute: ({ id, accountId, name, type, spendingLimit, at }) =>
        sql`INSERT INTO billing_methods (id, account_id, name, type, status, is_default, currency, spending_limit, created_at)
        VALUES (${id}, ${accountId}, ${name}, ${type}, 'active',
          NOT EXISTS (SELECT 1 FROM billing_methods WHERE account_id = ${accountId} AND is_default),
          ${billingCurrency}, ${spendingLimit}, ${at})`
    })

    const findInScope = SqlSchema.findOne({
      Request: Schema.Struct({ scope: ScopeParam, id: Schema.String }),
      Result: BillingMethodRecord,
      execute: ({ scope, id }) => sql`SELECT * FROM ${methods}
        WHERE id = ${id} AND ${accountsIn(sql, scope, "account_id")}`
    })

    const findDefault = SqlSchema.findOne({
      Request: Schema.String,
      Result: BillingMethodRecord,
      execute: (accountId) => sql`SELECT * FROM ${methods} WHERE account_id = ${accountId} AND is_default`
    })

    const findById = SqlSchema.findOne({
      Request: Schema.String,
      Result: BillingMethodRecord,
      execute: (id) => sql`SELECT * FROM ${methods} WHERE id = ${id}`
    })

    const findPage = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, query: QueryParam }),
      Result: BillingMethodRecord,
      execute: ({ scope, query }) => {
        const { where, orderBy, limit } = compileV3Query(sql, query, listColumns)
        return sql`SELECT * FROM ${methods} WHERE ${accountsIn(sql, scope, "account_id")} AND ${where}
          ORDER BY ${orderBy} LIMIT ${limit}`
      }
    })

    /**
     * One ledger entry, and the method's `spent` moved by it, in one statement: the `UPDATE` takes the
     * method's row lock, and a debit's condition (active, and covered) is judged on the row as the last
     * writer left it. The entries written (none when a debit was refused).
     */
    const insertEntry = SqlSchema.findAll({
      Request: Schema.Struct({
        billingMethodId: Schema.String,
        kind: Schema.Literal("debit", "credit"),
        amount: Schema.Number,
        subject: LedgerSubject,
        at: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ id: Schema.Unknown }),
      execute: ({ billingMethodId, kind, amount, subject, at }) => {
        const covered =
          kind === "debit"
            ? sql`AND status = 'active' AND (spending_limit IS NULL OR spending_limit - spent >= ${amount})`
            : sql``
        return sql`WITH moved AS (
            UPDATE billing_methods SET spent = spent ${kind === "debit" ? sql.literal("+") : sql.literal("-")} ${amount}
            WHERE id = ${billingMethodId} ${covered} RETURNING id, spent)
          INSERT INTO billing_entries (billing_method_id, kind, amount, subject_type, subject_id, reason, created_at,
            spent_to_date)
          SELECT id, ${kind}, ${amount}, ${subject.type}, ${subject.id}, ${subject.reason}, ${at}, spent FROM moved
          RETURNING id`
      }
    })

    /**
     * A method's entries, newest first, each with the running balance after it (the method's `spent` as the
     * entry's statement left it, kept on the entry), filtered by dates and paged in SQL; one row more than the
     * page, to tell whether another follows.
     */
    const findLedger = SqlSchema.findAll({
      Request: Schema.Struct({
        billingMethodId: Schema.String,
        from: Schema.NullOr(Schema.DateFromSelf),
        to: Schema.NullOr(Schema.DateFromSelf),
        limit: Schema.Number,
        offset: Schema.Number
      }),
      Result: LedgerEntry,
      execute: ({ billingMethodId, from, to, limit, offset }) => sql`SELECT id::text AS id, kind, amount::int AS amount,
          subject_type, subject_id, reason, created_at, spent_to_date::int AS spent_to_date
        FROM billing_entries WHERE billing_method_id = ${billingMethodId}
          AND ${from === null ? sql`TRUE` : sql`created_at >= ${from}`}
          AND ${to === null ? sql`TRUE` : sql`created_at < ${to}`}
        ORDER BY billing_entries.created_at DESC, billing_entries.id DESC LIMIT ${limit} OFFSET ${offset}`
    })

    /** The methods of the named accounts, within the scope, each account's default first. */
    const findOfAccounts = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, accountIds: Schema.Array(Schema.String) }),
      Result: BillingMethodRecord,
      execute: ({ scope, accountIds }) => sql`SELECT * FROM ${methods}
        WHERE ${accountsIn(sql, scope, "account_id")} AND ${sql.in("account_id", accountIds)}
        ORDER BY account_id, is_default DESC, created_at, id`
    })

    /**
     * Net spend per UTC day and currency of the methods of the accounts the scope reaches, over `[from, to)`:
     * each day's debits less its credits, grouped in SQL; days without entries are absent.
     */
    const findSpendByDay = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, from: Schema.DateFromSelf, to: Schema.DateFromSelf }),
      Result: DaySpend,
      // Grouped on the date, formatted once per group rather than once per entry.
      execute: ({ scope, from, to }) => sql`SELECT to_char(day, 'YYYY-MM-DD') AS day, currency, amount FROM (
          SELECT (e.created_at AT TIME ZONE 'UTC')::date AS day, m.currency,
            SUM(CASE e.kind WHEN 'debit' THEN e.amount ELSE -e.amount END)::int AS amount
          FROM billing_entries e JOIN billing_methods m ON m.id = e.billing_method_id
          WHERE ${accountsIn(sql, scope, "m.account_id")} AND e.created_at >= ${from} AND e.created_at < ${to}
          GROUP BY 1, 2
        ) AS days ORDER BY days.day, currency`
    })

    /** Raises a capped test method's limit by `amount`, up to `ceiling`; the ids raised (none when refused). */
    const raiseTestLimit = SqlSchema.findAll({
      Request: Schema.Struct({ id: Schema.String, amount: Schema.Number, ceiling: Schema.Number }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, amount, ceiling }) => sql`UPDATE billing_methods m SET spending_limit = spending_limit + ${amount}
        FROM accounts a
        WHERE m.id = ${id} AND a.id = m.account_id AND a.environment = 'test' AND m.spending_limit IS NOT NULL
          AND m.spending_limit + ${amount} <= ${ceiling}
        RETURNING m.id`
    })

    /** Adds a method to an account (its default when it is the account's first). */
    const insert = Effect.fn("BillingRepo.insert")(
      (id: string, accountId: string, method: NewBillingMethod, at: Date) =>
        Effect.orDie(
          insertMethod({ id, accountId, name: method.name, type: method.type, spendingLimit: method.spendingLimit, at })
        )
    )

    /** A method on an account the scope reaches, or none. */
    const find = Effect.fn("BillingRepo.find")((scope: AccountScope, billingMethodId: string) =>
      Effect.orDie(findInScope({ scope, id: billingMethodId }))
    )

    /** The account's default method, or none. */
    const defaultOf = Effect.fn("BillingRepo.defaultOf")((accountId: string) => Effect.orDie(findDefault(accountId)))

    /** A method by its id, whoever's it is, or none. */
    const byId = Effect.fn("BillingRepo.byId")((billingMethodId: string) => Effect.orDie(findById(billingMethodId)))

    /** The methods of the accounts the scope reaches, filtered, sorted and paged as a v3 list query asks. */
    const page = Effect.fn("BillingRepo.page")(function* (scope: AccountScope, query: V3Query) {
      const rows = yield* Effect.orDie(findPage({ scope, query }))
      return v3Page(rows, query, listColumns)
    })

    /**
     * Writes one ledger entry of `amount` (positive) and moves the method's `spent` by it; a debit only if the
     * method is active and covers it. Whether it was written.
     */
    const record = Effect.fn("BillingRepo.record")(function* (
      billingMethodId: string,
      kind: "debit" | "credit",
      amount: number,
      subject: LedgerSubject,
      at: Date
    ) {
      const written = yield* Effect.orDie(insertEntry({ billingMethodId, kind, amount, subject, at }))
      return written.length > 0
    })

    /** A page of a method's ledger, newest first, with the running balance after each entry; whether another follows. */
    const ledger = Effect.fn("BillingRepo.ledger")(function* (billingMethodId: string, filter: LedgerFilter) {
      const rows = yield* Effect.orDie(
        findLedger({
          billingMethodId,
          from: filter.from,
          to: filter.to,
          limit: filter.size + 1,
          offset: (filter.page - 1) * filter.size
        })
      )
      return { rows: rows.slice(0, filter.size), hasNext: rows.length > filter.size }
    })

    /** Raises a test method's limit by `amount` if it stays within `ceiling`; whether it was raised. */
    const addTestFunds = Effect.fn("BillingRepo.addTestFunds")(function* (
      billingMethodId: string,
      amount: number,
      ceiling: number
    ) {
      const raised = yield* Effect.orDie(raiseTestLimit({ id: billingMethodId, amount, ceiling }))
      return raised.length > 0
    })

    /** The methods of `accountIds` the scope reaches (others are left out), each account's default first. */
    const ofAccounts = Effect.fn("BillingRepo.ofAccounts")((scope: AccountScope, accountIds: ReadonlyArray<string>) =>
      accountIds.length === 0 ? Effect.succeed([]) : Effect.orDie(findOfAccounts({ scope, accountIds }))
    )

    /** Net spend per UTC day and currency in `[from, to)` on the accounts the scope reaches; days without entries absent. */
    const spendByDay = Effect.fn("BillingRepo.spendByDay")((scope: AccountScope, from: Date, to: Date) =>
      Effect.orDie(findSpendByDay({ scope, from, to }))
    )

    return { insert, find, defaultOf, byId, page, ofAccounts, spendByDay, record, ledger, addTestFunds } as const
  })
}) {}
