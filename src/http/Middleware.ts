import { HttpApi, HttpApiBuilder, type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Clock, Context, Effect, Fiber, FiberRef, HashMap, Option, Tracer } from "effect"
import { globalValue } from "effect/GlobalValue"
import {
  type AnyDomainError,
  FieldIssue,
  InternalError,
  InvalidRequest,
  isDomainError,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable
} from "../domain/platform/Errors.js"
import { formatPath } from "../domain/platform/IssueMessages.js"
import { databaseOutageOf, outageRetryAfterSeconds } from "../services/platform/Readiness.js"
import { corsHeadersFor, OriginPolicy, preflightFor } from "./BrowserOrigins.js"
import { dashboardErrorPage, isDashboardPath } from "./dashboard/pages.js"
import { lineOf, render } from "./ErrorLines.js"
import { screenRequest } from "./RequestScreen.js"
import { type RouteTable, routeTableOf } from "./Routes.js"

/** The id of the request being served, for logs, spans and error bodies. */
export const currentRequestId = globalValue("ribbon/currentRequestId", () => FiberRef.unsafeMake(""))

const clientRequestId = /^[A-Za-z0-9._:-]{1,128}$/

interface DecodeIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** What a failed request means in domain terms; `undefined` for a defect. */
const classify = (
  failure: unknown,
  request: HttpServerRequest.HttpServerRequest,
  routes: RouteTable,
  maxBodyBytes: number
) => {
  if (isDomainError(failure)) return failure
  const tagged = failure as { readonly _tag?: string; readonly reason?: string; readonly cause?: unknown }
  switch (tagged._tag) {
    case "HttpApiDecodeError": {
      const issues = (failure as { readonly issues: ReadonlyArray<DecodeIssue> }).issues
      const errors = issues.map((issue) => new FieldIssue({ path: formatPath(issue.path), message: issue.message }))
      const first = errors[0]
      return new InvalidRequest({
        message: first === undefined ? "The request is invalid." : `${first.path || "request"}: ${first.message}`,
        errors
      })
    }
    case "RouteNotFound": {
      const allowedMethods = routes.methodsOf(request.url)
      return allowedMethods.length > 0
        ? new MethodNotAllowed({ message: `This path does not take ${request.method}.`, allowedMethods })
        : new NotFound({ message: `No route matches ${request.method} on this path.` })
    }
    // A multipart body (a file upload) that could not be read: too large, or not multipart at all.
    case "MultipartError": {
      const reason = (failure as { readonly reason?: string }).reason
      if (reason === "BodyTooLarge" || reason === "FileTooLarge" || reason === "FieldTooLarge") {
        return tooLarge(limitOf(routes, request, maxBodyBytes))
      }
      return new InvalidRequest({
        message: "The request body could not be read as multipart/form-data.",
        errors: [new FieldIssue({ path: "", message: String(reason ?? "unreadable") })]
      })
    }
    case "RequestError": {
      if (tagged.reason !== "Decode") return undefined
      if (tagged.cause instanceof Error && tagged.cause.message === "maxBytes exceeded") {
        return tooLarge(maxBodyBytes)
      }
      return new InvalidRequest({
        message: "The request body could not be parsed.",
        errors: [new FieldIssue({ path: "", message: String((tagged.cause as Error)?.message ?? tagged.cause) })]
      })
    }
  }
  return undefined
}

/**
 * Builds the errors this middleware renders without capturing a stack trace. They are expected outcomes,
 * rendered and never logged (a defect's own cause is logged, not the InternalError standing for it), and
 * capturing a stack at the depth of a request's fiber costs about 20 µs, the largest single cost of a 404
 * (docs/performance.md). Synchronous, so nothing else runs while the limit is lowered.
 */
const withoutStack = <A>(make: () => A): A => {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return make()
  } finally {
    Error.stackTraceLimit = limit
  }
}

/**
 * The body limit of a file upload's operation (its multipart schema's own `maxTotalSize`, which its parser
 * enforces while reading), or 0: a file may be larger than the server's limit for JSON and form bodies.
 */
const uploadLimitOf = (routes: RouteTable, request: HttpServerRequest.HttpServerRequest) =>
  routes.find(request.method, request.url)?.bodyLimitBytes ?? 0

/** The body limit that applies to the request: its operation's own for a file upload, the server's otherwise. */
const limitOf = (routes: RouteTable, request: HttpServerRequest.HttpServerRequest, maxBodyBytes: number) =>
  Math.max(maxBodyBytes, uploadLimitOf(routes, request))

const tooLarge = (maxBodyBytes: number) =>
  new PayloadTooLarge({ message: `The request body exceeds ${maxBodyBytes} bytes.`, limitBytes: maxBodyBytes })

const respond = (path: string, error: AnyDomainError) => {
  const rendered = render(lineOf(path), error)
  // The dashboard is read by people in a browser: its failures are pages, with the same status and headers.
  if (isDashboardPath(path)) {
    return HttpServerResponse.setHeaders(dashboardErrorPage(rendered.status, error.message), rendered.headers)
  }
  return HttpServerResponse.unsafeJson(rendered.body, {
    status: rendered.status,
    contentType: rendered.contentType,
    headers: rendered.headers
  })
}

/** The kind of database outage a failed request met, if it met one (`databaseOutageOf`). */
const outageIn = (cause: Cause.Cause<unknown>): string | undefined => {
  for (const error of [...Cause.failures(cause), ...Cause.defects(cause)]) {
    const outage = databaseOutageOf(error)
    if (outage !== undefined) return outage
  }
  return undefined
}

/** When each kind of outage was last logged: an outage is logged once a minute per kind, not per request. */
const outageLoggedAt = globalValue("ribbon/outageLoggedAt", () => new Map<string, number>())
const outageLogInterval = 60_000

const logOutage = (kind: string, cause: Cause.Cause<unknown>) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const last = outageLoggedAt.get(kind)
    if (last !== undefined && now - last < outageLogInterval) return Effect.void
    outageLoggedAt.set(kind, now)
    return Effect.logError(`Database unavailable (${kind}): answering 503 for a minute without logging each`, cause)
  })

/**
 * The headers every response gets: its request id, `nosniff`, and `no-store` unless the route chose its own
 * caching (every API response is specific to its caller, and some carry payment links or keys). `/docs`
 * also gets a Content-Security-Policy (the reference page runs its own inline script and styles, and that
 * script compiles WebAssembly: without `'wasm-unsafe-eval'` the page stays blank) and may not be framed. A
 * CORS path gets its CORS headers (`corsHeadersFor`), its `Vary: Origin` beside any other.
 */
const withResponseHeaders = (
  response: HttpServerResponse.HttpServerResponse,
  requestId: string,
  path: string,
  cors: Record<string, string> | undefined
) => {
  const headers: Record<string, string> = { "x-request-id": requestId, "x-content-type-options": "nosniff" }
  if (response.headers["cache-control"] === undefined) headers["cache-control"] = "no-store"
  if (path === "/docs" || path.startsWith("/docs?")) Object.assign(headers, docsHeaders)
  if (cors !== undefined) {
    Object.assign(headers, cors)
    const vary = response.headers.vary
    if (vary !== undefined) headers.vary = `${vary}, ${cors.vary}`
  }
  return HttpServerResponse.setHeaders(response, headers)
}

const docsHeaders = {
  "content-security-policy":
    "default-src 'self'; script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-frame-options": "DENY"
}

/**
 * Tags the rest of this request's fiber with its id: `currentRequestId`, the `requestId` log annotation,
 * and `http.request.id` on every span started under the server span (the SQL spans too).
 *
 * The platform runs each request in a fiber of its own, so the refs are set once and never restored.
 * `Effect.locally`, `annotateLogs` and `annotateSpans` would each run an acquire/release that copies the
 * fiber's refs twice: about 1 µs here against about 30 µs for those wrappers (docs/performance.md). The
 * platform's own logs after this middleware carry the id as well. Span annotations are only set when the
 * request has a server span, that is with telemetry on (`serveApi`'s `telemetry`).
 */
const tagRequest = (requestId: string, traced: boolean): Effect.Effect<void> => {
  const tagged = Effect.zipRight(
    FiberRef.set(currentRequestId, requestId),
    FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set("requestId", requestId as unknown))
  )
  return traced
    ? Effect.zipRight(
        tagged,
        FiberRef.update(FiberRef.currentTracerSpanAnnotations, HashMap.set("http.request.id", requestId as unknown))
      )
    : tagged
}

/** Methods that change nothing: their requests may end with their client. */
const readMethods = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * Runs a write to its end even if its client goes away. The platform interrupts a request's fiber when its
 * connection closes before the response is sent, which would abandon a write halfway (its transaction
 * rolled back, or a statement cancelled) that the client may well replay by its idempotency key. So a write
 * runs in a fiber of its own that the request only waits for: the wait can be interrupted, the write not.
 * Timeouts inside it still work, as they would not in an uninterruptible region. Reads stay interruptible,
 * so an event stream ends with its client.
 */
const toItsEnd = <A, E, R>(write: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.forkDaemon(write), Fiber.join)

/**
 * The HttpApi-level middleware every request goes through: a request id (echoed when the client sent a
 * valid one), the body size limit, CORS where it is served (preflights answered here, the headers added to
 * every response, errors too), and every failure rendered in its API line's format. Defects become a 500
 * carrying the request id, with the cause logged and never sent. A write runs to its end even if its client
 * goes away (`toItsEnd`).
 *
 * The limit while reading a body is `HttpIncomingMessage.MaxBodySize`, which `serveApi` provides once for
 * the whole server; here a declared `content-length` over it is refused before anything is read. CORS
 * follows the `OriginPolicy`, which the Ribbon API always has (`/mcp` needs it); an API served without one
 * (a test's fixture) sends no CORS headers.
 */
export const ribbonMiddleware = (options: { readonly maxBodyBytes: number }) =>
  HttpApiBuilder.middleware(
    Effect.map(Effect.all([HttpApi.Api, Effect.serviceOption(OriginPolicy)]), ([{ api }, origins]) => {
      const routes = routeTableOf(api)
      const policy = Option.getOrUndefined(origins)
      return (app: HttpApp.Default) =>
        Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>(
          (fiber) => {
            const context = fiber.currentContext
            const request = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest)
            const sent = request.headers["x-request-id"]
            const requestId = sent !== undefined && clientRequestId.test(sent) ? sent : crypto.randomUUID()
            const path = request.url
            const declared = Number(request.headers["content-length"] ?? 0)
            const cors = policy === undefined ? undefined : corsHeadersFor(policy, request)
            const preflight = policy === undefined ? undefined : preflightFor(policy, request)
            // The app's error channel is typed `never`, but failures of every kind reach this point at run time.
            const guarded: Effect.Effect<
              HttpServerResponse.HttpServerResponse,
              unknown,
              HttpServerRequest.HttpServerRequest
            > =
              declared > options.maxBodyBytes && declared > uploadLimitOf(routes, request)
                ? Effect.fail(withoutStack(() => tooLarge(limitOf(routes, request, options.maxBodyBytes))))
                : (preflight ??
                  Effect.flatMap(screenRequest(request, routes), (screened) =>
                    screened === request
                      ? app
                      : Effect.provideService(app, HttpServerRequest.HttpServerRequest, screened)
                  ))
            const span = Context.getOrElse(context, Tracer.ParentSpan, () => undefined)
            const traced = span?._tag === "Span" && fiber.getFiberRef(FiberRef.currentTracerEnabled)
            const served = tagRequest(requestId, traced).pipe(
              Effect.zipRight(guarded),
              Effect.catchAllCause((cause) => {
                // HttpApi turns an unreadable body (bad JSON, over the limit) into a defect, so look at defects too.
                const failure = Option.orElse(Cause.failureOption(cause), () => Cause.dieOption(cause))
                const error = Option.isSome(failure)
                  ? withoutStack(() => classify(failure.value, request, routes, options.maxBodyBytes))
                  : undefined
                if (error !== undefined) return Effect.succeed(respond(path, error))
                // Interrupted by something it waited on, not by its client (that stops this fiber before here,
                // and never a write's): the server's services stopping, say. The request may be sent again.
                if (Cause.isInterruptedOnly(cause)) {
                  const unavailable = withoutStack(
                    () =>
                      new ServiceUnavailable({
                        message: "The request was interrupted before it completed; retry it.",
                        retryAfterSeconds: 1
                      })
                  )
                  return Effect.succeed(respond(path, unavailable))
                }
                const outage = outageIn(cause)
                if (outage !== undefined) {
                  const unavailable = withoutStack(
                    () =>
                      new ServiceUnavailable({
                        message: "The database is temporarily unavailable; retry later.",
                        retryAfterSeconds: outageRetryAfterSeconds
                      })
                  )
                  return logOutage(outage, cause).pipe(Effect.as(respond(path, unavailable)))
                }
                const internal = withoutStack(
                  () => new InternalError({ message: "An internal error occurred.", requestId })
                )
                return Effect.logError("Request failed", cause).pipe(Effect.as(respond(path, internal)))
              }),
              Effect.map((response) => withResponseHeaders(response, requestId, path, cors))
            )
            return readMethods.has(request.method) ? served : toItsEnd(served)
          }
        )
    })
  )
