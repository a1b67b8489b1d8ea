import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import {
  type BillingMethodRecord as BillingMethod,
  type DailySpend,
  type LedgerFilter,
  type LedgerSubject,
  type NewBillingMethod,
  testFundsMaximum,
  testLimitCeiling
} from "../../domain/company/Billing.js"
import type { AccountScope } from "../../domain/company/Company.js"
import {
  BillingMethodArchived,
  BillingMethodNotFound,
  EnvironmentMismatch,
  InsufficientFunds
} from "../../domain/company/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { lastUtcDays, nowDate } from "../platform/Time.js"
import { Audit } from "./Audit.js"
import { BillingRepo } from "./BillingRepo.js"

export type { LedgerSubject } from "../../domain/company/Billing.js"

/**
 * Billing methods and their ledger (docs/decisions/0037-billing-ledger.md,
 * docs/decisions/0041-v3-accounts-and-billing.md, docs/company-api.md "Accounts and billing"). Money moves only through
 * `billing_entries`, written in the caller's transaction (an order's or a gift's). The statement that writes an entry
 * also moves the method's `spent` (the entries' sum), so `remaining` is its limit less `spent`, one row read; a debit's
 * check runs in that statement, on the locked row, so two debits racing for the last funds are judged one after the
 * other and never both succeed. The rows are `BillingRepo`'s.
 */

/** The 404 of an account without a default method, when an order or gift names none. */
export const noDefaultMethod = (accountId: string) =>
  new BillingMethodNotFound({
    message: `Account ${accountId} has no default billing method; name one with billingMethodId.`,
    billingMethodId: ""
  })

export class Billing extends Effect.Service<Billing>()("Billing", {
  dependencies: [BillingRepo.Default, Audit.Default],
  effect: Effect.gen(function* () {
    const repo = yield* BillingRepo
    const audit = yield* Audit
    const sql = yield* SqlClient.SqlClient

    /** Adds a method to an account, in the caller's transaction; the first one of an account is its default. */
    const create = Effect.fn("Billing.create")(function* (accountId: string, method: NewBillingMethod) {
      const id = yield* makeId
      const now = yield* nowDate
      yield* repo.insert(id, accountId, method, now)
      return id
    })

    /** A method on an account the scope reaches (404 otherwise). */
    const find = Effect.fn("Billing.find")(function* (scope: AccountScope, billingMethodId: string) {
      const found = yield* repo.find(scope, billingMethodId)
      if (Option.isNone(found)) {
        return yield* new BillingMethodNotFound({
          message: `No billing method ${billingMethodId} is reachable with this key.`,
          billingMethodId
        })
      }
      return found.value
    })

    /** The account's default method (404 when it has none). */
    const defaultOf = Effect.fn("Billing.defaultOf")(function* (accountId: string) {
      const found = yield* repo.defaultOf(accountId)
      if (Option.isNone(found)) return yield* noDefaultMethod(accountId)
      return found.value
    })

    /** The methods of the accounts the scope reaches, filtered, sorted and paged in SQL. */
    const page = Effect.fn("Billing.page")((scope: AccountScope, query: V3Query) => repo.page(scope, query))

    /** The methods of the named accounts that the scope reaches (others left out), each account's default first. */
    const ofAccounts = Effect.fn("Billing.ofAccounts")((scope: AccountScope, accountIds: ReadonlyArray<string>) =>
      repo.ofAccounts(scope, accountIds)
    )

    /**
     * Net spend per UTC day over the last `days` days (today included), per currency, on the accounts the scope
     * reaches: each day's debits less its credits, summed in SQL; a day without entries is 0. A day whose credits
     * (a cancelled order, a released gift budget) outweigh its debits is negative.
     */
    const spendPerDay = Effect.fn("Billing.spendPerDay")(function* (scope: AccountScope, days: number) {
      const window = yield* lastUtcDays(days)
      const rows = yield* repo.spendByDay(scope, window.from, window.to)
      const dayList = window.days
      const currencies = [...new Set(rows.map((row) => row.currency))]
      const amounts = new Map(rows.map((row) => [`${row.currency} ${row.day}`, row.amount]))
      return {
        days: dayList,
        byCurrency: currencies.map((currency) => ({
          currency,
          amounts: dayList.map((day) => amounts.get(`${currency} ${day}`) ?? 0)
        }))
      } satisfies DailySpend
    })

    /** A page of the ledger of a method the scope reaches (404 otherwise), newest first, with running balances. */
    const ledger = Effect.fn("Billing.ledger")(function* (
      scope: AccountScope,
      billingMethodId: string,
      filter: LedgerFilter
    ) {
      const method = yield* find(scope, billingMethodId)
      const found = yield* repo.ledger(method.id, filter)
      return { method, ...found }
    })

    /**
     * Adds test funds to a capped method of a test account the scope reaches: its limit rises by `amount`
     * (1 to `testFundsMaximum` minor units), up to `testLimitCeiling`. Only test money: a live scope is refused
     * (403). The method as it then is, or none when the ceiling (or an uncapped method) left it unchanged.
     */
    const addTestFunds = Effect.fn("Billing.addTestFunds")(function* (
      scope: AccountScope,
      billingMethodId: string,
      amount: number
    ) {
      if (scope.environment !== "test") {
        return yield* new EnvironmentMismatch({ message: "Test funds are added in the test environment only." })
      }
      if (!Number.isInteger(amount) || amount < 1 || amount > testFundsMaximum) {
        return yield* Effect.dieMessage(`test funds of ${amount} are out of bounds`)
      }
      const method = yield* find(scope, billingMethodId)
      // The limit and its audit row together, or neither.
      const raise = Effect.gen(function* () {
        if (!(yield* repo.addTestFunds(method.id, amount, testLimitCeiling))) return Option.none<BillingMethod>()
        yield* audit.record({
          companyId: scope.companyId,
          environment: "test",
          accountId: method.accountId,
          action: "billing_method.test_funds_added",
          target: method.id
        })
        return Option.some(yield* find(scope, method.id))
      })
      return yield* sql.withTransaction(raise).pipe(Effect.catchTag("SqlError", Effect.die))
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
      const method = Option.getOrUndefined(yield* repo.byId(billingMethodId))
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
     * Writes one ledger entry and moves the method's `spent` by it, in one statement (the repository's
     * `record`): a debit's condition (active, and covered) is judged on the locked row, so two debits racing
     * for the last funds never both pass. Whether it was written (a zero amount writes nothing and passes).
     */
    const record = (billingMethodId: string, kind: "debit" | "credit", amount: number, subject: LedgerSubject) =>
      Effect.gen(function* () {
        if (amount <= 0) return true
        const now = yield* nowDate
        return yield* repo.record(billingMethodId, kind, amount, subject, now)
      })

    return {
      create,
      find,
      defaultOf,
      page,
      ofAccounts,
      spendPerDay,
      ledger,
      addTestFunds,
      ensureFunds,
      debit,
      credit
    } as const
  })
}) {}
