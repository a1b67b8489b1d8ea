import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { authorizeInBrowser, BaseUrl, Browser, issueTestToken } from "./auth.js"
import { availableVariants } from "./checkout.js"

/** The SDK's OAuth types, as its client provider interface names them. */
type OAuthClientMetadata = OAuthClientProvider["clientMetadata"]
type OAuthClientInformationMixed = NonNullable<Awaited<ReturnType<OAuthClientProvider["clientInformation"]>>>
type OAuthTokens = Parameters<OAuthClientProvider["saveTokens"]>[0]

/**
 * An MCP client as a desktop app runs one: the official SDK `Client` over `StreamableHTTPClientTransport`,
 * with an OAuth provider that keeps everything in memory and, instead of opening a browser, remembers the
 * authorization URL so the test can go through the sign-in and consent pages (`authorizeInBrowser`).
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ""
  authorizationUrl: URL | undefined

  constructor(
    readonly scope: string,
    readonly redirect = "http://127.0.0.1:33418/oauth/callback"
  ) {}

  get redirectUrl() {
    return this.redirect
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "MCP test client",
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: this.scope
    }
  }

  clientInformation() {
    return this.information
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

export const mcpClient = () => new Client({ name: "ribbon-test", version: "1.0.0" })

/** A connected client for `baseUrl/mcp` with a bearer token, no OAuth provider. */
export const connectWithToken = async (baseUrl: string, accessToken: string) => {
  const client = mcpClient()
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${accessToken}` } }
    })
  )
  return client
}

/**
 * The whole OAuth flow the way an MCP client runs it: the first connection gets 401 and the SDK discovers
 * the resource and authorization server metadata, registers the client and starts authorization; the person
 * signs up and allows in the browser; the SDK exchanges the code; the next connection carries the token.
 */
export const connectWithOAuth = async (
  baseUrl: string,
  scope: string,
  account: { readonly email: string; readonly password: string }
) => {
  const provider = new MemoryOAuthProvider(scope)
  const url = new URL(`${baseUrl}/mcp`)
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider })
  const refused = await mcpClient()
    .connect(first)
    .then(
      () => undefined,
      (error: unknown) => error
    )
  if (provider.authorizationUrl === undefined) throw new Error(`No authorization started: ${String(refused)}`)
  const callback = await authorizeInBrowser(new Browser(), baseUrl, provider.authorizationUrl.toString(), {
    ...account,
    signUp: true
  })
  await first.finishAuth(callback.searchParams.get("code")!)
  const client = mcpClient()
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
  return { client, provider, refused, callback }
}

/**
 * A signed-in user of the real-port server, an MCP client with their token, a mug that ships to GB, and an
 * HttpClient aimed at the server (for the hosted payment page).
 */
export const mcpBuyer = Effect.gen(function* () {
  const baseUrl = yield* BaseUrl
  const user = yield* issueTestToken({ defaultCountry: "GB" }, baseUrl)
  const http = HttpClient.mapRequest(
    yield* Effect.provide(HttpClient.HttpClient, FetchHttpClient.layer),
    HttpClientRequest.prependUrl(baseUrl)
  )
  const [variantId] = yield* availableVariants("GB", "mug", 1).pipe(
    Effect.provideService(
      HttpClient.HttpClient,
      HttpClient.mapRequest(http, HttpClientRequest.bearerToken(user.accessToken))
    )
  )
  const client = yield* Effect.promise(() => connectWithToken(baseUrl, user.accessToken))
  return { client, variantId: variantId!, http, accessToken: user.accessToken }
})
