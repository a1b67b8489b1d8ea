import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Agentic Commerce Protocol order webhooks (docs/decisions/0084-acp-order-webhooks.md).
 *
 * - `acp_webhook_endpoints`: the URLs an agent platform (an OAuth client) registered for the protocol's order events,
 *   each with its `whsec_` secret. The secret is stored as issued, not hashed: every delivery is signed with it
 *   (HMAC-SHA256), so it must be recoverable. A deleted endpoint keeps its row (`deleted_at`, secret erased) so its
 *   deliveries still name it. A client has at most one live endpoint per URL.
 * - `acp_checkout_sessions.client_id`: the OAuth client whose token created the session, whose endpoints get its
 *   order's events (null for sessions made before this migration: they send none).
 * - `webhook_deliveries.signing_scheme`: how a delivery is signed and which headers it carries: `standard_v1a`
 *   (agent callbacks, Ed25519), `standard_v1` (company endpoints, HMAC with the row's secret), `acp_hmac` (ACP's
 *   `Merchant-Signature`, HMAC with the row's secret). It was read from `endpoint_id` before.
 * - `webhook_deliveries.acp_endpoint_id`: the ACP endpoint a delivery goes to; like a company endpoint, it is what a
 *   410 Gone closes, and deleting it erases its secret from its deliveries.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE acp_webhook_endpoints (
      id text PRIMARY KEY,
      client_id text NOT NULL,
      url text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
      secret text,
      created_at timestamptz NOT NULL,
      deleted_at timestamptz,
      CHECK ((secret IS NULL) = (deleted_at IS NOT NULL))
    )`
  // One live endpoint per URL and client: a delivery is one per (url, event), so a second would never get one.
  yield* sql`CREATE UNIQUE INDEX acp_webhook_endpoints_client_url ON acp_webhook_endpoints (client_id, url)
    WHERE deleted_at IS NULL`
  yield* sql`ALTER TABLE acp_checkout_sessions ADD COLUMN client_id text`
  yield* sql`CREATE INDEX acp_checkout_sessions_checkout ON acp_checkout_sessions (checkout_id)
    WHERE checkout_id IS NOT NULL`
  yield* sql`
    ALTER TABLE webhook_deliveries
      ADD COLUMN signing_scheme text NOT NULL DEFAULT 'standard_v1a'
        CHECK (signing_scheme IN ('standard_v1a', 'standard_v1', 'acp_hmac')),
      ADD COLUMN acp_endpoint_id text REFERENCES acp_webhook_endpoints (id)`
  yield* sql`UPDATE webhook_deliveries SET signing_scheme = 'standard_v1' WHERE endpoint_id IS NOT NULL`
  // Every insert names its scheme from now on.
  yield* sql`ALTER TABLE webhook_deliveries ALTER COLUMN signing_scheme DROP DEFAULT`
  yield* sql`ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_secret_of_endpoint`
  yield* sql`
    ALTER TABLE webhook_deliveries
      ADD CONSTRAINT webhook_deliveries_secret_of_scheme CHECK (signing_scheme <> 'standard_v1a' OR signing_secret IS NULL),
      ADD CONSTRAINT webhook_deliveries_one_endpoint CHECK (endpoint_id IS NULL OR acp_endpoint_id IS NULL)`
  yield* sql`CREATE INDEX webhook_deliveries_acp_endpoint ON webhook_deliveries (acp_endpoint_id)
    WHERE acp_endpoint_id IS NOT NULL`
})
