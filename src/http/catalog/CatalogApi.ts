import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AddressInput, AddressSuggestion, AddressValidationResponse } from "../../domain/catalog/Address.js"
import { Collection, CountryAvailability, ProductSummary, Tag, Variant } from "../../domain/catalog/Catalog.js"
import { CollectionNotFound, ProductNotFound, VariantNotFound } from "../../domain/catalog/Errors.js"
import { SearchResult, SearchSort } from "../../domain/catalog/Search.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { agentOperation, Bearer } from "../identity/Agent.js"
import { queryInt } from "../QueryParams.js"

/**
 * The agent API's catalog (spec "Catalog", scope `catalog:read`, tool class `read`): search, products,
 * variants and availability, collections, tags, countries, and the address helpers. Query parameters are
 * decoded here, so a bad one is a 400 naming it; amounts are integers in minor units (docs/search.md).
 * The bearer middleware (`catalog:read`) goes on as one `.middleware(...)` after `.prefix("/v1")`.
 */

const CountryCode = Schema.String.pipe(Schema.pattern(/^[A-Za-z]{2}$/)).annotations({
  description: "ISO 3166-1 alpha-2 country code, either case"
})

/** An optional `?country=`, which falls back to the signed-in user's country. */
const Country = CountryCode.annotations({
  description: "ISO 3166-1 alpha-2 country code, either case (default: the signed-in user's country)"
})

/** `?country=` alone: the country a resource is priced for. */
const CountryQuery = Schema.Struct({ country: Schema.optional(Country) })

/** A non-negative integer amount in minor units of the country's currency, from the query string. */
const MinorUnits = queryInt({
  min: 0,
  max: Number.MAX_SAFE_INTEGER,
  description: "Integer amount >= 0 in minor units (cents; yen for JPY) of the country's currency"
})

const intBetween = (min: number, max: number) => queryInt({ min, max, description: `Integer from ${min} to ${max}` })

/** `a,b,c` → `["a", "b", "c"]` (blank items dropped), each decoded with `item`. */
const commaSeparated = <A, I extends string>(item: Schema.Schema<A, I>) =>
  Schema.transform(Schema.String, Schema.Array(Schema.String), {
    strict: true,
    decode: (text) =>
      text
        .split(",")
        .map((part) => part.trim())
        .filter((part) => part !== ""),
    encode: (parts) => parts.join(",")
  }).pipe(Schema.compose(Schema.Array(item), { strict: false })) as unknown as Schema.Schema<ReadonlyArray<A>, string>

const Cursor = Schema.String.pipe(Schema.maxLength(512)).annotations({
  description: "Opaque: the `nextCursor` of the previous page"
})

/** Path ids are taken as they come: an id that names nothing is a 404, not a 400. */
const PathId = Schema.String.pipe(Schema.maxLength(64))

export const SearchParams = Schema.Struct({
  q: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  budget: Schema.optional(
    Schema.String.pipe(Schema.maxLength(60)).annotations({
      description: 'Prose such as "under $40", "between 20 and 50", "around 30 EUR"'
    })
  ),
  minPrice: Schema.optional(MinorUnits),
  maxPrice: Schema.optional(MinorUnits),
  country: Schema.optional(Country),
  collectionId: Schema.optional(PathId),
  tagIds: Schema.optional(
    commaSeparated(Schema.String.pipe(Schema.pattern(/^[0-9a-f]{24}$/))).annotations({
      description: "Comma-separated tag ids; a product must carry every one"
    })
  ),
  sort: Schema.optional(SearchSort),
  limit: Schema.optional(intBetween(1, 50)),
  cursor: Schema.optional(Cursor)
})

export class ProductDetail extends Schema.Class<ProductDetail>("ProductDetail")({
  product: ProductSummary,
  variants: Schema.Array(Variant),
  recommendations: Schema.Array(ProductSummary)
}) {}

export class VariantAvailability extends Schema.Class<VariantAvailability>("VariantAvailability")({
  variantId: Schema.String,
  countries: Schema.Array(CountryAvailability)
}) {}

export class CollectionList extends Schema.Class<CollectionList>("CollectionList")({
  collections: Schema.Array(Collection)
}) {}

export class CollectionPage extends Schema.Class<CollectionPage>("CollectionPage")({
  collection: Collection,
  products: Schema.Array(ProductSummary),
  nextCursor: Schema.NullOr(Schema.String)
}) {}

export class TagList extends Schema.Class<TagList>("TagList")({ tags: Schema.Array(Tag) }) {}

export class CountryList extends Schema.Class<CountryList>("CountryList")({ countries: Schema.Array(Schema.String) }) {}

export class AddressSuggestions extends Schema.Class<AddressSuggestions>("AddressSuggestions")({
  suggestions: Schema.Array(AddressSuggestion)
}) {}

export class CatalogApi extends HttpApiGroup.make("catalog")
  .add(
    HttpApiEndpoint.get("search", "/search")
      .setUrlParams(SearchParams)
      .addSuccess(SearchResult)
      .addError(lineError("v1", CollectionNotFound))
      .annotate(OpenApi.Summary, "Search products (full text, typo tolerant) with price, tag and collection filters")
  )
  .add(
    HttpApiEndpoint.get("product", "/products/:productId")
      .setPath(Schema.Struct({ productId: PathId }))
      .setUrlParams(CountryQuery)
      .addSuccess(ProductDetail)
      .addError(lineError("v1", ProductNotFound))
      .annotate(OpenApi.Summary, "A product, its variants priced for a country, and recommendations")
  )
  .add(
    HttpApiEndpoint.get("variant", "/variants/:variantId")
      .setPath(Schema.Struct({ variantId: PathId }))
      .setUrlParams(CountryQuery)
      .addSuccess(Variant)
      .addError(lineError("v1", VariantNotFound))
      .annotate(OpenApi.Summary, "A variant, priced for a country")
  )
  .add(
    HttpApiEndpoint.get("availability", "/variants/:variantId/availability")
      .setPath(Schema.Struct({ variantId: PathId }))
      .setUrlParams(
        Schema.Struct({
          countries: Schema.optional(
            commaSeparated(CountryCode).annotations({ description: "Comma-separated country codes; default all" })
          )
        })
      )
      .addSuccess(VariantAvailability)
      .addError(lineError("v1", VariantNotFound))
      .annotate(OpenApi.Summary, "Availability and exact all-in price per country; call right before quoting")
  )
  .add(
    HttpApiEndpoint.get("collections", "/collections")
      .setUrlParams(
        Schema.Struct({
          q: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
          maxPrice: Schema.optional(MinorUnits),
          country: Schema.optional(Country),
          limit: Schema.optional(intBetween(1, 100))
        })
      )
      .addSuccess(CollectionList)
      .annotate(OpenApi.Summary, "Browse collections")
  )
  .add(
    HttpApiEndpoint.get("collection", "/collections/:collectionId")
      .setPath(Schema.Struct({ collectionId: PathId }))
      .setUrlParams(
        Schema.Struct({
          country: Schema.optional(Country),
          limit: Schema.optional(intBetween(1, 100)),
          cursor: Schema.optional(Cursor),
          minPrice: Schema.optional(MinorUnits),
          maxPrice: Schema.optional(MinorUnits)
        })
      )
      .addSuccess(CollectionPage)
      .addError(lineError("v1", CollectionNotFound))
      .annotate(OpenApi.Summary, "A collection and a page of its products available in a country")
  )
  .add(
    HttpApiEndpoint.get("tags", "/tags")
      .setUrlParams(
        Schema.Struct({ q: Schema.optional(Schema.String.pipe(Schema.minLength(3), Schema.maxLength(100))) })
      )
      .addSuccess(TagList)
      .annotate(OpenApi.Summary, "Find tags by name")
  )
  .add(
    HttpApiEndpoint.get("countries", "/countries")
      .addSuccess(CountryList)
      .annotate(OpenApi.Summary, "Supported destination countries")
  )
  .add(
    HttpApiEndpoint.get("autocompleteAddress", "/addresses/autocomplete")
      .setUrlParams(
        Schema.Struct({
          q: Schema.String.pipe(Schema.minLength(4), Schema.maxLength(128)),
          // Required: an address is completed within one country, which the caller names.
          country: CountryCode.annotations({ description: "ISO 3166-1 alpha-2 code of the address's country" })
        })
      )
      .addSuccess(AddressSuggestions)
      .annotate(OpenApi.Summary, "Address suggestions for partial input")
  )
  .add(
    HttpApiEndpoint.post("validateAddress", "/addresses/validate")
      .setPayload(Schema.Struct({ address: AddressInput }))
      .addSuccess(AddressValidationResponse)
      .annotate(OpenApi.Summary, "Check an address before checkout")
  )
  .addError(lineError("v1", InvalidRequest))
  .prefix("/v1")
  .middleware(Bearer)
  .annotateContext(agentOperation("catalog:read", "read"))
  .annotate(OpenApi.Title, "Catalog")
  .annotate(
    OpenApi.Description,
    "Search and browse the catalog, price variants per country, and help with addresses. Scope `catalog:read`, tool class `read`."
  ) {}
