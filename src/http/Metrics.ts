import {
  type HttpApp,
  HttpMiddleware,
  HttpServerError,
  HttpServerRequest,
  type HttpServerResponse
} from "@effect/platform"
import { Clock, Context, Effect, FiberRef, Metric, MetricBoundaries, MetricLabel, Tracer } from "effect"

/**
 * Requests served, by `http.request.method`, `http.route` and `http.response.status_code`. A request
 * that matched no route (a 404 for an unknown path) has no `http.route`, so raw paths never become labels.
 */
export const httpServerRequests = Metric.counter("http.server.requests", {
  description: "HTTP requests served",
  incremental: true
})

/** The histogram itself, without the `unit` label `httpServerRequestDuration` adds; `record` updates it directly. */
const requestDurationSeconds = Metric.histogram(
  "http.server.request.duration",
  MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]),
  "Duration of HTTP server requests"
)

// `unit` is how @effect/opentelemetry learns a metric's unit.
const unitLabel = MetricLabel.make("unit", "s")

/**
 * Time from receiving a request to having sent its response, in seconds, with the same labels as
 * `http.server.requests`. Buckets follow the OpenTelemetry HTTP semantic conventions.
 */
export const httpServerRequestDuration = requestDurationSeconds.pipe(Metric.tagged(unitLabel.key, unitLabel.value))

/** The labels a request is counted under. */
export const requestLabels = (method: string, route: string | undefined, status: number) => {
  const labels = [
    MetricLabel.make("http.request.method", method),
    MetricLabel.make("http.response.status_code", String(status))
  ]
  if (route !== undefined) labels.push(MetricLabel.make("http.route", route))
  return labels
}

/**
 * One label set's labels, as the counter and the histogram are keyed by them. A metric keeps the hook it
 * updates per array of labels (by identity), so updating with the same arrays every time skips what
 * `Metric.taggedWithLabels` does for every update: a union of the labels, a new metric key, its hash and a
 * registry lookup. The label sets are bounded: methods node:http accepts, route templates (or the two
 * untraced paths), statuses.
 */
interface LabelSet {
  readonly counter: ReadonlyArray<MetricLabel.MetricLabel>
  /** `unit` first, then the request labels: the labels `httpServerRequestDuration` tagged with them carries. */
  readonly duration: ReadonlyArray<MetricLabel.MetricLabel>
}

const labelSets = new Map<string, LabelSet>()

const labelSetOf = (method: string, route: string | undefined, status: number): LabelSet => {
  const key = `${method} ${status} ${route ?? ""}`
  let set = labelSets.get(key)
  if (set === undefined) {
    const counter = requestLabels(method, route, status)
    set = { counter, duration: [unitLabel, ...counter] }
    labelSets.set(key, set)
  }
  return set
}

/**
 * The route template (`/v1/orders/:id`) the request matched. HttpRouter writes it to the request's
 * server span as `http.route`, so it is there for every traced request, with or without an exporter.
 * Requests excluded from tracing (`HttpMiddleware.withTracerDisabledWhen`: /health and /ready, exact
 * paths) have no server span and are labelled by their path.
 */
const routeOf = (
  request: HttpServerRequest.HttpServerRequest,
  traced: boolean,
  span: Tracer.AnySpan | undefined
): string | undefined => {
  if (!traced) return request.url.split("?", 1)[0]
  if (span?._tag !== "Span") return undefined
  const route = span.attributes.get("http.route")
  return typeof route === "string" ? route : undefined
}

/**
 * Counts and times one request. `fiberLabels` are the labels the fiber adds to every metric
 * (`Metric.withLabels`, none in Ribbon); with some, the general path takes them into account.
 */
const record = (
  method: string,
  route: string | undefined,
  status: number,
  seconds: number,
  fiberLabels: ReadonlyArray<MetricLabel.MetricLabel>
): Effect.Effect<void> => {
  if (fiberLabels.length > 0) {
    const labels = requestLabels(method, route, status)
    return Effect.zipRight(
      Metric.increment(Metric.taggedWithLabels(httpServerRequests, labels)),
      Metric.update(Metric.taggedWithLabels(httpServerRequestDuration, labels), seconds)
    )
  }
  return Effect.sync(() => {
    const set = labelSetOf(method, route, status)
    httpServerRequests.unsafeUpdate(1, set.counter)
    requestDurationSeconds.unsafeUpdate(seconds, set.duration)
  })
}

/**
 * Counts and times every request. It sees the response as sent (after error rendering), so give it to
 * `HttpApiBuilder.serve(...)`, which runs it inside the server span and after every HttpApi middleware.
 */
export const requestMetrics = HttpMiddleware.make(<E, R>(app: HttpApp.Default<E, R>) =>
  Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>(
    (fiber) => {
      const context = fiber.currentContext
      const request = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest)
      const traced = !fiber.getFiberRef(HttpMiddleware.currentTracerDisabledWhen)(request)
      const span = traced ? Context.getOrElse(context, Tracer.ParentSpan, () => undefined) : undefined
      const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
      const start = clock.unsafeCurrentTimeNanos()
      return Effect.onExit(app, (exit) =>
        record(
          request.method,
          routeOf(request, traced, span),
          HttpServerError.exitResponse(exit).status,
          Number(clock.unsafeCurrentTimeNanos() - start) / 1e9,
          fiber.getFiberRef(FiberRef.currentMetricLabels)
        )
      )
    }
  )
)
