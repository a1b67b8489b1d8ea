import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"

/**
 * Discovery (spec "Discovery"): the authorization server metadata (RFC 8414), the protected resource
 * metadata (RFC 9728), the JWKS agent callbacks are signed with, and the connector manifest.
 */

export const AuthorizationServerMetadata = Schema.Struct({
  issuer: Schema.String,
  authorization_endpoint: Schema.String,
  token_endpoint: Schema.String,
  registration_endpoint: Schema.String,
  revocation_endpoint: Schema.String,
  introspection_endpoint: Schema.String,
  jwks_uri: Schema.String,
  scopes_supported: Schema.Array(Schema.String),
  response_types_supported: Schema.Array(Schema.String),
  response_modes_supported: Schema.Array(Schema.String),
  grant_types_supported: Schema.Array(Schema.String),
  code_challenge_methods_supported: Schema.Array(Schema.String),
  token_endpoint_auth_methods_supported: Schema.Array(Schema.String),
  token_endpoint_auth_signing_alg_values_supported: Schema.Array(Schema.String),
  revocation_endpoint_auth_methods_supported: Schema.Array(Schema.String),
  introspection_endpoint_auth_methods_supported: Schema.Array(Schema.String),
  authorization_response_iss_parameter_supported: Schema.Boolean,
  /** An `https` URL naming the client's metadata document is accepted as `client_id` (docs/oauth.md). */
  client_id_metadata_document_supported: Schema.Boolean,
  prompt_values_supported: Schema.Array(Schema.String),
  service_documentation: Schema.String
}).annotations({ identifier: "AuthorizationServerMetadata" })

export const ProtectedResourceMetadata = Schema.Struct({
  resource: Schema.String,
  authorization_servers: Schema.Array(Schema.String),
  scopes_supported: Schema.Array(Schema.String),
  bearer_methods_supported: Schema.Array(Schema.String),
  resource_name: Schema.String,
  resource_documentation: Schema.String
}).annotations({ identifier: "ProtectedResourceMetadata" })

export const Jwks = Schema.Struct({
  keys: Schema.Array(
    Schema.Struct({
      kty: Schema.String,
      crv: Schema.String,
      x: Schema.String,
      kid: Schema.String,
      use: Schema.String,
      alg: Schema.String
    })
  )
}).annotations({ identifier: "Jwks" })

export const ManifestOperation = Schema.Struct({
  name: Schema.String,
  method: Schema.String,
  path: Schema.String,
  toolClass: Schema.Literal("read", "write", "sensitive-write"),
  scope: Schema.String,
  description: Schema.String,
  inputSchema: Schema.Unknown
}).annotations({ identifier: "ManifestOperation" })

export const Manifest = Schema.Struct({
  schemaVersion: Schema.String,
  name: Schema.String,
  description: Schema.String,
  apiBaseUrl: Schema.String,
  openApiUrl: Schema.String,
  oauth: Schema.Struct({
    authorizationServerMetadata: Schema.String,
    protectedResourceMetadata: Schema.String,
    jwksUri: Schema.String
  }),
  scopes: Schema.Array(Schema.Struct({ name: Schema.String, description: Schema.String })),
  toolClasses: Schema.Record({ key: Schema.String, value: Schema.String }),
  /** The same operations as MCP tools (docs/mcp.md). */
  mcp: Schema.Struct({ url: Schema.String, transport: Schema.Literal("streamable-http") }),
  operations: Schema.Array(ManifestOperation),
  examplePrompts: Schema.Array(Schema.String)
}).annotations({ identifier: "Manifest" })
export type Manifest = typeof Manifest.Type

export class WellKnownApi extends HttpApiGroup.make("wellKnown")
  .add(
    HttpApiEndpoint.get("authorizationServer", "/.well-known/oauth-authorization-server")
      .addSuccess(AuthorizationServerMetadata)
      .annotate(OpenApi.Summary, "Authorization server metadata (RFC 8414)")
  )
  .add(
    HttpApiEndpoint.get("protectedResource", "/.well-known/oauth-protected-resource")
      .addSuccess(ProtectedResourceMetadata)
      .annotate(OpenApi.Summary, "Protected resource metadata (RFC 9728)")
  )
  .add(
    HttpApiEndpoint.get("jwks", "/.well-known/jwks.json")
      .addSuccess(Jwks)
      .annotate(OpenApi.Summary, "The Ed25519 public keys agent callbacks are signed with")
  )
  .add(
    HttpApiEndpoint.get("manifest", "/.well-known/ribbon-agents.json")
      .addSuccess(Manifest)
      .annotate(OpenApi.Summary, "Connector manifest: operations, scopes, tool classes and example prompts")
  )
  .annotate(OpenApi.Title, "Discovery")
  .annotate(OpenApi.Description, "Discovery documents for OAuth clients and agent connectors.") {}
