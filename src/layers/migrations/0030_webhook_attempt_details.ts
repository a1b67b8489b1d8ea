import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What a delivery log shows, and endpoints a company switches off (docs/decisions/0058-webhook-resend-and-test-events.md,
 * docs/webhooks.md "The attempts log").
 *
 * - `webhook_attempts.request_headers`: the headers the attempt was sent with (`webhook-id`, `webhook-timestamp`,
 *   `webhook-signature`, …), written with the attempt before it is sent; never a secret. Null for attempts made
 *   before this migration. `response_truncated`: whether the response body went on past the excerpt kept.
 * - `webhook_deliveries.gone`: this delivery's receiver answered it 410 Gone, which closes the receiver (its
 *   pending and later deliveries are disabled) until its company endpoint is enabled again. It was read from
 *   the status before (a disabled delivery), which a delivery paused by a company's own request now also has.
 * - `webhook_deliveries.resends`: how many times the delivery was sent again on request; each resend runs under
 *   a `webhook.deliver` job of its own, keyed `{id}/resend-{n}`.
 * - `company_webhook_endpoints.disabled_at`: the company disabled the endpoint (PATCH `status: "disabled"`).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE webhook_attempts
      ADD COLUMN request_headers jsonb CHECK (request_headers IS NULL OR jsonb_typeof(request_headers) = 'object'),
      ADD COLUMN response_truncated boolean`
  yield* sql`
    ALTER TABLE webhook_deliveries
      ADD COLUMN gone boolean NOT NULL DEFAULT false,
      ADD COLUMN resends integer NOT NULL DEFAULT 0 CHECK (resends >= 0)`
  // Until now only a 410 Gone left a delivery disabled with that status code on it.
  yield* sql`UPDATE webhook_deliveries SET gone = true WHERE status = 'disabled' AND last_status_code = 410`
  yield* sql`DROP INDEX webhook_deliveries_endpoint_disabled`
  yield* sql`CREATE INDEX webhook_deliveries_gone ON webhook_deliveries (endpoint_id, url) WHERE gone`
  yield* sql`ALTER TABLE company_webhook_endpoints ADD COLUMN disabled_at timestamptz`
})
