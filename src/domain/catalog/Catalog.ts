import { Schema } from "effect"
import { Id } from "../platform/Ids.js"
import { Money, MoneyRange } from "../platform/Money.js"

/**
 * The catalog resources of the agent API, field for field as `spec/marketplace-agent-api.md` lists them
 * (docs/catalog.md). Every field is present in responses; nullable ones are present with `null`.
 */

/** Which catalog a product belongs to. */
export const CatalogName = Schema.Literal("marketplace", "swag")
export type CatalogName = typeof CatalogName.Type

/** One option of a product (`size`, `colour`, …) and its values, in display order. */
export class ProductOption extends Schema.Class<ProductOption>("ProductOption")({
  name: Schema.String,
  displayName: Schema.String,
  values: Schema.Array(Schema.String)
}) {}

export class ProductSummary extends Schema.Class<ProductSummary>("ProductSummary")({
  id: Id,
  title: Schema.String,
  brand: Schema.NullOr(Schema.String),
  category: Schema.String,
  catalog: Schema.String,
  imageUrl: Schema.NullOr(Schema.String),
  images: Schema.Array(Schema.String),
  tags: Schema.Array(Schema.String),
  priceRange: Schema.NullOr(MoneyRange),
  variantsCount: Schema.NullOr(Schema.Number),
  options: Schema.Array(ProductOption),
  /** Set only when the product has exactly one purchasable variant. */
  defaultVariantId: Schema.NullOr(Id)
}) {}

export class Variant extends Schema.Class<Variant>("Variant")({
  id: Id,
  productId: Id,
  title: Schema.String,
  selectedOptions: Schema.Record({ key: Schema.String, value: Schema.String }),
  imageUrl: Schema.NullOr(Schema.String),
  price: Schema.NullOr(Money),
  shippingRequired: Schema.Boolean,
  isDigital: Schema.Boolean,
  personalizationRequired: Schema.Boolean,
  descriptionHtml: Schema.NullOr(Schema.String),
  details: Schema.NullOr(Schema.Unknown)
}) {}

/** A collection's price range: plain numbers (minor units of the requested country's currency), not Money. */
export class CollectionPriceRange extends Schema.Class<CollectionPriceRange>("CollectionPriceRange")({
  min: Schema.Number,
  max: Schema.Number
}) {}

export class Collection extends Schema.Class<Collection>("Collection")({
  id: Id,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  imageUrl: Schema.NullOr(Schema.String),
  priceRange: Schema.NullOr(CollectionPriceRange),
  tags: Schema.Array(Schema.String)
}) {}

export class Tag extends Schema.Class<Tag>("Tag")({
  id: Id,
  name: Schema.String
}) {}

/** The all-in price split into its parts, each in the destination currency. `total` is their sum. */
export class PriceBreakdown extends Schema.Class<PriceBreakdown>("PriceBreakdown")({
  item: Money,
  shipping: Money,
  duties: Money,
  serviceFee: Money,
  total: Money
}) {}

/** A variant's availability and exact all-in price for one country. `price` equals `breakdown.total`. */
export class CountryAvailability extends Schema.Class<CountryAvailability>("CountryAvailability")({
  countryCode: Schema.String,
  available: Schema.Boolean,
  price: Money,
  breakdown: PriceBreakdown
}) {}
