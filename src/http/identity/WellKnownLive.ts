import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { supportedScopes } from "../../domain/identity/OAuth.js"
import { Authorizations } from "../../services/identity/Authorizations.js"
import { assertionAlgorithms } from "../../services/identity/ClientAssertions.js"
import { SigningKeys } from "../../services/platform/SigningKeys.js"
import { Api } from "../Api.js"
import { makeManifest } from "./Manifest.js"

/** Discovery documents; the issuer is the public base URL, so each document names where it is served. */
export const WellKnownLive = HttpApiBuilder.group(Api, "wellKnown", (handlers) =>
  Effect.gen(function* () {
    const { issuer } = yield* Authorizations
    const keys = yield* SigningKeys
    // private_key_jwt is for clients named by a metadata document that declares it (docs/oauth.md).
    const clientAuth = ["none", "client_secret_post", "client_secret_basic", "private_key_jwt"]
    const serverMetadata = {
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      introspection_endpoint: `${issuer}/oauth/introspect`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      scopes_supported: supportedScopes,
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: clientAuth,
      token_endpoint_auth_signing_alg_values_supported: assertionAlgorithms,
      revocation_endpoint_auth_methods_supported: clientAuth,
      introspection_endpoint_auth_methods_supported: clientAuth,
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      prompt_values_supported: ["none", "login", "consent"],
      service_documentation: `${issuer}/docs`
    }
    const resourceMetadata = {
      resource: issuer,
      authorization_servers: [issuer],
      scopes_supported: supportedScopes,
      bearer_methods_supported: ["header"],
      resource_name: "Ribbon",
      resource_documentation: `${issuer}/docs`
    }
    const manifest = makeManifest(issuer)
    return handlers
      .handle("authorizationServer", () => Effect.succeed(serverMetadata))
      .handle("protectedResource", () => Effect.succeed(resourceMetadata))
      .handle("jwks", () => keys.jwks())
      .handle("manifest", () => Effect.succeed(manifest))
  })
)
