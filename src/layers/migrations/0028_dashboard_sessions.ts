import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The company dashboard's sessions (docs/decisions/0056-dashboard-sessions-and-sign-up.md): one row per signed-in
 * browser, found by the SHA-256 of its cookie (the cookie itself is never stored), in one company at a time.
 * A session ends at `expires_at` (7 days after sign-in), after 12 hours without a request (`last_seen_at`), or
 * when `revoked_at` is set (sign-out, removal from the company).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE dashboard_sessions (
      id_hash text PRIMARY KEY CHECK (id_hash ~ '^[0-9a-f]{64}$'),
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      company_id text NOT NULL REFERENCES companies (id),
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      source_address text NOT NULL
    )`
  yield* sql`CREATE INDEX dashboard_sessions_member ON dashboard_sessions (user_id, company_id) WHERE revoked_at IS NULL`
})
