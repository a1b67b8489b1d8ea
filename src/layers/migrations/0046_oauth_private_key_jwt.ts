import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Clients that authenticate with `private_key_jwt` (RFC 7523; docs/decisions/0076-client-id-metadata-documents.md):
 * clients named by their client ID metadata document may declare it with a `jwks_uri`. They have no secret,
 * as public clients, and their `jwks_uri` is where their keys are; no other client has one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE oauth_clients DROP CONSTRAINT oauth_clients_token_endpoint_auth_method_check`
  yield* sql`ALTER TABLE oauth_clients DROP CONSTRAINT oauth_clients_check`
  yield* sql`ALTER TABLE oauth_clients ADD COLUMN jwks_uri text`
  yield* sql`
    ALTER TABLE oauth_clients ADD CONSTRAINT oauth_clients_token_endpoint_auth_method_check
      CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post', 'client_secret_basic', 'private_key_jwt'))`
  yield* sql`
    ALTER TABLE oauth_clients ADD CONSTRAINT oauth_clients_secret_check
      CHECK ((token_endpoint_auth_method IN ('client_secret_post', 'client_secret_basic')) = (secret_hash IS NOT NULL))`
  yield* sql`
    ALTER TABLE oauth_clients ADD CONSTRAINT oauth_clients_jwks_uri_check
      CHECK ((token_endpoint_auth_method = 'private_key_jwt') = (jwks_uri IS NOT NULL))`
})
