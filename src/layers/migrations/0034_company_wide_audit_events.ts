import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Audit rows of changes to the company as a whole (docs/decisions/0057-audit-log.md): its members, invitations,
 * ownership and settings belong to no environment, so their rows have none (and no account). Every key and member of
 * the company reads them, in either environment.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE audit_events
      ALTER COLUMN environment DROP NOT NULL,
      ADD CONSTRAINT audit_events_company_wide CHECK (environment IS NOT NULL OR account_id IS NULL)`
})
