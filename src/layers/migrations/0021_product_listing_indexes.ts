import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The title and price orders of products carry the columns a v3 product page filters on (price, catalog,
 * type, tags, brand), so that a page's walk along them finds its ids in the index alone and reads only the
 * page's rows (docs/performance.md, `bench:products`). They replace the plain `(title, id)` and price
 * indexes; the newest-first order stays plain, since the table is stored in about that order.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const listed = sql`INCLUDE (min_price_usd, max_price_usd, catalog, physical_variant_count, tag_ids, brand_id)`
  yield* sql`CREATE INDEX products_title_listing ON products (title, id) ${listed}`
  yield* sql`CREATE INDEX products_price_listing ON products (min_price_usd, id) ${listed}`
  yield* sql`CREATE INDEX products_price_desc_listing ON products (min_price_usd DESC, id) ${listed}`
  yield* sql`DROP INDEX products_title, products_price, products_price_desc`
})
