import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  InvalidClient,
  InvalidClientMetadata,
  InvalidGrant,
  InvalidRedirectUri,
  InvalidScope,
  InvalidTarget,
  UnauthorizedClient,
  UnsupportedGrantType
} from "../../domain/identity/Errors.js"
import {
  AuthorizeForm,
  AuthorizeParams,
  IntrospectionRequest,
  IntrospectionResponse,
  RegisteredClient,
  RegistrationRequest,
  RevocationRequest,
  TokenRequest,
  TokenResponse
} from "../../domain/identity/OAuth.js"
import { InvalidRequest, RateLimited } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { showsErrorPages } from "../OpenApiDocument.js"

/**
 * The OAuth 2.1 authorization server (spec "OAuth", docs/decisions/0023-oauth-server.md, docs/oauth.md). Errors use the
 * RFC 6749 body `{error, error_description}`. The authorize endpoint is a browser page: it answers HTML, or a
 * redirect back to the client.
 */

/** A body sent either as JSON or form-encoded (OAuth clients send forms; some send JSON). */
const jsonOrForm = <A, I>(schema: Schema.Schema<A, I>) =>
  Schema.Union(
    schema,
    HttpApiSchema.withEncoding(schema as unknown as Schema.Schema<A, Record<string, string>>, { kind: "UrlParams" })
  )

const Html = HttpApiSchema.Text({ contentType: "text/html" })

export class OAuthApi extends HttpApiGroup.make("oauth")
  .add(
    HttpApiEndpoint.get("authorize", "/oauth/authorize")
      .setUrlParams(AuthorizeParams)
      .addSuccess(Html)
      .annotate(OpenApi.Transform, showsErrorPages([400]))
      .annotate(
        OpenApi.Summary,
        "Authorization endpoint (browser): sign-in or sign-up, then consent; redirects back with code, state and iss"
      )
  )
  .add(
    HttpApiEndpoint.post("authorizeForm", "/oauth/authorize")
      .setPayload(HttpApiSchema.withEncoding(AuthorizeForm, { kind: "UrlParams" }))
      .addSuccess(Html)
      .annotate(OpenApi.Transform, showsErrorPages([400]))
      .annotate(OpenApi.Summary, "The forms of the authorize pages (sign in, create account, allow, deny)")
  )
  .add(
    HttpApiEndpoint.post("token", "/oauth/token")
      .setPayload(jsonOrForm(TokenRequest))
      .addSuccess(TokenResponse)
      .addError(lineError("oauth", InvalidClient))
      .addError(lineError("oauth", InvalidGrant))
      .addError(lineError("oauth", UnsupportedGrantType))
      .addError(lineError("oauth", InvalidScope))
      .addError(lineError("oauth", InvalidTarget))
      .addError(lineError("oauth", UnauthorizedClient))
      .addError(lineError("oauth", RateLimited))
      .annotate(OpenApi.Summary, "Token endpoint: authorization_code with PKCE (S256), and refresh_token with rotation")
  )
  .add(
    HttpApiEndpoint.post("register", "/oauth/register")
      .setPayload(RegistrationRequest)
      .addSuccess(RegisteredClient, { status: 201 })
      .addError(lineError("oauth", InvalidRedirectUri))
      .addError(lineError("oauth", InvalidClientMetadata))
      .addError(lineError("oauth", RateLimited))
      .annotate(OpenApi.Summary, "Dynamic client registration (RFC 7591)")
  )
  .add(
    HttpApiEndpoint.post("revoke", "/oauth/revoke")
      .setPayload(jsonOrForm(RevocationRequest))
      .addSuccess(Schema.Void, { status: 200 })
      .addError(lineError("oauth", InvalidClient))
      .addError(lineError("oauth", RateLimited))
      .annotate(OpenApi.Summary, "Revokes a token and its whole family (RFC 7009); 200 for unknown tokens")
  )
  .add(
    HttpApiEndpoint.post("introspect", "/oauth/introspect")
      .setPayload(jsonOrForm(IntrospectionRequest))
      .addSuccess(IntrospectionResponse)
      .addError(lineError("oauth", InvalidClient))
      .addError(lineError("oauth", RateLimited))
      .annotate(OpenApi.Summary, "Token introspection (RFC 7662); {active:false} for any inactive token")
  )
  .addError(lineError("oauth", InvalidRequest))
  .annotate(OpenApi.Title, "OAuth")
  .annotate(OpenApi.Description, "OAuth 2.1 authorization server for agents acting for a signed-in user.") {}
