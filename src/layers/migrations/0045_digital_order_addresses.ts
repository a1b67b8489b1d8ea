import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A digital order has no street address (docs/decisions/0073-gifts-that-reach-any-country.md): it is delivered
 * online, so it keeps its country alone.
 *
 * - `company_orders.address1` and `city` may be null: null for an order of a digital variant. The orders a digital
 *   gift's claim placed before stored them as empty texts; they become null.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE company_orders ALTER COLUMN address1 DROP NOT NULL, ALTER COLUMN city DROP NOT NULL`
  yield* sql`UPDATE company_orders SET address1 = NULLIF(address1, ''), city = NULLIF(city, '')
    WHERE address1 = '' OR city = ''`
})
