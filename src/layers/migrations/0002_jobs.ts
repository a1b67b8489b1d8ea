import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The durable background work queue (see src/services/Jobs.ts). */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE jobs (
      id text PRIMARY KEY,
      kind text NOT NULL,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'succeeded', 'dead')),
      attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL,
      run_at timestamptz NOT NULL,
      lease_expires_at timestamptz,
      last_error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX jobs_ready ON jobs (run_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX jobs_leased ON jobs (lease_expires_at) WHERE status = 'running'`
})
