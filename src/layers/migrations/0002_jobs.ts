import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The durable background work queue (see src/services/platform/Jobs.ts).
 *
 * - `key` deduplicates: at most one job per (kind, key), whatever its status.
 * - `attempts` counts claims; together with `id` it fences a worker's updates (a worker whose lease
 *   expired and whose job was claimed again can no longer record an outcome).
 * - `lease_expires_at` is set while `running`; a job whose lease passed is claimable again.
 * - Every time is written from the application's Clock, never from SQL `now()`.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE jobs (
      id text PRIMARY KEY,
      kind text NOT NULL,
      key text,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'succeeded', 'dead')),
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      max_attempts integer NOT NULL CHECK (max_attempts >= 1),
      run_at timestamptz NOT NULL,
      lease_expires_at timestamptz,
      last_error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CHECK ((status = 'running') = (lease_expires_at IS NOT NULL))
    )`
  yield* sql`CREATE UNIQUE INDEX jobs_kind_key ON jobs (kind, key) WHERE key IS NOT NULL`
  yield* sql`CREATE INDEX jobs_ready ON jobs (run_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX jobs_leased ON jobs (lease_expires_at) WHERE status = 'running'`
})
