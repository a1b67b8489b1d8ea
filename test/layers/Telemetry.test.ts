import { createHash, randomBytes } from "node:crypto"
import { createServer } from "node:http"
import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Either, Layer, Logger, Metric, Schema } from "effect"
import { Api } from "../../src/http/Api.js"
import { httpServerRequestDuration, httpServerRequests, requestLabels } from "../../src/http/Metrics.js"
import { AppConfig, type TracesSampler } from "../../src/layers/Config.js"
import { withTraceContext } from "../../src/layers/Logging.js"
import { RateLimiterMemoryLive } from "../../src/layers/Redis.js"
import { HandlersLive, ServicesLive } from "../../src/layers/Server.js"
import { TelemetryLive, telemetryLayer } from "../../src/layers/Telemetry.js"
import { PublicUrl } from "../../src/services/catalog/Catalog.js"
import { OutboundHttp, OutboundPolicy } from "../../src/services/platform/OutboundHttp.js"
import { RateLimits } from "../../src/services/platform/RateLimits.js"
import { Signals } from "../../src/services/platform/Signals.js"
import { authorizeInBrowser, Browser } from "../support/auth.js"
import { TestDatabase } from "../support/database.js"
import { get, type RawResponse, serveForTest, TestSettingsLive, testPublicUrl } from "../support/http.js"
import {
  OtlpReceiver,
  type ReceivedLogRecord,
  type ReceivedMetricPoint,
  type ReceivedSpan,
  SpanKind
} from "../support/otlp.js"
import { certificate, httpsReceiver } from "../support/receiver.js"

// A traced route that runs SQL through a service method, and one that makes an outbound callback, beside
// the real API (/health, /ready, the OAuth pages).
const ItemsApi = HttpApiGroup.make("items")
  .add(
    HttpApiEndpoint.get("count", "/fixture/items/:kind")
      .setPath(Schema.Struct({ kind: Schema.String }))
      .addSuccess(Schema.Struct({ kind: Schema.String, migrations: Schema.Int }))
  )
  .add(
    HttpApiEndpoint.get("callback", "/fixture/callback/:target")
      .setPath(Schema.Struct({ target: Schema.Literal("receiver", "refused") }))
      .addSuccess(Schema.Struct({ outcome: Schema.String }))
  )

const FixtureApi = Api.add(ItemsApi)

/** The callback URLs of the fixture, as an agent would give them: with a secret in their query. */
class CallbackUrls extends Context.Tag("test/CallbackUrls")<
  CallbackUrls,
  { readonly receiver: string; readonly refused: string }
>() {}

class FixtureCatalog extends Effect.Service<FixtureCatalog>()("test/FixtureCatalog", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const http = yield* OutboundHttp
    const urls = yield* CallbackUrls
    const count = Effect.fn("FixtureCatalog.count")(function* (kind: string) {
      yield* Effect.logInfo("Counting items").pipe(Effect.annotateLogs("kind", kind))
      const rows = yield* sql<{ migrations: number }>`
        SELECT count(*)::int AS migrations FROM effect_sql_migrations`.pipe(Effect.orDie)
      return { kind, migrations: rows[0]?.migrations ?? 0 }
    })
    const callback = Effect.fn("FixtureCatalog.callback")(function* (target: "receiver" | "refused") {
      const sent = yield* Effect.either(http.post(urls[target], { body: "{}", headers: {} }))
      if (Either.isLeft(sent)) yield* Effect.logWarning(`Callback to ${urls[target]} refused`)
      return { outcome: Either.isRight(sent) ? `HTTP ${sent.right.status}` : sent.left._tag }
    })
    return { count, callback } as const
  })
}) {}

const ItemsLive = HttpApiBuilder.group(FixtureApi, "items", (handlers) =>
  Effect.map(FixtureCatalog, (catalog) =>
    handlers
      .handle("count", ({ path }) => catalog.count(path.kind))
      .handle("callback", ({ path }) => catalog.callback(path.target))
  )
)

const FixtureLive = HttpApiBuilder.api(FixtureApi).pipe(Layer.provide([HandlersLive, ItemsLive]))

const itemsRoute = "/fixture/items/:kind"

/** A stand-in for the hosted payment page's single-purpose token, which must never reach a trace. */
const paymentToken = "pay-token-4f9a1c"

/** The `state` a client sends to the authorize endpoint: it comes back in the redirect, never in a trace. */
const oauthState = "state-7c41e9d2"

/** A gift link's token, a credential in the path (`/g/{token}`): never in a trace either. */
const giftToken = "gift-token-6e2b7d"

/** An export file link's signature. */
const exportSignature = "export-signature-0d81c3"

/** A secret an agent put in its callback URL's query. */
const callbackSecret = "cb-secret-93a0f5"

/**
 * Goes through the authorize pages of the server at `baseUrl` as a new user, for a fresh public client:
 * the URL the browser is sent back to, with the authorization code and `state`.
 */
const authorizeRedirect = (baseUrl: string) =>
  Effect.promise(async () => {
    const registration = await fetch(`${baseUrl}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Traced agent",
        redirect_uris: ["http://127.0.0.1:8765/callback"],
        token_endpoint_auth_method: "none"
      })
    })
    if (registration.status !== 201)
      throw new Error(`registration: ${registration.status} ${await registration.text()}`)
    const { client_id } = (await registration.json()) as { readonly client_id: string }
    const verifier = randomBytes(32).toString("base64url")
    const authorize = new URL(`${baseUrl}/oauth/authorize`)
    for (const [name, value] of Object.entries({
      response_type: "code",
      client_id,
      redirect_uri: "http://127.0.0.1:8765/callback",
      scope: "profile",
      state: oauthState,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256"
    }))
      authorize.searchParams.set(name, value)
    return authorizeInBrowser(new Browser(), baseUrl, authorize.toString(), {
      email: `traced-${randomBytes(4).toString("hex")}@example.com`,
      password: "a traced password",
      signUp: true
    })
  })

/** The in-process request counter for one label set. */
const requestsCounted = (method: string, route: string | undefined, status: number) =>
  Effect.map(
    Metric.value(Metric.taggedWithLabels(httpServerRequests, requestLabels(method, route, status))),
    (state) => state.count
  )

const requestsTimed = (method: string, route: string | undefined, status: number) =>
  Metric.value(Metric.taggedWithLabels(httpServerRequestDuration, requestLabels(method, route, status)))

/** Log lines go to the receiver only, not to the test's output. */
const quietLogs = Logger.remove(Logger.defaultLogger)

/** What one run of the server exported, and what the client saw. */
class Observed extends Context.Tag("test/Observed")<
  Observed,
  {
    readonly spans: ReadonlyArray<ReceivedSpan>
    readonly metrics: ReadonlyArray<ReceivedMetricPoint>
    readonly logs: ReadonlyArray<ReceivedLogRecord>
    readonly problems: ReadonlyArray<string>
    readonly responses: Readonly<
      Record<"health" | "ready" | "items" | "secret" | "gift" | "exportFile" | "missing", RawResponse>
    >
    /** Where the authorize pages sent the browser back to (the client's redirect URI, with the code). */
    readonly redirect: URL
    /** What the fixture's callbacks came to, and the requests the receiver got. */
    readonly callbacks: Readonly<Record<"receiver" | "refused", string>>
    readonly receivedPaths: ReadonlyArray<string>
    /** In-process counter increments during the run, per request. */
    readonly counted: Readonly<Record<"health" | "ready" | "items" | "missing", number>>
  }
>() {}

/**
 * Serves the fixture API with telemetry aimed at an in-process OTLP receiver, makes five requests, then
 * shuts the server and the SDK down, which flushes the span batch and takes a last metric reading.
 * The database is migrated before telemetry starts, so migration SQL is not in the trace data.
 */
const ObservedLive = Layer.scoped(
  Observed,
  Effect.gen(function* () {
    const receiver = yield* OtlpReceiver
    const callbackReceiver = yield* httpsReceiver()
    const callbackUrls = CallbackUrls.of({
      receiver: callbackReceiver.url(`/hook?k=${callbackSecret}&agent=a-1`),
      refused: `http://127.0.0.1:9/hook?k=${callbackSecret}`
    })
    const telemetry = telemetryLayer({
      endpoint: receiver.endpoint,
      environment: "test",
      exportDelay: "50 millis",
      metricExportInterval: "1 hour"
    })
    const server = serveForTest(FixtureLive).pipe(
      Layer.provide(
        FixtureCatalog.Default.pipe(
          // Fresh: the server's own OutboundHttp (Webhooks) does not trust the receiver's certificate.
          Layer.provide(Layer.fresh(OutboundHttp.Default)),
          Layer.provide(OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })),
          Layer.provide(Layer.succeed(CallbackUrls, callbackUrls))
        )
      ),
      Layer.provide([ServicesLive, RateLimits.Default.pipe(Layer.provideMerge(RateLimiterMemoryLive))]),
      Layer.provide([Layer.succeed(PublicUrl, testPublicUrl), Signals.layerInProcess, TestSettingsLive]),
      Layer.provide(telemetry),
      Layer.provide(quietLogs),
      Layer.provide(TestDatabase)
    )
    const counters = Effect.all({
      health: requestsCounted("GET", "/health", 200),
      ready: requestsCounted("GET", "/ready", 200),
      items: requestsCounted("GET", itemsRoute, 200),
      missing: requestsCounted("GET", undefined, 404)
    })
    const before = yield* counters
    const { responses, redirect, callbacks } = yield* Effect.gen(function* () {
      const address = (yield* HttpServer.HttpServer).address
      if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("the test server has no TCP address")
      return {
        responses: yield* Effect.all({
          health: get("/health"),
          ready: get("/ready"),
          items: get("/fixture/items/gifts"),
          secret: get(`/fixture/items/cards?t=${paymentToken}&page=2`, {
            referer: `http://shop.test/pay/1?t=${paymentToken}`
          }),
          gift: get(`/g/${giftToken}/status`, { referer: `http://shop.test/g/${giftToken}` }),
          exportFile: get(`/export-files/0123456789abcdef01234567/GB?expires=1&signature=${exportSignature}`),
          missing: get("/no/such/route")
        }),
        redirect: yield* authorizeRedirect(`http://127.0.0.1:${address.port}`),
        callbacks: {
          receiver: (yield* get("/fixture/callback/receiver")).body.outcome as string,
          refused: (yield* get("/fixture/callback/refused")).body.outcome as string
        }
      }
    }).pipe(Effect.provide(server))
    const after = yield* counters
    return {
      spans: receiver.spans(),
      metrics: receiver.metrics(),
      logs: receiver.logs(),
      problems: receiver.problems(),
      responses,
      redirect,
      callbacks,
      receivedPaths: callbackReceiver.received.map((request) => request.path),
      counted: {
        health: after.health - before.health,
        ready: after.ready - before.ready,
        items: after.items - before.items,
        missing: after.missing - before.missing
      }
    }
  })
)

const serverSpanFor = (spans: ReadonlyArray<ReceivedSpan>, path: string) =>
  spans.filter((span) => span.kind === SpanKind.server && span.attributes["url.path"] === path)

/** The span and its ancestors, nearest first, as far as they were received. */
const ancestry = (spans: ReadonlyArray<ReceivedSpan>, span: ReceivedSpan): Array<ReceivedSpan> => {
  const chain = [span]
  for (let current = span; current.parentSpanId !== undefined; ) {
    const parent = spans.find((candidate) => candidate.spanId === current.parentSpanId)
    if (parent === undefined) break
    chain.push(parent)
    current = parent
  }
  return chain
}

describe("telemetry over OTLP/HTTP", () => {
  layer(ObservedLive, { excludeTestServices: true, timeout: "30 seconds" })((it) => {
    it.effect("the receiver accepted every export", () =>
      Effect.gen(function* () {
        const { problems, responses } = yield* Observed
        expect(problems).toEqual([])
        expect(responses.health.status).toBe(200)
        expect(responses.ready.status).toBe(200)
        expect(responses.items.status).toBe(200)
        expect(responses.secret.status).toBe(200)
        expect(responses.items.body).toEqual({ kind: "gifts", migrations: expect.any(Number) })
        expect(responses.missing.status).toBe(404)
      })
    )

    it.effect("a request's server span and its SQL child span arrive with the same trace id", () =>
      Effect.gen(function* () {
        const { spans } = yield* Observed
        const servers = serverSpanFor(spans, "/fixture/items/gifts")
        expect(servers).toHaveLength(1)
        const server = servers[0]!
        // The test's HttpClient sends `traceparent`, so the server span continues the client's trace.
        const client = spans.find((span) => span.spanId === server.parentSpanId)
        expect(client).toMatchObject({ name: "http.client GET", kind: SpanKind.client, traceId: server.traceId })
        expect(server.resource["service.name"]).toBe("ribbon")
        expect(server.resource["deployment.environment.name"]).toBe("test")
        expect(server.attributes).toMatchObject({
          "http.request.method": "GET",
          "url.path": "/fixture/items/gifts",
          "url.scheme": "http",
          "http.route": itemsRoute,
          "http.response.status_code": 200
        })
        expect(server.attributes["url.full"]).toMatch(/^http:\/\/.+\/fixture\/items\/gifts$/)

        const inTrace = spans.filter((span) => span.traceId === server.traceId)
        const service = inTrace.find((span) => span.name === "FixtureCatalog.count")
        expect(service?.parentSpanId).toBe(server.spanId)

        const sql = inTrace.filter((span) => span.name === "sql.execute")
        expect(sql).toHaveLength(1)
        const statement = sql[0]!
        expect(statement.kind).toBe(SpanKind.client)
        expect(statement.traceId).toBe(server.traceId)
        expect(statement.parentSpanId).toBe(service?.spanId)
        expect(statement.attributes["db.system.name"]).toBe("postgresql")
        expect(statement.attributes["db.query.text"]).toContain("FROM effect_sql_migrations")
        expect(ancestry(spans, statement).map((span) => span.name)).toEqual([
          "sql.execute",
          "FixtureCatalog.count",
          server.name,
          "http.client GET"
        ])
      })
    )

    it.effect("the server span is named by its route and carries the response's request id", () =>
      Effect.gen(function* () {
        const { spans, responses } = yield* Observed
        const requestId = responses.items.headers["x-request-id"]
        expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
        const [server] = serverSpanFor(spans, "/fixture/items/gifts")
        expect(server?.name).toBe(`GET ${itemsRoute}`)
        expect(server?.attributes["http.request.id"]).toBe(requestId)
        // Spans under the server span carry it too, so any of them leads back to the request.
        const statement = spans.find((span) => span.name === "sql.execute" && span.traceId === server?.traceId)
        expect(statement?.attributes["http.request.id"]).toBe(requestId)
      })
    )

    it.effect("an unmatched request is traced without a route", () =>
      Effect.gen(function* () {
        const { spans } = yield* Observed
        const [server] = serverSpanFor(spans, "/no/such/route")
        expect(server?.attributes["http.response.status_code"]).toBe(404)
        expect(server?.attributes["http.route"]).toBeUndefined()
        expect(server?.name).toBe("http.server GET")
      })
    )

    it.effect("/health and /ready produce no spans, not even for the SQL /ready runs", () =>
      Effect.gen(function* () {
        const { spans } = yield* Observed
        // The traced requests made around them did arrive, so the probes' spans would have too.
        expect(serverSpanFor(spans, "/fixture/items/gifts")).toHaveLength(1)
        expect(serverSpanFor(spans, "/health")).toEqual([])
        expect(serverSpanFor(spans, "/ready")).toEqual([])
        expect(spans.filter((span) => span.name.startsWith("Readiness."))).toEqual([])
        // Everything the server made (all but the test client's own spans, and the one signal subscription
        // Events makes at start) belongs to the two traced requests.
        const traced = new Set(spans.filter((span) => span.kind === SpanKind.server).map((span) => span.traceId))
        const fromServer = spans.filter(
          (span) =>
            span.name !== "http.client GET" && !(span.name === "Signals.subscribe" && span.parentSpanId === undefined)
        )
        expect(fromServer.length).toBeGreaterThanOrEqual(7)
        expect(fromServer.filter((span) => !traced.has(span.traceId))).toEqual([])
      })
    )

    it.effect("sensitive query values are redacted from the URL attributes and the Referer", () =>
      Effect.gen(function* () {
        const { spans } = yield* Observed
        const [server] = serverSpanFor(spans, "/fixture/items/cards")
        expect(server?.attributes["url.query"]).toBe("t=REDACTED&page=2")
        expect(server?.attributes["url.full"]).toMatch(/\/fixture\/items\/cards\?t=REDACTED&page=2$/)
        expect(server?.attributes["http.request.header.referer"]).toBe("http://shop.test/pay/1?t=REDACTED")
        const leaks = spans.filter(
          (span) => span.name !== "http.client GET" && JSON.stringify(span.attributes).includes(paymentToken)
        )
        expect(leaks).toEqual([])
      })
    )

    it.effect("a gift link's token is redacted from the path in every URL attribute, and a file link's signature", () =>
      Effect.gen(function* () {
        const { spans, logs, responses } = yield* Observed
        expect(responses.gift.status).toBeLessThan(500)
        const [gift] = serverSpanFor(spans, "/g/REDACTED/status")
        expect(gift?.attributes["url.full"]).toMatch(/^http:\/\/[^/]+\/g\/REDACTED\/status$/)
        expect(gift?.attributes["http.request.header.referer"]).toBe("http://shop.test/g/REDACTED")
        expect(gift?.attributes["http.route"]).toBe("/g/:token/status")
        const [file] = serverSpanFor(spans, "/export-files/0123456789abcdef01234567/GB")
        expect(file?.attributes["url.query"]).toBe("expires=1&signature=REDACTED")
        const leaks = [...spans.filter((span) => span.name !== "http.client GET"), ...logs].filter((item) =>
          [giftToken, exportSignature].some((secret) => JSON.stringify(item).includes(secret))
        )
        expect(leaks).toEqual([])
      })
    )

    it.effect("an authorize redirect's span carries its Location without the code or state values", () =>
      Effect.gen(function* () {
        const { spans, redirect } = yield* Observed
        const code = redirect.searchParams.get("code")
        expect(code).toMatch(/^rbc_/)
        expect(redirect.searchParams.get("state")).toBe(oauthState)
        const redirects = spans.filter(
          (span) =>
            span.kind === SpanKind.server &&
            span.attributes["url.path"] === "/oauth/authorize" &&
            span.attributes["http.response.status_code"] === 303
        )
        expect(redirects).toHaveLength(1)
        const location = new URL(String(redirects[0]!.attributes["http.response.header.location"]))
        expect(location.origin + location.pathname).toBe("http://127.0.0.1:8765/callback")
        expect(location.searchParams.get("code")).toBe("REDACTED")
        expect(location.searchParams.get("state")).toBe("REDACTED")
        expect(location.searchParams.get("iss")).toBe(redirect.searchParams.get("iss"))
        // The state of the first request's URL too, and the code nowhere.
        const leaks = spans.filter((span) =>
          [code!, oauthState].some((secret) => JSON.stringify(span).includes(secret))
        )
        expect(leaks).toEqual([])
      })
    )

    it.effect("an outbound callback's client span keeps its URL without the query's values", () =>
      Effect.gen(function* () {
        const { spans, callbacks, receivedPaths } = yield* Observed
        expect(callbacks).toEqual({ receiver: "HTTP 204", refused: "OutboundRefused" })
        // The receiver got the URL as the agent gave it.
        expect(receivedPaths).toEqual([`/hook?k=${callbackSecret}&agent=a-1`])
        const posts = spans.filter((span) => span.name === "OutboundHttp.post")
        expect(posts.map((span) => span.kind)).toEqual([SpanKind.client, SpanKind.client])
        const fulls = posts.map((span) => span.attributes["url.full"])
        expect(fulls).toContainEqual(
          expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+\/hook\?k=REDACTED&agent=REDACTED$/)
        )
        expect(fulls).toContain("http://127.0.0.1:9/hook?k=REDACTED")
        // The refusal's error quotes the URL, redacted as well.
        const refused = posts.find((span) => span.statusMessage !== undefined)
        expect(refused?.statusMessage).toContain("http://127.0.0.1:9/hook?k=REDACTED")
        expect(refused?.events.map((event) => event.name)).toContain("exception")
        expect(spans.filter((span) => JSON.stringify(span).includes(callbackSecret))).toEqual([])
      })
    )

    it.effect("each request is counted and timed once, by method, route and status", () =>
      Effect.gen(function* () {
        const { counted } = yield* Observed
        expect(counted).toEqual({ health: 1, ready: 1, items: 2, missing: 1 })
        const timed = yield* requestsTimed("GET", itemsRoute, 200)
        expect(timed.count).toBeGreaterThanOrEqual(1)
        expect(timed.sum).toBeGreaterThan(0)
        expect(timed.max).toBeLessThan(30)
      })
    )

    it.effect("a log line written under a span is exported with that span's trace and span ids", () =>
      Effect.gen(function* () {
        const { logs, spans, responses } = yield* Observed
        const requestId = responses.items.headers["x-request-id"]
        const record = logs.find((log) => log.body === "Counting items" && log.attributes.requestId === requestId)
        expect(record).toMatchObject({
          severityText: "INFO",
          severityNumber: 9,
          attributes: { kind: "gifts" },
          resource: { "service.name": "ribbon" }
        })
        const [server] = serverSpanFor(spans, "/fixture/items/gifts")
        const service = spans.find((span) => span.name === "FixtureCatalog.count" && span.traceId === server?.traceId)
        expect(record?.traceId).toMatch(/^[0-9a-f]{32}$/)
        expect(record?.traceId).toBe(server?.traceId)
        expect(record?.spanId).toBe(service?.spanId)
      })
    )

    it.effect("a log record quoting a URL has its query values redacted", () =>
      Effect.gen(function* () {
        const { logs } = yield* Observed
        const refused = logs.find((log) => typeof log.body === "string" && log.body.startsWith("Callback to"))
        expect(refused?.body).toBe("Callback to http://127.0.0.1:9/hook?k=REDACTED refused")
        expect(refused?.severityNumber).toBe(13)
        expect(refused?.traceId).toMatch(/^[0-9a-f]{32}$/)
        expect(logs.filter((log) => JSON.stringify(log).includes(callbackSecret))).toEqual([])
      })
    )

    it.effect("the metrics are exported with their labels and unit", () =>
      Effect.gen(function* () {
        const { metrics } = yield* Observed
        const labels = { "http.request.method": "GET", "http.route": itemsRoute, "http.response.status_code": "200" }
        const count = metrics.find(
          (point) => point.name === "http.server.requests" && matches(point.attributes, labels)
        )
        expect(count).toMatchObject({ type: "sum", resource: { "service.name": "ribbon" } })
        expect(count?.value).toBeGreaterThanOrEqual(1)
        const duration = metrics.find(
          (point) => point.name === "http.server.request.duration" && matches(point.attributes, labels)
        )
        expect(duration).toMatchObject({ type: "histogram", unit: "s" })
        expect(duration?.count).toBeGreaterThanOrEqual(1)
        expect(duration?.sum).toBeGreaterThan(0)
        const unmatched = metrics.find(
          (point) =>
            point.name === "http.server.requests" &&
            point.attributes["http.response.status_code"] === "404" &&
            !("http.route" in point.attributes)
        )
        expect(unmatched?.value).toBeGreaterThanOrEqual(1)
      })
    )
  })
})

const matches = (attributes: Readonly<Record<string, unknown>>, expected: Record<string, unknown>) =>
  Object.entries(expected).every(([key, value]) => attributes[key] === value)

describe("without OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  const configured = (entries: ReadonlyArray<readonly [string, string]>) =>
    Layer.provide(TelemetryLive, AppConfig.Default).pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(entries))))
    )

  it.effect("keeps Effect's own tracer, so nothing is exported", () =>
    Effect.gen(function* () {
      const outside = yield* Effect.tracer
      const inside = yield* Effect.tracer.pipe(Effect.provide(configured([])))
      expect(inside).toBe(outside)
    })
  )

  it.scoped("while with it the NodeSdk tracer takes over", () =>
    Effect.gen(function* () {
      const receiver = yield* OtlpReceiver
      const outside = yield* Effect.tracer
      const inside = yield* Effect.tracer.pipe(
        Effect.provide(configured([["OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint]]))
      )
      expect(inside).not.toBe(outside)
    })
  )
})

describe("log lines", () => {
  /** The JSON lines `withTraceContext(Logger.jsonLogger)` writes while `effect` runs. */
  const linesOf = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      const lines: Array<{ readonly message: unknown; readonly annotations: Record<string, unknown> }> = []
      const capture = Logger.map(withTraceContext(Logger.jsonLogger), (line) => lines.push(JSON.parse(line)))
      const value = yield* effect.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
      return { value, lines }
    })

  it.effect("carry the active span's traceId and spanId beside the annotations", () =>
    Effect.gen(function* () {
      const { value: span, lines } = yield* linesOf(
        Effect.zipLeft(Effect.currentSpan, Effect.logInfo("inside")).pipe(
          Effect.annotateLogs("requestId", "r-1"),
          Effect.withSpan("work")
        )
      )
      expect(lines).toEqual([
        {
          message: "inside",
          annotations: { requestId: "r-1", traceId: span.traceId, spanId: span.spanId },
          fiberId: expect.any(String),
          logLevel: "INFO",
          timestamp: expect.any(String),
          cause: undefined,
          spans: {}
        }
      ])
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(span.spanId).toMatch(/^[0-9a-f]{16}$/)
    })
  )

  it.effect("carry none outside a span, or with the tracer off", () =>
    Effect.gen(function* () {
      const { lines } = yield* linesOf(
        Effect.zipRight(
          Effect.logInfo("outside"),
          Effect.logInfo("untraced").pipe(Effect.withSpan("work"), Effect.withTracerEnabled(false))
        )
      )
      expect(lines.map((line) => [line.message, line.annotations])).toEqual([
        ["outside", {}],
        ["untraced", {}]
      ])
    })
  )
})

describe("trace sampling", () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
  const parentId = "00f067aa0ba902b7"

  /**
   * Serves a route that logs under a span of its own, with telemetry sampled by `sampler`, makes one
   * request per header set (a `traceparent` or none), and returns what reached the receiver.
   */
  const served = (sampler: TracesSampler, requests: ReadonlyArray<Record<string, string>>) =>
    Effect.scoped(
      Effect.gen(function* () {
        const receiver = yield* OtlpReceiver
        const app = Effect.logInfo("served").pipe(Effect.withSpan("work"), Effect.as(HttpServerResponse.text("ok")))
        const server = HttpServer.serve(app).pipe(
          Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
          Layer.provide(
            telemetryLayer({
              endpoint: receiver.endpoint,
              environment: "test",
              sampler,
              exportDelay: "50 millis",
              metricExportInterval: "1 hour"
            })
          ),
          Layer.provide(quietLogs)
        )
        yield* Effect.gen(function* () {
          const address = (yield* HttpServer.HttpServer).address
          if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("no TCP address")
          for (const headers of requests)
            yield* Effect.promise(() => fetch(`http://127.0.0.1:${address.port}/x`, { headers }).then((r) => r.text()))
        }).pipe(Effect.provide(server))
        return { spans: receiver.spans(), logs: receiver.logs() }
      })
    )

  it.effect("a ratio of 0 starts no trace, but a caller's sampled trace is continued", () =>
    Effect.gen(function* () {
      const { spans, logs } = yield* served({ name: "parentbased_traceidratio", ratio: 0 }, [
        {},
        { traceparent: `00-${traceId}-${parentId}-01` }
      ])
      const servers = spans.filter((span) => span.kind === SpanKind.server)
      expect(servers).toHaveLength(1)
      expect(servers[0]).toMatchObject({ traceId, parentSpanId: parentId })
      expect(spans.filter((span) => span.name === "work").map((span) => span.traceId)).toEqual([traceId])
      // Log records are kept either way, each with its own request's trace.
      expect(logs.filter((log) => log.body === "served")).toHaveLength(2)
    })
  )

  it.effect("a caller's unsampled trace is not recorded, even where Ribbon would keep every trace", () =>
    Effect.gen(function* () {
      const { spans } = yield* served({ name: "parentbased_always_on", ratio: 1 }, [
        { traceparent: `00-${traceId}-${parentId}-00` },
        {}
      ])
      const servers = spans.filter((span) => span.kind === SpanKind.server)
      expect(servers).toHaveLength(1)
      expect(servers[0]?.traceId).not.toBe(traceId)
      expect(servers[0]?.parentSpanId).toBeUndefined()
      expect(spans.filter((span) => span.traceId === traceId)).toEqual([])
    })
  )

  it.effect("OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG configure it", () =>
    Effect.gen(function* () {
      const read = (entries: ReadonlyArray<readonly [string, string]>) =>
        Effect.map(AppConfig, (config) => config.tracesSampler).pipe(
          Effect.provide(AppConfig.Default),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(entries))),
          Effect.either
        )
      expect(yield* read([])).toEqual(Either.right({ name: "parentbased_always_on", ratio: 1 }))
      expect(
        yield* read([
          ["OTEL_TRACES_SAMPLER", "parentbased_traceidratio"],
          ["OTEL_TRACES_SAMPLER_ARG", "0.25"]
        ])
      ).toEqual(Either.right({ name: "parentbased_traceidratio", ratio: 0.25 }))
      expect(Either.isLeft(yield* read([["OTEL_TRACES_SAMPLER_ARG", "2"]]))).toBe(true)
      expect(Either.isLeft(yield* read([["OTEL_TRACES_SAMPLER", "sometimes"]]))).toBe(true)
    })
  )
})
