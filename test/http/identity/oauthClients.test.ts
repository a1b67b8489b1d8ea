import { describe, expect, it } from "@effect/vitest"
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization
} from "@modelcontextprotocol/sdk/client/auth.js"
import { Effect } from "effect"
import * as oauth from "oauth4webapi"
import { authorizeInBrowser, BaseUrl, Browser, RealPortServer } from "../../support/auth.js"

/**
 * The whole flow with real OAuth clients on a real port: oauth4webapi (strict, spec-following) and the MCP
 * SDK's client auth functions (what MCP clients run). Neither gets any workaround.
 */

const insecure = { [oauth.allowInsecureRequests]: true } as const

const withBaseUrl = <A>(f: (baseUrl: string) => Promise<A>) =>
  Effect.flatMap(BaseUrl, (baseUrl) => Effect.promise(() => f(baseUrl)))

describe("OAuth with real clients", () => {
  it.layer(RealPortServer, { timeout: 120_000 })((it) => {
    it.effect("oauth4webapi: discovery, registration, sign-up and consent, code, /v1/me, refresh, reuse, revoke", () =>
      withBaseUrl(async (baseUrl) => {
        const issuer = new URL(baseUrl)
        const as = await oauth.processDiscoveryResponse(
          issuer,
          await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure })
        )
        expect(as.issuer).toBe(baseUrl)
        expect(as.code_challenge_methods_supported).toEqual(["S256"])
        expect(as.authorization_response_iss_parameter_supported).toBe(true)

        const resource = await oauth.processResourceDiscoveryResponse(
          new URL(baseUrl),
          await oauth.resourceDiscoveryRequest(new URL(baseUrl), insecure)
        )
        expect(resource.authorization_servers).toEqual([baseUrl])

        const redirectUri = "http://127.0.0.1:8765/callback"
        const registered = await oauth.processDynamicClientRegistrationResponse(
          await oauth.dynamicClientRegistrationRequest(
            as,
            {
              client_name: "oauth4webapi agent",
              redirect_uris: [redirectUri],
              token_endpoint_auth_method: "client_secret_basic"
            },
            insecure
          )
        )
        expect(registered.client_secret).toMatch(/^rcs_/)
        expect(registered.client_secret_expires_at).toBe(0)
        const client: oauth.Client = {
          client_id: registered.client_id,
          token_endpoint_auth_method: "client_secret_basic"
        }
        const clientAuth = oauth.ClientSecretBasic(registered.client_secret as string)

        const verifier = oauth.generateRandomCodeVerifier()
        const state = oauth.generateRandomState()
        const authorizeUrl = new URL(as.authorization_endpoint!)
        authorizeUrl.search = new URLSearchParams({
          response_type: "code",
          client_id: client.client_id,
          redirect_uri: redirectUri,
          scope: "profile catalog:read offline_access",
          state,
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: "S256",
          resource: baseUrl
        }).toString()
        // A client that has not redeemed a code yet: its errors are shown on Ribbon's page, not redirected.
        const early = new URL(authorizeUrl)
        early.searchParams.set("scope", "profile admin")
        const shown = await new Browser().request(early.toString())
        expect(shown.status).toBe(400)
        expect(shown.headers.get("location")).toBeNull()

        const callback = await authorizeInBrowser(new Browser(), baseUrl, authorizeUrl.toString(), {
          email: "ada@example.com",
          password: "analytical engine",
          signUp: true
        })
        expect(callback.origin + callback.pathname).toBe(redirectUri)
        expect(callback.searchParams.get("iss")).toBe(baseUrl)
        const params = oauth.validateAuthResponse(as, client, callback, state)

        const tokens = await oauth.processAuthorizationCodeResponse(
          as,
          client,
          await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, {
            ...insecure,
            additionalParameters: { resource: baseUrl }
          })
        )
        expect(tokens.token_type).toBe("bearer")
        expect(tokens.expires_in).toBe(3600)
        expect(tokens.scope).toBe("profile catalog:read offline_access")
        expect(tokens.refresh_token).toMatch(/^rbr_/)

        const me = await oauth.protectedResourceRequest(
          tokens.access_token,
          "GET",
          new URL(`${baseUrl}/v1/me`),
          undefined,
          undefined,
          insecure
        )
        expect(me.status).toBe(200)
        const profile: any = await me.json()
        expect(profile.user.email).toBe("ada@example.com")
        expect(profile.scopes).toEqual(["profile", "catalog:read", "offline_access"])

        // Refresh rotates; narrowing is allowed; the old refresh token is then spent.
        const refreshed = await oauth.processRefreshTokenResponse(
          as,
          client,
          await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, {
            ...insecure,
            additionalParameters: { scope: "catalog:read" }
          })
        )
        expect(refreshed.scope).toBe("catalog:read")
        expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
        // The narrowed token lacks `profile`: a 403 with a challenge oauth4webapi parses.
        await expect(
          oauth.protectedResourceRequest(
            refreshed.access_token,
            "GET",
            new URL(`${baseUrl}/v1/me`),
            undefined,
            undefined,
            insecure
          )
        ).rejects.toMatchObject({
          cause: [{ scheme: "bearer", parameters: { error: "insufficient_scope", scope: "profile catalog:read" } }]
        })

        const introspected = await oauth.processIntrospectionResponse(
          as,
          client,
          await oauth.introspectionRequest(as, client, clientAuth, refreshed.access_token, insecure)
        )
        expect(introspected).toMatchObject({
          active: true,
          scope: "catalog:read",
          client_id: client.client_id,
          sub: profile.user.id,
          aud: baseUrl,
          token_type: "Bearer"
        })
        expect(introspected.exp! - introspected.iat!).toBe(3600)

        // Reusing the rotated refresh token revokes the whole family, the newest tokens included.
        await expect(
          oauth.processRefreshTokenResponse(
            as,
            client,
            await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, insecure)
          )
        ).rejects.toMatchObject({ error: "invalid_grant" })
        const afterReuse = await oauth.processIntrospectionResponse(
          as,
          client,
          await oauth.introspectionRequest(as, client, clientAuth, refreshed.refresh_token!, insecure)
        )
        expect(afterReuse.active).toBe(false)
        const revokedMe = await fetch(`${baseUrl}/v1/me`, {
          headers: { authorization: `Bearer ${tokens.access_token}` }
        })
        expect(revokedMe.status).toBe(401)

        // A second grant (consent remembered: no consent page), then revocation of its refresh token.
        const verifier2 = oauth.generateRandomCodeVerifier()
        authorizeUrl.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier2))
        const browser = new Browser()
        const first = await browser.request(authorizeUrl.toString())
        const signIn = await browser.submit(baseUrl, await first.text(), "sign_in", {
          email: "ADA@example.com",
          password: "analytical engine"
        })
        expect(signIn.status).toBe(303)
        const again = oauth.validateAuthResponse(as, client, new URL(signIn.headers.get("location")!), state)
        const second = await oauth.processAuthorizationCodeResponse(
          as,
          client,
          await oauth.authorizationCodeGrantRequest(as, client, clientAuth, again, redirectUri, verifier2, insecure)
        )
        await oauth.processRevocationResponse(
          await oauth.revocationRequest(as, client, clientAuth, second.refresh_token!, insecure)
        )
        const gone = await oauth.processIntrospectionResponse(
          as,
          client,
          await oauth.introspectionRequest(as, client, clientAuth, second.access_token, insecure)
        )
        expect(gone.active).toBe(false)

        // The client has redeemed a code, so an error now goes back to it (RFC 9700 §4.11.2) as oauth4webapi
        // expects it: `error` with `state` and `iss`.
        authorizeUrl.searchParams.set("scope", "profile admin")
        const refused = await new Browser().request(authorizeUrl.toString())
        expect(refused.status).toBe(302)
        let error: unknown
        try {
          oauth.validateAuthResponse(as, client, new URL(refused.headers.get("location")!), state)
        } catch (e) {
          error = e
        }
        expect(error).toBeInstanceOf(oauth.AuthorizationResponseError)
        expect((error as oauth.AuthorizationResponseError).error).toBe("invalid_scope")
      })
    )

    it.effect("MCP SDK client auth: discovery, registration, authorization, exchange and refresh", () =>
      withBaseUrl(async (baseUrl) => {
        const resourceMetadata = await discoverOAuthProtectedResourceMetadata(baseUrl)
        expect(resourceMetadata.resource).toBe(baseUrl)
        const authServer = resourceMetadata.authorization_servers![0]!
        const metadata = await discoverAuthorizationServerMetadata(authServer)
        expect(metadata?.issuer).toBe(baseUrl)
        const redirectUrl = "http://localhost:33418/oauth/callback"
        const clientInformation = await registerClient(authServer, {
          metadata: metadata!,
          clientMetadata: {
            client_name: "MCP agent",
            redirect_uris: [redirectUrl],
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: "none",
            scope: "profile catalog:read offline_access"
          }
        })
        expect(clientInformation.client_secret).toBeUndefined()
        const { authorizationUrl, codeVerifier } = await startAuthorization(authServer, {
          metadata: metadata!,
          clientInformation,
          redirectUrl,
          scope: "profile offline_access",
          state: "mcp-state",
          resource: new URL(resourceMetadata.resource)
        })
        const callback = await authorizeInBrowser(new Browser(), baseUrl, authorizationUrl.toString(), {
          email: "grace@example.com",
          password: "compiler-first",
          signUp: true
        })
        expect(callback.searchParams.get("state")).toBe("mcp-state")
        expect(callback.searchParams.get("iss")).toBe(baseUrl)
        const tokens = await exchangeAuthorization(authServer, {
          metadata: metadata!,
          clientInformation,
          authorizationCode: callback.searchParams.get("code")!,
          codeVerifier,
          redirectUri: redirectUrl,
          resource: new URL(resourceMetadata.resource)
        })
        expect(tokens.scope).toBe("profile offline_access")
        const me = await fetch(`${baseUrl}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
        expect(((await me.json()) as any).user.email).toBe("grace@example.com")
        const refreshed = await refreshAuthorization(authServer, {
          metadata: metadata!,
          clientInformation,
          refreshToken: tokens.refresh_token!,
          resource: new URL(resourceMetadata.resource)
        })
        expect(refreshed.access_token).not.toBe(tokens.access_token)
        expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)

        // An unauthenticated /v1 call tells the client where the resource metadata is.
        const anonymous = await fetch(`${baseUrl}/v1/me`)
        expect(anonymous.status).toBe(401)
        expect(anonymous.headers.get("www-authenticate")).toBe(
          `Bearer resource_metadata="${baseUrl}/.well-known/oauth-protected-resource"`
        )
      })
    )
  })
})
