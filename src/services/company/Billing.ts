import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import {
  type BillingMethodRecord as BillingMethod,
  BillingMethodRecord,
  billingCurrency,
  type NewBillingMethod
} from "../../domain/company/Billing.js"
import type { AccountScope } from "../../domain/company/Company.js"
import { BillingMethodArchived, BillingMethodNotFound, InsufficientFunds } from "../../domain/company/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { rowsOf } from "../platform/Rows.js"
import { nowDate } from "../platform/Time.js"
import { compileV3Query, type V3Columns, v3Page } from "../platform/V3QuerySql.js"
import { accountsIn } from "./Scope.js"

/**
 * Billing methods and their ledger (docs/decisions/0037-billing-ledger.md,
 * docs/decisions/0041-v3-accounts-and-billing.md, docs/company-api.md "Accounts and billing"). Money moves only through
 * `billing_entries`, written in the caller's transaction (an order's or a gift's). The statement that writes an entry
 * also moves the method's `spent` (the entries' sum), so `remaining` is its limit less `spent`, one row read; a debit's
 * check runs in that statement, on the locked row, so two debits racing for the last funds are judged one after the
 * other and never both succeed.
 */

/**
 * Billing methods as their records read, each with its remaining funds (its limit less what its entries
 * spent; null: uncapped): a subquery named `methods`, for a statement of this module or of `Accounts`.
 */
export const methodsOf = (sql: SqlClient.SqlClient) => sql`(
  SELECT m.id, m.account_id, a.environment, a.company_id, m.name, m.type, m.status, m.is_default, m.currency,
    m.spending_limit::int AS spending_limit, m.created_at, (m.spending_limit - m.spent)::int AS remaining
  FROM billing_methods m JOIN accounts a ON a.id = m.account_id
) AS methods`

/** A method record as `jsonRecordOf` gives it: the same fields, its time as JSON text. */
export const MethodJson = Schema.Struct({ ...BillingMethodRecord.fields, createdAt: Schema.Date })

/** The 404 of an account without a default method, when an order or gift names none. */
export const noDefaultMethod = (accountId: string) =>
  new BillingMethodNotFound({
    message: `Account ${accountId} has no default billing method; name one with billingMethodId.`,
    billingMethodId: ""
  })

/** What a ledger entry is for: the order or gift that moved the money, and why. */
export interface LedgerSubject {
  readonly type: "order" | "gift"
  readonly id: string
  readonly reason: string
}

export class Billing extends Effect.Service<Billing>()("Billing", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** A method with its remaining funds: its limit less what its entries spent (null: uncapped). */
    const methods = methodsOf(sql)

    const methodRows = rowsOf(BillingMethodRecord)
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

    /** Adds a method to an account, in the caller's transaction; the first one of an account is its default. */
    const create = Effect.fn("Billing.create")(function* (accountId: string, method: NewBillingMethod) {
      const id = yield* makeId
      const now = yield* nowDate
      yield* sql`INSERT INTO billing_methods (id, account_id, name, type, status, is_default, currency, spending_limit, created_at)
        VALUES (${id}, ${accountId}, ${method.name}, ${method.type}, 'active',
          NOT EXISTS (SELECT 1 FROM billing_methods WHERE account_id = ${accountId} AND is_default),
          ${billingCurrency}, ${method.spendingLimit}, ${now})`.pipe(Effect.orDie)
      return id
    })

    /** A method on an account the scope reaches (404 otherwise). */
    const find = Effect.fn("Billing.find")(function* (scope: AccountScope, billingMethodId: string) {
      const [found] = yield* methodRows(sql`SELECT * FROM ${methods}
        WHERE id = ${billingMethodId.toLowerCase()} AND ${accountsIn(sql, scope, "account_id")}`).pipe(Effect.orDie)
      if (found === undefined) {
        return yield* new BillingMethodNotFound({
          message: `No billing method ${billingMethodId} is reachable with this key.`,
          billingMethodId
        })
      }
      return found
    })

    const findDefault = SqlSchema.findOne({
      Request: Schema.String,
      Result: BillingMethodRecord,
      execute: (accountId) => sql`SELECT * FROM ${methods} WHERE account_id = ${accountId} AND is_default`
    })

    /** The account's default method (404 when it has none). */
    const defaultOf = Effect.fn("Billing.defaultOf")(function* (accountId: string) {
      const found = yield* Effect.orDie(findDefault(accountId))
      if (Option.isNone(found)) return yield* noDefaultMethod(accountId)
      return found.value
    })

    /** The methods of the accounts the scope reaches, filtered, sorted and paged in SQL. */
    const page = Effect.fn("Billing.page")(function* (scope: AccountScope, query: V3Query) {
      const { where, orderBy, limit } = compileV3Query(sql, query, listColumns)
      const rows = yield* methodRows(
        sql`SELECT * FROM ${methods} WHERE ${accountsIn(sql, scope, "account_id")} AND ${where}
          ORDER BY ${orderBy} LIMIT ${limit}`
      ).pipe(Effect.orDie)
      return v3Page(rows, query, listColumns)
    })

    /** Whether the method's remaining funds cover `amount` (422 when they do not); uncapped ones always do. */
    const ensureFunds = (method: BillingMethod, amount: number) =>
      method.remaining === null || method.remaining >= amount
        ? Effect.void
        : Effect.fail(
            new InsufficientFunds({
              message: `Billing method ${method.id} has ${method.remaining} ${method.currency} minor units left; this needs ${amount}.`,
              billingMethodId: method.id,
              remaining: method.remaining,
              required: amount
            })
          )

    /**
     * Debits `amount` (minor units of the billing currency) for `subject`, inside the caller's transaction, if
     * the method is active and its remaining funds cover it (422 when short, 422 when archived). The method's
     * row stays locked until that transaction ends: debit last, so the lock is held briefly.
     */
    const debit = Effect.fn("Billing.debit")(function* (
      billingMethodId: string,
      amount: number,
      subject: LedgerSubject
    ) {
      if (yield* record(billingMethodId, "debit", amount, subject)) return
      // Nothing was debited: say why, from the method as the refusing statement saw it.
      const [method] = yield* methodRows(sql`SELECT * FROM ${methods} WHERE id = ${billingMethodId}`).pipe(Effect.orDie)
      if (method === undefined) return yield* Effect.dieMessage(`No billing method ${billingMethodId}`)
      if (method.status === "archived") {
        return yield* new BillingMethodArchived({
          message: `Billing method ${billingMethodId} is archived.`,
          billingMethodId
        })
      }
      yield* ensureFunds(method, amount)
      return yield* Effect.dieMessage(`billing method ${billingMethodId} refused a debit it covers`)
    })

    /** Credits `amount` back for `subject` (a cancel, an expiry, a refund), inside the caller's transaction. */
    const credit = Effect.fn("Billing.credit")((billingMethodId: string, amount: number, subject: LedgerSubject) =>
      Effect.asVoid(record(billingMethodId, "credit", amount, subject))
    )

    /**
     * Writes one ledger entry and moves the method's `spent` by it, in one statement: the `UPDATE` takes the
     * method's row lock, and a debit's condition (active, and covered) is judged again on the row as the
     * last writer left it, so two debits racing for the last funds never both pass. Whether it was written.
     */
    const record = (billingMethodId: string, kind: "debit" | "credit", amount: number, subject: LedgerSubject) =>
      Effect.gen(function* () {
        if (amount <= 0) return true
        const now = yield* nowDate
        const covered =
          kind === "debit"
            ? sql`AND status = 'active' AND (spending_limit IS NULL OR spending_limit - spent >= ${amount})`
            : sql``
        const written = yield* sql`WITH moved AS (
            UPDATE billing_methods SET spent = spent ${kind === "debit" ? sql.literal("+") : sql.literal("-")} ${amount}
            WHERE id = ${billingMethodId} ${covered} RETURNING id)
          INSERT INTO billing_entries (billing_method_id, kind, amount, subject_type, subject_id, reason, created_at)
          SELECT id, ${kind}, ${amount}, ${subject.type}, ${subject.id}, ${subject.reason}, ${now} FROM moved
          RETURNING id`.pipe(Effect.orDie)
        return written.length > 0
      })

    return { create, find, defaultOf, page, ensureFunds, debit, credit } as const
  })
}) {}
