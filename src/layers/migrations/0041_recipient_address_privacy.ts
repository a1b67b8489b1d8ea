import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Address privacy (docs/decisions/0071-recipient-address-privacy.md, docs/permissions.md "Address privacy"):
 *
 * - `campaigns.hide_recipient_address`: whether the company sees only the city, region and country of the
 *   addresses its gifts' recipients give. Every campaign, those made before included, starts with it on: the
 *   setting's default, so no recipient's street reaches a company that has not chosen to see it.
 * - `company_orders.address_hidden_at_claim`: whether the order's campaign hid the address when the recipient
 *   gave it. That promise holds for the order even if the campaign later turns the setting off. Orders placed
 *   before were given with no such promise: false, so they follow their campaign's setting as it is now.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE campaigns ADD COLUMN hide_recipient_address boolean NOT NULL DEFAULT true`
  yield* sql`ALTER TABLE company_orders ADD COLUMN address_hidden_at_claim boolean NOT NULL DEFAULT false`
})
