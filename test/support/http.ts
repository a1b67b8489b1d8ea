import type { HttpApi } from "@effect/platform"
import { HttpApiClient, HttpClient, HttpClientRequest, type HttpClientResponse, HttpServer } from "@effect/platform"
import { NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Api } from "../../src/http/Api.js"
import { OriginPolicy } from "../../src/http/BrowserOrigins.js"
import { httpListener } from "../../src/layers/HttpListener.js"
import { RateLimiterMemoryLive } from "../../src/layers/Redis.js"
import { ApiLive, ServicesLive, SimulatorsLive, serveApi } from "../../src/layers/Server.js"
import { PublicUrl } from "../../src/services/catalog/Catalog.js"
import { OutboundPolicy } from "../../src/services/platform/OutboundHttp.js"
import { RateLimits } from "../../src/services/platform/RateLimits.js"
import { Signals } from "../../src/services/platform/Signals.js"
import { FulfillmentSettings } from "../../src/services/simulators/FulfillmentSimulator.js"
import { SeededTestDatabase, TestDatabase } from "./database.js"

export const testMaxBodyBytes = 64 * 1024

/**
 * Settings (the fulfillment simulator's, the outbound policy) with the simulators on them, as the payment
 * provider and the fulfillment partner.
 */
export const withSimulators = <E, R>(settings: Layer.Layer<FulfillmentSettings | OutboundPolicy, E, R>) =>
  Layer.provideMerge(SimulatorsLive, settings)

/** The fulfillment simulator's defaults, callbacks allowed to loopback receivers, and the simulators. */
export const TestSettingsLive = withSimulators(
  Layer.mergeAll(FulfillmentSettings.Default, OutboundPolicy.layer({ allowLoopback: true }))
)

/**
 * A listener as the server's own (`httpListener`) on a free port, and an HttpClient aimed at it: what
 * `NodeHttpServer.layerTest` provides, on a plain Node server.
 */
const TestListener = HttpServer.layerTestClient.pipe(
  Layer.provide(NodeHttpClient.layerWithoutAgent),
  Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false })),
  Layer.provideMerge(NodeHttpServer.layer(httpListener, { port: 0 }))
)

/** Serves an HttpApi through the real server layer on a free loopback port; provides an HttpClient aimed at it. */
export const serveForTest = <E, R>(apiLive: Layer.Layer<HttpApi.Api, E, R>) =>
  serveApi(apiLive, { maxBodyBytes: testMaxBodyBytes }).pipe(Layer.provideMerge(TestListener))

/** The base URL tests serve under: image URLs in responses start with it. */
export const testPublicUrl = "http://ribbon.test"

/**
 * The origin policy of a server at its public URL, as production's without ALLOWED_ORIGINS or loopback
 * names; `allowedOrigins` adds other sites.
 */
export const originPolicyAtPublicUrl = (allowedOrigins: ReadonlyArray<string> = []) =>
  Layer.effect(
    OriginPolicy,
    Effect.map(PublicUrl, (publicUrl) => OriginPolicy.make({ publicUrl, allowedOrigins }))
  )

/** The rate limiter and the company API's rate limits on the memory store. */
export const RateLimitsMemoryLive = RateLimits.Default.pipe(Layer.provideMerge(RateLimiterMemoryLive))

/** The Ribbon API served on a test port, on the given database. */
export const serveRibbon = <E, R>(database: Layer.Layer<R, E>, publicUrl = testPublicUrl) =>
  serveForTest(ApiLive).pipe(
    Layer.provide([ServicesLive, RateLimitsMemoryLive, originPolicyAtPublicUrl()]),
    Layer.provide([Layer.succeed(PublicUrl, publicUrl), Signals.layerInProcess, TestSettingsLive]),
    Layer.provideMerge(database)
  )

/** The Ribbon API on a fresh database, served on a test port. */
export const RibbonTestServer = serveRibbon(TestDatabase)

/** The Ribbon API on a fresh database seeded with the demo catalog. */
export const SeededTestServer = serveRibbon(SeededTestDatabase)

/** The typed client derived from the Ribbon HttpApi. */
export const ribbonClient = HttpApiClient.make(Api)

export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: any
  readonly text: string
}

const read = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(response.text, (text): RawResponse => {
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {}
    return { status: response.status, headers: response.headers, body, text }
  })

/** A raw request, to assert exact status, headers and body bytes. */
export const raw = (request: HttpClientRequest.HttpClientRequest) =>
  Effect.flatMap(HttpClient.HttpClient, (client) => Effect.flatMap(client.execute(request), read))

export const get = (url: string, headers: Record<string, string> = {}) =>
  raw(HttpClientRequest.get(url).pipe(HttpClientRequest.setHeaders(headers)))

/** A form POST, as a browser without JavaScript sends it (the gift page's forms). */
export const postForm = (url: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  raw(
    HttpClientRequest.post(url).pipe(
      HttpClientRequest.setHeaders(headers),
      HttpClientRequest.bodyText(new URLSearchParams(form).toString(), "application/x-www-form-urlencoded")
    )
  )

export const postText = (url: string, body: string, headers: Record<string, string> = {}) =>
  raw(
    HttpClientRequest.post(url).pipe(
      HttpClientRequest.setHeaders(headers),
      HttpClientRequest.bodyText(body, "application/json")
    )
  )
