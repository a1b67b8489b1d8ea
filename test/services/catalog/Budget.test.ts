import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { type BudgetKind, parseBudget } from "../../../src/services/catalog/Budget.js"

const none = undefined

/** [prose, context currency, kind, currency, currency named?, min, max], amounts in minor units. */
type Parsed = readonly [string, string, BudgetKind, string, boolean, number | undefined, number | undefined]

const parsed: ReadonlyArray<Parsed> = [
  // upper bounds
  ["under 50", "USD", "max", "USD", false, none, 5000],
  ["under $50", "USD", "max", "USD", true, none, 5000],
  ["below 50", "EUR", "max", "EUR", false, none, 5000],
  ["less than €40.50", "USD", "max", "EUR", true, none, 4050],
  ["up to 1,200", "USD", "max", "USD", false, none, 120000],
  ["max 30", "USD", "max", "USD", false, none, 3000],
  ["30 max", "USD", "max", "USD", false, none, 3000],
  ["no more than £20", "USD", "max", "GBP", true, none, 2000],
  ["at most 75", "USD", "max", "USD", false, none, 7500],
  ["not more than fifty", "EUR", "max", "EUR", false, none, 5000],
  ["50 dollars or less", "USD", "max", "USD", true, none, 5000],
  ["50 and under", "USD", "max", "USD", false, none, 5000],
  ["< 25", "USD", "max", "USD", false, none, 2500],
  // lower bounds
  ["over 100", "USD", "min", "USD", false, 10000, none],
  ["above ¥5000", "USD", "min", "JPY", true, 5000, none],
  ["more than 5k", "USD", "min", "USD", false, 500000, none],
  ["at least 20", "USD", "min", "USD", false, 2000, none],
  ["from 80", "USD", "min", "USD", false, 8000, none],
  ["50+", "USD", "min", "USD", false, 5000, none],
  ["100 or more", "GBP", "min", "GBP", false, 10000, none],
  ["over 0", "USD", "min", "USD", false, 0, none],
  // ranges
  ["between 20 and 40", "USD", "between", "USD", false, 2000, 4000],
  ["between $20 and $40", "USD", "between", "USD", true, 2000, 4000],
  ["20-40", "USD", "between", "USD", false, 2000, 4000],
  ["20 – 40", "USD", "between", "USD", false, 2000, 4000],
  ["20—40 EUR", "USD", "between", "EUR", true, 2000, 4000],
  ["$20 to $40", "USD", "between", "USD", true, 2000, 4000],
  ["from 50 to 80 euros", "USD", "between", "EUR", true, 5000, 8000],
  ["from 80 to 20", "USD", "between", "USD", false, 2000, 8000],
  ["80-20", "USD", "between", "USD", false, 2000, 8000],
  ["1k-2.5k", "USD", "between", "USD", false, 100000, 250000],
  ["0-50", "USD", "between", "USD", false, 0, 5000],
  ["over 20 and under 50", "USD", "between", "USD", false, 2000, 5000],
  ["at least 20, but no more than 50", "USD", "between", "USD", false, 2000, 5000],
  ["over 20 and up to 50", "USD", "between", "USD", false, 2000, 5000],
  ["between fifty and a hundred", "USD", "between", "USD", false, 5000, 10000],
  // approximations: ±20 %, rounded half up in minor units
  ["around 50", "USD", "around", "USD", false, 4000, 6000],
  ["about $45", "USD", "around", "USD", true, 3600, 5400],
  ["roughly 100 EUR", "USD", "around", "EUR", true, 8000, 12000],
  ["~30", "USD", "around", "USD", false, 2400, 3600],
  ["approximately ¥5000", "USD", "around", "JPY", true, 4000, 6000],
  ["approx. 12.34", "USD", "around", "USD", false, 987, 1481],
  ["around ¥7", "JPY", "around", "JPY", true, 6, 8],
  ["50ish", "USD", "around", "USD", false, 4000, 6000],
  ["50 or so", "USD", "around", "USD", false, 4000, 6000],
  ["about 20-30", "USD", "between", "USD", false, 2000, 3000],
  ["exactly 40", "USD", "exact", "USD", false, 4000, 4000],
  // bare amounts are an upper bound
  ["50", "USD", "max", "USD", false, none, 5000],
  ["50", "JPY", "max", "JPY", false, none, 50],
  ["$40", "USD", "max", "USD", true, none, 4000],
  // `$` is the context currency when that currency uses `$`, else USD
  ["$40", "CAD", "max", "CAD", true, none, 4000],
  ["$40", "MXN", "max", "MXN", true, none, 4000],
  ["$40", "EUR", "max", "USD", true, none, 4000],
  ["$50 CAD", "USD", "max", "CAD", true, none, 5000],
  ["C$50", "USD", "max", "CAD", true, none, 5000],
  ["US$50", "AUD", "max", "USD", true, none, 5000],
  ["50 bucks", "AUD", "max", "AUD", true, none, 5000],
  ["50 dollars", "EUR", "max", "USD", true, none, 5000],
  // `¥` is JPY unless the context currency is CNY; `£`, `₹`, `kr`
  ["¥5000", "USD", "max", "JPY", true, none, 5000],
  ["¥5000", "CNY", "max", "CNY", true, none, 500000],
  ["5000 yen", "USD", "max", "JPY", true, none, 5000],
  ["£30", "USD", "max", "GBP", true, none, 3000],
  ["₹2,000", "USD", "max", "INR", true, none, 200000],
  ["500 kr", "SEK", "max", "SEK", true, none, 50000],
  ["500kr", "NOK", "max", "NOK", true, none, 50000],
  // ISO codes before, after, attached, any case
  ["50 EUR", "USD", "max", "EUR", true, none, 5000],
  ["EUR 50", "USD", "max", "EUR", true, none, 5000],
  ["usd50", "EUR", "max", "USD", true, none, 5000],
  ["50chf", "USD", "max", "CHF", true, none, 5000],
  ["under 80 Sek", "USD", "max", "SEK", true, none, 8000],
  ["50 ALL", "USD", "max", "ALL", true, none, 50],
  // numbers: separators, decimals, k, words, rounding half up
  ["$1,200.50", "USD", "max", "USD", true, none, 120050],
  ["under 12,345,678", "USD", "max", "USD", false, none, 1234567800],
  ["2.5k", "USD", "max", "USD", false, none, 250000],
  ["1.5K INR", "USD", "max", "INR", true, none, 150000],
  ["$.99", "USD", "max", "USD", true, none, 99],
  ["$0.125", "USD", "max", "USD", true, none, 13],
  ["¥5000.5", "JPY", "max", "JPY", true, none, 5001],
  ["1.200", "KWD", "max", "KWD", false, none, 1200],
  ["twenty-five euros", "USD", "max", "EUR", true, none, 2500],
  ["under a hundred quid", "USD", "max", "GBP", true, none, 10000],
  ["one thousand two hundred fifty", "USD", "max", "USD", false, none, 125000],
  // case, spacing, punctuation, fillers
  ["  UNDER    $50  ", "USD", "max", "USD", true, none, 5000],
  ["Between 20 AND 40", "USD", "between", "USD", false, 2000, 4000],
  ["Budget: under $50 per gift!", "USD", "max", "USD", true, none, 5000],
  ["ＵＳＤ　５０", "EUR", "max", "USD", true, none, 5000]
]

/** [prose, context currency, what the message must say]. */
type Rejected = readonly [string, string, RegExp]

const rejected: ReadonlyArray<Rejected> = [
  ["", "USD", /empty/],
  ["   ", "USD", /empty/],
  ["something nice", "USD", /did not understand "nice"/],
  ["cheap", "USD", /did not understand "cheap"/],
  ["between 50", "USD", /"between" needs two amounts/],
  ["under", "USD", /"under" needs an amount/],
  ["under -5", "USD", /negative \("-5"\)/],
  ["under 0", "USD", /more than zero/],
  ["around 0", "USD", /more than zero/],
  ["not cheap", "EUR", /did not understand "not"/],
  ["50 80", "USD", /cannot combine "50" with "80"/],
  ["50 to", "USD", /needs a second amount/],
  ["over 50 and under 20", "USD", /lower limit \("50"\) is above the upper limit \("20"\)/],
  ["1.200,50", "EUR", /"1\.200,50" is not a number.*1,200\.50/],
  ["40,50", "EUR", /"40,50" is not a number/],
  ["€1.200", "EUR", /"1\.200" is ambiguous.*1200 or 1\.20/],
  ["€50 to $80", "USD", /two currencies.*EUR.*USD/],
  ["500 kr", "USD", /"kr" could be DKK, ISK, NOK or SEK/],
  ["50 pesos", "USD", /"pesos" could be .*MXN/],
  ["USD", "USD", /no amount/],
  ["50 all", "USD", /did not understand "all"/],
  ["🎁 under 50", "USD", /did not understand "🎁"/],
  ["99999999999999999999", "USD", /too large/],
  ["under 50", "XYZ", /unknown currency "XYZ"/]
]

describe("parseBudget", () => {
  // Plain loops rather than `it.each`: `it.each` would read the `$50` in a name as a parameter.
  for (const [prose, context, kind, currency, currencyNamed, min, max] of parsed) {
    it(`${JSON.stringify(prose)} with context ${context}`, () => {
      expect(parseBudget(prose, { currency: context })).toStrictEqual(
        Either.right({ currency, currencyNamed, min, max, kind })
      )
    })
  }

  for (const [prose, context, message] of rejected) {
    it(`rejects ${JSON.stringify(prose)} with context ${context}`, () => {
      const result = parseBudget(prose, { currency: context })
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left._tag).toBe("BudgetParseError")
        expect(result.left.input).toBe(prose)
        expect(result.left.message).toMatch(message)
      }
    })
  }

  it("never throws, and returns safe non-negative integers with min <= max", () => {
    const words = fc.constantFrom(
      "under",
      "between",
      "and",
      "to",
      "-",
      "–",
      "~",
      "around",
      "$",
      "€",
      "¥",
      "kr",
      "k",
      "EUR",
      "fifty",
      "a hundred",
      "1,200.50",
      "1.200",
      ".5",
      "0",
      "99999999999999999999",
      "over",
      "max",
      "+",
      "ish"
    )
    const phrase = fc.oneof(
      fc.string({ maxLength: 80, unit: "binary" }),
      fc.array(fc.oneof(words, fc.nat().map(String)), { maxLength: 8 }).map((parts) => parts.join(" "))
    )
    fc.assert(
      fc.property(phrase, fc.constantFrom("USD", "JPY", "EUR", "SEK", "CAD", "KWD"), (prose, currency) => {
        const result = parseBudget(prose, { currency })
        if (Either.isRight(result)) {
          const { min, max } = result.right
          for (const amount of [min, max]) {
            if (amount !== undefined) expect(Number.isSafeInteger(amount) && amount >= 0).toBe(true)
          }
          if (min !== undefined && max !== undefined) expect(min).toBeLessThanOrEqual(max)
        } else {
          expect(result.left.message.length).toBeGreaterThan(0)
        }
      }),
      { numRuns: 2000 }
    )
  })
})
