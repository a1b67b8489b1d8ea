import { Schema } from "effect"
import { DomainError } from "../platform/Errors.js"

// Catalog (agent API `/v1` catalog endpoints; the company API's product and collection routes reuse them).

/** No product with that id (or it is not visible). */
export class ProductNotFound extends DomainError<ProductNotFound>()(
  "ProductNotFound",
  { productId: Schema.String },
  {
    status: 404,
    title: "Product not found",
    v1: "product_not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_PROD_001"
  }
) {}

/** No variant with that id. */
export class VariantNotFound extends DomainError<VariantNotFound>()(
  "VariantNotFound",
  { variantId: Schema.String },
  {
    status: 404,
    title: "Variant not found",
    v1: "variant_not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_PROD_002"
  }
) {}

/** No collection with that id. */
export class CollectionNotFound extends DomainError<CollectionNotFound>()(
  "CollectionNotFound",
  { collectionId: Schema.String },
  {
    status: 404,
    title: "Collection not found",
    v1: "collection_not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_COLL_001"
  }
) {}
