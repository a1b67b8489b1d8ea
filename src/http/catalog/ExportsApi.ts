import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  CollectionNotFound,
  ExportExpired,
  ExportInProgress,
  ExportLinkInvalid,
  ExportNotFound
} from "../../domain/catalog/Errors.js"
import { ExportStatus } from "../../domain/catalog/Exports.js"
import { HexId, Timestamp } from "../../domain/company/Company.js"
import { NotFound } from "../../domain/platform/Errors.js"
import { ApiKeyAuthV3, Operation } from "../company/ApiKeyAuth.js"
import { lineError } from "../ErrorLines.js"
import { strictBody } from "../V3Requests.js"
import { productsV3Query } from "./CatalogV3Api.js"

/**
 * Catalog exports, version 3 (spec "Operations named for version 3" and "Limits" 1;
 * docs/decisions/0043-catalog-exports.md; docs/catalog.md "Exports"): an export runs in the background and answers 202
 * at once; it is read back until `completed`, then each location's NDJSON file is downloaded at its signed URL, which
 * needs no key.
 */

const filters = productsV3Query.filterSchemas

const Country = Schema.String.pipe(Schema.pattern(/^[A-Za-z]{2}$/)).annotations({
  message: () => "Expected an ISO 3166-1 alpha-2 country code"
})

const Locations = Schema.optionalWith(
  Schema.Array(Country).pipe(Schema.minItems(1), Schema.maxItems(20)).annotations({
    description: 'Countries to price for, one file each (either case; default ["US"])'
  }),
  { default: () => ["US"] }
)

const Include = Schema.optionalWith(Schema.Array(Schema.Literal(...productsV3Query.include)), {
  default: () => []
}).annotations({ description: "As `include` of GET /v3/products" })

const Fields = Schema.optionalWith(Schema.Array(Schema.Literal(...productsV3Query.fields)), {
  default: () => []
}).annotations({ description: "As `fields` of GET /v3/products" })

export const ProductExportBody = strictBody(
  Schema.Struct({
    filter: Schema.optionalWith(
      Schema.Struct({
        catalog: Schema.optional(filters.catalog),
        type: Schema.optional(filters.type),
        search: Schema.optional(filters.search),
        tagId: Schema.optional(filters.tagId),
        brandId: Schema.optional(filters.brandId),
        price: Schema.optional(
          Schema.Struct({ gte: Schema.optional(filters["price][gte"]), lte: Schema.optional(filters["price][lte"]) })
        )
      }).annotations({ description: "As the filters of GET /v3/products; prices in each location's currency" }),
      { default: () => ({}) }
    ),
    locations: Locations,
    include: Include,
    fields: Fields
  })
)

export const CollectionExportBody = strictBody(
  Schema.Struct({
    collectionIds: Schema.Array(HexId).pipe(Schema.minItems(1), Schema.maxItems(100)).annotations({
      description: "The collections whose products are written, in this order; each line names its collectionId"
    }),
    locations: Locations,
    include: Include,
    fields: Fields
  })
)

export class ExportV3 extends Schema.Class<ExportV3>("ExportV3")({
  id: Schema.String,
  type: Schema.Literal("products", "collections"),
  status: ExportStatus,
  locations: Schema.Array(Schema.String),
  progress: Schema.Int.annotations({ description: "Percent of the lines written; 100 once completed" }),
  downloadUrls: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })).annotations({
    description: "Once completed: a signed NDJSON URL per location, valid until expiresAt; no API key needed"
  }),
  expiresAt: Schema.NullOr(Timestamp),
  errorMessage: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  completedAt: Schema.NullOr(Timestamp)
}) {}

export class ExportResponseV3 extends Schema.Class<ExportResponseV3>("ExportResponseV3")({ data: ExportV3 }) {}

const ExportPath = Schema.Struct({ exportId: HexId })

export class ExportsV3Api extends HttpApiGroup.make("exportsV3")
  .add(
    HttpApiEndpoint.post("startProducts", "/products/exports")
      .setPayload(ProductExportBody)
      .addSuccess(ExportResponseV3, { status: 202 })
      .addError(lineError("v3", ExportInProgress))
      .annotate(Operation, { permission: "products:read", rateClass: "marketplace:write" })
      .annotate(OpenApi.Summary, "Start an NDJSON export of the products a filter lists, one file per location")
  )
  .add(
    HttpApiEndpoint.get("getProducts", "/products/exports/:exportId")
      .setPath(ExportPath)
      .addSuccess(ExportResponseV3)
      .addError(lineError("v3", ExportNotFound))
      .annotate(Operation, { permission: "products:read", rateClass: "marketplace:read" })
      .annotate(OpenApi.Summary, "Read a product export: its status, progress and, once completed, its files")
  )
  .add(
    HttpApiEndpoint.post("startCollections", "/collections/exports")
      .setPayload(CollectionExportBody)
      .addSuccess(ExportResponseV3, { status: 202 })
      .addError(lineError("v3", CollectionNotFound))
      .addError(lineError("v3", ExportInProgress))
      .annotate(Operation, { permission: "collections:read", rateClass: "marketplace:write" })
      .annotate(OpenApi.Summary, "Start an NDJSON export of collections' products (Ribbon-Account-Id required)")
  )
  .add(
    HttpApiEndpoint.get("getCollections", "/collections/exports/:exportId")
      .setPath(ExportPath)
      .addSuccess(ExportResponseV3)
      .addError(lineError("v3", ExportNotFound))
      .annotate(Operation, { permission: "collections:read", rateClass: "marketplace:read" })
      .annotate(OpenApi.Summary, "Read a collection export (Ribbon-Account-Id required)")
  )
  .prefix("/public-api/v3")
  .middleware(ApiKeyAuthV3)
  .annotate(OpenApi.Title, "Exports (v3)")
  .annotate(
    OpenApi.Description,
    "Bulk NDJSON exports of the catalog. One export runs at a time per company, of either kind (409 otherwise)."
  ) {}

/**
 * The file behind a signed URL: no API key, the signature is the credential. It sits outside `/public-api`,
 * whose every route needs a key, so its errors are RFC 9457 problems, as on every route outside the lines.
 */
export class ExportFilesApi extends HttpApiGroup.make("exportFiles")
  .add(
    HttpApiEndpoint.get("file", "/export-files/:exportId/:location")
      .setPath(Schema.Struct({ exportId: HexId, location: Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/)) }))
      .setUrlParams(
        Schema.Struct({
          expires: Schema.NumberFromString.pipe(Schema.int()),
          signature: Schema.String.pipe(Schema.maxLength(200))
        })
      )
      .addSuccess(HttpApiSchema.Text({ contentType: "application/x-ndjson" }))
      .addError(lineError("v1", ExportLinkInvalid))
      .addError(lineError("v1", ExportExpired))
      .addError(lineError("v1", NotFound))
      .annotate(OpenApi.Summary, "Download an export's file for one location (a link from downloadUrls)")
  )
  .annotate(OpenApi.Title, "Export files")
  .annotate(OpenApi.Description, "The NDJSON files of completed exports, at the signed URLs the exports give.") {}
