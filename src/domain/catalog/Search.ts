import { Schema } from "effect"
import { Collection, ProductSummary } from "./Catalog.js"

/** The result of a catalog search as `/v1/search` shows it (src/services/catalog/Search.ts finds it). */

export const SearchSort = Schema.Literal("relevance", "price_asc", "price_desc", "newest")
export type SearchSort = typeof SearchSort.Type

/** What the search applied, echoed to the caller (amounts in minor units). */
export const AppliedBudget = Schema.Struct({
  input: Schema.String,
  kind: Schema.Literal("max", "min", "between", "around", "exact"),
  currency: Schema.String.annotations({ description: "The currency the budget was written in" }),
  currencyNamed: Schema.Boolean,
  min: Schema.NullOr(Schema.Int).annotations({ description: "Minor units of `currency`" }),
  max: Schema.NullOr(Schema.Int).annotations({ description: "Minor units of `currency`" }),
  converted: Schema.Struct({
    currency: Schema.String,
    min: Schema.NullOr(Schema.Int),
    max: Schema.NullOr(Schema.Int)
  }).annotations({ description: "The budget in the country's currency (FX-converted when it was written in another)" }),
  overriddenBy: Schema.Array(Schema.Literal("minPrice", "maxPrice"))
}).annotations({ identifier: "AppliedBudget" })

export const AppliedFilters = Schema.Struct({
  q: Schema.NullOr(Schema.String),
  country: Schema.String,
  currency: Schema.String,
  minPrice: Schema.NullOr(Schema.Int).annotations({ description: "Item price floor, minor units of `currency`" }),
  maxPrice: Schema.NullOr(Schema.Int).annotations({ description: "Item price ceiling, minor units of `currency`" }),
  budget: Schema.NullOr(AppliedBudget),
  collectionId: Schema.NullOr(Schema.String),
  tagIds: Schema.Array(Schema.String),
  availableIn: Schema.String.annotations({ description: "Only products with a variant purchasable in this country" }),
  sort: SearchSort,
  limit: Schema.Int,
  spelling: Schema.NullOr(Schema.String).annotations({
    description:
      "When no product matched `q`: the respelled words searched instead, each the known word spelled most like the one typed"
  })
}).annotations({ identifier: "AppliedFilters" })
export type AppliedFilters = typeof AppliedFilters.Type

export const SearchResult = Schema.Struct({
  products: Schema.Array(ProductSummary),
  collections: Schema.Array(Collection),
  nextCursor: Schema.NullOr(Schema.String),
  appliedFilters: AppliedFilters
}).annotations({ identifier: "SearchResult" })
export type SearchResult = typeof SearchResult.Type
