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
