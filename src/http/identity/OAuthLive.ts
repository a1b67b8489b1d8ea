import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Either, Option } from "effect"
import { InvalidClient, InvalidClientMetadata } from "../../domain/identity/Errors.js"
import type { AuthorizeForm, AuthorizeParams } from "../../domain/identity/OAuth.js"
import type { User } from "../../domain/identity/Users.js"
import type { RateLimited } from "../../domain/platform/Errors.js"
import { Allowances } from "../../services/checkout/Allowances.js"
import {
  type AuthorizationFailure,
  Authorizations,
  type ValidAuthorization
} from "../../services/identity/Authorizations.js"
import { BrowserSessions } from "../../services/identity/BrowserSessions.js"
import { isClientIdUrl } from "../../services/identity/ClientMetadataDocuments.js"
import { Consents } from "../../services/identity/Consents.js"
import { type ClientCredentials, OAuthClients } from "../../services/identity/OAuthClients.js"
import { lifetimes } from "../../services/identity/OAuthRules.js"
import { Tokens } from "../../services/identity/Tokens.js"
import { Users } from "../../services/identity/Users.js"
import { Api } from "../Api.js"
import { clientSource, makeAuthFailures } from "../AuthFailures.js"
import { htmlResponse } from "../pages/html.js"
import { AuthRateLimits, consume } from "./AuthRateLimits.js"
import { consentPage, errorPage, signInPage } from "./authorizePage.js"

/**
 * The authorization server's endpoints. The authorize pages: a GET checks the request, then shows
 * sign-in (no session, or `prompt=login`), consent (no remembered consent, or `prompt=consent`), or
 * redirects straight back with a code. The forms POST the request back with a CSRF token and the step; the
 * POST checks the request again from scratch.
 *
 * The CSRF token is bound to the browser: it is derived from the browser's session cookie, or before sign-in
 * from a random `ribbon_csrf` cookie. Signing in (or up) makes a new session and a new `ribbon_csrf`, so a
 * token seen before sign-in is refused after it, and a token from another browser is refused always.
 */

const CSRF_COOKIE = "ribbon_csrf"
const SESSION_COOKIE = "ribbon_session"

const noStore = { "cache-control": "no-store", pragma: "no-cache" } as const

/** What a browser's CSRF token is bound to: its session cookie, else its pre-sign-in cookie. */
const csrfBinding = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  request.cookies[SESSION_COOKIE] ?? request.cookies[CSRF_COOKIE]

/** The token the forms carry: an HMAC keyed by the binding cookie, which the page cannot reveal or forge. */
const csrfToken = (binding: string) => createHmac("sha256", binding).update("ribbon authorize form").digest("base64url")

const newCsrfCookie = () => randomBytes(24).toString("base64url")

const html = (body: string, status = 200) =>
  htmlResponse(body, { status, csp: "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'" })

/** RFC 6749 §2.3.1: `Basic base64(urlencode(id):urlencode(secret))`; absent when there is no Basic header. */
const basicCredentials = (request: HttpServerRequest.HttpServerRequest) => {
  const header = request.headers.authorization
  if (header === undefined || !/^basic /i.test(header)) return Effect.succeed(Option.none())
  const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, " "))
  try {
    if (colon < 0) throw new Error("no colon")
    return Effect.succeed(
      Option.some({ clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) })
    )
  } catch {
    return Effect.fail(new InvalidClient({ message: "The Basic authorization header is malformed." }))
  }
}

/** The client authentication fields the token, revocation and introspection requests share. */
interface ClientFields {
  readonly client_id?: string | undefined
  readonly client_secret?: string | undefined
  readonly client_assertion_type?: string | undefined
  readonly client_assertion?: string | undefined
}

const credentialsOf = (request: HttpServerRequest.HttpServerRequest, body: ClientFields) =>
  Effect.map(
    basicCredentials(request),
    (basic): ClientCredentials => ({
      basic,
      clientId: body.client_id,
      clientSecret: body.client_secret,
      clientAssertionType: body.client_assertion_type,
      clientAssertion: body.client_assertion
    })
  )

export const OAuthLive = HttpApiBuilder.group(Api, "oauth", (handlers) =>
  Effect.gen(function* () {
    const authorizations = yield* Authorizations
    const clients = yield* OAuthClients
    const sessions = yield* BrowserSessions
    const consents = yield* Consents
    const tokens = yield* Tokens
    const users = yield* Users
    const allowances = yield* Allowances
    const limits = yield* AuthRateLimits
    const failures = yield* makeAuthFailures
    const secureCookies = authorizations.issuer.startsWith("https:")
    const cookieOptions = { httpOnly: true, sameSite: "lax", path: "/oauth", secure: secureCookies } as const

    /** A redirect back to the client, always with `iss` (RFC 9207) and the request's `state`. */
    const redirectBack = (
      redirectUri: string,
      params: Record<string, string>,
      state: string | undefined,
      status: 302 | 303
    ) => {
      const url = new URL(redirectUri)
      for (const [name, value] of Object.entries(params)) url.searchParams.append(name, value)
      if (state !== undefined) url.searchParams.append("state", state)
      url.searchParams.append("iss", authorizations.issuer)
      return HttpServerResponse.redirect(url.toString(), { status, headers: noStore })
    }

    const failure = (f: AuthorizationFailure, status: 302 | 303) =>
      f._tag === "Fatal"
        ? html(errorPage(f.description), 400)
        : redirectBack(f.redirectUri, { error: f.error, error_description: f.description }, f.state, status)

    /** An error after the checks: redirected, or shown for a client not trusted with errors yet. */
    const refuse = (authorization: ValidAuthorization, error: string, description: string, status: 302 | 303) =>
      authorization.redirectsErrors
        ? redirectBack(
            authorization.redirectUri,
            { error, error_description: description },
            authorization.state,
            status
          )
        : html(errorPage(description), 400)

    /** Sets the pre-sign-in CSRF cookie when the browser gets a new one. */
    const withCsrfCookie = (response: HttpServerResponse.HttpServerResponse, cookie: string | undefined) =>
      cookie === undefined ? response : HttpServerResponse.unsafeSetCookie(response, CSRF_COOKIE, cookie, cookieOptions)

    /** The signed-in user goes on to consent, or straight back with a code when consent is remembered. */
    const afterSignIn = (
      authorization: ValidAuthorization,
      params: AuthorizeParams,
      user: User,
      csrf: string,
      status: 302 | 303
    ) =>
      Effect.gen(function* () {
        const remembered = yield* consents.has(user.id, authorization.client.id, authorization.scopes)
        if (remembered && !authorization.prompt.has("consent")) {
          const code = yield* tokens.issueCode(authorization, user.id)
          return redirectBack(authorization.redirectUri, { code }, authorization.state, status)
        }
        if (authorization.prompt.has("none")) {
          return refuse(authorization, "consent_required", "The user has not allowed this application yet.", status)
        }
        return html(
          consentPage({
            clientName: authorization.client.clientName,
            clientHost: isClientIdUrl(authorization.client.id) ? new URL(authorization.client.id).host : undefined,
            redirectHost: new URL(authorization.redirectUri).host,
            email: user.email,
            scopes: authorization.scopes,
            params,
            csrf
          })
        )
      })

    const signInAgain = (
      authorization: ValidAuthorization,
      params: AuthorizeParams,
      csrf: string,
      error?: string,
      email?: string,
      status = 200
    ) => html(signInPage({ clientName: authorization.client.clientName, params, csrf, error, email }), status)

    /** After sign-in or sign-up: the session cookie, and a new pre-sign-in CSRF cookie for when it ends. */
    const signedIn = (response: HttpServerResponse.HttpServerResponse, session: string) =>
      withCsrfCookie(
        HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, session, {
          ...cookieOptions,
          maxAge: Duration.seconds(lifetimes.sessionSeconds)
        }),
        newCsrfCookie()
      )

    const tooMany = (error: RateLimited, what: string) =>
      HttpServerResponse.setHeader(
        html(errorPage(`Too many ${what}. Wait ${error.retryAfterSeconds} s and try again.`), 429),
        "retry-after",
        String(error.retryAfterSeconds)
      )
    const tooManyAttempts = (error: RateLimited) => tooMany(error, "sign-in attempts")

    /**
     * An authorization request naming its client by a metadata document's URL may make Ribbon fetch that URL (when
     * it is not cached): such requests are limited per source, so the authorize page cannot be used to make Ribbon
     * fetch addresses in a loop. The 429 page when over the limit, else none.
     */
    const documentFetchLimit = (clientId: string | undefined) =>
      clientId === undefined || !isClientIdUrl(clientId)
        ? Effect.succeedNone
        : Effect.flatMap(clientSource, (source) =>
            consume(`client-document:ip:${source}`, limits.clientDocumentPerIp).pipe(
              Effect.as(Option.none()),
              Effect.catchTag("RateLimited", (error) => Effect.succeedSome(tooMany(error, "authorization requests")))
            )
          )

    /**
     * The client of a token, revocation or introspection request, authenticated. Its failures are counted
     * per source, and a source that failed too often waits (429) before its next try is even checked.
     */
    const authenticatedClient = (request: HttpServerRequest.HttpServerRequest, body: ClientFields, source: string) =>
      failures.guard(
        { kind: "oauth-client", source },
        Effect.flatMap(credentialsOf(request, body), clients.authenticate),
        (error) => error._tag === "InvalidClient"
      )

    const paramsOf = (form: AuthorizeForm): AuthorizeParams => {
      const { action: _a, csrf: _c, email: _e, password: _p, display_name: _d, ...params } = form
      return params
    }

    const sameSecret = (a: string, b: string) => {
      const x = Buffer.from(a)
      const y = Buffer.from(b)
      return x.length === y.length && timingSafeEqual(x, y)
    }

    return handlers
      .handle("authorize", ({ urlParams, request }) =>
        Effect.gen(function* () {
          const limited = yield* documentFetchLimit(urlParams.client_id)
          if (Option.isSome(limited)) return limited.value
          const checked = yield* authorizations.validate(urlParams)
          if (Either.isLeft(checked)) return failure(checked.left, 302)
          const authorization = checked.right
          const binding = csrfBinding(request)
          const newCookie = binding === undefined ? newCsrfCookie() : undefined
          const csrf = csrfToken(binding ?? newCookie!)
          const session = request.cookies[SESSION_COOKIE]
          const user = session === undefined ? Option.none() : yield* sessions.user(session)
          if (Option.isNone(user) || authorization.prompt.has("login")) {
            if (authorization.prompt.has("none")) {
              return refuse(authorization, "login_required", "The user is not signed in.", 302)
            }
            return withCsrfCookie(signInAgain(authorization, urlParams, csrf), newCookie)
          }
          return withCsrfCookie(yield* afterSignIn(authorization, urlParams, user.value, csrf, 302), newCookie)
        })
      )
      .handle("authorizeForm", ({ payload, request }) =>
        Effect.gen(function* () {
          const params = paramsOf(payload)
          const limited = yield* documentFetchLimit(params.client_id)
          if (Option.isSome(limited)) return limited.value
          const checked = yield* authorizations.validate(params)
          if (Either.isLeft(checked)) return failure(checked.left, 303)
          const authorization = checked.right
          const binding = csrfBinding(request)
          const csrf = binding === undefined ? undefined : csrfToken(binding)
          if (csrf === undefined || !sameSecret(csrf, payload.csrf)) {
            return html(errorPage("This form has expired or was not sent from Ribbon's page."), 403)
          }
          if (payload.action === "sign_in" || payload.action === "sign_up") {
            const limited = yield* Effect.flip(consume(`sign-in:ip:${yield* clientSource}`, limits.signInPerIp)).pipe(
              Effect.option
            )
            if (Option.isSome(limited)) return tooManyAttempts(limited.value)
          }
          switch (payload.action) {
            case "deny":
              // The consent page named where the user is sent back, so this goes back even for a new client.
              return redirectBack(
                authorization.redirectUri,
                { error: "access_denied", error_description: "The user denied access." },
                authorization.state,
                303
              )
            case "sign_in": {
              // Failed sign-ins are counted per source and per account; either may have to wait (429).
              const email = payload.email ?? ""
              const result = yield* Effect.either(
                failures.guard(
                  { kind: "sign-in", source: yield* clientSource, account: email },
                  users.authenticate(email, payload.password ?? ""),
                  (error) => error._tag === "InvalidCredentials"
                )
              )
              if (Either.isLeft(result)) {
                if (result.left._tag === "RateLimited") return tooManyAttempts(result.left)
                return signInAgain(authorization, params, csrf, result.left.message, payload.email, 401)
              }
              const session = yield* sessions.create(result.right.id)
              return signedIn(yield* afterSignIn(authorization, params, result.right, csrfToken(session), 303), session)
            }
            case "sign_up": {
              const result = yield* Effect.either(
                users.create({
                  email: payload.email ?? "",
                  password: payload.password ?? "",
                  displayName: payload.display_name
                })
              )
              if (Either.isLeft(result)) {
                const status = result.left._tag === "EmailTaken" ? 409 : 400
                return signInAgain(authorization, params, csrf, result.left.message, undefined, status)
              }
              const session = yield* sessions.create(result.right.id)
              return signedIn(yield* afterSignIn(authorization, params, result.right, csrfToken(session), 303), session)
            }
            case "allow": {
              const session = request.cookies[SESSION_COOKIE]
              const user = session === undefined ? Option.none() : yield* sessions.user(session)
              if (Option.isNone(user)) return signInAgain(authorization, params, csrf, "Please sign in again.")
              yield* consents.grant(user.value.id, authorization.client.id, authorization.scopes)
              const code = yield* tokens.issueCode(authorization, user.value.id)
              return redirectBack(authorization.redirectUri, { code }, authorization.state, 303)
            }
          }
        })
      )
      .handle("token", ({ payload, request }) =>
        Effect.gen(function* () {
          const source = yield* clientSource
          yield* consume(`token:ip:${source}`, limits.tokenPerIp)
          const client = yield* authenticatedClient(request, payload, source)
          // Counted per client once it authenticated; a public client's id is no secret, so per source as well.
          yield* consume(
            client.tokenEndpointAuthMethod === "none"
              ? `token:client:${client.id}:${source}`
              : `token:client:${client.id}`,
            limits.tokenPerClient
          )
          const response = yield* tokens.token(payload, client)
          return HttpServerResponse.unsafeJson(response, { headers: noStore })
        })
      )
      .handleRaw("register", ({ request }) =>
        Effect.gen(function* () {
          yield* consume(`register:ip:${yield* clientSource}`, limits.registerPerIp)
          const body = yield* request.json.pipe(
            Effect.mapError(() => new InvalidClientMetadata({ message: "The body must be a JSON object." }))
          )
          const registered = yield* clients.register(body)
          return HttpServerResponse.unsafeJson(registered, { status: 201, headers: noStore })
        })
      )
      .handle("revoke", ({ payload, request }) =>
        Effect.gen(function* () {
          const revoked = yield* tokens.revoke(
            payload,
            yield* authenticatedClient(request, payload, yield* clientSource)
          )
          // The client's spending allowance ends with its grant (docs/allowances.md).
          if (Option.isSome(revoked)) yield* allowances.revokeForClient(revoked.value.userId, revoked.value.clientId)
          return HttpServerResponse.empty({ status: 200, headers: noStore })
        })
      )
      .handle("introspect", ({ payload, request }) =>
        Effect.gen(function* () {
          const response = yield* tokens.introspect(
            payload,
            yield* authenticatedClient(request, payload, yield* clientSource)
          )
          return HttpServerResponse.unsafeJson(response, { headers: noStore })
        })
      )
  })
)
