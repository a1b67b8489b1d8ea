import type { LandedProduct, LandedVariant } from "../../domain/catalog/Landed.js"

/**
 * The company API's version 2 presentation of the catalog (docs/decisions/0044-v2-catalog-reads.md, docs/catalog.md):
 * `optionAttributes`, `mediaItems`, `types[]`, and `pricing` keyed by country, as `cost`, `totalFee` (shipping
 * and the service fee), `totalTax` (duties) and `totalFinalCost` (the landed total). A key without
 * `products:read:prices` gets no `pricing` at all.
 */

const mediaItems = (images: ReadonlyArray<string>) => images.map((url) => ({ type: "image" as const, url }))

export const variantV2 = (variant: LandedVariant, countryCode: string, withPrices: boolean) => {
  const { price } = variant
  const pricing =
    price === null
      ? {}
      : {
          [countryCode]: {
            cost: price.item,
            totalFee: { amount: price.shipping.amount + price.serviceFee.amount, currency: price.total.currency },
            totalTax: price.duties,
            totalFinalCost: price.total
          }
        }
  return {
    id: variant.id,
    productId: variant.productId,
    title: variant.title,
    optionAttributes: variant.selectedOptions,
    mediaItems: mediaItems(variant.images),
    types: [variant.type],
    ...(withPrices ? { pricing } : {}),
    supportedCountries: variant.availableIn
  }
}

export const productV2 = (product: LandedProduct, countryCode: string, withPrices: boolean) => ({
  id: product.id,
  title: product.title,
  brand: product.brand,
  types: product.types,
  mediaItems: mediaItems(product.images),
  variants: product.variants.map((variant) => variantV2(variant, countryCode, withPrices))
})
