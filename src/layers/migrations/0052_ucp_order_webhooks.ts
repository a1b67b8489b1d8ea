import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * UCP order event webhooks (docs/decisions/0088-ucp-order-webhooks.md).
 *
 * - `acp_checkout_sessions.ucp_profile_url`: the profile URL of the `UCP-Agent` that created the session over UCP
 *   (REST or MCP). Its order capability's `config.webhook_url` is where the order's events go, read from the profile
 *   when an event is sent. Null for sessions made over ACP, or before this migration: they send no UCP events.
 * - `webhook_deliveries.signing_scheme` gains `ucp_rfc9421`: RFC 9421 signed with Ribbon's UCP key, no secret.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE acp_checkout_sessions ADD COLUMN ucp_profile_url text`
  yield* sql`ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_signing_scheme_check`
  yield* sql`
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_signing_scheme_check
      CHECK (signing_scheme IN ('standard_v1a', 'standard_v1', 'acp_hmac', 'ucp_rfc9421'))`
})
