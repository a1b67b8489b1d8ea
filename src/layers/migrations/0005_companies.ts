import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The company API platform (docs/company-api.md).
 *
 * - `companies.rate_limits` holds per-company overrides of the spec's limits, by scope (`{}` = defaults).
 * - Accounts and keys carry their environment (`test` or `live`); a key works only on its own.
 * - Keys are stored as the SHA-256 of their value (`key_hash`), never the value itself.
 * - A key is active while `revoked_at` is null and `expires_at` is in the future; names are unique among
 *   a company's keys that are not deleted.
 * - Every time is written from the application's Clock.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE companies (
      id text PRIMARY KEY,
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      rate_limits jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE accounts (
      id text PRIMARY KEY,
      company_id text NOT NULL REFERENCES companies (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      name text NOT NULL,
      is_default boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX accounts_company ON accounts (company_id)`
  yield* sql`CREATE UNIQUE INDEX accounts_default ON accounts (company_id, environment) WHERE is_default`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      company_id text NOT NULL REFERENCES companies (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      name text NOT NULL CHECK (length(name) >= 1),
      key_hash text NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
      permissions jsonb NOT NULL,
      accounts_access jsonb NOT NULL,
      enforce_mtls boolean NOT NULL DEFAULT false,
      request_source text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX api_keys_name ON api_keys (company_id, name) WHERE revoked_at IS NULL`
  yield* sql`CREATE INDEX api_keys_company ON api_keys (company_id) WHERE revoked_at IS NULL`
})
