import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Agentic Commerce Protocol checkout sessions and the protocol's idempotency records
 * (docs/decisions/0078-agentic-commerce-protocol.md).
 *
 * - `acp_checkout_sessions`: what the agent asked for (lines, buyer, fulfillment details), kept so the session can
 *   be changed; its prices are the quotes of `lines`, its payment the Ribbon checkout `checkout_id` (the latest one
 *   made for it; an earlier one was cancelled when the session changed).
 * - `acp_idempotency_keys`: one row per (user, endpoint, key): the body's fingerprint and, once answered, the
 *   response to replay. A row without a response is a request still in flight.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE acp_checkout_sessions (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id),
      currency text NOT NULL,
      locale text,
      buyer jsonb,
      fulfillment_details jsonb,
      lines jsonb NOT NULL CHECK (jsonb_typeof(lines) = 'array'),
      issues jsonb NOT NULL,
      capabilities jsonb NOT NULL,
      order_notes text,
      metadata jsonb,
      checkout_id text REFERENCES checkouts (id),
      canceled_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX acp_checkout_sessions_user_id ON acp_checkout_sessions (user_id)`
  yield* sql`
    CREATE TABLE acp_idempotency_keys (
      user_id text NOT NULL REFERENCES users (id),
      endpoint text NOT NULL,
      key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
      fingerprint text NOT NULL,
      status integer,
      response jsonb,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, endpoint, key)
    )`
  yield* sql`CREATE INDEX acp_idempotency_keys_created_at ON acp_idempotency_keys (created_at)`
})
