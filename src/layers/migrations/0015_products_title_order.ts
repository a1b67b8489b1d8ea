import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The title order of products, for `GET /public-api/v3/products?sort=title` (docs/catalog.md, "Catalog (v3)"):
 * a keyset page is then an index range scan from the last `(title, id)`, read either way, instead of a sort
 * of the whole catalog per page.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX products_title ON products (title, id)`
})
