import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CatalogName } from "../../domain/catalog/Catalog.js"
import { Amount, AmountRange, ProductOptionRecord, ProductType, TagRef } from "../../domain/catalog/CatalogV3.js"
import { CollectionNotFound, ProductNotFound } from "../../domain/catalog/Errors.js"
import { Personalization } from "../../domain/catalog/Personalization.js"
import { HexId, Timestamp } from "../../domain/company/Company.js"
import { ApiKeyAuthV3, Operation } from "../company/ApiKeyAuth.js"
import { lineError } from "../ErrorLines.js"
import { Links, type V3QuerySpec, v3UrlParams } from "../V3Requests.js"

/**
 * The catalog, version 3 (spec "Operations named for version 3"; docs/decisions/0036-company-resources.md,
 * docs/decisions/0042-v3-catalog.md; docs/catalog.md "Catalog (v3)"): products paged by keyset cursors, a collection's
 * products, a product's variants with landed prices, collections (in an account: `Ribbon-Account-Id` required), product
 * tags and recommendations. The same catalog as `/v1`: a product id is the same on every line.
 */

const Media = Schema.Struct({ type: Schema.Literal("image"), src: Schema.String })

const Country = Schema.String.pipe(Schema.pattern(/^[A-Za-z]{2}$/)).annotations({
  message: () => "Expected an ISO 3166-1 alpha-2 country code",
  description: "ISO 3166-1 alpha-2 country code, either case (default: the account's country, US)"
})

const MinorUnits = Schema.String.pipe(Schema.pattern(/^\d{1,12}$/)).annotations({
  message: () => "Expected an integer amount >= 0 in minor units",
  jsonSchema: {
    type: "integer",
    minimum: 0,
    description: "An amount in minor units (cents; yen for JPY) of the country's currency"
  }
})

const Search = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))

/** One of `values`, with one issue naming them all (not one per value). */
const oneOf = <const Values extends ReadonlyArray<string>>(...values: Values) =>
  Schema.Literal(...values).annotations({
    message: () => ({ message: `Expected ${values.join(" or ")}`, override: true })
  })

export class ProductV3 extends Schema.Class<ProductV3>("ProductV3")({
  id: Schema.String,
  title: Schema.String,
  catalog: CatalogName,
  type: ProductType,
  category: Schema.Struct({ fullName: Schema.String }),
  media: Schema.Array(Media),
  createdAt: Timestamp,
  brand: Schema.optional(
    Schema.NullOr(Schema.Struct({ id: Schema.String, name: Schema.String })).annotations({
      description: "With include=brand; null when unbranded"
    })
  ),
  tags: Schema.optional(Schema.Array(TagRef).annotations({ description: "With include=tags" })),
  priceRange: Schema.optional(
    Schema.NullOr(AmountRange).annotations({
      description:
        "With fields=priceRange and products:read:prices: the item prices of its variants in the country's currency"
    })
  ),
  variantsCount: Schema.optional(Schema.Int.annotations({ description: "With fields=variantsCount" })),
  options: Schema.optional(Schema.Array(ProductOptionRecord).annotations({ description: "With fields=options" }))
}) {}

export class ProductResponseV3 extends Schema.Class<ProductResponseV3>("ProductResponseV3")({ data: ProductV3 }) {}

export class ProductListV3 extends Schema.Class<ProductListV3>("ProductListV3")({
  data: Schema.Array(ProductV3),
  links: Links
}) {}

export class VariantV3 extends Schema.Class<VariantV3>("VariantV3")({
  id: Schema.String,
  productId: Schema.String,
  title: Schema.String,
  selectedOptions: Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String })),
  media: Schema.Array(Media),
  personalization: Schema.NullOr(Personalization).annotations({
    description: "What a buyer may or must specify to personalize it (fields of a choice or a text); null when none"
  }),
  price: Schema.optional(
    Schema.NullOr(Amount).annotations({
      description: "With fields=price and products:read:prices: the landed total in the country; null: not for sale"
    })
  ),
  priceBreakdown: Schema.optional(
    Schema.NullOr(Schema.Struct({ item: Amount, shipping: Amount, duties: Amount, serviceFee: Amount })).annotations({
      description: "With fields=priceBreakdown and products:read:prices; the parts sum to price"
    })
  ),
  details: Schema.optional(
    Schema.Struct({ descriptionHtml: Schema.NullOr(Schema.String) }).annotations({
      description: "With fields=details"
    })
  )
}) {}

export class VariantListV3 extends Schema.Class<VariantListV3>("VariantListV3")({
  data: Schema.Array(VariantV3),
  links: Links
}) {}

export class CollectionV3 extends Schema.Class<CollectionV3>("CollectionV3")({
  id: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  media: Schema.Array(Media),
  tags: Schema.Array(TagRef),
  priceRange: Schema.optional(
    Schema.NullOr(AmountRange).annotations({
      description: "With products:read:prices: its products' item prices in the country's currency"
    })
  ),
  createdAt: Timestamp
}) {}

export class CollectionResponseV3 extends Schema.Class<CollectionResponseV3>("CollectionResponseV3")({
  data: CollectionV3
}) {}

export class CollectionListV3 extends Schema.Class<CollectionListV3>("CollectionListV3")({
  data: Schema.Array(CollectionV3),
  links: Links
}) {}

export class ProductTagListV3 extends Schema.Class<ProductTagListV3>("ProductTagListV3")({
  data: Schema.Array(TagRef),
  links: Links
}) {}

export const productsV3Query = {
  filters: ["catalog", "type", "search", "tagId", "brandId", "country", "price][gte", "price][lte"],
  include: ["brand", "tags"],
  fields: ["priceRange", "variantsCount", "options"],
  sort: ["createdAt", "minPrice", "title"],
  paging: "cursor",
  maxPageSize: 300,
  defaultPageSize: 100,
  filterSchemas: {
    catalog: oneOf(...CatalogName.literals),
    type: oneOf(...ProductType.literals),
    search: Search,
    tagId: HexId,
    brandId: HexId,
    country: Country,
    "price][gte": MinorUnits,
    "price][lte": MinorUnits
  }
} satisfies V3QuerySpec

export const variantsV3Query = {
  filters: ["country"],
  fields: ["price", "priceBreakdown", "details"],
  paging: "number",
  maxPageSize: 300,
  defaultPageSize: 100,
  filterSchemas: { country: Country }
} satisfies V3QuerySpec

export const collectionsV3Query = {
  filters: ["search", "tag", "country", "maxPrice"],
  sort: ["name", "createdAt"],
  paging: "number",
  maxPageSize: 300,
  defaultPageSize: 100,
  filterSchemas: { search: Search, country: Country, maxPrice: MinorUnits }
} satisfies V3QuerySpec

export const productTagsV3Query = {
  filters: ["name"],
  sort: ["name"],
  paging: "number",
  maxPageSize: 300,
  defaultPageSize: 100
} satisfies V3QuerySpec

/** `a,b` naming only `values`, for `include` and `fields` on a single resource. */
const listOf = (values: ReadonlyArray<string>) =>
  Schema.String.pipe(
    Schema.filter((text) => {
      const unknown = splitList(text).find((value) => !values.includes(value))
      return unknown === undefined || `Unknown value "${unknown}"; expected ${values.join(", ")}`
    })
  ).annotations({ description: `Comma-separated: ${values.join(", ")}` })

export const splitList = (text: string | undefined) =>
  (text ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")

const ProductParams = Schema.Struct({
  "filter[country]": Schema.optionalWith(Country, { exact: true }),
  include: Schema.optionalWith(listOf(productsV3Query.include), { exact: true }),
  fields: Schema.optionalWith(listOf(productsV3Query.fields), { exact: true })
})

const ProductPath = Schema.Struct({ productId: HexId })
const CollectionPath = Schema.Struct({ collectionId: HexId })

const readProducts = { permission: "products:read", rateClass: "marketplace:read" } as const
const readCollections = { permission: "collections:read", rateClass: "marketplace:read" } as const

export class CatalogV3Api extends HttpApiGroup.make("catalogV3")
  .add(
    HttpApiEndpoint.get("products", "/products")
      .setUrlParams(v3UrlParams(productsV3Query, {}))
      .addSuccess(ProductListV3)
      .annotate(Operation, readProducts)
      .annotate(OpenApi.Summary, "List products (never their variants), by keyset cursor; newest first by default")
  )
  .add(
    HttpApiEndpoint.get("product", "/products/:productId")
      .setPath(ProductPath)
      .setUrlParams(ProductParams)
      .addSuccess(ProductResponseV3)
      .addError(lineError("v3", ProductNotFound))
      .annotate(Operation, readProducts)
      .annotate(OpenApi.Summary, "Retrieve a product, in the shape of the product list")
  )
  .add(
    HttpApiEndpoint.get("variants", "/products/:productId/variants")
      .setPath(ProductPath)
      .setUrlParams(v3UrlParams(variantsV3Query, {}))
      .addSuccess(VariantListV3)
      .addError(lineError("v3", ProductNotFound))
      .annotate(Operation, readProducts)
      .annotate(
        OpenApi.Summary,
        "List a product's variants, priced for filter[country] (default the account's) in its currency"
      )
  )
  .add(
    HttpApiEndpoint.get("recommendations", "/products/:productId/recommendations")
      .setPath(ProductPath)
      .setUrlParams(ProductParams)
      .addSuccess(ProductListV3)
      .addError(lineError("v3", ProductNotFound))
      .annotate(Operation, readProducts)
      .annotate(OpenApi.Summary, "Up to 8 products to show beside one, available in the country")
  )
  .add(
    HttpApiEndpoint.get("collections", "/collections")
      .setUrlParams(v3UrlParams(collectionsV3Query, {}))
      .addSuccess(CollectionListV3)
      .annotate(Operation, readCollections)
      .annotate(OpenApi.Summary, "List collections (Ribbon-Account-Id required)")
  )
  .add(
    HttpApiEndpoint.get("collection", "/collections/:collectionId")
      .setPath(CollectionPath)
      .setUrlParams(Schema.Struct({ "filter[country]": Schema.optionalWith(Country, { exact: true }) }))
      .addSuccess(CollectionResponseV3)
      .addError(lineError("v3", CollectionNotFound))
      .annotate(Operation, readCollections)
      .annotate(OpenApi.Summary, "Retrieve a collection (Ribbon-Account-Id required)")
  )
  .add(
    HttpApiEndpoint.get("collectionProducts", "/collections/:collectionId/products")
      .setPath(CollectionPath)
      .setUrlParams(v3UrlParams(productsV3Query, {}))
      .addSuccess(ProductListV3)
      .addError(lineError("v3", CollectionNotFound))
      .annotate(Operation, readProducts)
      .annotate(OpenApi.Summary, "List a collection's products, by keyset cursor; in the collection's order by default")
  )
  .add(
    HttpApiEndpoint.get("productTags", "/product-tags")
      .setUrlParams(v3UrlParams(productTagsV3Query, {}))
      .addSuccess(ProductTagListV3)
      .annotate(Operation, readProducts)
      .annotate(OpenApi.Summary, "List product tags; filter[name] is a case-insensitive substring")
  )
  .prefix("/public-api/v3")
  .middleware(ApiKeyAuthV3)
  .annotate(OpenApi.Title, "Catalog (v3)")
  .annotate(
    OpenApi.Description,
    "Products, variants, collections and product tags, priced for a country. Authenticated with `X-Api-Key`; " +
      "prices need `products:read:prices`."
  ) {}
