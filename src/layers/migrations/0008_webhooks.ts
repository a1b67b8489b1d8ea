import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Outbound webhooks (src/services/checkout/WebhookDeliveries.ts, docs/webhooks.md).
 *
 * - `webhook_deliveries` is the durable outbox: one row per (url, event); the unique (url, event_id) index also serves look-ups by url, inserted in the transaction that
 *   records the event; a `webhook.deliver` job (key = the delivery id) sends it.
 * - `status`: `pending` until a 2xx (`delivered`), the retries run out or the URL is refused (`failed`), or
 *   the URL answered 410 Gone (`disabled`, which also disables the URL's other pending and later deliveries).
 * - `next_attempt_at` is the nominal time of the next attempt (the jobs row holds the jittered one).
 * - `webhook_attempts` is the readable log: one row per attempt, with at most 1 KB of the response body.
 * - Every time is written from the application's Clock.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      url text NOT NULL,
      event_id text NOT NULL,
      event_type text NOT NULL,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'disabled')),
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      next_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      delivered_at timestamptz,
      CHECK ((status = 'delivered') = (delivered_at IS NOT NULL)),
      CHECK (status = 'pending' OR next_attempt_at IS NULL)
    )`
  yield* sql`CREATE UNIQUE INDEX webhook_deliveries_url_event ON webhook_deliveries (url, event_id)`
  yield* sql`CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id)`
  yield* sql`
    CREATE TABLE webhook_attempts (
      delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      attempt integer NOT NULL CHECK (attempt >= 1),
      started_at timestamptz NOT NULL,
      duration_ms integer NOT NULL CHECK (duration_ms >= 0),
      status_code integer,
      error text,
      response_body text CHECK (octet_length(response_body) <= 1024),
      PRIMARY KEY (delivery_id, attempt)
    )`
})
