import { NodeSdk } from "@effect/opentelemetry"
import { type HttpApp, HttpMiddleware, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { type Attributes, SpanKind } from "@opentelemetry/api"
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base"
import { Context, Duration, Effect, Layer, Option, Tracer } from "effect"
import packageJson from "../../package.json" with { type: "json" }
import { AppConfig } from "./Config.js"

export interface TelemetryOptions {
  /** The OTLP/HTTP base URL (OTEL_EXPORTER_OTLP_ENDPOINT); traces go to `/v1/traces`, metrics to `/v1/metrics`. */
  readonly endpoint: string
  /** `deployment.environment.name` on every span and metric. */
  readonly environment: string
  /** How long a finished span may wait in the batch before it is sent. */
  readonly traceExportDelay?: Duration.DurationInput
  /** How often metrics are sent. */
  readonly metricExportInterval?: Duration.DurationInput
}

/**
 * The OpenTelemetry SDK exporting traces and metrics over OTLP/HTTP (JSON). Effect spans (`Effect.fn`,
 * `Effect.withSpan`, the HTTP server span, `sql.execute`) become OpenTelemetry spans, and every Effect
 * `Metric` is read by the metric reader. On shutdown, buffered spans and a last metric reading are flushed.
 * The exporters also honour the standard OTEL_EXPORTER_OTLP_HEADERS / _TIMEOUT / _COMPRESSION variables.
 */
export const telemetryLayer = (options: TelemetryOptions) =>
  NodeSdk.layer(() => {
    const metricInterval = Duration.toMillis(options.metricExportInterval ?? "10 seconds")
    return {
      resource: {
        serviceName: "ribbon",
        serviceVersion: packageJson.version,
        attributes: { "deployment.environment.name": options.environment }
      },
      spanProcessor: new BatchSpanProcessor(
        redactingExporter(new OTLPTraceExporter({ url: `${options.endpoint}/v1/traces` })),
        {
          scheduledDelayMillis: Duration.toMillis(options.traceExportDelay ?? "1 second")
        }
      ),
      metricReader: new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${options.endpoint}/v1/metrics` }),
        exportIntervalMillis: metricInterval,
        exportTimeoutMillis: Math.min(metricInterval, 5_000)
      })
    }
  })

/**
 * Telemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set; nothing otherwise, so an unconfigured server keeps
 * Effect's built-in in-memory tracer and exports nothing.
 */
export const TelemetryLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.otlpEndpoint, {
      onNone: () => Layer.empty,
      onSome: (endpoint) => telemetryLayer({ endpoint, environment: config.environment })
    })
  )
)

/**
 * The OpenTelemetry span behind an Effect span, when the NodeSdk tracer made it. Its class is internal to
 * @effect/opentelemetry, hence the structural check.
 */
const otelSpanOf = (span: Tracer.Span): { readonly updateName: (name: string) => unknown } | undefined => {
  const inner: unknown = (span as { readonly span?: unknown }).span
  return typeof inner === "object" && inner !== null && "updateName" in inner && typeof inner.updateName === "function"
    ? (inner as { readonly updateName: (name: string) => unknown })
    : undefined
}

/**
 * Query parameters whose values never reach a trace: the hosted payment page's `t`, OAuth's `code` and
 * `state`, and any name that reads like a credential.
 */
const sensitiveParameter = /^(t|code|state)$|token|secret|pass|key|auth|sig|session|credential/i

/** A `name=value` pair of a URL's query, wherever a URL appears in a text: after its `?` or an `&`. */
const queryPair = /([?&])([^=&#?\s"'<>]+)=([^&#\s"'<>]*)/g

const decodedName = (name: string) => {
  try {
    return decodeURIComponent(name.replaceAll("+", " "))
  } catch {
    return name
  }
}

/**
 * `text` with the values of the query parameters of any URL in it replaced by `REDACTED`: the sensitive
 * ones (`sensitiveParameter`), or with `all` every one.
 */
const redactQueries = (text: string, all = false): string =>
  text.includes("=")
    ? text.replace(queryPair, (pair, separator: string, name: string, value: string) =>
        value !== "" && (all || sensitiveParameter.test(decodedName(name))) ? `${separator}${name}=REDACTED` : pair
      )
    : text

const redactAttributes = (attributes: Attributes, all: boolean): Attributes => {
  const redacted: Attributes = {}
  for (const [key, value] of Object.entries(attributes)) {
    redacted[key] =
      typeof value !== "string"
        ? value
        : // The one URL attribute without its `?`.
          key === "url.query"
          ? redactQueries(`?${value}`, all).slice(1)
          : redactQueries(value, all)
  }
  return redacted
}

/**
 * The span as it may leave the process: query values redacted from every text it carries (attributes,
 * event attributes such as an exception's message, the status message). That covers the URL attributes
 * the platform records verbatim (`url.full`, `url.query`, the Referer, a `Location` with an authorization
 * code) and any URL quoted in an error. A client span's URL is one somebody else chose (an agent's
 * callback URL), whose parameters' names say nothing, so every value of its queries goes.
 */
const redactSpan = (span: ReadableSpan): ReadableSpan => {
  const all = span.kind === SpanKind.CLIENT
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    ...(span.parentSpanContext === undefined ? {} : { parentSpanContext: span.parentSpanContext }),
    startTime: span.startTime,
    endTime: span.endTime,
    status:
      span.status.message === undefined
        ? span.status
        : { ...span.status, message: redactQueries(span.status.message, all) },
    attributes: redactAttributes(span.attributes, all),
    links: span.links,
    events: span.events.map((event) =>
      event.attributes === undefined ? event : { ...event, attributes: redactAttributes(event.attributes, all) }
    ),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount
  }
}

/** Every span goes through `redactSpan` on its way out: the one place secrets are kept out of traces. */
const redactingExporter = (exporter: SpanExporter): SpanExporter => ({
  export: (spans, done) => exporter.export(spans.map(redactSpan), done),
  shutdown: () => exporter.shutdown(),
  forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve()
})

/**
 * Finishes each request's server span, for `HttpApiBuilder.serve(...)` (it runs inside the span):
 * - a request excluded from tracing (`HttpMiddleware.withTracerDisabledWhen`) gets no spans at all, so
 *   the service and SQL spans under /ready do not turn up as stray root traces;
 * - the server span carries `http.request.id` (the `X-Request-Id` response header), so a request is
 *   found from its header;
 * - the server span is renamed `{method} {route}` (`GET /v1/orders/:id`) once the router has matched.
 * Its secrets (`/pay/{id}?t=…`, a redirect's authorization code) are redacted on export (`redactSpan`).
 */
export const traceRequests = HttpMiddleware.make(<E, R>(app: HttpApp.Default<E, R>) =>
  Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>(
    (fiber) => {
      const context = fiber.currentContext
      const request = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest)
      if (fiber.getFiberRef(HttpMiddleware.currentTracerDisabledWhen)(request)) {
        return Effect.withTracerEnabled(app, false)
      }
      const span = Context.getOrElse(context, Tracer.ParentSpan, () => undefined)
      if (span?._tag !== "Span" || span.kind !== "server") return app
      return Effect.tap(app, (response) => {
        const requestId = response.headers["x-request-id"]
        if (requestId !== undefined) span.attribute("http.request.id", requestId)
        const route = span.attributes.get("http.route")
        if (typeof route === "string") otelSpanOf(span)?.updateName(`${request.method} ${route}`)
      })
    }
  )
)
