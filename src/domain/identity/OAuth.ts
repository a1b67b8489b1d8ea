import { Schema } from "effect"
import type { User } from "./Users.js"

/** The OAuth 2.1 vocabulary of the agent API (spec "Authentication", "OAuth"; docs/oauth.md). */

export const Scope = Schema.Literal(
  "profile",
  "catalog:read",
  "orders:read",
  "orders:write",
  "payments:allowance",
  "offline_access"
)
export type Scope = typeof Scope.Type

/** Every scope with the plain words the consent page and the manifest show. */
export const scopeDescriptions: Readonly<Record<Scope, string>> = {
  profile: "See and edit your profile and saved addresses",
  "catalog:read": "Browse the marketplace, prices and availability for you",
  "orders:read": "See your quotes and orders",
  "orders:write": "Create checkouts for you to pay, and cancel orders",
  "payments:allowance":
    "Pay checkouts from a spending allowance you set up separately, within its limits; see and cancel that allowance",
  offline_access: "Stay connected when you are not using it (refresh tokens)"
}

export const supportedScopes = Object.keys(scopeDescriptions) as ReadonlyArray<Scope>

/** How careful an agent must be with an operation: sensitive writes always ask the user first. */
export const ToolClass = Schema.Literal("read", "write", "sensitive-write")
export type ToolClass = typeof ToolClass.Type

export const AuthMethod = Schema.Literal("none", "client_secret_post", "client_secret_basic")
export type AuthMethod = typeof AuthMethod.Type

/** How a client authenticates: registration's methods, or `private_key_jwt` for a metadata document client. */
export const ClientAuthMethod = Schema.Literal(...AuthMethod.literals, "private_key_jwt")
export type ClientAuthMethod = typeof ClientAuthMethod.Type

/** RFC 7523 §2.2: the `client_assertion_type` of a JWT client assertion. */
export const jwtBearerAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

export const GrantType = Schema.Literal("authorization_code", "refresh_token")

const Uri = Schema.String.pipe(
  Schema.maxLength(2000),
  Schema.filter((s) => URL.canParse(s) || "Expected an absolute URI")
)

/** `POST /oauth/register` (RFC 7591) with the spec's bounds; unknown members are ignored. */
export const RegistrationRequest = Schema.Struct({
  client_name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
  redirect_uris: Schema.Array(Schema.String.pipe(Schema.maxLength(2000))).pipe(Schema.minItems(1), Schema.maxItems(10)),
  grant_types: Schema.optional(Schema.Array(GrantType).pipe(Schema.minItems(1))),
  response_types: Schema.optional(Schema.Array(Schema.Literal("code")).pipe(Schema.minItems(1))),
  token_endpoint_auth_method: Schema.optional(AuthMethod),
  scope: Schema.optional(Schema.String.pipe(Schema.maxLength(500))),
  logo_uri: Schema.optional(Uri),
  client_uri: Schema.optional(Uri),
  contacts: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(320))).pipe(Schema.maxItems(10))),
  software_id: Schema.optional(Schema.String.pipe(Schema.maxLength(200)))
}).annotations({ identifier: "RegistrationRequest" })
export type RegistrationRequest = typeof RegistrationRequest.Type

/** The 201 of registration: the credentials and the metadata as registered (defaults filled in). */
export const RegisteredClient = Schema.Struct({
  client_id: Schema.String,
  client_id_issued_at: Schema.Number,
  client_secret: Schema.optional(Schema.String),
  client_secret_expires_at: Schema.optional(Schema.Literal(0)),
  client_name: Schema.String,
  redirect_uris: Schema.Array(Schema.String),
  grant_types: Schema.Array(Schema.String),
  response_types: Schema.Array(Schema.String),
  token_endpoint_auth_method: AuthMethod,
  scope: Schema.String,
  logo_uri: Schema.optional(Schema.String),
  client_uri: Schema.optional(Schema.String),
  contacts: Schema.optional(Schema.Array(Schema.String)),
  software_id: Schema.optional(Schema.String)
}).annotations({ identifier: "RegisteredClient" })
export type RegisteredClient = typeof RegisteredClient.Type

const Param = Schema.String.pipe(Schema.maxLength(4096))

/** `POST /oauth/token`, form-encoded or JSON. A repeated parameter is a 400 (RFC 6749 §3.2). */
export const TokenRequest = Schema.Struct({
  grant_type: Param,
  code: Schema.optional(Param),
  code_verifier: Schema.optional(Param),
  redirect_uri: Schema.optional(Param),
  refresh_token: Schema.optional(Param),
  client_id: Schema.optional(Param),
  client_secret: Schema.optional(Param),
  client_assertion_type: Schema.optional(Param),
  client_assertion: Schema.optional(Param),
  scope: Schema.optional(Param),
  resource: Schema.optional(Param)
}).annotations({ identifier: "TokenRequest" })
export type TokenRequest = typeof TokenRequest.Type

export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Number,
  scope: Schema.String,
  refresh_token: Schema.optional(Schema.String)
}).annotations({ identifier: "TokenResponse" })
export type TokenResponse = typeof TokenResponse.Type

/** `POST /oauth/revoke` (RFC 7009). */
export const RevocationRequest = Schema.Struct({
  token: Param,
  token_type_hint: Schema.optional(Param),
  client_id: Schema.optional(Param),
  client_secret: Schema.optional(Param),
  client_assertion_type: Schema.optional(Param),
  client_assertion: Schema.optional(Param)
}).annotations({ identifier: "RevocationRequest" })
export type RevocationRequest = typeof RevocationRequest.Type

/** `POST /oauth/introspect` (RFC 7662). */
export const IntrospectionRequest = Schema.Struct({
  token: Param,
  token_type_hint: Schema.optional(Param),
  client_id: Schema.optional(Param),
  client_secret: Schema.optional(Param),
  client_assertion_type: Schema.optional(Param),
  client_assertion: Schema.optional(Param)
}).annotations({ identifier: "IntrospectionRequest" })
export type IntrospectionRequest = typeof IntrospectionRequest.Type

export const IntrospectionResponse = Schema.Struct({
  active: Schema.Boolean,
  scope: Schema.optional(Schema.String),
  client_id: Schema.optional(Schema.String),
  sub: Schema.optional(Schema.String),
  exp: Schema.optional(Schema.Number),
  iat: Schema.optional(Schema.Number),
  aud: Schema.optional(Schema.String),
  token_type: Schema.optional(Schema.String)
}).annotations({ identifier: "IntrospectionResponse" })
export type IntrospectionResponse = typeof IntrospectionResponse.Type

/** The query of `GET /oauth/authorize`: all optional strings, checked in order by the server. */
export const AuthorizeParams = Schema.Struct({
  response_type: Schema.optional(Param),
  client_id: Schema.optional(Param),
  redirect_uri: Schema.optional(Param),
  scope: Schema.optional(Param),
  state: Schema.optional(Param),
  code_challenge: Schema.optional(Param),
  code_challenge_method: Schema.optional(Param),
  resource: Schema.optional(Param),
  prompt: Schema.optional(Param)
}).annotations({ identifier: "AuthorizeParams" })
export type AuthorizeParams = typeof AuthorizeParams.Type

/** The forms of the authorize pages post the request's parameters back, with the step and its fields. */
export const AuthorizeForm = Schema.Struct({
  ...AuthorizeParams.fields,
  action: Schema.Literal("sign_in", "sign_up", "allow", "deny"),
  csrf: Param,
  email: Schema.optional(Param),
  password: Schema.optional(Param),
  display_name: Schema.optional(Param)
}).annotations({ identifier: "AuthorizeForm" })
export type AuthorizeForm = typeof AuthorizeForm.Type

/** Who a `/v1` access token acts for: the user, the scopes granted and the client. */
export interface BearerContext {
  readonly user: User
  readonly scopes: ReadonlyArray<string>
  readonly clientId: string
}
