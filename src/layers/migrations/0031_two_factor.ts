import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Two-factor sign-in (docs/decisions/0059-two-factor-sign-in.md).
 *
 * - `user_two_factor`: a user's TOTP secret (20 random bytes in base32). The secret is stored as it was
 *   issued, not hashed: every verification computes codes from it, so it must be recoverable (as company
 *   webhook signing secrets are). The row exists from enrolment on; `confirmed_at` is set once a first code
 *   proves the app holds the secret, and only then does it count. `last_used_step` is the TOTP step
 *   (Unix time / 30 s) of the last accepted code: a code of that step or an earlier one is refused, so a
 *   code seen over a shoulder cannot be used again within its window.
 * - `user_recovery_codes`: one-time codes in place of a TOTP code, stored as SHA-256 hex digests. They go
 *   with the two-factor row (disabling deletes them).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE user_two_factor (
      user_id text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      secret text NOT NULL CHECK (secret ~ '^[A-Z2-7]{32}$'),
      created_at timestamptz NOT NULL,
      confirmed_at timestamptz,
      last_used_step bigint
    )`
  yield* sql`
    CREATE TABLE user_recovery_codes (
      user_id text NOT NULL REFERENCES user_two_factor (user_id) ON DELETE CASCADE,
      code_hash text NOT NULL CHECK (code_hash ~ '^[0-9a-f]{64}$'),
      used_at timestamptz,
      PRIMARY KEY (user_id, code_hash)
    )`
})
