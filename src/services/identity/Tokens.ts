import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import {
  InvalidGrant,
  InvalidScope,
  InvalidTarget,
  UnauthorizedClient,
  UnsupportedGrantType
} from "../../domain/identity/Errors.js"
import type {
  IntrospectionRequest,
  IntrospectionResponse,
  RevocationRequest,
  TokenRequest,
  TokenResponse
} from "../../domain/identity/OAuth.js"
import { FieldIssue, InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { PublicUrl } from "../catalog/Catalog.js"
import { nowDate } from "../platform/Time.js"
import { AssertionJtisRepo } from "./AssertionJtisRepo.js"
import type { ValidAuthorization } from "./Authorizations.js"
import { Bearers } from "./Bearers.js"
import { BrowserSessions } from "./BrowserSessions.js"
import { type Client, OAuthClients } from "./OAuthClients.js"
import {
  formatScopes,
  isResourceOf,
  later,
  lifetimes,
  seconds,
  secret,
  sha256,
  splitScopes,
  verifierMatches
} from "./OAuthRules.js"
import { OAuthTokensRepo, type TokenRow } from "./OAuthTokensRepo.js"

/** A grant `revoke` ended: whose, and for which client. */
export interface RevokedGrant {
  readonly userId: string
  readonly clientId: string
}

/** A grant to issue tokens for: its family, client, user, and scopes. */
export interface Grant {
  readonly familyId: string
  readonly clientId: string
  readonly userId: string
  readonly scope: string
  readonly refreshScope: string
}

const missing = (name: string) =>
  new InvalidRequest({
    message: `${name} is required.`,
    errors: [FieldIssue.make({ path: name, message: "Required" })]
  })

const isActive = (token: TokenRow, at: Date) =>
  token.revokedAt === null && new Date(token.expiresAt) > at && (token.kind === "access" || token.rotatedAt === null)

/**
 * Codes and tokens of the OAuth 2.1 authorization server (docs/decisions/0023-oauth-server.md,
 * docs/oauth.md): single-use codes, access and refresh tokens in families (one per grant) with refresh
 * rotation and reuse detection, revocation (RFC 7009), introspection (RFC 7662), and the purge of what can
 * no longer be used.
 */
export class Tokens extends Effect.Service<Tokens>()("Tokens", {
  dependencies: [
    OAuthTokensRepo.Default,
    OAuthClients.Default,
    Bearers.Default,
    BrowserSessions.Default,
    AssertionJtisRepo.Default
  ],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* OAuthTokensRepo
    const clients = yield* OAuthClients
    const bearers = yield* Bearers
    const sessions = yield* BrowserSessions
    const assertionJtis = yield* AssertionJtisRepo
    // The issuer is the public base URL, which is also the one resource tokens are for.
    const issuer = yield* PublicUrl

    /** A single-use code for an allowed request; it lives 5 minutes. */
    const issueCode = Effect.fn("Tokens.issueCode")(function* (authorization: ValidAuthorization, userId: string) {
      const code = secret("rbc")
      const at = yield* nowDate
      yield* repo.insertCode({
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
      })
      return code
    })

    /**
     * Issues an access token (1 hour) and, with `offline_access` in `refreshScope`, a refresh token
     * (30 days) in the token family. The refresh token keeps the grant's full scope (RFC 6749 §6).
     */
    const issueTokens = Effect.fn("Tokens.issueTokens")(function* (grant: Grant) {
      const at = yield* nowDate
      const accessToken = secret("rba")
      const row = (kind: "access" | "refresh", token: string, scope: string, lifetime: number): TokenRow => ({
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
      yield* repo.insertTokens(rows)
      const response: TokenResponse = {
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: lifetimes.accessSeconds,
        scope: grant.scope,
        ...(refreshToken === undefined ? {} : { refresh_token: refreshToken })
      }
      return response
    })

    const revokeFamily = (familyId: string) =>
      nowDate.pipe(
        Effect.flatMap((at) => repo.revokeFamily(familyId, at)),
        Effect.zipLeft(bearers.forgetFamily(familyId))
      )

    const checkResource = (resource: string | undefined) =>
      resource === undefined || isResourceOf(issuer, resource)
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
              const code = Option.getOrUndefined(yield* repo.lockCode(sha256(request.code!)))
              if (code === undefined || code.clientId !== client.id) return Either.left("The code is not valid.")
              if (code.usedAt !== null) {
                yield* revokeFamily(code.familyId)
                return Either.left("The code was already used; the tokens issued from it are revoked.")
              }
              if (new Date(code.expiresAt) <= at) return Either.left("The code expired.")
              if ((request.redirect_uri ?? "") !== code.redirectUri) {
                return Either.left("redirect_uri differs from the one of the authorization request.")
              }
              if (!verifierMatches(request.code_verifier!, code.codeChallenge)) {
                return Either.left("The code_verifier does not match the code_challenge.")
              }
              yield* repo.markCodeUsed(code.codeHash, at)
              yield* clients.noteCodeRedeemed(client, at)
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
              const token = Option.getOrUndefined(yield* repo.lockRefreshToken(sha256(request.refresh_token!)))
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
              yield* repo.markRotated(token.tokenHash, at)
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

    /** `POST /oauth/token`, for a client `OAuthClients.authenticate` let in: the code (PKCE) and refresh token grants. */
    const token = Effect.fn("Tokens.token")(function* (request: TokenRequest, client: Client) {
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

    /**
     * RFC 7009: revokes the token's whole family; unknown tokens and other clients' tokens are a no-op. The grant
     * it revoked (its user and client), for what ends with it (the client's spending allowance).
     */
    const revoke = Effect.fn("Tokens.revoke")(function* (request: RevocationRequest, client: Client) {
      const found = Option.getOrUndefined(yield* repo.findToken(sha256(request.token)))
      if (found === undefined || found.clientId !== client.id) return Option.none<RevokedGrant>()
      yield* revokeFamily(found.familyId)
      return Option.some<RevokedGrant>({ userId: found.userId, clientId: found.clientId })
    })

    /** RFC 7662; a token of another client is reported inactive like an unknown one. */
    const introspect = Effect.fn("Tokens.introspect")(function* (request: IntrospectionRequest, client: Client) {
      const found = Option.getOrUndefined(yield* repo.findToken(sha256(request.token)))
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
     * Deletes what can no longer be used: codes and tokens a day after they expired (so reuse within the
     * day is still recognised), and expired sessions. Returns how many rows went.
     */
    const purgeExpired = Effect.fn("Tokens.purgeExpired")(function* () {
      const at = yield* nowDate
      const dayAgo = later(at, -24 * 60 * 60)
      const result = {
        codes: yield* repo.deleteCodesExpiredBefore(dayAgo),
        tokens: yield* repo.deleteTokensExpiredBefore(dayAgo),
        sessions: yield* sessions.purgeExpired(at),
        assertionJtis: yield* assertionJtis.purge(at)
      }
      yield* Effect.annotateCurrentSpan(result)
      return result
    })

    return { issueCode, issueTokens, token, revoke, introspect, purgeExpired } as const
  })
}) {}
