import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { gunzipSync } from "node:zlib"
import { Effect } from "effect"

/**
 * A small in-process OTLP/HTTP receiver: what an OpenTelemetry collector is to the service, minus the
 * pipeline. It accepts the JSON encoding that `@opentelemetry/exporter-*-otlp-http` sends to `/v1/traces`
 * `/v1/metrics` and `/v1/logs`, and keeps every span, metric data point and log record it is given.
 */
export interface OtlpReceiver {
  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT, e.g. `http://127.0.0.1:41234`. */
  readonly endpoint: string
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  readonly metrics: () => ReadonlyArray<ReceivedMetricPoint>
  readonly logs: () => ReadonlyArray<ReceivedLogRecord>
  /** Requests the receiver could not accept (wrong path, not JSON), so a test can show why nothing arrived. */
  readonly problems: () => ReadonlyArray<string>
}

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  /** `undefined` for a root span. */
  readonly parentSpanId: string | undefined
  readonly name: string
  /** OTLP `SpanKind`: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number
  readonly attributes: Readonly<Record<string, unknown>>
  /** The span's events (an exception is one), with their attributes. */
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: Readonly<Record<string, unknown>> }>
  /** The status message, when there is one (a failed span's error). */
  readonly statusMessage: string | undefined
  readonly resource: Readonly<Record<string, unknown>>
  readonly scope: string
}

export const SpanKind = { internal: 1, server: 2, client: 3 } as const

export interface ReceivedMetricPoint {
  readonly name: string
  readonly unit: string
  readonly type: "sum" | "gauge" | "histogram"
  readonly attributes: Readonly<Record<string, unknown>>
  readonly resource: Readonly<Record<string, unknown>>
  /** The value of a sum or gauge point. */
  readonly value: number | undefined
  /** The number of observations in a histogram point. */
  readonly count: number | undefined
  /** The total of the observations in a histogram point. */
  readonly sum: number | undefined
}

export interface ReceivedLogRecord {
  /** The trace and span the record was written under; `undefined` outside any span. */
  readonly traceId: string | undefined
  readonly spanId: string | undefined
  readonly severityNumber: number | undefined
  readonly severityText: string | undefined
  readonly body: unknown
  readonly attributes: Readonly<Record<string, unknown>>
  readonly resource: Readonly<Record<string, unknown>>
}

// The OTLP JSON encoding (opentelemetry-proto, JSON mapping), only as far as the receiver reads it.
interface AnyValue {
  readonly stringValue?: string
  readonly boolValue?: boolean
  readonly intValue?: number | string
  readonly doubleValue?: number
  readonly arrayValue?: { readonly values?: ReadonlyArray<AnyValue> }
}
interface KeyValue {
  readonly key: string
  readonly value: AnyValue
}
interface Resource {
  readonly attributes?: ReadonlyArray<KeyValue>
}
interface Scope {
  readonly name?: string
}
interface ExportTraceServiceRequest {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: Resource
    readonly scopeSpans?: ReadonlyArray<{
      readonly scope?: Scope
      readonly spans?: ReadonlyArray<{
        readonly traceId: string
        readonly spanId: string
        readonly parentSpanId?: string
        readonly name: string
        readonly kind: number
        readonly attributes?: ReadonlyArray<KeyValue>
        readonly events?: ReadonlyArray<{ readonly name: string; readonly attributes?: ReadonlyArray<KeyValue> }>
        readonly status?: { readonly message?: string }
      }>
    }>
  }>
}
interface NumberDataPoint {
  readonly attributes?: ReadonlyArray<KeyValue>
  readonly asDouble?: number
  readonly asInt?: number | string
}
interface HistogramDataPoint {
  readonly attributes?: ReadonlyArray<KeyValue>
  readonly count: number | string
  readonly sum?: number
}
interface ExportMetricsServiceRequest {
  readonly resourceMetrics?: ReadonlyArray<{
    readonly resource?: Resource
    readonly scopeMetrics?: ReadonlyArray<{
      readonly metrics?: ReadonlyArray<{
        readonly name: string
        readonly unit?: string
        readonly sum?: { readonly dataPoints?: ReadonlyArray<NumberDataPoint> }
        readonly gauge?: { readonly dataPoints?: ReadonlyArray<NumberDataPoint> }
        readonly histogram?: { readonly dataPoints?: ReadonlyArray<HistogramDataPoint> }
      }>
    }>
  }>
}

interface ExportLogsServiceRequest {
  readonly resourceLogs?: ReadonlyArray<{
    readonly resource?: Resource
    readonly scopeLogs?: ReadonlyArray<{
      readonly logRecords?: ReadonlyArray<{
        readonly traceId?: string
        readonly spanId?: string
        readonly severityNumber?: number
        readonly severityText?: string
        readonly body?: AnyValue
        readonly attributes?: ReadonlyArray<KeyValue>
      }>
    }>
  }>
}

const decodeValue = (value: AnyValue): unknown => {
  if (value.stringValue !== undefined) return value.stringValue
  if (value.boolValue !== undefined) return value.boolValue
  if (value.intValue !== undefined) return Number(value.intValue)
  if (value.doubleValue !== undefined) return value.doubleValue
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(decodeValue)
  return undefined
}

const attributesOf = (attributes: ReadonlyArray<KeyValue> | undefined): Record<string, unknown> =>
  Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, decodeValue(value)]))

const spansOf = (request: ExportTraceServiceRequest): Array<ReceivedSpan> =>
  (request.resourceSpans ?? []).flatMap(({ resource, scopeSpans }) =>
    (scopeSpans ?? []).flatMap(({ scope, spans }) =>
      (spans ?? []).map(
        (span): ReceivedSpan => ({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId === undefined || span.parentSpanId === "" ? undefined : span.parentSpanId,
          name: span.name,
          kind: span.kind,
          attributes: attributesOf(span.attributes),
          events: (span.events ?? []).map((event) => ({
            name: event.name,
            attributes: attributesOf(event.attributes)
          })),
          statusMessage: span.status?.message === "" ? undefined : span.status?.message,
          resource: attributesOf(resource?.attributes),
          scope: scope?.name ?? ""
        })
      )
    )
  )

const numberOf = (point: NumberDataPoint) =>
  point.asDouble ?? (point.asInt === undefined ? undefined : Number(point.asInt))

const metricPointsOf = (request: ExportMetricsServiceRequest): Array<ReceivedMetricPoint> =>
  (request.resourceMetrics ?? []).flatMap(({ resource, scopeMetrics }) =>
    (scopeMetrics ?? []).flatMap(({ metrics }) =>
      (metrics ?? []).flatMap((metric) => {
        const common = { name: metric.name, unit: metric.unit ?? "", resource: attributesOf(resource?.attributes) }
        const numbers = (type: "sum" | "gauge", points: ReadonlyArray<NumberDataPoint> | undefined) =>
          (points ?? []).map(
            (point): ReceivedMetricPoint => ({
              ...common,
              type,
              attributes: attributesOf(point.attributes),
              value: numberOf(point),
              count: undefined,
              sum: undefined
            })
          )
        return [
          ...numbers("sum", metric.sum?.dataPoints),
          ...numbers("gauge", metric.gauge?.dataPoints),
          ...(metric.histogram?.dataPoints ?? []).map(
            (point): ReceivedMetricPoint => ({
              ...common,
              type: "histogram",
              attributes: attributesOf(point.attributes),
              value: undefined,
              count: Number(point.count),
              sum: point.sum
            })
          )
        ]
      })
    )
  )

const logRecordsOf = (request: ExportLogsServiceRequest): Array<ReceivedLogRecord> =>
  (request.resourceLogs ?? []).flatMap(({ resource, scopeLogs }) =>
    (scopeLogs ?? []).flatMap(({ logRecords }) =>
      (logRecords ?? []).map(
        (record): ReceivedLogRecord => ({
          traceId: record.traceId === undefined || record.traceId === "" ? undefined : record.traceId,
          spanId: record.spanId === undefined || record.spanId === "" ? undefined : record.spanId,
          severityNumber: record.severityNumber,
          severityText: record.severityText,
          body: record.body === undefined ? undefined : decodeValue(record.body),
          attributes: attributesOf(record.attributes),
          resource: attributesOf(resource?.attributes)
        })
      )
    )
  )

const readBody = (request: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks)
      resolve(request.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body)
    })
    request.on("error", reject)
  })

/** Starts the receiver on a free loopback port for the life of the scope. */
export const OtlpReceiver = Effect.gen(function* () {
  const spans: Array<ReceivedSpan> = []
  const metrics: Array<ReceivedMetricPoint> = []
  const logs: Array<ReceivedLogRecord> = []
  const problems: Array<string> = []

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const accept = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" })
      response.end(JSON.stringify(body))
    }
    const contentType = request.headers["content-type"] ?? ""
    if (request.method !== "POST" || !contentType.startsWith("application/json")) {
      problems.push(`${request.method} ${request.url} (${contentType || "no content type"})`)
      return accept(415, { message: "expected OTLP/HTTP JSON" })
    }
    try {
      const body = JSON.parse((await readBody(request)).toString("utf8"))
      switch (request.url) {
        case "/v1/traces":
          spans.push(...spansOf(body))
          return accept(200, {})
        case "/v1/metrics":
          metrics.push(...metricPointsOf(body))
          return accept(200, {})
        case "/v1/logs":
          logs.push(...logRecordsOf(body))
          return accept(200, {})
        default:
          problems.push(`POST ${request.url}`)
          return accept(404, { message: "unknown signal" })
      }
    } catch (error) {
      problems.push(`${request.url}: ${String(error)}`)
      return accept(400, { message: String(error) })
    }
  }

  const server = yield* Effect.acquireRelease(
    Effect.async<ReturnType<typeof createServer>>((resume) => {
      const server = createServer((request, response) => void handle(request, response))
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0

  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    metrics: () => [...metrics],
    logs: () => [...logs],
    problems: () => [...problems]
  } satisfies OtlpReceiver
})
