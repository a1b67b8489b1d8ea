import {
  type HttpApp,
  HttpMiddleware,
  HttpServerError,
  HttpServerRequest,
  type HttpServerResponse
} from "@effect/platform"
import { Clock, Context, Effect, type Exit, Metric, MetricBoundaries, MetricLabel, Tracer } from "effect"

/**
 * Requests served, by `http.request.method`, `http.route` and `http.response.status_code`. A request
 * that matched no route (a 404 for an unknown path) has no `http.route`, so raw paths never become labels.
 */
export const httpServerRequests = Metric.counter("http.server.requests", {
  description: "HTTP requests served",
  incremental: true
})

/**
 * Time from receiving a request to having sent its response, in seconds, with the same labels as
 * `http.server.requests`. Buckets follow the OpenTelemetry HTTP semantic conventions.
 */
export const httpServerRequestDuration = Metric.histogram(
  "http.server.request.duration",
  MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]),
  "Duration of HTTP server requests"
  // `unit` is how @effect/opentelemetry learns a metric's unit.
).pipe(Metric.tagged("unit", "s"))

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

const record = (
  request: HttpServerRequest.HttpServerRequest,
  route: string | undefined,
  exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>,
  nanos: bigint
) => {
  const labels = requestLabels(request.method, route, HttpServerError.exitResponse(exit).status)
  return Effect.zipRight(
    Metric.increment(Metric.taggedWithLabels(httpServerRequests, labels)),
    Metric.update(Metric.taggedWithLabels(httpServerRequestDuration, labels), Number(nanos) / 1e9)
  )
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
      return Effect.flatMap(Clock.currentTimeNanos, (start) =>
        Effect.onExit(app, (exit) =>
          Effect.flatMap(Clock.currentTimeNanos, (end) =>
            record(request, routeOf(request, traced, span), exit, end - start)
          )
        )
      )
    }
  )
)
