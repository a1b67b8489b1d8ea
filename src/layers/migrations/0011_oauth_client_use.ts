import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * When a client first exchanged a code for tokens (RFC 9700 §4.11.2): until then, errors of its authorization
 * requests are shown on Ribbon's page instead of being redirected to a URI anyone could have registered.
 * Clients that already hold tokens count as used from their first token.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE oauth_clients ADD COLUMN first_code_redeemed_at timestamptz`
  yield* sql`
    UPDATE oauth_clients c SET first_code_redeemed_at = t.first
    FROM (SELECT client_id, min(issued_at) AS first FROM oauth_tokens GROUP BY client_id) t
    WHERE t.client_id = c.id`
})
