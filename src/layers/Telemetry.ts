import { NodeSdk } from "@effect/opentelemetry"
import { type HttpApp, HttpMiddleware, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
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
      spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter({ url: `${options.endpoint}/v1/traces` }), {
        scheduledDelayMillis: Duration.toMillis(options.traceExportDelay ?? "1 second")
      }),
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

/** Query parameters whose values never reach a trace: the hosted payment page's `t`, codes, tokens, secrets. */
const sensitiveParameter = /^(t|code)$|token|secret|password|signature/i

/** The URL with sensitive query values replaced by `REDACTED`; `undefined` when nothing needed hiding. */
export const redactQuery = (url: string): string | undefined => {
  const start = url.indexOf("?")
  if (start === -1) return undefined
  let redacted = false
  const query = url
    .slice(start + 1)
    .split("&")
    .map((pair) => {
      const equals = pair.indexOf("=")
      if (equals === -1 || !sensitiveParameter.test(pair.slice(0, equals))) return pair
      redacted = true
      return `${pair.slice(0, equals)}=REDACTED`
    })
    .join("&")
  return redacted ? `${url.slice(0, start)}?${query}` : undefined
}

/** Rewrites the URL attributes the platform's tracer recorded verbatim (`url.full`, `url.query`, the Referer). */
const redactUrls = (span: Tracer.Span) => {
  const full = span.attributes.get("url.full")
  const redactedFull = typeof full === "string" ? redactQuery(full) : undefined
  if (redactedFull !== undefined) {
    span.attribute("url.full", redactedFull)
    span.attribute("url.query", redactedFull.slice(redactedFull.indexOf("?") + 1))
  }
  const referer = span.attributes.get("http.request.header.referer")
  const redactedReferer = typeof referer === "string" ? redactQuery(referer) : undefined
  if (redactedReferer !== undefined) span.attribute("http.request.header.referer", redactedReferer)
}

/**
 * Finishes each request's server span, for `HttpApiBuilder.serve(...)` (it runs inside the span):
 * - a request excluded from tracing (`HttpMiddleware.withTracerDisabledWhen`) gets no spans at all, so
 *   the service and SQL spans under /ready do not turn up as stray root traces;
 * - the server span carries `http.request.id` (the `X-Request-Id` response header), so a request is
 *   found from its header;
 * - the server span is renamed `{method} {route}` (`GET /v1/orders/:id`) once the router has matched;
 * - sensitive query values (`/pay/{id}?t=…`) in `url.full`, `url.query` and the Referer header are redacted.
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
      redactUrls(span)
      return Effect.tap(app, (response) => {
        const requestId = response.headers["x-request-id"]
        if (requestId !== undefined) span.attribute("http.request.id", requestId)
        const route = span.attributes.get("http.route")
        if (typeof route === "string") otelSpanOf(span)?.updateName(`${request.method} ${route}`)
      })
    }
  )
)
