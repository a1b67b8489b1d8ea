import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Users, their saved addresses, and the OAuth 2.1 authorization server (docs/oauth.md).
 *
 * - Secrets (client secrets, codes, tokens, session ids) are stored only as SHA-256 hex digests.
 * - `users.email` is unique case-insensitively (`lower(email)`), and kept as the user typed it.
 * - One token family per authorization grant: the code's exchange starts it, refreshes continue it, and
 *   revoking it (revocation, refresh-token reuse, code reuse) revokes every token in it.
 * - Every time is written from the application's Clock, never from SQL `now()`.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      email text NOT NULL,
      password_hash text NOT NULL,
      display_name text,
      phone text,
      default_country text NOT NULL CHECK (default_country ~ '^[A-Z]{2}$'),
      receipt_preference text NOT NULL CHECK (receipt_preference IN ('email', 'sms', 'both', 'none')),
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE UNIQUE INDEX users_email ON users (lower(email))`

  yield* sql`
    CREATE TABLE user_addresses (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      label text,
      first_name text NOT NULL,
      last_name text NOT NULL,
      phone text,
      address1 text,
      address2 text,
      city text,
      province_code text,
      postal_code text,
      country_code text NOT NULL CHECK (country_code ~ '^[A-Z]{2}$'),
      is_default boolean NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX user_addresses_user ON user_addresses (user_id, created_at)`
  yield* sql`CREATE UNIQUE INDEX user_addresses_default ON user_addresses (user_id) WHERE is_default`

  yield* sql`
    CREATE TABLE oauth_clients (
      id text PRIMARY KEY,
      secret_hash text,
      client_name text NOT NULL,
      redirect_uris jsonb NOT NULL,
      grant_types jsonb NOT NULL,
      response_types jsonb NOT NULL,
      token_endpoint_auth_method text NOT NULL
        CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post', 'client_secret_basic')),
      scope text NOT NULL,
      logo_uri text,
      client_uri text,
      contacts jsonb NOT NULL,
      software_id text,
      created_at timestamptz NOT NULL,
      CHECK ((token_endpoint_auth_method = 'none') = (secret_hash IS NULL))
    )`

  yield* sql`
    CREATE TABLE browser_sessions (
      id_hash text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      authenticated_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`

  yield* sql`
    CREATE TABLE oauth_consents (
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      client_id text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
      scope text NOT NULL,
      granted_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, client_id)
    )`

  yield* sql`
    CREATE TABLE oauth_codes (
      code_hash text PRIMARY KEY,
      client_id text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      redirect_uri text NOT NULL,
      scope text NOT NULL,
      resource text NOT NULL,
      code_challenge text NOT NULL,
      family_id text NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`

  yield* sql`
    CREATE TABLE oauth_tokens (
      token_hash text PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
      family_id text NOT NULL,
      client_id text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      scope text NOT NULL,
      audience text NOT NULL,
      issued_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      rotated_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX oauth_tokens_family ON oauth_tokens (family_id)`

  yield* sql`
    CREATE TABLE signing_keys (
      kid text PRIMARY KEY,
      algorithm text NOT NULL CHECK (algorithm = 'Ed25519'),
      public_jwk jsonb NOT NULL,
      private_pkcs8 text NOT NULL,
      created_at timestamptz NOT NULL
    )`
})
