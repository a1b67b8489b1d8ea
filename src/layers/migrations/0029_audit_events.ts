import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The company audit log (docs/decisions/0057-audit-log.md): one row per change made by a company's key or member, or by
 * the operator, written in the change's transaction. Ids and names only: no secret, no recipient's personal data. The
 * indexes serve the list (newest first) and its filters by actor and by action. The action list is
 * `auditActions` in src/domain/company/Audit.ts; the column takes any dotted name so that adding one needs no migration.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE audit_events (
      id text PRIMARY KEY,
      company_id text NOT NULL REFERENCES companies (id),
      occurred_at timestamptz NOT NULL,
      actor_type text NOT NULL CHECK (actor_type IN ('key', 'member', 'operator')),
      actor_id text,
      actor_name text NOT NULL,
      action text NOT NULL CHECK (action ~ '^[a-z_]+\\.[a-z_]+$'),
      target_type text NOT NULL,
      target_id text NOT NULL,
      account_id text,
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      source_address text,
      request_id text,
      CHECK ((actor_type = 'operator') = (actor_id IS NULL))
    )`
  yield* sql`CREATE INDEX audit_events_company ON audit_events (company_id, occurred_at DESC, id DESC)`
  yield* sql`CREATE INDEX audit_events_actor ON audit_events (company_id, actor_id)`
  yield* sql`CREATE INDEX audit_events_action ON audit_events (company_id, action)`
})
