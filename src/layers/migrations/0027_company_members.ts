import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The people of a company (docs/decisions/0054-company-members-and-roles.md). A member is a user (the identity
 * context's `users`, the same person who may sign in for an agent) with a role in one company and the accounts
 * it reaches. An invitation waits for its e-mail's owner for seven days; its token is kept as a SHA-256 hash.
 * `require_two_factor` is the owner's setting that every member sign in with a second factor.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE companies ADD COLUMN require_two_factor boolean NOT NULL DEFAULT false`
  yield* sql`
    CREATE TABLE company_members (
      company_id text NOT NULL REFERENCES companies (id),
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'sender', 'viewer')),
      accounts_access jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (company_id, user_id)
    )`
  yield* sql`CREATE INDEX company_members_user ON company_members (user_id)`
  yield* sql`
    CREATE TABLE member_invitations (
      id text PRIMARY KEY,
      company_id text NOT NULL REFERENCES companies (id),
      email text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'sender', 'viewer')),
      accounts_access jsonb NOT NULL,
      token_hash text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
      invited_by text NOT NULL REFERENCES users (id),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX member_invitations_company ON member_invitations (company_id, created_at DESC)`
})
