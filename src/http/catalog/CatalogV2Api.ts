import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Amount, ProductType } from "../../domain/catalog/CatalogV3.js"
import { CollectionNotFound, VariantNotFound } from "../../domain/catalog/Errors.js"
import { HexId } from "../../domain/company/Company.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { ApiKeyAuthV2, Operation } from "../company/ApiKeyAuth.js"
import { lineError } from "../ErrorLines.js"
import { queryInt } from "../QueryParams.js"

/**
 * The catalog, version 2 (spec "GET /v2/products, /v2/variants/{id}"; docs/decisions/0036-company-resources.md,
 * docs/decisions/0044-v2-catalog-reads.md; docs/catalog.md "v2 reads"): the products a gift of a budget can be, landed
 * in a country, paged with `skip`/`limit`, and one variant with its landed price. The same catalog as `/v1` and `/v3`:
 * a product id is the same on every line. Unknown query parameters are ignored, as v2 always has.
 */

/** A v2 budget: a plain number in the major units of the country's currency (`49.99`, `5000`), 1 to 20000. */
const Budget = Schema.compose(
  Schema.String.pipe(
    Schema.pattern(/^\d{1,5}(\.\d{1,4})?$/, {
      message: () => "Expected a number from 1 to 20000 in the major units of the country's currency"
    })
  ),
  Schema.NumberFromString.pipe(Schema.filter((n) => (n >= 1 && n <= 20_000) || "Expected a number from 1 to 20000"))
).annotations({
  jsonSchema: {
    type: "number",
    minimum: 1,
    maximum: 20_000,
    description: "In the major units of the country's currency (dollars, yen), judged against the landed total"
  }
})

const Country = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z]{2}$/, { message: () => "Expected an ISO 3166-1 alpha-2 country code" })
).annotations({ description: "The destination country: ISO 3166-1 alpha-2, either case (default US)" })

/** v2 pagination (spec "Versioning"): `skip` rows, then at most `limit` (1 to 100, default 20). */
export const defaultLimit = 20

export const ProductsQueryV2 = Schema.Struct({
  budget: Budget,
  minBudget: Schema.optional(Budget),
  country: Schema.optional(Country),
  collectionId: Schema.optional(HexId),
  skip: Schema.optional(
    queryInt({ min: 0, max: Number.MAX_SAFE_INTEGER, description: "Products to skip (default 0)" })
  ),
  limit: Schema.optional(queryInt({ min: 1, max: 100, description: "Products per page, 1 to 100 (default 20)" }))
})

const MediaItem = Schema.Struct({ type: Schema.Literal("image"), url: Schema.String })

/** A variant's landed price in one country: `cost` + `totalFee` + `totalTax` = `totalFinalCost`. */
const CountryPricing = Schema.Struct({
  cost: Amount.annotations({ description: "The item" }),
  totalFee: Amount.annotations({ description: "Shipping and the service fee" }),
  totalTax: Amount.annotations({ description: "Duties and import taxes" }),
  totalFinalCost: Amount.annotations({ description: "The landed total" })
})

export class VariantV2 extends Schema.Class<VariantV2>("VariantV2")({
  id: Schema.String,
  productId: Schema.String,
  title: Schema.String,
  optionAttributes: Schema.Record({ key: Schema.String, value: Schema.String }),
  mediaItems: Schema.Array(MediaItem),
  types: Schema.Array(ProductType),
  pricing: Schema.optional(
    Schema.Record({ key: Schema.String, value: CountryPricing }).annotations({
      description:
        "With products:read:prices: the landed price in the country asked for, keyed by its code; empty when the variant cannot be ordered there"
    })
  ),
  supportedCountries: Schema.Array(Schema.String).annotations({
    description: "Where it can be ordered now (priced, in stock, shipping there)"
  })
}) {}

export class ProductV2 extends Schema.Class<ProductV2>("ProductV2")({
  id: Schema.String,
  title: Schema.String,
  brand: Schema.NullOr(Schema.Struct({ id: Schema.String, name: Schema.String })),
  types: Schema.Array(ProductType),
  mediaItems: Schema.Array(MediaItem),
  variants: Schema.Array(VariantV2).annotations({
    description: "The variants that fit: orderable in the country for a landed total within the budget"
  })
}) {}

export class ProductListV2 extends Schema.Class<ProductListV2>("ProductListV2")({
  results: Schema.Array(ProductV2),
  skip: Schema.Int,
  limit: Schema.Int
}) {}

const read = { permission: "products:read", rateClass: "marketplace:read" } as const

export class CatalogV2Api extends HttpApiGroup.make("catalogV2")
  .add(
    HttpApiEndpoint.get("products", "/products")
      .setUrlParams(ProductsQueryV2)
      .addSuccess(ProductListV2)
      .addError(lineError("v2", CollectionNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "Products a gift of the budget can be, landed in the country, newest first")
  )
  .add(
    HttpApiEndpoint.get("variant", "/variants/:variantId")
      .setPath(Schema.Struct({ variantId: Schema.String.pipe(Schema.maxLength(64)) }))
      .setUrlParams(Schema.Struct({ country: Schema.optional(Country) }))
      .addSuccess(VariantV2)
      .addError(lineError("v2", VariantNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "A variant and its landed price in a country")
  )
  .addError(lineError("v2", InvalidRequest))
  .prefix("/public-api/v2")
  .middleware(ApiKeyAuthV2)
  .annotate(OpenApi.Title, "Catalog (v2)")
  .annotate(
    OpenApi.Description,
    "Catalog reads, version 2: budgets in major units judged against the landed total. Authenticated with `X-Api-Key`."
  ) {}
