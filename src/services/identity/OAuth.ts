import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { SqlClient, type Statement } from "@effect/sql"
import { Cache, Effect, Either, Option, type ParseResult, Schema } from "effect"
import {
  InvalidClient,
  InvalidClientMetadata,
  InvalidGrant,
  InvalidRedirectUri,
  InvalidScope,
  InvalidTarget,
  InvalidToken,
  UnauthorizedClient,
  UnsupportedGrantType
} from "../../domain/identity/Errors.js"
import {
  AuthMethod,
  type AuthorizeParams,
  type BearerContext,
  type IntrospectionRequest,
  type IntrospectionResponse,
  type RegisteredClient,
  RegistrationRequest,
  type RevocationRequest,
  type Scope,
  supportedScopes,
  type TokenRequest,
  type TokenResponse
} from "../../domain/identity/OAuth.js"
import type { User } from "../../domain/identity/Users.js"
import { FieldIssue, InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { formatPath, plainIssues } from "../../domain/platform/IssueMessages.js"
import { PublicUrl } from "../catalog/Catalog.js"
import { forgetWhere, foundFor, lookupIn } from "../platform/Caches.js"
import { rowsOf } from "../platform/Rows.js"
import { nowDate } from "../platform/Time.js"
import { Users } from "./Users.js"
import { toUser, UserRow } from "./UsersRepo.js"

/**
 * The OAuth 2.1 authorization server of the agent API (docs/decisions/0023-oauth-server.md, docs/oauth.md): client
 * registration, the checks of an authorization request, sessions and remembered consent of the authorize
 * pages, codes, tokens (issue, refresh with rotation, revocation, introspection) and bearer validation.
 * Knows nothing of HTTP: the handlers pass parameters in and render what comes out.
 */

export const lifetimes = {
  accessSeconds: 60 * 60,
  refreshSeconds: 30 * 24 * 60 * 60,
  codeSeconds: 5 * 60,
  sessionSeconds: 12 * 60 * 60
} as const

// ---------------------------------------------------------------------------------------------------------
// Pure helpers

export const sha256 = (value: string) => createHash("sha256").update(value).digest("hex")

/** An opaque secret with a prefix naming its kind (so leaked ones are recognisable), 256 random bits. */
const secret = (prefix: string) => `${prefix}_${randomBytes(32).toString("base64url")}`

/** Whether a presented secret hashes to the stored digest, in constant time. */
const secretMatches = (presented: string, storedHash: string) => {
  const digest = Buffer.from(sha256(presented))
  const stored = Buffer.from(storedHash)
  return digest.length === stored.length && timingSafeEqual(digest, stored)
}

/** Scopes in the canonical order, deduplicated. */
export const formatScopes = (scopes: Iterable<string>) => {
  const set = new Set(scopes)
  return supportedScopes.filter((s) => set.has(s)).join(" ")
}

const splitScopes = (scope: string) => scope.split(" ").filter((s) => s !== "")

const LOOPBACK = /^(http:\/\/(?:127\.0\.0\.1|\[::1\]|localhost))(?::\d{1,5})?(?=[/?]|$)/

/**
 * RFC 8252 §7.3: on a loopback redirect URI the port may vary; everything else must match exactly. The
 * varied port must be one a redirect can go to (1 to 65535).
 */
export const redirectUriMatches = (registered: string, requested: string) =>
  registered === requested ||
  (LOOPBACK.test(registered) &&
    registered.replace(LOOPBACK, "$1") === requested.replace(LOOPBACK, "$1") &&
    redirectUriProblem(requested) === undefined)

/** The port written in a URI's authority, if any (`URL` refuses ports above 65535 without saying why). */
const PORT = /^[^/?#]*\/\/[^/?#]*:(\d+)(?=[/?#]|$)/

/** Why a redirect URI cannot be registered, if it cannot: https, or http on a loopback host; no fragment. */
export const redirectUriProblem = (uri: string): string | undefined => {
  const port = PORT.exec(uri)?.[1]
  if (port !== undefined && !(Number(port) >= 1 && Number(port) <= 65535)) {
    return `${uri} has an impossible port (${port}); ports are 1 to 65535`
  }
  if (!URL.canParse(uri)) return `${uri} is not an absolute URI`
  const url = new URL(uri)
  if (url.hash !== "" || uri.includes("#")) return `${uri} must not have a fragment`
  if (url.username !== "" || url.password !== "") return `${uri} must not carry credentials`
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname)) return undefined
  return `${uri} must use https, or http on a loopback host (127.0.0.1, [::1], localhost)`
}

/** RFC 7636: BASE64URL(SHA256(verifier)). */
export const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

// ---------------------------------------------------------------------------------------------------------
// Rows

/** A registered client (RFC 7591); jsonb arrays as node-postgres parses them. */
export const Client = Schema.Struct({
  id: Schema.String,
  secretHash: Schema.NullOr(Schema.String),
  clientName: Schema.String,
  redirectUris: Schema.Array(Schema.String),
  grantTypes: Schema.Array(Schema.String),
  responseTypes: Schema.Array(Schema.String),
  tokenEndpointAuthMethod: AuthMethod,
  scope: Schema.String,
  logoUri: Schema.NullOr(Schema.String),
  clientUri: Schema.NullOr(Schema.String),
  contacts: Schema.Array(Schema.String),
  softwareId: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  /** When one of its codes was first exchanged for tokens; until then its errors are not redirected. */
  firstCodeRedeemedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type Client = typeof Client.Type

const CodeRow = Schema.Struct({
  codeHash: Schema.String,
  clientId: Schema.String,
  userId: Schema.String,
  redirectUri: Schema.String,
  scope: Schema.String,
  resource: Schema.String,
  codeChallenge: Schema.String,
  familyId: Schema.String,
  expiresAt: Schema.DateFromSelf,
  usedAt: Schema.NullOr(Schema.DateFromSelf)
})

const TokenRow = Schema.Struct({
  tokenHash: Schema.String,
  kind: Schema.Literal("access", "refresh"),
  familyId: Schema.String,
  clientId: Schema.String,
  userId: Schema.String,
  scope: Schema.String,
  audience: Schema.String,
  issuedAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf,
  rotatedAt: Schema.NullOr(Schema.DateFromSelf),
  revokedAt: Schema.NullOr(Schema.DateFromSelf)
})

/** An access token with its user, as every `/v1` request reads it. */
const BearerRow = Schema.Struct({
  ...TokenRow.pick("kind", "familyId", "revokedAt", "expiresAt", "audience", "scope", "clientId").fields,
  ...UserRow.omit("passwordHash").fields
})
type BearerRow = typeof BearerRow.Type

/** A token as `authenticateBearer` keeps it: its row, and the user made from it once rather than per request. */
type CachedBearer = BearerRow & { readonly user: User }

/** How long a token found by `authenticateBearer` is reused without a query (see there). */
export const bearerCacheMillis = 1000

const maxCachedBearers = 10_000

// ---------------------------------------------------------------------------------------------------------
// Requests and outcomes

/** How the client authenticated at the token, revocation or introspection endpoint. */
export interface ClientCredentials {
  /** From `Authorization: Basic`, already form-decoded (RFC 6749 §2.3.1). */
  readonly basic: Option.Option<{ readonly clientId: string; readonly clientSecret: string }>
  readonly clientId: string | undefined
  readonly clientSecret: string | undefined
}

/** An authorization request that passed every check. */
export interface ValidAuthorization {
  readonly client: Client
  /** Where to send the user back (the requested URI, or the only registered one when none was given). */
  readonly redirectUri: string
  /** The `redirect_uri` parameter as sent ("" when absent), which the token request must repeat. */
  readonly redirectUriParam: string
  readonly scopes: ReadonlyArray<Scope>
  readonly state: string | undefined
  readonly codeChallenge: string
  readonly resource: string
  readonly prompt: ReadonlySet<string>
  /** Whether errors may go back to the redirect URI (the client has redeemed a code before), or are shown. */
  readonly redirectsErrors: boolean
}

/**
 * A failed authorization request: `fatal` ones (about the client or the redirect URI, and every error of a
 * client that has not redeemed a code yet) are shown on an error page and never redirected; the others go
 * back to the client's redirect URI (RFC 6749 §4.1.2.1).
 */
export type AuthorizationFailure =
  | { readonly _tag: "Fatal"; readonly description: string }
  | {
      readonly _tag: "Redirect"
      readonly redirectUri: string
      readonly error: string
      readonly description: string
      readonly state: string | undefined
    }

// ---------------------------------------------------------------------------------------------------------
// Service

/** Rows of the inline statements below, decoded (decoders built once). */
const userIdRows = rowsOf(Schema.Struct({ userId: Schema.String }))
const scopeRows = rowsOf(Schema.Struct({ scope: Schema.String }))
const nRows = rowsOf(Schema.Struct({ n: Schema.Number }))

export class OAuth extends Effect.Service<OAuth>()("OAuth", {
  dependencies: [Users.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const clients = rowsOf(Client)
    const codes = rowsOf(CodeRow)
    const tokens = rowsOf(TokenRow)
    const bearers = rowsOf(BearerRow)
    // The issuer is the public base URL, which is also the one resource tokens are for.
    const issuer = yield* PublicUrl
    const users = yield* Users
    const resourceMetadataUrl = `${issuer}/.well-known/oauth-protected-resource`
    const later = (from: Date, secs: number) => new Date(from.getTime() + secs * 1000)

    /** RFC 8707: this service is the only resource; a trailing slash is forgiven (clients differ on it). */
    const isOurResource = (resource: string) => resource.replace(/\/$/, "") === issuer

    // --- Clients -----------------------------------------------------------------------------------------

    const findClient = (id: string) =>
      Effect.map(clients(sql`SELECT * FROM oauth_clients WHERE id = ${id}`), (rows) =>
        Option.fromNullable(rows[0])
      ).pipe(Effect.orDie)

    const registrationFailure = (error: ParseResult.ParseError) => {
      const first = plainIssues(error.issue)[0]
      const path = first === undefined ? "" : formatPath(first.path)
      const description = first === undefined ? "Invalid client metadata" : `${path || "body"}: ${first.message}`
      return path.startsWith("redirect_uris")
        ? new InvalidRedirectUri({ message: description })
        : new InvalidClientMetadata({ message: description })
    }

    /** RFC 7591 registration; nothing is stored unless every field is acceptable. */
    const register = Effect.fn("OAuth.register")(function* (body: unknown) {
      const request = yield* Schema.decodeUnknown(RegistrationRequest, { errors: "all" })(body).pipe(
        Effect.mapError(registrationFailure)
      )
      for (const uri of request.redirect_uris) {
        const problem = redirectUriProblem(uri)
        if (problem !== undefined) return yield* new InvalidRedirectUri({ message: `redirect_uris: ${problem}` })
      }
      const scopes = request.scope === undefined ? supportedScopes : splitScopes(request.scope)
      const unknown = scopes.filter((s) => !(supportedScopes as ReadonlyArray<string>).includes(s))
      if (unknown.length > 0 || scopes.length === 0) {
        return yield* new InvalidClientMetadata({
          message: `scope: unsupported scope ${unknown.join(" ") || "(empty)"}; supported: ${supportedScopes.join(" ")}`
        })
      }
      const grantTypes = request.grant_types ?? ["authorization_code", "refresh_token"]
      if (!grantTypes.includes("authorization_code")) {
        return yield* new InvalidClientMetadata({ message: "grant_types: must include authorization_code" })
      }
      const method = request.token_endpoint_auth_method ?? "client_secret_basic"
      const clientSecret = method === "none" ? undefined : secret("rcs")
      const issuedAt = yield* nowDate
      const client = {
        id: yield* makeId,
        secretHash: clientSecret === undefined ? null : sha256(clientSecret),
        clientName: request.client_name,
        redirectUris: JSON.stringify(request.redirect_uris),
        grantTypes: JSON.stringify([...new Set(grantTypes)]),
        responseTypes: JSON.stringify(["code"]),
        tokenEndpointAuthMethod: method,
        scope: formatScopes(scopes),
        logoUri: request.logo_uri ?? null,
        clientUri: request.client_uri ?? null,
        contacts: JSON.stringify(request.contacts ?? []),
        softwareId: request.software_id ?? null,
        createdAt: issuedAt
      }
      yield* sql`INSERT INTO oauth_clients ${sql.insert(client)}`.pipe(Effect.orDie)
      const registered: RegisteredClient = {
        client_id: client.id,
        client_id_issued_at: seconds(issuedAt),
        ...(clientSecret === undefined ? {} : { client_secret: clientSecret, client_secret_expires_at: 0 as const }),
        client_name: client.clientName,
        redirect_uris: request.redirect_uris,
        grant_types: [...new Set(grantTypes)],
        response_types: ["code"],
        token_endpoint_auth_method: method,
        scope: client.scope,
        ...(request.logo_uri === undefined ? {} : { logo_uri: request.logo_uri }),
        ...(request.client_uri === undefined ? {} : { client_uri: request.client_uri }),
        ...(request.contacts === undefined ? {} : { contacts: request.contacts }),
        ...(request.software_id === undefined ? {} : { software_id: request.software_id })
      }
      return registered
    })

    /**
     * The client making a token, revocation or introspection request. One authentication method per
     * request (RFC 6749 §2.3). Confidential clients may use either secret method, since clients differ on
     * which they pick; public clients identify with `client_id` (or Basic with an empty secret). The handlers
     * call it before `token`, `revoke` and `introspect`, so that they can count its failures.
     */
    const authenticateClient = Effect.fn("OAuth.authenticateClient")(function* (credentials: ClientCredentials) {
      const basic = Option.getOrUndefined(credentials.basic)
      if (basic !== undefined && credentials.clientSecret !== undefined) {
        return yield* new InvalidRequest({
          message: "Use one client authentication method, not both Basic and client_secret.",
          errors: []
        })
      }
      if (basic !== undefined && credentials.clientId !== undefined && credentials.clientId !== basic.clientId) {
        return yield* new InvalidClient({ message: "client_id differs from the authenticated client." })
      }
      const clientId = basic?.clientId ?? credentials.clientId
      const presented = basic?.clientSecret || credentials.clientSecret
      if (clientId === undefined) return yield* new InvalidClient({ message: "Client authentication is required." })
      const client = Option.getOrUndefined(yield* findClient(clientId))
      if (client === undefined) return yield* new InvalidClient({ message: "Unknown client." })
      if (client.secretHash === null) {
        if (presented !== undefined) return yield* new InvalidClient({ message: "This client has no secret." })
        return client
      }
      if (presented === undefined || !secretMatches(presented, client.secretHash)) {
        return yield* new InvalidClient({ message: "Client authentication failed." })
      }
      return client
    })

    // --- Authorization requests ----------------------------------------------------------------------------

    /** The checks of RFC 6749 §4.1.1 with PKCE (S256 only), scopes and resource, in the order RFC 6749 sets. */
    const validateAuthorization = Effect.fn("OAuth.validateAuthorization")(function* (params: AuthorizeParams) {
      const fatal = (description: string) => Either.left<AuthorizationFailure>({ _tag: "Fatal", description })
      if (params.client_id === undefined) return fatal("The request has no client_id.")
      const client = Option.getOrUndefined(yield* findClient(params.client_id))
      if (client === undefined) return fatal("The application asking for access is not registered here.")
      let redirectUri: string
      if (params.redirect_uri === undefined) {
        if (client.redirectUris.length !== 1) return fatal("The request has no redirect_uri.")
        redirectUri = client.redirectUris[0]!
      } else {
        const problem = redirectUriProblem(params.redirect_uri)
        if (problem !== undefined) return fatal(`The redirect_uri cannot be used: ${problem}.`)
        if (!client.redirectUris.some((r) => redirectUriMatches(r, params.redirect_uri!))) {
          return fatal("The redirect_uri is not registered for this application.")
        }
        redirectUri = params.redirect_uri
      }
      // RFC 9700 §4.11.2: anyone can register a client, so until one of its codes has been redeemed its
      // redirect URI is not trusted with errors (they would make Ribbon an open redirector): they are shown.
      const redirectsErrors = client.firstCodeRedeemedAt !== null
      const redirect = (error: string, description: string) =>
        redirectsErrors
          ? Either.left<AuthorizationFailure>({
              _tag: "Redirect",
              redirectUri,
              error,
              description,
              state: params.state
            })
          : fatal(description)
      if (params.response_type !== "code") {
        return redirect("unsupported_response_type", "response_type must be code.")
      }
      if (!client.grantTypes.includes("authorization_code")) {
        return redirect("unauthorized_client", "This client is not registered for the authorization code grant.")
      }
      if (params.code_challenge === undefined) return redirect("invalid_request", "code_challenge is required (PKCE).")
      if (params.code_challenge_method !== "S256") {
        return redirect("invalid_request", "code_challenge_method must be S256; plain is not supported.")
      }
      if (!CHALLENGE.test(params.code_challenge)) {
        return redirect("invalid_request", "code_challenge must be 43 base64url characters (S256).")
      }
      const requested = params.scope === undefined ? splitScopes(client.scope) : splitScopes(params.scope)
      const allowed = new Set(splitScopes(client.scope))
      const refused = requested.filter((s) => !allowed.has(s))
      if (requested.length === 0 || refused.length > 0) {
        return redirect("invalid_scope", `Scope not available to this client: ${refused.join(" ") || "(empty)"}.`)
      }
      if (params.resource !== undefined && !isOurResource(params.resource)) {
        return redirect("invalid_target", `resource must be ${issuer}.`)
      }
      const prompt = new Set(splitScopes(params.prompt ?? ""))
      if (prompt.has("none") && prompt.size > 1) {
        return redirect("invalid_request", "prompt=none cannot be combined with other values.")
      }
      return Either.right<ValidAuthorization>({
        client,
        redirectUri,
        redirectUriParam: params.redirect_uri ?? "",
        scopes: requested as ReadonlyArray<Scope>,
        state: params.state,
        codeChallenge: params.code_challenge,
        resource: issuer,
        prompt,
        redirectsErrors
      })
    })

    // --- Browser sessions and consent ----------------------------------------------------------------------

    /** A session for a user who just signed in; returns the cookie value. */
    const createSession = Effect.fn("OAuth.createSession")(function* (userId: string) {
      const token = secret("rss")
      const at = yield* nowDate
      yield* sql`INSERT INTO browser_sessions ${sql.insert({
        idHash: sha256(token),
        userId,
        authenticatedAt: at,
        expiresAt: later(at, lifetimes.sessionSeconds)
      })}`.pipe(Effect.orDie)
      return token
    })

    /** The user of a live session cookie. */
    const sessionUser = Effect.fn("OAuth.sessionUser")(function* (token: string) {
      const rows = yield* userIdRows(sql`
        SELECT user_id FROM browser_sessions WHERE id_hash = ${sha256(token)} AND expires_at > ${yield* nowDate}`).pipe(
        Effect.orDie
      )
      const row = rows[0]
      return row === undefined ? Option.none() : yield* users.get(row.userId)
    })

    /** Whether the user already allowed this client every one of these scopes. */
    const hasConsent = Effect.fn("OAuth.hasConsent")(function* (
      userId: string,
      clientId: string,
      scopes: ReadonlyArray<string>
    ) {
      const rows = yield* scopeRows(sql`
        SELECT scope FROM oauth_consents WHERE user_id = ${userId} AND client_id = ${clientId}`).pipe(Effect.orDie)
      const granted = new Set(splitScopes(rows[0]?.scope ?? ""))
      return rows.length > 0 && scopes.every((s) => granted.has(s))
    })

    /** Remembers consent; a later grant adds to what was granted before. */
    const grantConsent = Effect.fn("OAuth.grantConsent")(function* (
      userId: string,
      clientId: string,
      scopes: ReadonlyArray<string>
    ) {
      const at = yield* nowDate
      yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const rows = yield* scopeRows(sql`
            SELECT scope FROM oauth_consents WHERE user_id = ${userId} AND client_id = ${clientId} FOR UPDATE`)
            const scope = formatScopes([...splitScopes(rows[0]?.scope ?? ""), ...scopes])
            yield* sql`
            INSERT INTO oauth_consents (user_id, client_id, scope, granted_at)
            VALUES (${userId}, ${clientId}, ${scope}, ${at})
            ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at`
          })
        )
        .pipe(Effect.orDie)
    })

    /** A single-use code for an allowed request; it lives 5 minutes. */
    const issueCode = Effect.fn("OAuth.issueCode")(function* (authorization: ValidAuthorization, userId: string) {
      const code = secret("rbc")
      const at = yield* nowDate
      yield* sql`INSERT INTO oauth_codes ${sql.insert({
        codeHash: sha256(code),
        clientId: authorization.client.id,
        userId,
        redirectUri: authorization.redirectUriParam,
        scope: formatScopes(authorization.scopes),
        resource: authorization.resource,
        codeChallenge: authorization.codeChallenge,
        familyId: yield* makeId,
        expiresAt: later(at, lifetimes.codeSeconds),
        usedAt: null
      })}`.pipe(Effect.orDie)
      return code
    })

    // --- Tokens --------------------------------------------------------------------------------------------

    /**
     * Issues an access token (1 hour) and, with `offline_access` in `refreshScope`, a refresh token
     * (30 days) in the token family. The refresh token keeps the grant's full scope (RFC 6749 §6).
     */
    const issueTokens = Effect.fn("OAuth.issueTokens")(function* (grant: {
      readonly familyId: string
      readonly clientId: string
      readonly userId: string
      readonly scope: string
      readonly refreshScope: string
    }) {
      const at = yield* nowDate
      const accessToken = secret("rba")
      const row = (kind: "access" | "refresh", token: string, scope: string, lifetime: number) => ({
        tokenHash: sha256(token),
        kind,
        familyId: grant.familyId,
        clientId: grant.clientId,
        userId: grant.userId,
        scope,
        audience: issuer,
        issuedAt: at,
        expiresAt: later(at, lifetime),
        rotatedAt: null,
        revokedAt: null
      })
      const rows = [row("access", accessToken, grant.scope, lifetimes.accessSeconds)]
      const refreshToken = splitScopes(grant.refreshScope).includes("offline_access") ? secret("rbr") : undefined
      if (refreshToken !== undefined)
        rows.push(row("refresh", refreshToken, grant.refreshScope, lifetimes.refreshSeconds))
      yield* sql`INSERT INTO oauth_tokens ${sql.insert(rows)}`
      const response: TokenResponse = {
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: lifetimes.accessSeconds,
        scope: grant.scope,
        ...(refreshToken === undefined ? {} : { refresh_token: refreshToken })
      }
      return response
    }, Effect.orDie)

    const revokeFamily = (familyId: string) =>
      nowDate.pipe(
        Effect.flatMap(
          (at) => sql`UPDATE oauth_tokens SET revoked_at = ${at} WHERE family_id = ${familyId} AND revoked_at IS NULL`
        ),
        Effect.zipLeft(forgetBearers((row) => row.familyId === familyId))
      )

    const missing = (name: string) =>
      new InvalidRequest({
        message: `${name} is required.`,
        errors: [FieldIssue.make({ path: name, message: "Required" })]
      })

    const checkResource = (resource: string | undefined) =>
      resource === undefined || isOurResource(resource)
        ? Effect.void
        : Effect.fail(new InvalidTarget({ message: `resource must be ${issuer}.` }))

    const exchangeCode = (client: Client, request: TokenRequest) =>
      Effect.gen(function* () {
        if (request.code === undefined) return yield* missing("code")
        if (request.code_verifier === undefined) return yield* missing("code_verifier")
        yield* checkResource(request.resource)
        const at = yield* nowDate
        // Outcomes are decided in the transaction; reuse must revoke even though the request then fails.
        const outcome = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const rows = yield* codes(sql`
              SELECT * FROM oauth_codes WHERE code_hash = ${sha256(request.code!)} FOR UPDATE`)
              const code = rows[0]
              if (code === undefined || code.clientId !== client.id) return Either.left("The code is not valid.")
              if (code.usedAt !== null) {
                yield* revokeFamily(code.familyId)
                return Either.left("The code was already used; the tokens issued from it are revoked.")
              }
              if (new Date(code.expiresAt) <= at) return Either.left("The code expired.")
              if ((request.redirect_uri ?? "") !== code.redirectUri) {
                return Either.left("redirect_uri differs from the one of the authorization request.")
              }
              if (!VERIFIER.test(request.code_verifier!) || s256(request.code_verifier!) !== code.codeChallenge) {
                return Either.left("The code_verifier does not match the code_challenge.")
              }
              yield* sql`UPDATE oauth_codes SET used_at = ${at} WHERE code_hash = ${code.codeHash}`
              if (client.firstCodeRedeemedAt === null) {
                yield* sql`
                UPDATE oauth_clients SET first_code_redeemed_at = ${at}
                WHERE id = ${client.id} AND first_code_redeemed_at IS NULL`
              }
              return Either.right(
                yield* issueTokens({
                  familyId: code.familyId,
                  clientId: client.id,
                  userId: code.userId,
                  scope: code.scope,
                  refreshScope: code.scope
                })
              )
            })
          )
          .pipe(Effect.orDie)
        return yield* Either.match(outcome, {
          onLeft: (message) => Effect.fail(new InvalidGrant({ message })),
          onRight: Effect.succeed
        })
      })

    const refresh = (client: Client, request: TokenRequest) =>
      Effect.gen(function* () {
        if (request.refresh_token === undefined) return yield* missing("refresh_token")
        yield* checkResource(request.resource)
        const at = yield* nowDate
        const outcome: Either.Either<TokenResponse, InvalidGrant | InvalidScope> = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const rows = yield* tokens(sql`
              SELECT * FROM oauth_tokens
              WHERE token_hash = ${sha256(request.refresh_token!)} AND kind = 'refresh' FOR UPDATE`)
              const token = rows[0]
              if (token === undefined || token.clientId !== client.id) {
                return Either.left(new InvalidGrant({ message: "The refresh token is not valid." }))
              }
              if (token.revokedAt !== null) {
                return Either.left(new InvalidGrant({ message: "The refresh token was revoked." }))
              }
              if (token.rotatedAt !== null) {
                yield* revokeFamily(token.familyId)
                return Either.left(
                  new InvalidGrant({
                    message: "The refresh token was already used; every token of its grant is revoked."
                  })
                )
              }
              if (new Date(token.expiresAt) <= at) {
                return Either.left(new InvalidGrant({ message: "The refresh token expired." }))
              }
              const granted = new Set(splitScopes(token.scope))
              const requested = request.scope === undefined ? [...granted] : splitScopes(request.scope)
              const wider = requested.filter((s) => !granted.has(s))
              if (requested.length === 0 || wider.length > 0) {
                return Either.left(
                  new InvalidScope({
                    message: `The scope may only narrow the grant (${token.scope}): ${wider.join(" ")}`
                  })
                )
              }
              yield* sql`UPDATE oauth_tokens SET rotated_at = ${at} WHERE token_hash = ${token.tokenHash}`
              return Either.right(
                yield* issueTokens({
                  familyId: token.familyId,
                  clientId: client.id,
                  userId: token.userId,
                  scope: formatScopes(requested),
                  refreshScope: token.scope
                })
              )
            })
          )
          .pipe(Effect.orDie)
        return yield* Either.match(outcome, { onLeft: Effect.fail, onRight: Effect.succeed })
      })

    /** `POST /oauth/token`, for a client `authenticateClient` let in: the code (PKCE) and refresh token grants. */
    const token = Effect.fn("OAuth.token")(function* (request: TokenRequest, client: Client) {
      if (request.grant_type !== "authorization_code" && request.grant_type !== "refresh_token") {
        return yield* new UnsupportedGrantType({
          message: `grant_type ${request.grant_type} is not supported; use authorization_code or refresh_token.`
        })
      }
      if (!client.grantTypes.includes(request.grant_type)) {
        return yield* new UnauthorizedClient({ message: `This client is not registered for ${request.grant_type}.` })
      }
      return request.grant_type === "authorization_code"
        ? yield* exchangeCode(client, request)
        : yield* refresh(client, request)
    })

    const findToken = (value: string) =>
      Effect.map(tokens(sql`SELECT * FROM oauth_tokens WHERE token_hash = ${sha256(value)}`), (rows) =>
        Option.fromNullable(rows[0])
      ).pipe(Effect.orDie)

    /** RFC 7009: revokes the token's whole family; unknown tokens and other clients' tokens are a no-op. */
    const revoke = Effect.fn("OAuth.revoke")(function* (request: RevocationRequest, client: Client) {
      const found = Option.getOrUndefined(yield* findToken(request.token))
      if (found === undefined || found.clientId !== client.id) return
      yield* revokeFamily(found.familyId).pipe(Effect.orDie)
    })

    const isActive = (token: typeof TokenRow.Type, at: Date) =>
      token.revokedAt === null &&
      new Date(token.expiresAt) > at &&
      (token.kind === "access" || token.rotatedAt === null)

    /** RFC 7662; a token of another client is reported inactive like an unknown one. */
    const introspect = Effect.fn("OAuth.introspect")(function* (request: IntrospectionRequest, client: Client) {
      const found = Option.getOrUndefined(yield* findToken(request.token))
      const at = yield* nowDate
      if (found === undefined || found.clientId !== client.id || !isActive(found, at)) {
        return { active: false } satisfies IntrospectionResponse
      }
      return {
        active: true,
        scope: found.scope,
        client_id: found.clientId,
        sub: found.userId,
        exp: seconds(new Date(found.expiresAt)),
        iat: seconds(new Date(found.issuedAt)),
        aud: found.audience,
        token_type: found.kind === "access" ? "Bearer" : "refresh_token"
      } satisfies IntrospectionResponse
    })

    /**
     * Tokens with their users by hash, for `bearerCacheMillis`: without it every `/v1` request pays one more
     * query than its operation needs. A hash no token has is not kept. Revocation and profile changes made
     * here evict at once; made by another instance, they take effect within `bearerCacheMillis` (the
     * propagation delay RFC 7009 §2.2 allows). Expiry is checked on every request.
     */
    const bearerCache = yield* Cache.makeWith({
      capacity: maxCachedBearers,
      lookup: (hash: string) =>
        Effect.map(
          bearers(sql`
            SELECT t.kind, t.family_id, t.revoked_at, t.expires_at, t.audience, t.scope, t.client_id,
                   u.id, u.email, u.display_name, u.phone, u.default_country, u.receipt_preference, u.created_at
            FROM oauth_tokens t JOIN users u ON u.id = t.user_id
            WHERE t.token_hash = ${hash}`).pipe(Effect.orDie),
          (rows) => Option.map(Option.fromNullable(rows[0]), (row): CachedBearer => ({ ...row, user: toUser(row) }))
        ),
      timeToLive: foundFor(bearerCacheMillis)
    })
    const forgetBearers = (match: (row: CachedBearer) => boolean) => forgetWhere(bearerCache, match)

    /** Drops the user's cached tokens: their profile changed, and the next request reads it again. */
    const forgetUser = Effect.fn("OAuth.forgetUser")((userId: string) => forgetBearers((row) => row.id === userId))

    /**
     * The user and scopes of a `/v1` access token: known, unexpired, unrevoked, and for this resource. The
     * token by its hash, joined with its user, kept for `bearerCacheMillis` once found (`bearerCache`).
     */
    const authenticateBearer = Effect.fn("OAuth.authenticateBearer")(function* (value: string) {
      const fail = (message: string) =>
        Effect.fail(new InvalidToken({ message, resourceMetadata: resourceMetadataUrl }))
      if (value === "") return yield* fail("An access token is required (Authorization: Bearer …).")
      const found = Option.getOrUndefined(yield* lookupIn(bearerCache, sha256(value)))
      if (found === undefined || found.kind !== "access") return yield* fail("The access token is not valid.")
      if (found.revokedAt !== null) return yield* fail("The access token was revoked.")
      if (new Date(found.expiresAt) <= (yield* nowDate)) return yield* fail("The access token expired.")
      if (found.audience !== issuer) return yield* fail("The access token is for another resource.")
      return { user: found.user, scopes: splitScopes(found.scope), clientId: found.clientId } satisfies BearerContext
    })

    /**
     * Deletes what can no longer be used: codes and tokens a day after they expired (so reuse within the
     * day is still recognised), and expired sessions. Returns how many rows went.
     */
    const purgeExpired = Effect.fn("OAuth.purgeExpired")(function* () {
      const at = yield* nowDate
      const dayAgo = later(at, -24 * 60 * 60)
      const deleted = (statement: Statement.Fragment) =>
        Effect.map(
          nRows(sql`WITH d AS (${statement} RETURNING 1) SELECT count(*)::int AS n FROM d`),
          (rows) => rows[0]?.n ?? 0
        )
      const result = {
        codes: yield* deleted(sql`DELETE FROM oauth_codes WHERE expires_at < ${dayAgo}`),
        tokens: yield* deleted(sql`DELETE FROM oauth_tokens WHERE expires_at < ${dayAgo}`),
        sessions: yield* deleted(sql`DELETE FROM browser_sessions WHERE expires_at < ${at}`)
      }
      yield* Effect.annotateCurrentSpan(result)
      return result
    }, Effect.orDie)

    return {
      issuer,
      purgeExpired,
      resourceMetadataUrl,
      register,
      authenticateClient,
      validateAuthorization,
      createSession,
      sessionUser,
      hasConsent,
      grantConsent,
      issueCode,
      issueTokens,
      token,
      revoke,
      introspect,
      authenticateBearer,
      forgetUser
    } as const
  })
}) {}
