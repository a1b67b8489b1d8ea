import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  UnauthorizedError
} from "@modelcontextprotocol/sdk/client/auth.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { InvalidClientError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import { Duration, Effect } from "effect"
import * as oauth from "oauth4webapi"
import { authorizeInBrowser, BaseUrl, Browser, issueTestToken, realPortServerOn } from "../../support/auth.js"
import { TestDatabase } from "../../support/database.js"
import { MemoryOAuthProvider, mcpClient } from "../../support/mcp.js"
import { certificate, httpsReceiver } from "../../support/receiver.js"

/**
 * Clients identified by a client ID metadata document (MCP authorization 2025-11-25), served over HTTPS on
 * loopback with a self-signed certificate (allowed and trusted for this server only), with the MCP SDK's
 * `clientMetadataUrl`; the documents refused with `invalid_client`; and the scope challenge of `/mcp` the
 * SDK answers by asking the person again.
 */

const timeLimit = Duration.millis(800)

const Server = realPortServerOn(TestDatabase, undefined, {
  outbound: { trustedCaPems: [certificate.cert] },
  clientMetadata: { timeout: timeLimit }
})

const redirect = "http://127.0.0.1:33419/oauth/callback"

const documentOf = (clientId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    client_id: clientId,
    client_name: "Metadata agent",
    client_uri: "https://agent.example",
    redirect_uris: [redirect],
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    ...extra
  })

const json = { "content-type": "application/json" }

const insecure = { [oauth.allowInsecureRequests]: true } as const

const ecKeyPair = () =>
  crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]) as Promise<CryptoKeyPair>

/** The SDK's in-memory provider, naming itself by its metadata document's URL. */
class DocumentProvider extends MemoryOAuthProvider {
  constructor(
    readonly clientMetadataUrl: string,
    scope: string
  ) {
    super(scope, redirect)
  }
}

/** A receiver serving a valid document at /agent/client.json, cacheable for 5 minutes. */
const documentServer = Effect.gen(function* () {
  let url = ""
  const receiver = yield* httpsReceiver((request) =>
    request.path === "/agent/client.json"
      ? { status: 200, headers: { ...json, "cache-control": "max-age=300" }, body: documentOf(url) }
      : { status: 404 }
  )
  url = receiver.url("/agent/client.json")
  return { receiver, url }
})

const storedClients = (id: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ clientName: string }>`SELECT * FROM oauth_clients WHERE id = ${id}`
  )

describe("client ID metadata documents", () => {
  it.layer(Server, { timeout: 120_000 })((it) => {
    it.scoped("the MCP SDK's clientMetadataUrl: sign-up, consent naming the client and its host, tokens, tools", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { receiver, url } = yield* documentServer
        yield* Effect.promise(async () => {
          const metadata = await discoverAuthorizationServerMetadata(new URL(baseUrl))
          expect(metadata?.client_id_metadata_document_supported).toBe(true)
          expect(metadata?.registration_endpoint).toBe(`${baseUrl}/oauth/register`)

          const provider = new DocumentProvider(url, "catalog:read profile")
          const first = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: provider })
          const refused = await mcpClient()
            .connect(first)
            .then(
              () => undefined,
              (error: unknown) => error
            )
          expect(refused).toBeInstanceOf(UnauthorizedError)
          // The SDK used the URL as its client_id instead of registering.
          expect(provider.information?.client_id).toBe(url)
          const authorizeUrl = provider.authorizationUrl!
          expect(authorizeUrl.searchParams.get("client_id")).toBe(url)

          const browser = new Browser()
          const signIn = await browser.request(authorizeUrl.toString())
          expect(signIn.status).toBe(200)
          const signInPage = await signIn.text()
          expect(signInPage).toContain("Metadata agent")
          const consent = await browser.submit(baseUrl, signInPage, "sign_up", {
            email: `cimd-${Date.now()}@example.com`,
            password: "correct horse battery"
          })
          const page = await consent.text()
          expect(consent.status, page).toBe(200)
          expect(page).toContain('Allow <span class="client">Metadata agent</span>')
          expect(page).toContain(`Identified by <strong>127.0.0.1:${receiver.port}</strong>`)
          expect(page).toContain("receives your answer on this computer (127.0.0.1:33419)")
          const allowed = await browser.submit(baseUrl, page, "allow")
          expect(allowed.status).toBe(303)
          const callback = new URL(allowed.headers.get("location")!)
          expect(callback.origin + callback.pathname).toBe(redirect)

          await first.finishAuth(callback.searchParams.get("code")!)
          expect(provider.saved?.access_token).toMatch(/^rba_/)
          const client = mcpClient()
          await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: provider }))
          const { tools } = await client.listTools()
          expect(tools.map((tool) => tool.name)).toContain("me")
          await client.close()
        })
        // Fetched once, as a GET: the authorize page, both forms and the token request used the cached copy.
        expect(receiver.received.map((request) => `${request.method} ${request.path}`)).toEqual([
          "GET /agent/client.json"
        ])
        const [row] = yield* storedClients(url)
        expect(row?.clientName).toBe("Metadata agent")
      })
    )

    it.scoped(
      "a client_id that differs from the URL, a document over 5 KB and one slower than the limit are invalid_client, shown and never redirected; nothing is kept",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          let release = () => {}
          const late = new Promise<void>((resolve) => {
            release = resolve
          })
          yield* Effect.addFinalizer(() => Effect.sync(release))
          let origin = ""
          const receiver = yield* httpsReceiver((request) => {
            const self = `${origin}${request.path}`
            switch (request.path) {
              case "/mismatch.json":
                return { status: 200, headers: json, body: documentOf(`${origin}/other.json`) }
              case "/large.json":
                return { status: 200, headers: json, body: documentOf(self, { description: "x".repeat(6 * 1024) }) }
              case "/slow.json":
                return { status: 200, headers: json, body: documentOf(self), after: late }
              default:
                return { status: 404 }
            }
          })
          origin = receiver.url("")
          const cases = [
            ["/mismatch.json", `its client_id (${origin}/other.json) differs from its URL`],
            ["/large.json", "it is larger than 5120 bytes"],
            ["/slow.json", `no response within ${Duration.format(timeLimit)}`]
          ] as const
          for (const [path, reason] of cases) {
            const url = `${origin}${path}`
            yield* Effect.promise(async () => {
              const authorize = new URL(`${baseUrl}/oauth/authorize`)
              for (const [name, value] of Object.entries({
                response_type: "code",
                client_id: url,
                redirect_uri: redirect,
                scope: "profile",
                state: "s1",
                code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                code_challenge_method: "S256"
              }))
                authorize.searchParams.set(name, value)
              const page = await fetch(authorize, { redirect: "manual" })
              const html = await page.text()
              expect(page.status, path).toBe(400)
              expect(page.headers.get("location"), path).toBeNull()
              expect(html, path).toContain("invalid_client")
              expect(html, path).toContain(reason)

              const metadata = await discoverAuthorizationServerMetadata(new URL(baseUrl))
              const exchanged = await exchangeAuthorization(baseUrl, {
                metadata: metadata!,
                clientInformation: { client_id: url },
                authorizationCode: "rbc_unknown",
                codeVerifier: "v".repeat(43),
                redirectUri: redirect
              }).then(
                () => undefined,
                (error: unknown) => error
              )
              expect(exchanged, path).toBeInstanceOf(InvalidClientError)
              expect((exchanged as Error).message, path).toContain(reason)
            })
            expect(yield* storedClients(url), path).toEqual([])
          }
          // A refused document is never kept: each path was fetched for the page and again for the token.
          expect(receiver.received.map((request) => request.path).sort()).toEqual([
            "/large.json",
            "/large.json",
            "/mismatch.json",
            "/mismatch.json",
            "/slow.json",
            "/slow.json"
          ])
        })
    )

    it.scoped(
      "private_key_jwt: oauth4webapi signs the token request with a key of the document's jwks_uri; no assertion, another key or a replay is invalid_client",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const [own, other] = yield* Effect.promise(() => Promise.all([ecKeyPair(), ecKeyPair()]))
          const jwk = yield* Effect.promise(() => crypto.subtle.exportKey("jwk", own.publicKey))
          let origin = ""
          const receiver = yield* httpsReceiver((request) =>
            request.path === "/signed/client.json"
              ? {
                  status: 200,
                  headers: json,
                  body: documentOf(`${origin}/signed/client.json`, {
                    token_endpoint_auth_method: "private_key_jwt",
                    jwks_uri: `${origin}/signed/jwks.json`
                  })
                }
              : request.path === "/signed/jwks.json"
                ? { status: 200, headers: json, body: JSON.stringify({ keys: [{ ...jwk, kid: "k1", alg: "ES256" }] }) }
                : { status: 404 }
          )
          origin = receiver.url("")
          const client: oauth.Client = { client_id: `${origin}/signed/client.json` }
          yield* Effect.promise(async () => {
            const issuer = new URL(baseUrl)
            const as = await oauth.processDiscoveryResponse(
              issuer,
              await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure })
            )
            expect(as.token_endpoint_auth_methods_supported).toContain("private_key_jwt")
            expect(as.token_endpoint_auth_signing_alg_values_supported).toContain("ES256")
            const verifier = oauth.generateRandomCodeVerifier()
            const authorize = new URL(as.authorization_endpoint!)
            for (const [name, value] of Object.entries({
              response_type: "code",
              client_id: client.client_id,
              redirect_uri: redirect,
              scope: "profile",
              state: "signed",
              code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
              code_challenge_method: "S256"
            }))
              authorize.searchParams.set(name, value)
            const callback = await authorizeInBrowser(new Browser(), baseUrl, authorize.toString(), {
              email: `signed-${Date.now()}@example.com`,
              password: "correct horse battery",
              signUp: true
            })
            const params = oauth.validateAuthResponse(as, client, callback, "signed")
            const exchange = (auth: oauth.ClientAuth) =>
              oauth.authorizationCodeGrantRequest(as, client, auth, params, redirect, verifier, insecure)

            for (const [auth, message] of [
              [oauth.None(), "must authenticate with private_key_jwt"],
              [oauth.PrivateKeyJwt({ key: other.privateKey, kid: "k1" }), "no key of the client's key set verifies"]
            ] as const) {
              const refused = await exchange(auth)
              expect(refused.status, message).toBe(401)
              const body = (await refused.json()) as { error: string; error_description: string }
              expect(body.error).toBe("invalid_client")
              expect(body.error_description).toContain(message)
            }

            let assertion = ""
            const signing = oauth.PrivateKeyJwt({ key: own.privateKey, kid: "k1" })
            const recording: oauth.ClientAuth = async (server, self, body, headers) => {
              await signing(server, self, body, headers)
              assertion = body.get("client_assertion")!
            }
            const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(recording))
            expect(tokens.access_token).toMatch(/^rba_/)
            expect(tokens.scope).toBe("profile")

            // The same assertion again (here at introspection) is refused: each one is used once.
            const replayed = await fetch(as.introspection_endpoint!, {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams({
                token: tokens.access_token,
                client_id: client.client_id,
                client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                client_assertion: assertion
              })
            })
            expect(replayed.status).toBe(401)
            expect(((await replayed.json()) as { error_description: string }).error_description).toContain(
              "its jti was used before"
            )
            const introspected = await oauth.processIntrospectionResponse(
              as,
              client,
              await oauth.introspectionRequest(as, client, signing, tokens.access_token, insecure)
            )
            expect(introspected).toMatchObject({ active: true, client_id: client.client_id, scope: "profile" })
          })
          const [row] = yield* storedClients(client.client_id)
          // The used jtis are in the database, so another instance of the service refuses a replay as well.
          const sql = yield* SqlClient.SqlClient
          const jtis = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM oauth_assertion_jtis WHERE client_id = ${client.client_id}`
          expect(jtis[0]!.n).toBe(2)
          expect(row).toMatchObject({
            tokenEndpointAuthMethod: "private_key_jwt",
            jwksUri: `${origin}/signed/jwks.json`
          })
        })
    )

    it.scoped(
      "a tool call needing a scope the token lacks is a 403 scope challenge; the SDK asks the person again",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const { url } = yield* documentServer
          const user = yield* issueTestToken({ scopes: ["catalog:read"] }, baseUrl)
          yield* Effect.promise(async () => {
            const raw = await fetch(`${baseUrl}/mcp`, {
              method: "POST",
              headers: {
                ...json,
                accept: "application/json, text/event-stream",
                authorization: `Bearer ${user.accessToken}`
              },
              body: JSON.stringify({
                jsonrpc: "2.0",
                id: 1,
                method: "tools/call",
                params: { name: "me", arguments: {} }
              })
            })
            expect(raw.status).toBe(403)
            expect(raw.headers.get("www-authenticate")).toBe(
              `Bearer error="insufficient_scope", scope="profile catalog:read", resource_metadata="${baseUrl}/.well-known/oauth-protected-resource"`
            )
            expect(((await raw.json()) as { code: string }).code).toBe("insufficient_scope")

            // The SDK holds a catalog:read token (no refresh token) for the client of the document.
            const provider = new DocumentProvider(url, "catalog:read")
            provider.information = { client_id: url }
            provider.saved = { access_token: user.accessToken, token_type: "Bearer" }
            const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: provider })
            const client = mcpClient()
            await client.connect(transport)
            const countries = await client.callTool({ name: "countries", arguments: {} })
            expect(countries.isError).toBeFalsy()
            const stepUp = await client.callTool({ name: "me", arguments: {} }).then(
              () => undefined,
              (error: unknown) => error
            )
            // It saw the challenge and started an authorization for exactly its scope.
            expect(stepUp).toBeInstanceOf(UnauthorizedError)
            expect(provider.authorizationUrl?.searchParams.get("scope")).toBe("profile catalog:read")
            expect(provider.authorizationUrl?.searchParams.get("client_id")).toBe(url)

            const callback = await authorizeInBrowser(new Browser(), baseUrl, provider.authorizationUrl!.toString(), {
              email: user.email,
              password: user.password,
              signUp: false
            })
            await transport.finishAuth(callback.searchParams.get("code")!)
            expect(provider.saved?.scope).toBe("profile catalog:read")
            const me = (await client.callTool({ name: "me", arguments: {} })) as {
              isError?: boolean
              content: ReadonlyArray<{ text: string }>
            }
            expect(me.isError).toBeFalsy()
            expect(me.content.map((item) => item.text).join("\n")).toContain(user.email)
            await client.close()
          })
        })
    )
  })
})
