import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The `jti` of every `private_key_jwt` assertion accepted (docs/decisions/0089-shared-replay-memory-and-purges.md),
 * until the assertion expires: kept in the database rather than in each instance's memory, so that an assertion
 * replayed to another instance of the service is refused too.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE oauth_assertion_jtis (
      client_id text NOT NULL,
      jti text NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (client_id, jti)
    )`
})
