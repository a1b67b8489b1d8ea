import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What a product list reads of a product's variants, images and tags, kept on the product row (maintained
 * by the seed, as `min_price_usd` is): `variant_count`, `physical_variant_count` (0: a digital product),
 * `image_urls` (its `product_images` in order) and `tag_ids` (its `product_tags`, indexed). A page of `GET
 * /public-api/v3/products` then reads them with the row instead of subqueries and index probes per product
 * (docs/performance.md, `bench:products`). The backfill rewrites every product row: the table is analysed
 * here, and wants a VACUUM where autovacuum is off.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE products
      ADD COLUMN variant_count integer NOT NULL DEFAULT 0,
      ADD COLUMN physical_variant_count integer NOT NULL DEFAULT 0,
      ADD COLUMN image_urls jsonb NOT NULL DEFAULT '[]',
      ADD COLUMN tag_ids text[] NOT NULL DEFAULT '{}'`
  yield* sql`
    UPDATE products p SET variant_count = v.variants, physical_variant_count = v.physical
    FROM (SELECT product_id, count(*) AS variants, count(*) FILTER (WHERE NOT is_digital) AS physical
          FROM variants GROUP BY product_id) v
    WHERE v.product_id = p.id`
  yield* sql`
    UPDATE products p SET image_urls = i.urls
    FROM (SELECT product_id, jsonb_agg(url ORDER BY position) AS urls FROM product_images GROUP BY product_id) i
    WHERE i.product_id = p.id`
  yield* sql`
    UPDATE products p SET tag_ids = t.ids
    FROM (SELECT product_id, array_agg(tag_id ORDER BY tag_id) AS ids FROM product_tags GROUP BY product_id) t
    WHERE t.product_id = p.id`
  yield* sql`CREATE INDEX products_tag_ids ON products USING gin (tag_ids)`
  yield* sql`ANALYZE products`
})
