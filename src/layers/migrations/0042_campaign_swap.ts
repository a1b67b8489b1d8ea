import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A campaign says whether a recipient may swap its product for another within the same budget (`swap`,
 * docs/decisions/0072-swapping-a-gift-within-budget.md), and an order placed for a swapped gift keeps what the gift
 * was before the swap.
 *
 * - `campaigns.swap`: `disabled` or `within_budget`. Existing product campaigns get `within_budget`, the product
 *   gift's default; collection campaigns `disabled` (their recipient already chooses in the collection).
 * - `company_orders.swapped_from_product_id` and `swapped_from_title`: the campaign's product and its title when the
 *   order is for another product; both null otherwise.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE campaigns ADD COLUMN swap text NOT NULL DEFAULT 'within_budget'
    CHECK (swap IN ('disabled', 'within_budget'))`
  yield* sql`UPDATE campaigns SET swap = 'disabled' WHERE gift_type = 'collection'`
  yield* sql`ALTER TABLE campaigns ALTER COLUMN swap DROP DEFAULT`
  yield* sql`ALTER TABLE company_orders ADD COLUMN swapped_from_product_id text,
    ADD COLUMN swapped_from_title text`
})
