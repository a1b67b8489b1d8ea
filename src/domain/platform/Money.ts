import { Schema } from "effect"

/** An ISO 4217 currency code: exactly 3 characters (upper case). */
export const CurrencyCode = Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/), Schema.brand("CurrencyCode"))
export type CurrencyCode = typeof CurrencyCode.Type

/** An ISO 3166-1 alpha-2 country code, upper case. */
export const CountryCode = Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/), Schema.brand("CountryCode"))
export type CountryCode = typeof CountryCode.Type

/**
 * An amount of money: `amount` in the currency's minor units (cents; yen for JPY), never a float;
 * `display` formatted by `Intl.NumberFormat` in the country's locale (src/services/catalog/Pricing.ts).
 */
export class Money extends Schema.Class<Money>("Money")({
  amount: Schema.Int,
  currency: Schema.String.pipe(Schema.length(3)),
  display: Schema.String
}) {}

/** `{min, max}` of Money, as a product summary's `priceRange`. */
export class MoneyRange extends Schema.Class<MoneyRange>("MoneyRange")({
  min: Money,
  max: Money
}) {}
