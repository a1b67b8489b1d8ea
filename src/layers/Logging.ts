import { Context, Effect, FiberRef, FiberRefs, HashMap, Layer, Logger, Tracer } from "effect"
import { AppConfig } from "./Config.js"

/** The W3C trace context of a log line: the ids OpenTelemetry log correlation uses. */
export interface LogTraceContext {
  /** 32 lowercase hex digits. */
  readonly traceId: string
  /** 16 lowercase hex digits. */
  readonly spanId: string
  readonly sampled: boolean
}

const traceIdFormat = /^[0-9a-f]{32}$/
const spanIdFormat = /^[0-9a-f]{16}$/

/**
 * The span a log line was written under, from the fiber's refs a logger is given: the nearest span with
 * W3C ids. With the tracer off (no exporter), spans are placeholders without ids, and a line has none.
 */
export const traceContextOf = (refs: FiberRefs.FiberRefs): LogTraceContext | undefined => {
  let span: Tracer.AnySpan | undefined = Context.getOrElse(
    FiberRefs.getOrDefault(refs, FiberRef.currentContext),
    Tracer.ParentSpan,
    () => undefined
  )
  while (span !== undefined) {
    if (traceIdFormat.test(span.traceId) && spanIdFormat.test(span.spanId))
      return { traceId: span.traceId, spanId: span.spanId, sampled: span.sampled }
    span = span._tag === "Span" && span.parent._tag === "Some" ? span.parent.value : undefined
  }
  return undefined
}

/**
 * `logger` with the `traceId` and `spanId` of the active span among its annotations (beside `requestId`),
 * so that a log line leads to its trace in the tracing backend.
 */
export const withTraceContext = <Message, Output>(logger: Logger.Logger<Message, Output>) =>
  Logger.mapInputOptions(logger, (options: Logger.Logger.Options<Message>) => {
    const trace = traceContextOf(options.context)
    if (trace === undefined) return options
    return {
      ...options,
      annotations: options.annotations.pipe(
        HashMap.set("traceId", trace.traceId as unknown),
        HashMap.set("spanId", trace.spanId as unknown)
      )
    }
  })

/** The format of log lines: JSON lines in production, logfmt elsewhere, with trace context. */
export const lineLogger = (environment: string) =>
  withTraceContext(environment === "production" ? Logger.jsonLogger : Logger.logfmtLogger)

/** Log lines on stdout (`lineLogger`); LOG_LEVEL sets the minimum level. */
export const LoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      Logger.replace(Logger.defaultLogger, Logger.withConsoleLog(lineLogger(config.environment))),
      Logger.minimumLogLevel(config.logLevel)
    )
  )
).pipe(Layer.provide(AppConfig.Default))
