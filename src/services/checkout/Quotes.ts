import { Clock, Effect, Option } from "effect"
import { VariantNotFound } from "../../domain/catalog/Errors.js"
import { QUOTE_TTL_MINUTES, Quote } from "../../domain/checkout/Checkout.js"
import { QuoteNotFound, VariantNotShippable, VariantOutOfStock } from "../../domain/checkout/Errors.js"
import type { QuoteRecord } from "../../domain/checkout/Records.js"
import { FieldIssue, InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { absoluteUrl, Catalog, PublicUrl } from "../catalog/Catalog.js"
import { formatMoney, landedAmounts, landedInput, Pricing } from "../catalog/Pricing.js"
import { QuotesRepo } from "./QuotesRepo.js"

/**
 * Quotes (spec "Quote"; docs/decisions/0025-quotes-and-checkouts.md): the all-in price of one unit of a variant in a
 * country, from the Pricing service, locked for 15 minutes. A quote is stored as priced, so a checkout charges exactly
 * what the user was shown even if prices or exchange rates move in between.
 */

export const toQuote = (row: QuoteRecord): Quote =>
  Quote.make({
    id: row.id,
    variantId: row.variantId,
    productId: row.productId,
    productTitle: row.productTitle,
    variantTitle: row.variantTitle,
    imageUrl: row.imageUrl,
    countryCode: row.countryCode,
    quantity: 1,
    currency: row.currency,
    itemAmount: row.itemAmount,
    shippingAmount: row.shippingAmount,
    dutiesAmount: row.dutiesAmount,
    serviceFeeAmount: row.serviceFeeAmount,
    totalAmount: row.totalAmount,
    totalDisplay: row.totalDisplay,
    shippingRequired: row.shippingRequired,
    expiresAt: row.expiresAt.toISOString()
  })

export class Quotes extends Effect.Service<Quotes>()("Quotes", {
  dependencies: [Catalog.Default, Pricing.Default, QuotesRepo.Default],
  effect: Effect.gen(function* () {
    const repo = yield* QuotesRepo
    const catalog = yield* Catalog
    const pricing = yield* Pricing
    const publicUrl = yield* PublicUrl

    /** Prices one unit of `variantId` for `countryCode` and locks the price for 15 minutes. */
    const create = Effect.fn("Quotes.create")(function* (userId: string, variantId: string, countryCode: string) {
      const reference = yield* pricing.reference()
      const country = reference.country.get(countryCode)
      if (country === undefined) {
        return yield* new InvalidRequest({
          message: `Country ${countryCode} is not supported.`,
          errors: [FieldIssue.make({ path: "countryCode", message: `Unsupported country: ${countryCode}` })]
        })
      }
      const [variant] = yield* pricing.variants(Option.some([variantId]))
      const label = yield* catalog.variantLabel(variantId)
      if (variant === undefined || Option.isNone(label)) {
        return yield* new VariantNotFound({ message: `No variant ${variantId}.`, variantId })
      }
      const { priceUsd } = variant
      if (priceUsd === null || !variant.shipsTo.includes(country.code)) {
        return yield* new VariantNotShippable({
          message: `Variant ${variantId} cannot be delivered to ${country.code}.`,
          variantId,
          countryCode: country.code
        })
      }
      if (variant.stock !== null && variant.stock <= 0) {
        return yield* new VariantOutOfStock({ message: `Variant ${variantId} is out of stock.`, variantId })
      }
      const amounts = landedAmounts(landedInput(reference, { ...variant, priceUsd }, country))
      const now = yield* Clock.currentTimeMillis
      const row: QuoteRecord = {
        id: yield* makeId,
        userId,
        variantId,
        productId: variant.productId,
        productTitle: label.value.productTitle,
        variantTitle: label.value.variantTitle,
        imageUrl: absoluteUrl(publicUrl, label.value.imageUrl),
        countryCode: country.code,
        currency: country.currency,
        itemAmount: amounts.item,
        shippingAmount: amounts.shipping,
        dutiesAmount: amounts.duties,
        serviceFeeAmount: amounts.serviceFee,
        totalAmount: amounts.total,
        totalDisplay: formatMoney(amounts.total, country.currency, country.locale).display,
        shippingRequired: !variant.isDigital,
        checkoutId: null,
        expiresAt: new Date(now + QUOTE_TTL_MINUTES * 60_000),
        createdAt: new Date(now)
      }
      yield* repo.insert(row)
      return toQuote(row)
    })

    /** The user's quote (another user's is not found). */
    const get = Effect.fn("Quotes.get")(function* (userId: string, quoteId: string) {
      const row = yield* repo.findForUser(quoteId, userId)
      if (Option.isNone(row)) return yield* new QuoteNotFound({ message: `No quote ${quoteId}.`, quoteId })
      return row.value
    })

    return { create, get } as const
  })
}) {}
