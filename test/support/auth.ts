import * as Net from "node:net"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { type Scope, supportedScopes } from "../../src/domain/identity/OAuth.js"
import { makeId } from "../../src/domain/platform/Ids.js"
import { AuthFailureLimits } from "../../src/http/AuthFailures.js"
import { AuthRateLimits } from "../../src/http/identity/AuthRateLimits.js"
import { httpListener } from "../../src/layers/HttpListener.js"
import { ApiLive, ServicesLive, serveApi } from "../../src/layers/Server.js"
import { PublicUrl } from "../../src/services/catalog/Catalog.js"
import { ProductionServer } from "../../src/services/checkout/Notifications.js"
import { ClientMetadataLimits } from "../../src/services/identity/ClientMetadataDocuments.js"
import { OAuthClients } from "../../src/services/identity/OAuthClients.js"
import { Tokens } from "../../src/services/identity/Tokens.js"
import { Users } from "../../src/services/identity/Users.js"
import { OutboundPolicy, type OutboundPolicyShape } from "../../src/services/platform/OutboundHttp.js"
import { Signals } from "../../src/services/platform/Signals.js"
import { FulfillmentSettings } from "../../src/services/simulators/FulfillmentSimulator.js"
import { TestDatabase } from "./database.js"
import {
  originPolicyAtPublicUrl,
  RateLimitsMemoryLive,
  TestSettingsLive,
  testMaxBodyBytes,
  testPublicUrl,
  withSimulators
} from "./http.js"

/**
 * Signing in for tests. `signedIn()` wraps a test server layer so that every request of its HttpClient (the
 * derived client and the raw helpers) carries a valid access token of a fresh user, issued through the
 * identity services. `RealPortServer` serves on a real loopback port whose address is the public URL, for
 * protocol clients that fetch the discovery documents and follow their URLs.
 */

export interface TestUserOptions {
  readonly scopes?: ReadonlyArray<Scope>
  readonly email?: string
  readonly defaultCountry?: string
}

export interface TestUser {
  readonly userId: string
  readonly email: string
  readonly password: string
  readonly clientId: string
  readonly accessToken: string
}

let users = 0

/** A new user with a public client and an access token for it, made through Users, OAuthClients and Tokens. */
export const issueTestToken = (options: TestUserOptions = {}, publicUrl = testPublicUrl) =>
  Effect.gen(function* () {
    const clients = yield* OAuthClients
    const tokenService = yield* Tokens
    const userService = yield* Users
    const email = options.email ?? `user${++users}-${Date.now()}@example.com`
    const password = "correct horse battery"
    const user = yield* userService.create({ email, password, defaultCountry: options.defaultCountry })
    const client = yield* clients.register({
      client_name: "Test agent",
      redirect_uris: ["http://127.0.0.1/callback"],
      token_endpoint_auth_method: "none"
    })
    const scope = (options.scopes ?? supportedScopes.filter((s) => s !== "offline_access")).join(" ")
    const tokens = yield* tokenService.issueTokens({
      familyId: yield* makeId,
      clientId: client.client_id,
      userId: user.id,
      scope,
      refreshScope: scope
    })
    return { userId: user.id, email, password, clientId: client.client_id, accessToken: tokens.access_token }
  }).pipe(
    Effect.provide(Layer.mergeAll(OAuthClients.Default, Tokens.Default, Users.Default)),
    Effect.provide([Layer.succeed(PublicUrl, publicUrl), OutboundPolicy.Default]),
    Effect.orDie
  )

/** A client registered through OAuthClients, with a refresh token of a fresh user (on the server's services). */
export const clientWithRefreshToken = (method: "none" | "client_secret_post") =>
  Effect.gen(function* () {
    const clients = yield* OAuthClients
    const tokenService = yield* Tokens
    const user = yield* Effect.flatMap(Users, (service) =>
      service.create({ email: `user${++users}-${Date.now()}@example.com`, password: "a fine password" })
    )
    const client = yield* clients.register({
      client_name: "Agent",
      redirect_uris: ["http://127.0.0.1/cb"],
      token_endpoint_auth_method: method
    })
    const scope = "profile offline_access"
    const tokens = yield* tokenService.issueTokens({
      familyId: yield* makeId,
      clientId: client.client_id,
      userId: user.id,
      scope,
      refreshScope: scope
    })
    return { clientId: client.client_id, clientSecret: client.client_secret, refreshToken: tokens.refresh_token! }
  }).pipe(Effect.orDie)

/** The signed-in test user of a `signedIn` layer. */
export class SignedInUser extends Context.Tag("test/SignedInUser")<SignedInUser, TestUser>() {}

/** Wraps a test server: its HttpClient sends `Authorization: Bearer` of a fresh user. */
export const signedIn =
  (options: TestUserOptions = {}) =>
  <ROut, E, RIn>(server: Layer.Layer<ROut, E, RIn>) =>
    Layer.effectContext(
      Effect.gen(function* () {
        const user = yield* issueTestToken(options)
        const client = yield* HttpClient.HttpClient
        return Context.make(SignedInUser, user).pipe(
          Context.add(
            HttpClient.HttpClient,
            // A request that brings its own Authorization header (another user, a bad token) keeps it.
            HttpClient.mapRequest(client, (request) =>
              request.headers.authorization === undefined
                ? HttpClientRequest.bearerToken(request, user.accessToken)
                : request
            )
          )
        )
      })
    ).pipe(Layer.provideMerge(server))

/** A free loopback port (closed again at once; the server binds it right after). */
export const freePort = Effect.async<number>((resume) => {
  const probe = Net.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as Net.AddressInfo
    probe.close(() => resume(Effect.succeed(port)))
  })
})

/** The base URL of a `RealPortServer` (also its issuer and resource). */
export class BaseUrl extends Context.Tag("test/BaseUrl")<BaseUrl, string>() {}

/** The base URL as reached from 127.0.0.1 (`v4`) or [::1] (`v6`): two sources, on a server listening on "::". */
export const baseUrlFrom = (from: "v4" | "v6") =>
  Effect.map(BaseUrl, (baseUrl) => (from === "v4" ? baseUrl : baseUrl.replace("127.0.0.1", "[::1]")))

/**
 * Moves the server's clock forward (code, token and session expiry). The server runs on wall-clock time
 * plus an offset, so its timers and the database keep working while tests jump ahead.
 */
export class TimeTravel extends Context.Tag("test/TimeTravel")<
  TimeTravel,
  { readonly advance: (duration: Duration.DurationInput) => Effect.Effect<void> }
>() {}

export const shiftedClock = () => {
  const live = Clock.make()
  let offsetMillis = 0
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => live.unsafeCurrentTimeMillis() + offsetMillis,
    unsafeCurrentTimeNanos: () => live.unsafeCurrentTimeNanos() + BigInt(offsetMillis) * 1_000_000n,
    currentTimeMillis: Effect.sync(() => live.unsafeCurrentTimeMillis() + offsetMillis),
    currentTimeNanos: Effect.sync(() => live.unsafeCurrentTimeNanos() + BigInt(offsetMillis) * 1_000_000n),
    sleep: (duration) => live.sleep(duration)
  }
  const travel = TimeTravel.of({
    advance: (duration) =>
      Effect.sync(() => {
        offsetMillis += Duration.toMillis(duration)
      })
  })
  return { clock, travel }
}

/** Rate limits high enough that no test meets them by accident (test/http/identity/oauthRateLimits.test.ts sets its own). */
const unlimited: AuthRateLimits["Type"] = {
  registerPerIp: { limit: 1_000_000, window: "1 minute" },
  tokenPerClient: { limit: 1_000_000, window: "1 minute" },
  tokenPerIp: { limit: 1_000_000, window: "1 minute" },
  signInPerIp: { limit: 1_000_000, window: "1 minute" },
  clientDocumentPerIp: { limit: 1_000_000, window: "1 minute" }
}

/** The Ribbon API served on `port` of `host` (127.0.0.1; "::" takes [::1] too), its services still to provide. */
const serveOnPort = (port: number, host = "127.0.0.1") =>
  serveApi(ApiLive, { maxBodyBytes: testMaxBodyBytes, telemetry: false }).pipe(
    Layer.provide(NodeHttpServer.layer(httpListener, { port, host }))
  )

/**
 * A server on a free loopback port: `build` gets the API served there (its services still to provide), the
 * port's address `http://127.0.0.1:port` (also the public URL and `BaseUrl`), and a fresh server clock with
 * the `TimeTravel` that moves it.
 */
export const onRealPort = <A, E, R>(
  build: (
    api: ReturnType<typeof serveOnPort>,
    baseUrl: string,
    time: ReturnType<typeof shiftedClock>
  ) => Layer.Layer<A, E, R>,
  host?: string
) =>
  Layer.unwrapEffect(
    Effect.map(freePort, (port) => build(serveOnPort(port, host), `http://127.0.0.1:${port}`, shiftedClock()))
  )

/** The Ribbon API on a fresh database, on a real loopback port that is also its public URL. */
export const makeRealPortServer = (limits: AuthRateLimits["Type"] = unlimited) => realPortServerOn(TestDatabase, limits)

/**
 * The Ribbon API on a real loopback port, on the given database. `options.host` "::" serves [::1] as well
 * (two sources for the per-source limits); `options.failureLimits` sets the backoff after failed
 * authentications (the production one otherwise); `options.allowedOrigins` are other sites whose pages
 * may call it (ALLOWED_ORIGINS).
 */
export const realPortServerOn = <ROut extends SqlClient.SqlClient, E>(
  database: Layer.Layer<ROut, E>,
  limits: AuthRateLimits["Type"] = unlimited,
  options: {
    readonly host?: string
    readonly failureLimits?: AuthFailureLimits["Type"]
    readonly allowedOrigins?: ReadonlyArray<string>
    /** Serve as in production (NODE_ENV=production), where some dashboard pages are for sandboxes only. */
    readonly production?: boolean
    /** The outbound policy besides loopback allowed (a receiver's certificate to trust). */
    readonly outbound?: Partial<OutboundPolicyShape>
    /** Bounds of fetching client metadata documents (a short time limit). */
    readonly clientMetadata?: Partial<ClientMetadataLimits["Type"]>
  } = {}
) =>
  onRealPort(
    (api, baseUrl, { clock, travel }) =>
      api.pipe(
        Layer.provideMerge(Layer.merge(ServicesLive, RateLimitsMemoryLive)),
        Layer.provide(originPolicyAtPublicUrl(options.allowedOrigins)),
        Layer.provide([
          Layer.succeed(PublicUrl, baseUrl),
          Signals.layerInProcess,
          options.outbound === undefined
            ? TestSettingsLive
            : withSimulators(
                Layer.mergeAll(
                  FulfillmentSettings.Default,
                  OutboundPolicy.layer({ allowLoopback: true, ...options.outbound })
                )
              )
        ]),
        Layer.provideMerge(Layer.succeed(BaseUrl, baseUrl)),
        Layer.provideMerge(database),
        Layer.provideMerge(Layer.succeed(TimeTravel, travel)),
        Layer.provide(Layer.setClock(clock)),
        Layer.provide(Layer.succeed(AuthRateLimits, limits)),
        Layer.provide(Layer.succeed(ProductionServer, options.production === true)),
        Layer.provide(
          options.clientMetadata === undefined
            ? Layer.empty
            : Layer.succeed(ClientMetadataLimits, { ...ClientMetadataLimits.defaultValue(), ...options.clientMetadata })
        ),
        Layer.provide(
          options.failureLimits === undefined ? Layer.empty : Layer.succeed(AuthFailureLimits, options.failureLimits)
        )
      ),
    options.host
  )

export const RealPortServer = makeRealPortServer()

// ---------------------------------------------------------------------------------------------------------
// Driving the authorize pages over HTTP, as a browser would (cookies, hidden fields, the CSRF token).

const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")

/** The hidden fields of the form whose submit button has `value`. */
export const formFields = (html: string, action: string): Record<string, string> => {
  const form = [...html.matchAll(/<form[\s\S]*?<\/form>/g)]
    .map((m) => m[0])
    .find((f) => f.includes(`value="${action}"`))
  if (form === undefined) throw new Error(`No form with action ${action} in:\n${html}`)
  const fields: Record<string, string> = {}
  for (const [, name, value] of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[name!] = unescapeHtml(value!)
  }
  return fields
}

/** A tiny cookie jar over fetch, with redirects left to the caller. */
export class Browser {
  readonly cookies = new Map<string, string>()

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
    const response = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), ...(cookie === "" ? {} : { cookie }) }
    })
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(";")
      const eq = pair!.indexOf("=")
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1))
    }
    return response
  }

  /** Submits the form of `page` whose button is `action`, with extra visible fields. */
  submit(baseUrl: string, page: string, action: string, fields: Record<string, string> = {}) {
    return this.request(`${baseUrl}/oauth/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...formFields(page, action), ...fields, action }).toString()
    })
  }
}

/**
 * Goes through the authorize pages: sign up (or sign in) and allow. Returns the URL the user is sent back
 * to (the client's redirect URI with `code`, `state` and `iss`).
 */
export const authorizeInBrowser = async (
  browser: Browser,
  baseUrl: string,
  authorizeUrl: string,
  account: { readonly email: string; readonly password: string; readonly signUp: boolean }
): Promise<URL> => {
  const first = await browser.request(authorizeUrl)
  let response = first
  if (first.status === 200) {
    const page = await first.text()
    if (page.includes('value="sign_in"')) {
      response = account.signUp
        ? await browser.submit(baseUrl, page, "sign_up", { email: account.email, password: account.password })
        : await browser.submit(baseUrl, page, "sign_in", { email: account.email, password: account.password })
    }
  }
  if (response.status === 200) {
    const page = await response.text()
    response = await browser.submit(baseUrl, page, "allow")
  }
  const location = response.headers.get("location")
  if (location === null) throw new Error(`Expected a redirect, got ${response.status}: ${await response.text()}`)
  return new URL(location)
}
