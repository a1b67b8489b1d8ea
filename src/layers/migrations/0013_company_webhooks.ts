import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Company webhooks (docs/decisions/0050-company-webhooks.md, docs/company-api.md "Webhooks", docs/webhooks.md).
 *
 * - `company_webhook_endpoints`: a company's endpoints in one environment, each with the event types it
 *   subscribes to (a JSON array) and its `whsec_` signing secret. The secret is stored as it was issued,
 *   not hashed: every delivery is signed with it (HMAC-SHA256), so it must be recoverable. A deleted
 *   endpoint keeps its row (`deleted_at`, secret erased) so its deliveries still name it.
 * - `webhook_deliveries.endpoint_id` names the company endpoint a delivery goes to (null for agent
 *   callbacks), and `signing_secret` is that endpoint's secret: the delivery engine signs such a delivery
 *   `v1` (HMAC) with it instead of `v1a` (Ed25519), from its own row. A 410 Gone disables the endpoint's
 *   deliveries rather than the URL's.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE company_webhook_endpoints (
      id text PRIMARY KEY,
      company_id text NOT NULL REFERENCES companies (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      url text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
      event_types jsonb NOT NULL CHECK (jsonb_typeof(event_types) = 'array' AND jsonb_array_length(event_types) BETWEEN 1 AND 7),
      secret text,
      created_at timestamptz NOT NULL,
      deleted_at timestamptz,
      CHECK ((secret IS NULL) = (deleted_at IS NOT NULL))
    )`
  yield* sql`CREATE INDEX company_webhook_endpoints_company ON company_webhook_endpoints (company_id, environment, created_at)
    WHERE deleted_at IS NULL`
  yield* sql`
    ALTER TABLE webhook_deliveries
      ADD COLUMN endpoint_id text REFERENCES company_webhook_endpoints (id),
      ADD COLUMN signing_secret text,
      ADD CONSTRAINT webhook_deliveries_secret_of_endpoint CHECK (endpoint_id IS NOT NULL OR signing_secret IS NULL)`
  yield* sql`CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC)
    WHERE endpoint_id IS NOT NULL`
  yield* sql`CREATE INDEX webhook_deliveries_endpoint_disabled ON webhook_deliveries (endpoint_id)
    WHERE endpoint_id IS NOT NULL AND status = 'disabled'`
})
