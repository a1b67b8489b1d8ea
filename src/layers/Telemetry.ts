import { NodeSdk, Logger as OtelLogger, Tracer as OtelTracer } from "@effect/opentelemetry"
import { type HttpApp, HttpMiddleware, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { type Attributes, ROOT_CONTEXT, SpanKind, TraceFlags, trace } from "@opentelemetry/api"
import type { AnyValueMap } from "@opentelemetry/api-logs"
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-http"
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchLogRecordProcessor, type LogRecordProcessor } from "@opentelemetry/sdk-logs"
import { PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler
} from "@opentelemetry/sdk-trace-base"
import { Cause, Context, Duration, Effect, FiberRef, Layer, Logger, type LogLevel, Option, Tracer } from "effect"
import packageJson from "../../package.json" with { type: "json" }
import { AppConfig, type TracesSampler } from "./Config.js"
import { traceContextOf } from "./Logging.js"

export interface TelemetryOptions {
  /**
   * The OTLP/HTTP base URL (OTEL_EXPORTER_OTLP_ENDPOINT); traces go to `/v1/traces`, metrics to
   * `/v1/metrics`, logs to `/v1/logs`.
   */
  readonly endpoint: string
  /** `deployment.environment.name` on every span, metric and log record. */
  readonly environment: string
  /** Which traces are recorded and exported (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG); all by default. */
  readonly sampler?: TracesSampler
  /** How long a finished span or a log record may wait in its batch before it is sent. */
  readonly exportDelay?: Duration.DurationInput
  /** How often metrics are sent. */
  readonly metricExportInterval?: Duration.DurationInput
}

/**
 * The OpenTelemetry sampler for the standard OTEL_TRACES_SAMPLER values. The parent-based ones follow
 * the caller's `traceparent` decision and use the named sampler only to start a trace.
 */
const samplerOf = ({ name, ratio }: TracesSampler): Sampler => {
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler()
    case "always_off":
      return new AlwaysOffSampler()
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio)
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) })
  }
}

/**
 * The caller's span from a `traceparent` header, with its sampled flag where the OpenTelemetry tracer
 * reads it. The platform parses the header into an Effect external span whose `sampled` says whether the
 * caller kept the trace, but @effect/opentelemetry reads the flag from the span's context only, and
 * otherwise takes the parent as sampled: a parent-based sampler would record every trace a caller had
 * dropped.
 */
const withSampledFlag = (parent: Option.Option<Tracer.AnySpan>): Option.Option<Tracer.AnySpan> => {
  if (parent._tag === "None") return parent
  const span = parent.value
  if (
    span._tag !== "ExternalSpan" ||
    span.sampled ||
    Context.getOption(span.context, OtelTracer.OtelTraceFlags)._tag === "Some"
  )
    return parent
  return Option.some(OtelTracer.makeExternalSpan({ traceId: span.traceId, spanId: span.spanId, traceFlags: 0 }))
}

/**
 * Effect spans as OpenTelemetry spans, like `@effect/opentelemetry`'s tracer layer, without its
 * `context` hook. That hook runs around every step of a fiber that has a span (each operation of its
 * run loop): it builds an OpenTelemetry context holding the span and enters it, so that libraries
 * instrumented with OpenTelemetry itself see the Effect span as the active one. Ribbon has none, and
 * registers no OpenTelemetry context manager, so each of those contexts was built to be dropped: about
 * 20 µs of CPU per traced request, one seventh of a traced 404 (docs/performance.md). With an
 * OpenTelemetry-instrumented library added, put the hook back (and register a context manager).
 */
const tracerLayer = (spanProcessor: BatchSpanProcessor, sampler: Sampler) =>
  Layer.unwrapEffect(
    Effect.map(OtelTracer.make, (otel) =>
      Layer.setTracer(
        Tracer.make({
          span: (name, parent, context, links, startTime, kind, options) =>
            otel.span(name, withSampledFlag(parent), context, links, startTime, kind, options),
          context: (execution) => execution()
        })
      )
    )
  ).pipe(
    Layer.provideMerge(OtelTracer.layerTracer),
    Layer.provide(NodeSdk.layerTracerProvider(spanProcessor, { sampler }))
  )

/** OpenTelemetry severity numbers (1–24) for Effect's log levels. */
const severityNumber = (level: LogLevel.LogLevel): number => {
  switch (level._tag) {
    case "Fatal":
      return 21
    case "Error":
      return 17
    case "Warning":
      return 13
    case "Info":
      return 9
    case "Debug":
      return 5
    default:
      return 1
  }
}

/**
 * A log message part or annotation as an attribute value. A URL in a log line may be anybody's (an agent's
 * callback URL quoted in a refusal), so every value of its query is redacted, as in a client span, and so
 * are secret path segments.
 */
const logValue = (value: unknown): string | number | boolean =>
  typeof value === "number" || typeof value === "boolean"
    ? value
    : redactSecrets(
        typeof value === "string"
          ? value
          : typeof value === "bigint"
            ? value.toString()
            : (JSON.stringify(value) ?? String(value)),
        true
      )

/**
 * Every Effect log line (LOG_LEVEL and above, as on stdout) also as an OpenTelemetry log record: the
 * message as its body, the annotations (`requestId`) as attributes, a failure's cause as the `exception.*`
 * attributes (URL secrets redacted), and, under a span, the record's own trace and span ids, which
 * tracing backends use to go from a log record to its trace. (`@effect/opentelemetry`'s logger puts the
 * ids among the attributes only, and Effect's level ordinals where OpenTelemetry expects its severity
 * numbers.)
 */
const otlpLogger = Effect.map(OtelLogger.OtelLoggerProvider, (provider) => {
  const otel = provider.getLogger("ribbon", packageJson.version)
  return Logger.make<unknown, void>((options) => {
    const attributes: AnyValueMap = {}
    for (const [key, value] of options.annotations) attributes[key] = logValue(value)
    if (!Cause.isEmpty(options.cause)) {
      const error = Cause.prettyErrors(options.cause)[0]
      if (error !== undefined) {
        attributes["exception.type"] = error.name
        attributes["exception.message"] = redactSecrets(error.message, true)
      }
      attributes["exception.stacktrace"] = redactSecrets(Cause.pretty(options.cause, { renderErrorCause: true }), true)
    }
    const message = Array.isArray(options.message) ? options.message : [options.message]
    const span = traceContextOf(options.context)
    otel.emit({
      body: message.length === 1 ? logValue(message[0]) : message.map(logValue).join(" "),
      severityNumber: severityNumber(options.logLevel),
      severityText: options.logLevel.label,
      timestamp: options.date,
      attributes,
      context:
        span === undefined
          ? ROOT_CONTEXT
          : trace.setSpanContext(ROOT_CONTEXT, {
              traceId: span.traceId,
              spanId: span.spanId,
              traceFlags: span.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
              isRemote: false
            })
    })
  })
})

/** The OTLP log pipeline: a logger added beside the one writing lines, and its provider, flushed on shutdown. */
const loggerLayer = (processor: LogRecordProcessor) =>
  Logger.addEffect(otlpLogger).pipe(Layer.provide(OtelLogger.layerLoggerProvider(processor)))

/**
 * The OpenTelemetry SDK exporting traces, metrics and logs over OTLP/HTTP (JSON). Effect spans
 * (`Effect.fn`, `Effect.withSpan`, the HTTP server span, `sql.execute`) become OpenTelemetry spans, every
 * Effect `Metric` is read by the metric reader, and every log line is also sent as a log record carrying
 * the trace and span it was written under. On shutdown, buffered spans and log records and a last metric
 * reading are flushed. The exporters also honour the standard OTEL_EXPORTER_OTLP_HEADERS / _TIMEOUT /
 * _COMPRESSION variables.
 */
export const telemetryLayer = (options: TelemetryOptions) => {
  const metricInterval = Duration.toMillis(options.metricExportInterval ?? "10 seconds")
  const scheduledDelayMillis = Duration.toMillis(options.exportDelay ?? "1 second")
  const spanProcessor = new BatchSpanProcessor(
    redactingExporter(new OTLPTraceExporter({ url: `${options.endpoint}/v1/traces` })),
    { scheduledDelayMillis }
  )
  const logProcessor = new BatchLogRecordProcessor(new OTLPLogExporter({ url: `${options.endpoint}/v1/logs` }), {
    scheduledDelayMillis
  })
  const sampler = samplerOf(options.sampler ?? { name: "parentbased_always_on", ratio: 1 })
  return Layer.merge(tracerLayer(spanProcessor, sampler), loggerLayer(logProcessor)).pipe(
    Layer.provideMerge(
      NodeSdk.layer(() => ({
        resource: {
          serviceName: "ribbon",
          serviceVersion: packageJson.version,
          attributes: { "deployment.environment.name": options.environment }
        },
        metricReader: new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({ url: `${options.endpoint}/v1/metrics` }),
          exportIntervalMillis: metricInterval,
          exportTimeoutMillis: Math.min(metricInterval, 5_000)
        })
      }))
    )
  )
}

/**
 * Telemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set; nothing otherwise, so an unconfigured server keeps
 * Effect's built-in in-memory tracer and exports nothing.
 */
export const TelemetryLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.otlpEndpoint, {
      onNone: () => Layer.empty,
      onSome: (endpoint) => telemetryLayer({ endpoint, environment: config.environment, sampler: config.tracesSampler })
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
 * A path segment that is a credential by itself, wherever a path appears in a text: the gift page's token
 * (`/g/{token}/…`, the whole of the link a recipient gets). A path starts at the beginning of the text,
 * after a URL's host (`//host`), or after a space, quote, bracket or `=`; so `/v1/g/x` is left alone, and
 * so is a route template's `:token`.
 * (The payment page's `/pay/{checkoutId}` names the checkout only: its key is the `t` of its query.)
 */
const secretPathSegment = /(?<=(?:^|[\s"'(<=]|\/\/[^/\s"'<>]*)\/g\/)[^/?#\s"'<>:{][^/?#\s"'<>]*/g

/**
 * `text` with the secrets of any URL or path in it replaced by `REDACTED`: secret path segments
 * (`secretPathSegment`), and the values of the query parameters that are sensitive (`sensitiveParameter`),
 * or with `all` of every one.
 */
const redactSecrets = (text: string, all = false): string => {
  const paths = text.includes("/g/") ? text.replace(secretPathSegment, "REDACTED") : text
  return paths.includes("=")
    ? paths.replace(queryPair, (pair, separator: string, name: string, value: string) =>
        value !== "" && (all || sensitiveParameter.test(decodedName(name))) ? `${separator}${name}=REDACTED` : pair
      )
    : paths
}

const redactAttributes = (attributes: Attributes, all: boolean): Attributes => {
  const redacted: Attributes = {}
  for (const [key, value] of Object.entries(attributes)) {
    redacted[key] =
      typeof value !== "string"
        ? value
        : // The one URL attribute without its `?` (`url.path` starts with its `/`, as a path does).
          key === "url.query"
          ? redactSecrets(`?${value}`, all).slice(1)
          : redactSecrets(value, all)
  }
  return redacted
}

/**
 * The span as it may leave the process: URL secrets (`redactSecrets`) redacted from every text it carries
 * (attributes, event attributes such as an exception's message, the status message). That covers the URL
 * attributes the platform records verbatim (`url.full`, `url.path`, `url.query`, the Referer, a `Location`
 * with an authorization code or a gift link) and any URL quoted in an error. A client span's URL is one somebody else chose (an agent's
 * callback URL), whose parameters' names say nothing, so every value of its queries goes; so do those of
 * any URL in an event's name, which is a log line's message (`logValue`).
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
        : { ...span.status, message: redactSecrets(span.status.message, all) },
    attributes: redactAttributes(span.attributes, all),
    links: span.links,
    events: span.events.map((event) => ({
      ...event,
      // Effect records each log line written under a span as an event named by its message.
      name: redactSecrets(event.name, true),
      ...(event.attributes === undefined ? {} : { attributes: redactAttributes(event.attributes, all) })
    })),
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
 * Its secrets (`/pay/{id}?t=…`, `/g/{token}`, a redirect's authorization code) are redacted on export (`redactSpan`).
 */
export const traceRequests = HttpMiddleware.make(<E, R>(app: HttpApp.Default<E, R>) =>
  Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>(
    (fiber) => {
      const context = fiber.currentContext
      const request = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest)
      if (fiber.getFiberRef(HttpMiddleware.currentTracerDisabledWhen)(request)) {
        // The request has a fiber of its own: the tracer is turned off for the rest of it, without the
        // save and restore of `Effect.withTracerEnabled`.
        return Effect.zipRight(FiberRef.set(FiberRef.currentTracerEnabled, false), app)
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
