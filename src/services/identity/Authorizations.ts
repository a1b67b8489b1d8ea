import { Effect, Either, Option } from "effect"
import type { AuthorizeParams, Scope } from "../../domain/identity/OAuth.js"
import { PublicUrl } from "../catalog/Catalog.js"
import { type Client, OAuthClients } from "./OAuthClients.js"
import { isResourceOf, isS256Challenge, redirectUriMatches, redirectUriProblem, splitScopes } from "./OAuthRules.js"

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

/**
 * The authorization requests of the authorize pages (docs/decisions/0023-oauth-server.md, docs/oauth.md),
 * checked against the client's registration, and the issuer they are made to. Knows nothing of HTTP, as no
 * identity service does: the handlers pass parameters in and render what comes out.
 */
export class Authorizations extends Effect.Service<Authorizations>()("Authorizations", {
  dependencies: [OAuthClients.Default],
  effect: Effect.gen(function* () {
    // The issuer is the public base URL, which is also the one resource tokens are for.
    const issuer = yield* PublicUrl
    const clients = yield* OAuthClients

    /** The checks of RFC 6749 §4.1.1 with PKCE (S256 only), scopes and resource, in the order RFC 6749 sets. */
    const validate = Effect.fn("Authorizations.validate")(function* (params: AuthorizeParams) {
      const fatal = (description: string) => Either.left<AuthorizationFailure>({ _tag: "Fatal", description })
      if (params.client_id === undefined) return fatal("The request has no client_id.")
      // A client whose metadata document cannot be used is unverified: so is every redirect URI it names.
      const found = yield* Effect.either(clients.find(params.client_id))
      if (Either.isLeft(found)) return fatal(`invalid_client: ${found.left.message}`)
      const client = Option.getOrUndefined(found.right)
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
      if (!isS256Challenge(params.code_challenge)) {
        return redirect("invalid_request", "code_challenge must be 43 base64url characters (S256).")
      }
      const requested = params.scope === undefined ? splitScopes(client.scope) : splitScopes(params.scope)
      const allowed = new Set(splitScopes(client.scope))
      const refused = requested.filter((s) => !allowed.has(s))
      if (requested.length === 0 || refused.length > 0) {
        return redirect("invalid_scope", `Scope not available to this client: ${refused.join(" ") || "(empty)"}.`)
      }
      if (params.resource !== undefined && !isResourceOf(issuer, params.resource)) {
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

    return { issuer, validate } as const
  })
}) {}
