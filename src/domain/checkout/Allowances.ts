import { Schema } from "effect"
import { AddressCountryCode } from "../catalog/Address.js"

/**
 * Spending allowances (docs/decisions/0082-spending-allowances.md; docs/allowances.md): a person lets one OAuth client
 * pay checkouts from a saved card without asking each time, within limits per checkout, per calendar period and in
 * total, in one currency, until an expiry. Amounts are integers in minor units of `currency`.
 */

/** The calendar period of the period limit, in UTC (a week starts on Monday). */
export const AllowancePeriod = Schema.Literal("day", "week", "month")
export type AllowancePeriod = typeof AllowancePeriod.Type

/** The longest an allowance may last. */
export const ALLOWANCE_MAX_DAYS = 90

/** Which rule of an allowance a checkout broke (`allowance_exceeded`'s `limit`). */
export const AllowanceLimit = Schema.Literal(
  "perCheckout",
  "period",
  "total",
  "currency",
  "countries",
  "recipients",
  "categories"
)
export type AllowanceLimit = typeof AllowanceLimit.Type

export const AllowanceStatus = Schema.Literal("active", "expired", "revoked")
export type AllowanceStatus = typeof AllowanceStatus.Type

/** The stored row of an allowance (src/services/checkout/AllowancesRepo.ts). */
export const AllowanceRecord = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  clientId: Schema.String,
  currency: Schema.String,
  perCheckoutLimit: Schema.Int,
  period: AllowancePeriod,
  periodLimit: Schema.Int,
  totalLimit: Schema.Int,
  /** Null allows every country (and so for recipients and categories). */
  allowedCountries: Schema.NullOr(Schema.Array(Schema.String)),
  /** Lower-case e-mail addresses. */
  allowedRecipients: Schema.NullOr(Schema.Array(Schema.String)),
  allowedCategories: Schema.NullOr(Schema.Array(Schema.String)),
  /** The payment provider's token of the saved card. */
  paymentMethod: Schema.String,
  cardBrand: Schema.String,
  cardLast4: Schema.String,
  spentTotal: Schema.Int,
  periodStart: Schema.DateFromSelf,
  periodSpent: Schema.Int,
  expiresAt: Schema.DateFromSelf,
  createdAt: Schema.DateFromSelf,
  revokedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type AllowanceRecord = typeof AllowanceRecord.Type

export const LedgerKind = Schema.Literal("charge", "credit")

/** One ledger entry: a checkout's charge (amount > 0) or a refund's credit (amount < 0). */
export const LedgerEntryRecord = Schema.Struct({
  id: Schema.String,
  allowanceId: Schema.String,
  checkoutId: Schema.String,
  kind: LedgerKind,
  amount: Schema.Int,
  periodStart: Schema.DateFromSelf,
  reason: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf
})
export type LedgerEntryRecord = typeof LedgerEntryRecord.Type

/** The start of the UTC calendar period holding `at`. */
export const periodStartOf = (period: AllowancePeriod, at: Date): Date => {
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate())
  switch (period) {
    case "day":
      return new Date(day)
    case "week":
      // getUTCDay: Sunday 0 … Saturday 6; the week starts on Monday.
      return new Date(day - ((at.getUTCDay() + 6) % 7) * 86_400_000)
    case "month":
      return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1))
  }
}

/** The start of the period after the one starting at `start`. */
export const nextPeriodStart = (period: AllowancePeriod, start: Date): Date => {
  switch (period) {
    case "day":
      return new Date(start.getTime() + 86_400_000)
    case "week":
      return new Date(start.getTime() + 7 * 86_400_000)
    case "month":
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1))
  }
}

/** What was spent in the period holding `at`: the running sum when it is still that period's, else nothing. */
export const spentInPeriod = (row: AllowanceRecord, at: Date): number =>
  row.periodStart.getTime() === periodStartOf(row.period, at).getTime() ? row.periodSpent : 0

export const allowanceStatus = (row: AllowanceRecord, at: Date): AllowanceStatus =>
  row.revokedAt !== null ? "revoked" : row.expiresAt.getTime() <= at.getTime() ? "expired" : "active"

const Amount = Schema.Int.pipe(Schema.positive())

const Card = Schema.Struct({ brand: Schema.String, last4: Schema.String })

/** An allowance as the agent API shows it (`GET /v1/allowances`). */
export class Allowance extends Schema.Class<Allowance>("Allowance")({
  id: Schema.String,
  clientId: Schema.String,
  status: AllowanceStatus,
  currency: Schema.String,
  perCheckoutLimit: Amount.annotations({ description: "The most one checkout may cost" }),
  period: AllowancePeriod,
  periodLimit: Amount.annotations({ description: "The most spent per calendar period (UTC)" }),
  totalLimit: Amount.annotations({ description: "The most spent over the allowance's life" }),
  spentInPeriod: Schema.Int,
  spentTotal: Schema.Int,
  remainingInPeriod: Schema.Int.annotations({
    description: "What one checkout may still cost now: the least of every limit's remainder"
  }),
  periodResetsAt: Schema.String,
  allowedCountries: Schema.NullOr(Schema.Array(Schema.String)).annotations({ description: "Null: any country" }),
  allowedRecipients: Schema.NullOr(Schema.Array(Schema.String)).annotations({
    description: "Recipients' e-mail addresses; null: anyone"
  }),
  allowedCategories: Schema.NullOr(Schema.Array(Schema.String)).annotations({ description: "Null: any category" }),
  card: Card,
  expiresAt: Schema.String,
  createdAt: Schema.String,
  revokedAt: Schema.NullOr(Schema.String)
}) {}

export class AllowanceList extends Schema.Class<AllowanceList>("AllowanceList")({
  allowances: Schema.Array(Allowance),
  setupUrl: Schema.String.annotations({
    description:
      "The hosted page where the user sets up (or replaces) this client's allowance; hand it to the user, as a paymentUrl"
  })
}) {}

const Email = Schema.String.pipe(
  Schema.maxLength(254),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "Expected an e-mail address" })
)

/** What the creation page submits, as the service takes it (the card goes to the payment provider alone). */
export const AllowanceTerms = Schema.Struct({
  currency: Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/, { message: () => "Expected a 3-letter currency code" })),
  perCheckoutLimit: Amount,
  period: AllowancePeriod,
  periodLimit: Amount,
  totalLimit: Amount,
  allowedCountries: Schema.NullOr(Schema.Array(AddressCountryCode).pipe(Schema.minItems(1), Schema.maxItems(250))),
  allowedRecipients: Schema.NullOr(Schema.Array(Email).pipe(Schema.minItems(1), Schema.maxItems(50))),
  allowedCategories: Schema.NullOr(
    Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))).pipe(
      Schema.minItems(1),
      Schema.maxItems(50)
    )
  ),
  expiresInDays: Schema.Int.pipe(Schema.between(1, ALLOWANCE_MAX_DAYS))
})
export type AllowanceTerms = typeof AllowanceTerms.Type
