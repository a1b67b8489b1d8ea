import { Schema } from "effect"
import { Environment } from "../company/Company.js"

/**
 * Catalog exports (docs/decisions/0043-catalog-exports.md, docs/catalog.md "Exports"): an NDJSON file per requested
 * location of the products a `GET /v3/products` query (or a set of collections) lists, written in the background and
 * downloaded at signed URLs for 48 hours.
 */

export const ExportKind = Schema.Literal("products", "collections")
export type ExportKind = typeof ExportKind.Type

export const ExportStatus = Schema.Literal("pending", "processing", "completed", "failed")
export type ExportStatus = typeof ExportStatus.Type

/** How long a completed export's files can be downloaded. */
export const exportLifetimeHours = 48

/** What an export was asked for, stored with it so a worker that resumes it writes the same lines. */
export const ExportRequest = Schema.Struct({
  /** The product list's filters by their v3 names (`catalog`, `price][gte`, …), `country` left out. */
  filters: Schema.Record({ key: Schema.String, value: Schema.String }),
  /** A collections export's collections, in the order their products are written. */
  collectionIds: Schema.Array(Schema.String),
  /** Upper-case country codes: one file each, priced for that country. */
  locations: Schema.Array(Schema.String),
  include: Schema.Array(Schema.String),
  fields: Schema.Array(Schema.String),
  /** The key that started it holds `products:read:prices`. */
  prices: Schema.Boolean
})
export type ExportRequest = typeof ExportRequest.Type

export const CatalogExport = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  environment: Environment,
  kind: ExportKind,
  request: ExportRequest,
  status: ExportStatus,
  /** Lines over all locations, counted when the work starts; null before. */
  totalLines: Schema.NullOr(Schema.Int),
  writtenLines: Schema.Int,
  errorMessage: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  completedAt: Schema.NullOr(Schema.DateFromSelf),
  expiresAt: Schema.NullOr(Schema.DateFromSelf)
})
export type CatalogExport = typeof CatalogExport.Type

/** A completed export's download links by location, as the service signs them. */
export type DownloadUrls = Readonly<Record<string, string>>
