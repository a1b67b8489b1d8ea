import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What the dashboard's key list shows of a key besides its settings (docs/dashboard.md, "API keys"):
 * - `key_prefix`: the key's first characters, so a person can tell which key a program holds without the key
 *   being shown again; keys made before have none;
 * - `last_used_at`: when the key last authenticated a request, recorded at most once a minute per key.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE api_keys
      ADD COLUMN key_prefix text CHECK (key_prefix ~ '^[0-9a-f]{1,12}$'),
      ADD COLUMN last_used_at timestamptz`
})
