import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What a product list reads of a product's variants, images and tags, kept on the product row (maintained
 * by the seed, as `min_price_usd` is): `variant_count`, `physical_variant_count` (0: a digital product),
 * `image_urls` (its `product_images` in order) and `tag_ids` (its `product_tags`, indexed). A page of `GET
 * /public-api/v3/products` then reads them with the row instead of subqueries and index probes per product
 * (docs/performance.md, `bench:products`).
 *
 * An existing catalog is filled in by one UPDATE with the search-terms trigger off: nothing it indexes
 * changes, and with it on every product's terms would be rewritten. The table is analysed after; it wants
 * a VACUUM where autovacuum is off.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE products
      ADD COLUMN variant_count integer NOT NULL DEFAULT 0,
      ADD COLUMN physical_variant_count integer NOT NULL DEFAULT 0,
      ADD COLUMN image_urls jsonb NOT NULL DEFAULT '[]',
      ADD COLUMN tag_ids text[] NOT NULL DEFAULT '{}'`
  yield* sql`ALTER TABLE products DISABLE TRIGGER products_search_terms_update`
  yield* sql`
    UPDATE products p SET
      variant_count = (SELECT count(*) FROM variants v WHERE v.product_id = p.id),
      physical_variant_count = (SELECT count(*) FROM variants v WHERE v.product_id = p.id AND NOT v.is_digital),
      image_urls = coalesce((SELECT jsonb_agg(i.url ORDER BY i.position) FROM product_images i
                             WHERE i.product_id = p.id), '[]'),
      tag_ids = coalesce((SELECT array_agg(t.tag_id ORDER BY t.tag_id) FROM product_tags t
                          WHERE t.product_id = p.id), '{}')`
  yield* sql`ALTER TABLE products ENABLE TRIGGER products_search_terms_update`
  yield* sql`CREATE INDEX products_tag_ids ON products USING gin (tag_ids)`
  yield* sql`ANALYZE products`
})
