import { Schema } from "effect"
import { CatalogName } from "./Catalog.js"
import { ProductOptionRecord, TagRef } from "./CatalogV3.js"
import { Personalization } from "./Personalization.js"

/**
 * The catalog's rows as its repositories read them (src/services/catalog/*Repo.ts): one record per read of the
 * catalog, whichever API line presents it. Prices are USD cents as stored; the services price them for a
 * country, and each line presents the result. Image paths are as stored (relative `/images/…` or absolute).
 */

/** One variant of a product summary: its price and its location's stock and countries. */
export const SummaryVariantRecord = Schema.Struct({
  id: Schema.String,
  priceUsd: Schema.NullOr(Schema.Number),
  stock: Schema.NullOr(Schema.Number),
  shipsTo: Schema.NullOr(Schema.Array(Schema.String))
})
export type SummaryVariantRecord = typeof SummaryVariantRecord.Type

/** A product summary: the product, its brand, category, images, tags, options and variants. */
export const SummaryRecord = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  brand: Schema.NullOr(Schema.String),
  category: Schema.String,
  catalog: Schema.String,
  images: Schema.Array(Schema.String),
  tags: Schema.Array(Schema.String),
  options: Schema.NullOr(
    Schema.Array(
      Schema.Struct({ name: Schema.String, displayName: Schema.String, values: Schema.Array(Schema.String) })
    )
  ),
  variants: Schema.NullOr(Schema.Array(SummaryVariantRecord))
})
export type SummaryRecord = typeof SummaryRecord.Type

/** A variant as the agent API shows it. */
export const VariantRecord = Schema.Struct({
  id: Schema.String,
  productId: Schema.String,
  title: Schema.String,
  selectedOptions: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  imageUrl: Schema.NullOr(Schema.String),
  priceUsd: Schema.NullOr(Schema.Number),
  shippingRequired: Schema.Boolean,
  isDigital: Schema.Boolean,
  personalizationRequired: Schema.Boolean,
  descriptionHtml: Schema.NullOr(Schema.String),
  details: Schema.Unknown
})
export type VariantRecord = typeof VariantRecord.Type

/** A collection, with its tags and the USD range of its products' prices (null when it holds none). */
export const CollectionRecord = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  imageUrl: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  tags: Schema.Array(TagRef),
  minUsd: Schema.NullOr(Schema.Number),
  maxUsd: Schema.NullOr(Schema.Number)
})
export type CollectionRecord = typeof CollectionRecord.Type

/** A variant judged on its landed amounts in one country (the v2 reads). */
export const LandedVariantRecord = Schema.Struct({
  id: Schema.String,
  productId: Schema.String,
  title: Schema.String,
  selectedOptions: Schema.Record({ key: Schema.String, value: Schema.String }),
  imageUrl: Schema.NullOr(Schema.String),
  productImages: Schema.Array(Schema.String),
  isDigital: Schema.Boolean,
  /** Countries it ships to when it can be ordered at all (priced, in stock or untracked); else none. */
  availableIn: Schema.Array(Schema.String),
  /** Its landed amounts in the country's minor units; null when it has no price. */
  landed: Schema.NullOr(
    Schema.Struct({
      item: Schema.Number,
      shipping: Schema.Number,
      duties: Schema.Number,
      serviceFee: Schema.Number,
      total: Schema.Number
    })
  )
})
export type LandedVariantRecord = typeof LandedVariantRecord.Type

/** A product of the v2 reads: its brand, images and the types of its variants. */
export const LandedProductRecord = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  brandId: Schema.NullOr(Schema.String),
  brandName: Schema.NullOr(Schema.String),
  images: Schema.Array(Schema.String),
  types: Schema.Array(Schema.Literal("physical", "digital"))
})
export type LandedProductRecord = typeof LandedProductRecord.Type

/**
 * A product as the company API lists it. Its statement names its columns in camelCase and runs without the
 * client's name transform, its arrays come as JSON, and its rows are checked against the schema rather than
 * decoded into new objects: an export reads every product of the catalog (docs/performance.md, `bench:export`).
 */
export const ProductRecord = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  catalog: CatalogName,
  category: Schema.String,
  brandId: Schema.NullOr(Schema.String),
  brandName: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  /** `created_at` to the microsecond, for the cursor. */
  createdKey: Schema.String,
  minPriceUsd: Schema.Number,
  maxPriceUsd: Schema.Number,
  variantCount: Schema.Number,
  /** 0: a digital product. */
  physicalVariantCount: Schema.Number,
  images: Schema.Array(Schema.String),
  /** Read only when asked for (`include=tags`, `fields=options`). */
  tags: Schema.NullOr(Schema.Array(TagRef)),
  options: Schema.NullOr(Schema.Array(ProductOptionRecord)),
  /** The product's place in the collection being listed; null elsewhere. */
  position: Schema.NullOr(Schema.Number)
})
export type ProductRecord = typeof ProductRecord.Type

/** A variant as the company API lists it, its options in the order of the product's. */
export const ProductVariantRecord = Schema.Struct({
  id: Schema.String,
  productId: Schema.String,
  title: Schema.String,
  selectedOptions: Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String })),
  imageUrl: Schema.NullOr(Schema.String),
  personalization: Schema.NullOr(Personalization),
  descriptionHtml: Schema.NullOr(Schema.String)
})
export type ProductVariantRecord = typeof ProductVariantRecord.Type

/** How a variant is shown on a quote or order line: its product, its own title and its image (as stored). */
export const VariantLabel = Schema.Struct({
  productId: Schema.String,
  productTitle: Schema.String,
  variantTitle: Schema.String,
  imageUrl: Schema.NullOr(Schema.String)
})
export type VariantLabel = typeof VariantLabel.Type

/**
 * A variant a gift may offer, with its product's title, description and first image: one per variant of a
 * product, or of each product of a collection in the collection's order.
 */
export const OfferedVariant = Schema.Struct({
  productId: Schema.String,
  productTitle: Schema.String,
  description: Schema.NullOr(Schema.String),
  imageUrl: Schema.NullOr(Schema.String),
  variantId: Schema.String,
  variantTitle: Schema.String,
  selectedOptions: Schema.Record({ key: Schema.String, value: Schema.String })
})
export type OfferedVariant = typeof OfferedVariant.Type

/**
 * What placing an order reads of its variant, in one statement: its product and titles (the order's line),
 * where it ships (none without a location), and what its landed price is computed from.
 */
export const OrderVariant = Schema.Struct({
  productId: Schema.String,
  productTitle: Schema.String,
  variantTitle: Schema.String,
  categoryId: Schema.String,
  priceUsd: Schema.NullOr(Schema.Int),
  isDigital: Schema.Boolean,
  originWarehouse: Schema.NullOr(Schema.String),
  weightClass: Schema.NullOr(Schema.String),
  stock: Schema.NullOr(Schema.Int),
  shipsTo: Schema.NullOr(Schema.Array(Schema.String))
})
export type OrderVariant = typeof OrderVariant.Type

/** A variant's product and its location's stock and countries (none without a location). */
export const VariantLocation = Schema.Struct({
  productId: Schema.String,
  stock: Schema.NullOr(Schema.Number),
  shipsTo: Schema.NullOr(Schema.Array(Schema.String))
})
export type VariantLocation = typeof VariantLocation.Type
