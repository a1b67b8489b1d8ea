import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Metric, Schema } from "effect"
import { Api } from "../../src/http/Api.js"
import { httpServerRequestDuration, httpServerRequests, requestLabels } from "../../src/http/Metrics.js"
import { AppConfig } from "../../src/layers/Config.js"
import { RateLimiterMemoryLive } from "../../src/layers/Redis.js"
import { HandlersLive, ServicesLive } from "../../src/layers/Server.js"
import { TelemetryLive, telemetryLayer } from "../../src/layers/Telemetry.js"
import { PublicUrl } from "../../src/services/catalog/Catalog.js"
import { RateLimits } from "../../src/services/platform/RateLimits.js"
import { Signals } from "../../src/services/platform/Signals.js"
import { TestDatabase } from "../support/database.js"
import { get, type RawResponse, serveForTest, TestSettingsLive, testPublicUrl } from "../support/http.js"
import { OtlpReceiver, type ReceivedMetricPoint, type ReceivedSpan, SpanKind } from "../support/otlp.js"

// A traced route that runs SQL through a service method, beside the real /health and /ready.
const ItemsApi = HttpApiGroup.make("items").add(
  HttpApiEndpoint.get("count", "/fixture/items/:kind")
    .setPath(Schema.Struct({ kind: Schema.String }))
    .addSuccess(Schema.Struct({ kind: Schema.String, migrations: Schema.Int }))
)

const FixtureApi = Api.add(ItemsApi)

class FixtureCatalog extends Effect.Service<FixtureCatalog>()("test/FixtureCatalog", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const count = Effect.fn("FixtureCatalog.count")(function* (kind: string) {
      const rows = yield* sql<{ migrations: number }>`
        SELECT count(*)::int AS migrations FROM effect_sql_migrations`.pipe(Effect.orDie)
      return { kind, migrations: rows[0]?.migrations ?? 0 }
    })
    return { count } as const
  })
}) {}

const ItemsLive = HttpApiBuilder.group(FixtureApi, "items", (handlers) =>
  Effect.map(FixtureCatalog, (catalog) => handlers.handle("count", ({ path }) => catalog.count(path.kind)))
)

const FixtureLive = HttpApiBuilder.api(FixtureApi).pipe(Layer.provide([HandlersLive, ItemsLive]))

const itemsRoute = "/fixture/items/:kind"

/** A stand-in for the hosted payment page's single-purpose token, which must never reach a trace. */
const paymentToken = "pay-token-4f9a1c"

/** The in-process request counter for one label set. */
const requestsCounted = (method: string, route: string | undefined, status: number) =>
  Effect.map(
    Metric.value(Metric.taggedWithLabels(httpServerRequests, requestLabels(method, route, status))),
    (state) => state.count
  )

const requestsTimed = (method: string, route: string | undefined, status: number) =>
  Metric.value(Metric.taggedWithLabels(httpServerRequestDuration, requestLabels(method, route, status)))

/** What one run of the server exported, and what the client saw. */
class Observed extends Context.Tag("test/Observed")<
  Observed,
  {
    readonly spans: ReadonlyArray<ReceivedSpan>
    readonly metrics: ReadonlyArray<ReceivedMetricPoint>
    readonly problems: ReadonlyArray<string>
    readonly responses: Readonly<Record<"health" | "ready" | "items" | "secret" | "missing", RawResponse>>
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
    const telemetry = telemetryLayer({
      endpoint: receiver.endpoint,
      environment: "test",
      traceExportDelay: "50 millis",
      metricExportInterval: "1 hour"
    })
    const server = serveForTest(FixtureLive).pipe(
      Layer.provide(FixtureCatalog.Default),
      Layer.provide([ServicesLive, RateLimits.Default.pipe(Layer.provideMerge(RateLimiterMemoryLive))]),
      Layer.provide([Layer.succeed(PublicUrl, testPublicUrl), Signals.layerInProcess, TestSettingsLive]),
      Layer.provide(telemetry),
      Layer.provide(TestDatabase)
    )
    const counters = Effect.all({
      health: requestsCounted("GET", "/health", 200),
      ready: requestsCounted("GET", "/ready", 200),
      items: requestsCounted("GET", itemsRoute, 200),
      missing: requestsCounted("GET", undefined, 404)
    })
    const before = yield* counters
    const responses = yield* Effect.all({
      health: get("/health"),
      ready: get("/ready"),
      items: get("/fixture/items/gifts"),
      secret: get(`/fixture/items/cards?t=${paymentToken}&page=2`, {
        referer: `http://shop.test/pay/1?t=${paymentToken}`
      }),
      missing: get("/no/such/route")
    }).pipe(Effect.provide(server))
    const after = yield* counters
    return {
      spans: receiver.spans(),
      metrics: receiver.metrics(),
      problems: receiver.problems(),
      responses,
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
