import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Every order carries the country it ships to, so the supplier (the Fulfillment simulator) reads its own
 * table only, and orders that no checkout made (the company API's) have it too. Existing orders take their
 * checkout's.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orders ADD COLUMN country_code text`
  yield* sql`UPDATE orders o SET country_code = c.country_code FROM checkouts c WHERE c.id = o.checkout_id`
})
