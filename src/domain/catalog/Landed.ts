import type { LandedPrice, ProductType } from "./CatalogV3.js"

/**
 * The catalog judged and priced on landed totals in one country (docs/catalog.md, "v2 reads"): what the
 * LandedCatalog service returns for a budget ("what can one gift of at most this much be, delivered there")
 * and for one variant. Amounts are `{amount, currency}` in the country's minor units.
 */

export interface LandedVariant {
  readonly id: string
  readonly productId: string
  readonly title: string
  /** Option name → value (`{size: "M", colour: "Navy"}`). */
  readonly selectedOptions: Readonly<Record<string, string>>
  /** Absolute URLs: the variant's own image, else its product's images. */
  readonly images: ReadonlyArray<string>
  readonly type: ProductType
  /** The countries it can be ordered for now: priced, in stock (or untracked), shipping there. */
  readonly availableIn: ReadonlyArray<string>
  /** The landed price in the country asked for; null when it cannot be ordered there. */
  readonly price: LandedPrice | null
}

export interface LandedProduct {
  readonly id: string
  readonly title: string
  readonly brand: { readonly id: string; readonly name: string } | null
  /** Of all its variants: `physical`, `digital` or both, in that order. */
  readonly types: ReadonlyArray<ProductType>
  /** Absolute URLs, in display order. */
  readonly images: ReadonlyArray<string>
  /** The variants that fit: orderable in the country, with a landed total within the budget. */
  readonly variants: ReadonlyArray<LandedVariant>
}
