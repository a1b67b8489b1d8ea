import { Schema } from "effect"
import type { CatalogName } from "./Catalog.js"
import type { Personalization } from "./Personalization.js"

/**
 * The catalog as the company API reads it (docs/decisions/0042-v3-catalog.md, docs/catalog.md "Catalog (v3)"): the same
 * products, variants, collections and tags as the agent API, as records the CatalogV3 service returns and
 * each API line presents. Amounts are `{amount, currency}` in the currency's minor units
 * (docs/decisions/0036-company-resources.md).
 */

/** Money on the company API: `amount` in the currency's minor units. */
export const Amount = Schema.Struct({ amount: Schema.Int, currency: Schema.String })
export type Amount = typeof Amount.Type

export const AmountRange = Schema.Struct({ min: Amount, max: Amount })
export type AmountRange = typeof AmountRange.Type

/** `physical` when any variant ships; `digital` when every variant is delivered online. */
export const ProductType = Schema.Literal("physical", "digital")
export type ProductType = typeof ProductType.Type

export const TagRef = Schema.Struct({ id: Schema.String, name: Schema.String })
export type TagRef = typeof TagRef.Type

export const ProductOptionRecord = Schema.Struct({
  name: Schema.String,
  displayName: Schema.String,
  values: Schema.Array(Schema.String)
})

export interface CatalogProduct {
  readonly id: string
  readonly title: string
  readonly catalog: CatalogName
  readonly type: ProductType
  readonly category: string
  readonly brand: { readonly id: string; readonly name: string } | null
  /** Absolute image URLs, in display order. */
  readonly images: ReadonlyArray<string>
  /** Read when asked for (`include=tags`). */
  readonly tags?: ReadonlyArray<TagRef>
  /** Read when asked for (`fields=options`). */
  readonly options?: ReadonlyArray<typeof ProductOptionRecord.Type>
  readonly variantsCount: number
  /** The item prices of its priced variants, in the listing country's currency. */
  readonly priceRange: AmountRange | null
  readonly createdAt: Date
}

/** A variant's landed price for one country, in its currency (docs/pricing.md); `total` is the sum. */
export interface LandedPrice {
  readonly item: Amount
  readonly shipping: Amount
  readonly duties: Amount
  readonly serviceFee: Amount
  readonly total: Amount
}

export interface CatalogVariant {
  readonly id: string
  readonly productId: string
  readonly title: string
  /** In the order of the product's options. */
  readonly selectedOptions: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly images: ReadonlyArray<string>
  /** What a buyer may or must specify to personalize it; null when it takes none. */
  readonly personalization: Personalization | null
  readonly descriptionHtml: string | null
  /** null: not for sale. */
  readonly price: LandedPrice | null
}

export interface CatalogCollection {
  readonly id: string
  readonly name: string
  readonly description: string | null
  readonly images: ReadonlyArray<string>
  readonly tags: ReadonlyArray<TagRef>
  /** Over its products' item prices, in the listing country's currency; null when it holds none. */
  readonly priceRange: AmountRange | null
  readonly createdAt: Date
}
