import { Schema } from "effect"
import { DomainError, errorCode } from "../platform/Errors.js"

// Catalog (agent API `/v1` catalog endpoints; the company API's product and collection routes reuse them).

/** No product with that id (or it is not visible). */
export class ProductNotFound extends DomainError<ProductNotFound>()(
  "ProductNotFound",
  { productId: Schema.String },
  errorCode(404, "Product not found", "product_not_found", "NOT_FOUND", "404_PROD_001")
) {}

/** No variant with that id. */
export class VariantNotFound extends DomainError<VariantNotFound>()(
  "VariantNotFound",
  { variantId: Schema.String },
  errorCode(404, "Variant not found", "variant_not_found", "NOT_FOUND", "404_PROD_002")
) {}

/** No collection with that id. */
export class CollectionNotFound extends DomainError<CollectionNotFound>()(
  "CollectionNotFound",
  { collectionId: Schema.String },
  errorCode(404, "Collection not found", "collection_not_found", "NOT_FOUND", "404_COLL_001")
) {}

// Catalog exports (docs/decisions/0043-catalog-exports.md).

/** No export with that id of that kind in the key's company and environment. */
export class ExportNotFound extends DomainError<ExportNotFound>()(
  "ExportNotFound",
  { exportId: Schema.String },
  errorCode(404, "Export not found", "export_not_found", "NOT_FOUND", "404_EXPT_001")
) {}

/** The company already has an export pending or processing (of either kind); `exportId` names it. */
export class ExportInProgress extends DomainError<ExportInProgress>()(
  "ExportInProgress",
  { exportId: Schema.String },
  errorCode(409, "Export in progress", "export_in_progress", "CONFLICT", "409_EXPT_001")
) {}

/** A download link whose signature does not match: altered, or never ours. */
export class ExportLinkInvalid extends DomainError<ExportLinkInvalid>()(
  "ExportLinkInvalid",
  {},
  errorCode(403, "Export link invalid", "export_link_invalid", "FORBIDDEN", "403_EXPT_001")
) {}

/** A download link past its `expiresAt`: the file is gone; start a new export. */
export class ExportExpired extends DomainError<ExportExpired>()(
  "ExportExpired",
  {},
  errorCode(410, "Export expired", "export_expired", "GONE", "410_EXPT_001")
) {}
