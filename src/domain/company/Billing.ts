import { Schema } from "effect"
import { CurrencyCode } from "../platform/Money.js"
import { Environment } from "./Company.js"

/**
 * Billing methods (docs/decisions/0041-v3-accounts-and-billing.md): how an account pays for its orders and gifts. Money
 * moves only through the ledger (`billing_entries`); a method's `remaining` is derived from it.
 */

export const BillingType = Schema.Literal("prepaid", "invoice")
export type BillingType = typeof BillingType.Type

export const BillingStatus = Schema.Literal("active", "archived")
export type BillingStatus = typeof BillingStatus.Type

/** A billing method as the services see it; `spendingLimit` and `remaining` are null when uncapped. */
export const BillingMethodRecord = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  environment: Environment,
  name: Schema.String,
  type: BillingType,
  status: BillingStatus,
  isDefault: Schema.Boolean,
  currency: CurrencyCode,
  spendingLimit: Schema.NullOr(Schema.Int),
  remaining: Schema.NullOr(Schema.Int),
  createdAt: Schema.DateFromSelf
})
export type BillingMethodRecord = typeof BillingMethodRecord.Type

/** A new method: what `POST /v3/accounts` takes as `billingMethod`, with the limit in minor units. */
export interface NewBillingMethod {
  readonly name: string
  readonly type: BillingType
  readonly spendingLimit: number | null
}

/** What a ledger entry is for: the order or gift that moved the money, and why. */
export const LedgerSubject = Schema.Struct({
  type: Schema.Literal("order", "gift"),
  id: Schema.String,
  reason: Schema.String
})
export type LedgerSubject = typeof LedgerSubject.Type

/**
 * One ledger entry as a method's ledger reads: the money it moved, for which order or gift, and the running
 * balance after it, `spentToDate` (debits less credits so far: what the method's `spent` was once it was written).
 */
export const LedgerEntry = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("debit", "credit"),
  amount: Schema.Int,
  subjectType: Schema.Literal("order", "gift"),
  subjectId: Schema.String,
  reason: Schema.String,
  createdAt: Schema.DateFromSelf,
  spentToDate: Schema.Int
})
export type LedgerEntry = typeof LedgerEntry.Type

/** Which of a method's entries to read: those in `[from, to)` (either open), one page of them, newest first. */
export interface LedgerFilter {
  readonly from: Date | null
  readonly to: Date | null
  readonly page: number
  readonly size: number
}

/**
 * Test funds a sandbox may add to a prepaid test method in one go, and the spending limit they may raise it to
 * (minor units): enough to try anything, bounded so a limit stays a plausible sum.
 */
export const testFundsMaximum = 10_000_00
export const testLimitCeiling = 1_000_000_00

/** The currency company billing is kept in: order totals are converted to it when they are debited. */
export const billingCurrency = "USD" as CurrencyCode

/**
 * What a new company's default account starts with: in `test`, prepaid test funds, so a sandbox can place
 * orders at once; in `live`, an uncapped invoice method (billed afterwards).
 */
export const defaultBillingMethod: Readonly<Record<Environment, NewBillingMethod>> = {
  test: { name: "Test funds", type: "prepaid", spendingLimit: 100_000_00 },
  live: { name: "Invoice", type: "invoice", spendingLimit: null }
}

/** One UTC day's net spend in one currency: the day's debits less its credits (minor units; negative when credits won). */
export const DaySpend = Schema.Struct({
  day: Schema.String,
  currency: Schema.String,
  amount: Schema.Int
})
export type DaySpend = typeof DaySpend.Type

/**
 * Net spend per UTC day over a run of days, per currency: `days` the days in order (`YYYY-MM-DD`, oldest first),
 * and for each currency with entries in them, one amount per day (0 for a day without entries).
 */
export interface DailySpend {
  readonly days: ReadonlyArray<string>
  readonly byCurrency: ReadonlyArray<{ readonly currency: string; readonly amounts: ReadonlyArray<number> }>
}

/** The days a spend chart covers, ending with today (UTC). */
export const spendChartDays = 30
