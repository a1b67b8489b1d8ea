import { Clock, Duration, Effect, Option, Ref } from "effect"
import { CountryAvailability, PriceBreakdown } from "../../domain/catalog/Catalog.js"
import { FieldIssue, InvalidRequest, NotFound } from "../../domain/platform/Errors.js"
import { Money } from "../../domain/platform/Money.js"
import { outsideTransactions } from "../platform/Signals.js"
import { type FeeRuleRow, PricingRepo, type PricingVariant } from "./PricingRepo.js"

/**
 * Landed pricing (docs/pricing.md): what one unit of a variant costs delivered to a country, all in the
 * country's currency, in integer minor units:
 *
 *   total = item + shipping + duties + service fee
 *
 * 1. item       = convert(price_usd)                                     (half-up to the minor unit)
 * 2. shipping   = 0 if digital, else convert(rate[origin warehouse][destination zone][weight class])
 * 3. duties     = 0 if digital, domestic, or item <= de-minimis (in the destination currency);
 *                 else half-up(item × rate_bps / 10 000), rate per category per destination
 * 4. serviceFee = clamp(half-up(item × fee_bps / 10 000), convert(min_usd), convert(max_usd))
 * 5. total      = the exact sum of the four
 *
 * `convert(usd)` = half-up(usd_cents × fx_rate × 10^digits / 100), computed exactly with BigInt from the
 * decimal FX rate; `digits` is the currency's minor-unit count from Intl (JPY and KRW 0).
 * The pure core (`landedAmounts`, `convertUsd`, `formatMoney`) is exported for the property tests.
 */

// ---------------------------------------------------------------------------------------------------------
// Pure core

/** Minor-unit digits of a currency, from Intl (USD 2, JPY 0, KRW 0). */
const digitsCache = new Map<string, number>()
export const minorDigits = (currency: string): number => {
  let digits = digitsCache.get(currency)
  if (digits === undefined) {
    digits = new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2
    digitsCache.set(currency, digits)
  }
  return digits
}

/** `n / d` rounded half-up, for n >= 0 and d > 0. */
const divHalfUp = (n: bigint, d: bigint): bigint => (2n * n + d) / (2n * d)

/** Parsed decimals by their text: the FX rates, one per supported country, parsed once each. */
const decimalsCache = new Map<string, { readonly numerator: bigint; readonly scale: number }>()

/** A non-negative decimal string (`"151.50"`) as an exact fraction `numerator / 10^scale`. */
const parseDecimal = (text: string): { readonly numerator: bigint; readonly scale: number } => {
  let parsed = decimalsCache.get(text)
  if (parsed === undefined) {
    const match = /^(\d+)(?:\.(\d+))?$/.exec(text.trim())
    if (match === null) throw new RangeError(`not a non-negative decimal: ${text}`)
    const fraction = match[2] ?? ""
    parsed = { numerator: BigInt(match[1] + fraction), scale: fraction.length }
    decimalsCache.set(text, parsed)
  }
  return parsed
}

/** USD cents to the minor units of a currency with `digits` digits at `fxRate` per USD, half-up. */
export const convertUsd = (usdCents: number, fxRate: string, digits: number): number => {
  if (!Number.isSafeInteger(usdCents) || usdCents < 0) throw new RangeError(`not a USD amount: ${usdCents}`)
  const { numerator, scale } = parseDecimal(fxRate)
  return Number(divHalfUp(BigInt(usdCents) * numerator * 10n ** BigInt(digits), 100n * 10n ** BigInt(scale)))
}

/** Minor units of a currency with `digits` digits at `fxRate` per USD, back to USD cents, half-up. */
export const toUsd = (amount: number, fxRate: string, digits: number): number => {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`not an amount: ${amount}`)
  const { numerator, scale } = parseDecimal(fxRate)
  return Number(divHalfUp(BigInt(amount) * 100n * 10n ** BigInt(scale), numerator * 10n ** BigInt(digits)))
}

/**
 * The USD cents whose conversion (`convertUsd`) lies within `[min, max]` minor units of the destination
 * currency, as USD bounds: conversion is monotonic, so a price filter in any currency becomes a plain
 * range on `price_usd` that indexes and planner statistics understand. Exact, in integers:
 * `convertUsd(u) = ⌊(2uN + D) / 2D⌋` with `N = fx numerator × 10^digits`, `D = 100 × 10^fx scale`.
 */
export const usdRangeFor = (
  range: { readonly min: number | undefined; readonly max: number | undefined },
  fxRate: string,
  digits: number
): { readonly min: number | undefined; readonly max: number | undefined } => {
  const { numerator, scale } = parseDecimal(fxRate)
  const n = 2n * numerator * 10n ** BigInt(digits)
  const d = 100n * 10n ** BigInt(scale)
  const ceilDiv = (a: bigint, b: bigint) => (a <= 0n ? -(-a / b) : (a + b - 1n) / b)
  const min = range.min === undefined ? undefined : ceilDiv(2n * d * BigInt(range.min) - d, n)
  const max = range.max === undefined ? undefined : ceilDiv(2n * d * BigInt(range.max + 1) - d, n) - 1n
  return {
    min: min === undefined ? undefined : Number(min < 0n ? 0n : min),
    max: max === undefined ? undefined : Number(max)
  }
}

/** `amount × bps / 10 000`, half-up. */
export const applyBps = (amount: number, bps: number): number =>
  Number(divHalfUp(BigInt(amount) * BigInt(bps), 10_000n))

export type FeeRule = FeeRuleRow

/** Everything the arithmetic needs about one variant going to one country. */
export interface LandedInput {
  readonly itemUsd: number
  readonly isDigital: boolean
  /** The shipping rate for the variant's warehouse, the country's zone and the variant's weight class (0 for digital). */
  readonly shippingUsd: number
  /** Duties and import taxes for the variant's category in the country. */
  readonly dutyBps: number
  /** Warehouse and destination in the same customs area. */
  readonly domestic: boolean
  /** In the destination currency's minor units. */
  readonly deMinimis: number
  readonly fee: FeeRule
  readonly fxRate: string
  readonly digits: number
}

export interface LandedAmounts {
  readonly item: number
  readonly shipping: number
  readonly duties: number
  readonly serviceFee: number
  readonly total: number
}

/** The landed price in the destination currency's minor units, in the order documented above. */
export const landedAmounts = (input: LandedInput): LandedAmounts => {
  const convert = (usd: number) => convertUsd(usd, input.fxRate, input.digits)
  const item = convert(input.itemUsd)
  const shipping = input.isDigital ? 0 : convert(input.shippingUsd)
  const duties = input.isDigital || input.domestic || item <= input.deMinimis ? 0 : applyBps(item, input.dutyBps)
  const serviceFee = Math.min(
    Math.max(applyBps(item, input.fee.rateBps), convert(input.fee.minUsd)),
    convert(input.fee.maxUsd)
  )
  return { item, shipping, duties, serviceFee, total: item + shipping + duties + serviceFee }
}

const formatters = new Map<string, Intl.NumberFormat>()

/** Money with `display` from `Intl.NumberFormat(locale, {style: "currency", currency})`. */
export const formatMoney = (amount: number, currency: string, locale: string): Money => {
  const key = `${locale}|${currency}`
  let format = formatters.get(key)
  if (format === undefined) {
    format = new Intl.NumberFormat(locale, { style: "currency", currency })
    formatters.set(key, format)
  }
  const digits = minorDigits(currency)
  // amount / 10^digits as a decimal string, so that no float ever rounds the display.
  const sign = amount < 0 ? "-" : ""
  const abs = String(Math.abs(amount)).padStart(digits + 1, "0")
  const decimal = digits === 0 ? `${sign}${abs}` : `${sign}${abs.slice(0, -digits)}.${abs.slice(-digits)}`
  // Built from checked integers and Intl output: skip re-validation (this runs per price in every listing).
  return Money.make({ amount, currency, display: format.format(decimal as Intl.StringNumericLiteral) }, true)
}

// ---------------------------------------------------------------------------------------------------------
// Reference data and variants, as read from the database

export interface PricingCountry {
  readonly code: string
  readonly name: string
  readonly currency: string
  readonly locale: string
  readonly fxRate: string
  readonly shippingZone: string
  readonly customsArea: string
  readonly deMinimis: number
  readonly digits: number
  /** The country's bit in a product's `ships_to_mask` (migration 0022). */
  readonly maskBit: number
}

/** The pricing constants (seeded, docs/pricing.md), loaded in one go. */
export interface PricingReference {
  readonly countries: ReadonlyArray<PricingCountry>
  readonly country: ReadonlyMap<string, PricingCountry>
  readonly warehouseArea: ReadonlyMap<string, string>
  /** `origin|zone|weightClass` → USD cents. */
  readonly shipping: ReadonlyMap<string, number>
  /** `categoryId|countryCode` → basis points. */
  readonly duty: ReadonlyMap<string, number>
  readonly fee: FeeRule
}

export type { PricingVariant }

/** The pure input for a variant and a country, from the reference data. */
export const landedInput = (
  reference: PricingReference,
  variant: PricingVariant & { readonly priceUsd: number },
  country: PricingCountry
): LandedInput => {
  const origin = variant.originWarehouse
  const domestic = origin !== null && reference.warehouseArea.get(origin) === country.customsArea
  const shippingUsd =
    variant.isDigital || origin === null
      ? 0
      : (reference.shipping.get(`${origin}|${country.shippingZone}|${variant.weightClass}`) ?? 0)
  return {
    itemUsd: variant.priceUsd,
    isDigital: variant.isDigital,
    shippingUsd,
    dutyBps: reference.duty.get(`${variant.categoryId}|${country.code}`) ?? 0,
    domestic,
    deMinimis: country.deMinimis,
    fee: reference.fee,
    fxRate: country.fxRate,
    digits: country.digits
  }
}

/** In stock (or untracked) AND ships to the country AND has a price. */
export const isAvailable = (variant: PricingVariant, countryCode: string) =>
  variant.priceUsd !== null && (variant.stock === null || variant.stock > 0) && variant.shipsTo.includes(countryCode)

/** The availability entry of a variant for a country: pure, given the reference data. */
export const priceFor = (
  reference: PricingReference,
  variant: PricingVariant & { readonly priceUsd: number },
  country: PricingCountry
): CountryAvailability => {
  const amounts = landedAmounts(landedInput(reference, variant, country))
  const money = (amount: number) => formatMoney(amount, country.currency, country.locale)
  const breakdown = PriceBreakdown.make(
    {
      item: money(amounts.item),
      shipping: money(amounts.shipping),
      duties: money(amounts.duties),
      serviceFee: money(amounts.serviceFee),
      total: money(amounts.total)
    },
    true
  )
  return CountryAvailability.make(
    {
      countryCode: country.code,
      available: isAvailable(variant, country.code),
      price: breakdown.total,
      breakdown
    },
    true
  )
}

// ---------------------------------------------------------------------------------------------------------
// The service

/** How long the reference data is served before it is read again. */
const referenceTtl = Duration.minutes(1)

export class Pricing extends Effect.Service<Pricing>()("Pricing", {
  dependencies: [PricingRepo.Default],
  scoped: Effect.gen(function* () {
    const repo = yield* PricingRepo

    const loadReference = Effect.gen(function* () {
      const { countries, warehouses, shipping, duty, fees } = yield* repo.reference()
      const list = countries.map(
        (c): PricingCountry => ({ ...c, deMinimis: Number(c.deMinimis), digits: minorDigits(c.currency) })
      )
      const ref: PricingReference = {
        countries: list,
        country: new Map(list.map((c) => [c.code, c])),
        warehouseArea: new Map(warehouses.map((w) => [w.code, w.customsArea])),
        shipping: new Map(
          shipping.map((r) => [`${r.originWarehouse}|${r.shippingZone}|${r.weightClass}`, r.amountUsd])
        ),
        duty: new Map(duty.map((r) => [`${r.categoryId}|${r.countryCode}`, r.rateBps])),
        fee: fees[0] ?? { rateBps: 0, minUsd: 0, maxUsd: 0 }
      }
      return ref
    })

    /**
     * The reference data (a few hundred rows), read once a minute rather than five queries per request.
     * The seed calls `invalidateReference` after writing it; a seed run by another process is seen from
     * the first request after the minute (docs/pricing.md).
     *
     * No caller ever waits for another fiber's read: a caller inside a transaction holds a pooled
     * connection, and the other read may be waiting for one, which on embedded PGlite's one-connection pool
     * is a deadlock that stalls every statement of the instance (docs/operations.md). So a caller with no
     * copy reads it itself, on its own connection (its transaction's when it has one), and an expired copy
     * is still served while one background read, outside any transaction, replaces it.
     */
    // `generation` counts invalidations: a read that began before one is not kept.
    const cached = yield* Ref.make({
      generation: 0,
      copy: Option.none<{ readonly reference: PricingReference; readonly expiresAt: number }>()
    })
    const read = Effect.gen(function* () {
      const { generation } = yield* Ref.get(cached)
      const reference = yield* loadReference
      const expiresAt = (yield* Clock.currentTimeMillis) + Duration.toMillis(referenceTtl)
      yield* Ref.update(cached, (now) =>
        now.generation === generation ? { generation, copy: Option.some({ reference, expiresAt }) } : now
      )
      return reference
    })
    const refreshing = yield* Effect.makeSemaphore(1)
    const scope = yield* Effect.scope
    const refresh = read.pipe(
      refreshing.withPermitsIfAvailable(1),
      Effect.catchAllCause((cause) => Effect.logWarning("could not read the pricing reference data again", cause)),
      outsideTransactions,
      Effect.forkIn(scope)
    )
    const reference = Effect.fn("Pricing.reference")(function* () {
      const { copy } = yield* Ref.get(cached)
      if (Option.isNone(copy)) return yield* read
      if (copy.value.expiresAt <= (yield* Clock.currentTimeMillis)) yield* refresh
      return copy.value.reference
    })
    const invalidateReference = Ref.update(cached, ({ generation }) => ({
      generation: generation + 1,
      copy: Option.none()
    }))

    const variantRows = (ids: Option.Option<ReadonlyArray<string>>) => repo.variants(ids)

    /** Pricing facts of the given variants (all variants with `none`), by id. */
    const variants = Effect.fn("Pricing.variants")(function* (
      ids: Option.Option<ReadonlyArray<string>> = Option.none()
    ) {
      if (Option.isSome(ids) && ids.value.length === 0) return []
      return yield* variantRows(ids)
    })

    const priced = (variantId: string) =>
      Effect.gen(function* () {
        const [variant] = yield* variantRows(Option.some([variantId]))
        if (variant === undefined) return yield* new NotFound({ message: `No variant ${variantId}.` })
        const { priceUsd } = variant
        if (priceUsd === null) return yield* new NotFound({ message: `Variant ${variantId} is not for sale.` })
        return { ...variant, priceUsd }
      })

    const countryOf = (reference: PricingReference, code: string) => {
      const country = reference.country.get(code.toUpperCase())
      return country === undefined
        ? Effect.fail(
            new InvalidRequest({
              message: `Country ${code} is not supported.`,
              errors: [FieldIssue.make({ path: "country", message: `Unsupported country: ${code}` })]
            })
          )
        : Effect.succeed(country)
    }

    /** The landed price and availability of one unit of a variant in a country. */
    const quote = Effect.fn("Pricing.quote")(function* (variantId: string, countryCode: string) {
      const ref = yield* reference()
      const country = yield* countryOf(ref, countryCode)
      return priceFor(ref, yield* priced(variantId), country)
    })

    /** One entry per country (default: every supported country, in code order). */
    const availability = Effect.fn("Pricing.availability")(function* (
      variantId: string,
      countries?: ReadonlyArray<string>
    ) {
      const ref = yield* reference()
      const targets =
        countries === undefined ? ref.countries : yield* Effect.forEach(countries, (code) => countryOf(ref, code))
      const variant = yield* priced(variantId)
      return targets.map((country) => priceFor(ref, variant, country))
    })

    /** USD cents as Money in a country's currency (half-up), e.g. item prices in search results. */
    const convert = Effect.fn("Pricing.convert")(function* (usdCents: number, countryCode: string) {
      const country = yield* countryOf(yield* reference(), countryCode)
      return formatMoney(convertUsd(usdCents, country.fxRate, country.digits), country.currency, country.locale)
    })

    /** An amount in a country's currency (minor units) as USD cents, half-up: what company billing is debited. */
    const usdCentsOf = Effect.fn("Pricing.usdCentsOf")(function* (amount: number, countryCode: string) {
      const country = yield* countryOf(yield* reference(), countryCode)
      return toUsd(amount, country.fxRate, country.digits)
    })

    /** Supported countries, by code. */
    const countries = Effect.fn("Pricing.countries")(function* () {
      return (yield* reference()).countries
    })

    return { quote, availability, convert, usdCentsOf, countries, reference, invalidateReference, variants } as const
  })
}) {}
