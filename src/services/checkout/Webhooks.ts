import { createHmac, createPrivateKey, sign } from "node:crypto"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Data, Duration, Effect, Either, Exit, type Layer, Metric, Option, Schedule, Schema } from "effect"
import { Id, makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import {
  JobAbandoned,
  type JobHandler,
  type JobInfo,
  JobKind,
  JobRetryAfter,
  Jobs,
  retryDelay,
  type WorkerOptions
} from "../platform/Jobs.js"
import { OutboundHttp, type OutboundResponse } from "../platform/OutboundHttp.js"
import { rowsOf } from "../platform/Rows.js"
import { SigningKeys } from "../platform/SigningKeys.js"
import { compileV3Query, type V3Columns, v3Page } from "../platform/V3QuerySql.js"

/**
 * Agent callbacks (docs/decisions/0030-callbacks-and-delivery.md, docs/webhooks.md): JSON events POSTed to a
 * `callbackUrl`, signed with Standard Webhooks `v1a` (Ed25519) by the key pair of `SigningKeys` (public JWKS at
 * /.well-known/jwks.json).
 *
 * - `enqueue` writes a `webhook_deliveries` row (the outbox) and a `webhook.deliver` job on the ambient
 *   SqlClient, so both commit or roll back with the caller's transaction.
 * - The job sends one attempt and logs it in `webhook_attempts`. A 2xx delivers. Anything else is retried
 *   on `webhookRetry` (immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, each jittered by 0.8–1.2, so
 *   7 attempts) and is `failed` once they run out. A `Retry-After` (seconds or HTTP date, at most 24 h)
 *   postpones the next attempt, never brings it forward. 410 Gone disables the delivery, every other
 *   pending delivery to the same URL and every later one. A URL the SSRF guard refuses fails at once.
 * - A delivery to a company webhook endpoint (`endpoint`, docs/decisions/0050-company-webhooks.md) goes through the
 *   same outbox, schedule and log, but is signed `v1` (HMAC-SHA256 with the endpoint's `whsec_` secret, which its row
 *   carries), and a 410 disables that endpoint's deliveries rather than the URL's.
 * - Each attempt is recorded before it is sent (`webhook_attempts`, its outcome still empty) and its outcome
 *   once it has one, even when the job is stopped meanwhile. A run of the job that finds an attempt without
 *   an outcome sends nothing: that attempt is still in flight (its job lost its lease while the request ran,
 *   and another worker claimed it), so it retries once that attempt's outcome is known. Only an attempt
 *   left without an outcome for `attemptOutcomeLimit` (its worker stopped) is taken as lost and sent again.
 * - Delivery is at least once: a receiver de-duplicates by `webhook-id` (the event id).
 * - Logs are proportionate to what the operator can do: a receiver's failure is its owner's to fix, and
 *   every attempt is in `webhook_attempts`. A failed attempt that will be retried is one warning (the job
 *   runner's "job failed; retrying"), and a delivery that runs out of attempts one error ("job dead").
 *   A refused URL is one warning and a 410 one info line: they end the delivery but not as a failure of
 *   the job, which has done its work (the delivery records the outcome), so the job succeeds.
 */

export const WebhookStatus = Schema.Literal("pending", "delivered", "failed", "disabled")
export type WebhookStatus = typeof WebhookStatus.Type

/** Rows of the inline statements below, decoded (decoders built once). */
const idRows = rowsOf(Schema.Struct({ id: Id }))
const attemptRows = rowsOf(Schema.Struct({ attempt: Schema.Number }))
const begunRows = rowsOf(
  Schema.Struct({
    attempt: Schema.NullOr(Schema.Int),
    status: Schema.NullOr(WebhookStatus),
    openSince: Schema.NullOr(Schema.DateFromSelf)
  })
)
const secretRows = rowsOf(Schema.Struct({ signingSecret: Schema.NullOr(Schema.String) }))
const endpointIdRows = rowsOf(Schema.Struct({ endpointId: Schema.String }))

/** A row of `webhook_deliveries`, as read back. */
export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  id: Id,
  url: Schema.String,
  /** The company webhook endpoint it goes to (signed `v1`); null for an agent callback (signed `v1a`). */
  endpointId: Schema.NullOr(Schema.String),
  eventId: Schema.String,
  eventType: Schema.String,
  payload: Schema.parseJson(),
  status: WebhookStatus,
  attempts: Schema.Int,
  /** While pending: when the next attempt is due (the queue's jittered time once an attempt failed). */
  nextAttemptAt: Schema.NullOr(Schema.DateTimeUtcFromDate),
  lastStatusCode: Schema.NullOr(Schema.Int),
  lastError: Schema.NullOr(Schema.String),
  createdAt: Schema.DateTimeUtcFromDate,
  updatedAt: Schema.DateTimeUtcFromDate,
  deliveredAt: Schema.NullOr(Schema.DateTimeUtcFromDate)
}) {}

/** A row of `webhook_attempts`: one attempt to deliver. */
export class WebhookAttempt extends Schema.Class<WebhookAttempt>("WebhookAttempt")({
  deliveryId: Id,
  /** 1 for the first attempt. */
  attempt: Schema.Int,
  startedAt: Schema.DateTimeUtcFromDate,
  durationMs: Schema.Int,
  /** The response's status, or null when no response came (refused, DNS, connection, TLS, time limit). */
  statusCode: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  /** At most 1 KB of the response body. */
  responseBody: Schema.NullOr(Schema.String)
}) {}

/** The delays between attempts, before jitter: 7 attempts in all, over about 18 hours. */
export const webhookRetryDelays: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(5),
  Duration.minutes(5),
  Duration.minutes(30),
  Duration.hours(2),
  Duration.hours(5),
  Duration.hours(10)
]

/** The retry schedule of `webhook.deliver`: `webhookRetryDelays`, each jittered by 0.8–1.2. */
export const webhookRetry: Schedule.Schedule<unknown> = Schedule.fromDelays(
  webhookRetryDelays[0],
  ...webhookRetryDelays.slice(1)
).pipe(Schedule.jittered)

export const webhookMaxAttempts = webhookRetryDelays.length + 1

/**
 * An attempt with no outcome recorded for this long is taken as lost with its worker (a crash), and the
 * delivery is sent again. Above the job's own time limit, so a run still going has recorded its outcome.
 */
export const attemptOutcomeLimit = Duration.minutes(2)

/** A `Retry-After` longer than this is cut to it. */
export const maxRetryAfter = Duration.hours(24)

export const userAgent = "Ribbon-Webhooks/1"

/** Delivery attempts, by `outcome`: delivered, failed (retried or not), gone (410), refused (SSRF guard). */
export const webhookAttempts = Metric.counter("ribbon_webhook_attempts_total", {
  description: "Callback delivery attempts, by outcome",
  incremental: true
})

/** The job that sends one delivery (key: the delivery id). */
export const DeliverWebhook = JobKind.make("webhook.deliver", Schema.Struct({ deliveryId: Id }), {
  maxAttempts: webhookMaxAttempts,
  retry: webhookRetry,
  // A safety net above the outbound request's own 10 s limit.
  timeout: "1 minute"
})

/** An attempt that did not deliver and will be retried (or, when it was the last, leaves the delivery failed). */
export class WebhookAttemptFailed extends Data.TaggedError("WebhookAttemptFailed")<{
  readonly deliveryId: Id
  readonly attempt: number
  readonly message: string
}> {}

/**
 * The delay a `Retry-After` header asks for: whole seconds, or an HTTP date (relative to `nowMillis`; a
 * date in the past is no delay). None when absent or unreadable.
 */
export const parseRetryAfter = (
  value: string | ReadonlyArray<string> | undefined,
  nowMillis: number
): Option.Option<Duration.Duration> => {
  const text = (typeof value === "string" ? value : value?.[0])?.trim()
  if (text === undefined || text === "") return Option.none()
  if (/^\d+$/.test(text)) return Option.some(Duration.seconds(Number(text)))
  // Every HTTP-date form starts with the day's name ("Wed, 21 Oct 2015 07:28:00 GMT").
  if (!/^[A-Za-z]{3}/.test(text)) return Option.none()
  const at = Date.parse(text)
  return Number.isNaN(at) ? Option.none() : Option.some(Duration.millis(Math.max(0, at - nowMillis)))
}

/** The base string signed by `v1a`: `${webhook-id}.${webhook-timestamp}.${body}`. */
export const signatureBase = (id: string, timestamp: string, body: string) => `${id}.${timestamp}.${body}`

/** The `webhook-signature` header value for a body, signed with an Ed25519 private key (PKCS#8 PEM). */
export const signV1a = (privatePkcs8: string, id: string, timestamp: string, body: string) =>
  `v1a,${sign(null, Buffer.from(signatureBase(id, timestamp, body)), createPrivateKey(privatePkcs8)).toString("base64")}`

/** The `webhook-signature` header value for a body, signed `v1`: HMAC-SHA256 keyed by a `whsec_<base64>` secret. */
export const signV1 = (secret: string, id: string, timestamp: string, body: string) =>
  `v1,${createHmac("sha256", Buffer.from(secret.replace(/^whsec_/, ""), "base64"))
    .update(signatureBase(id, timestamp, body))
    .digest("base64")}`

const maxErrorLength = 2000
const clip = (text: string) => (text.length > maxErrorLength ? `${text.slice(0, maxErrorLength - 1)}…` : text)

type Outcome =
  | { readonly _tag: "Delivered"; readonly response: OutboundResponse }
  | { readonly _tag: "Gone"; readonly response: OutboundResponse }
  | { readonly _tag: "Refused"; readonly reason: string }
  | {
      readonly _tag: "Failed"
      readonly response: Option.Option<OutboundResponse>
      readonly error: string
      readonly retryAfter: Option.Option<Duration.Duration>
    }

const realClock = Clock.make()

/** What a 410 Gone switches off: the company endpoint a delivery goes to, or else (agent callbacks) its URL. */
const receiverOf = (delivery: { readonly endpointId: string | null }) =>
  delivery.endpointId === null ? "URL" : "endpoint"

/** The columns of a delivery. */
const deliveryColumns = (sql: SqlClient.SqlClient) => sql`
  d.id, d.url, d.endpoint_id, d.event_id, d.event_type, d.payload::text AS payload, d.status, d.attempts, d.next_attempt_at,
  d.last_status_code, d.last_error, d.created_at, d.updated_at, d.delivered_at
  FROM webhook_deliveries d`

export class Webhooks extends Effect.Service<Webhooks>()("Webhooks", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const jobs = yield* Jobs
    const keys = yield* SigningKeys
    const http = yield* OutboundHttp
    // One key look-up at a time: the first one creates the key pair in a transaction, which concurrent
    // handlers must not race on embedded PGlite (one session shared by every connection).
    const keyLock = yield* Effect.makeSemaphore(1)
    const currentKey = keyLock.withPermits(1)(keys.current())

    /** The deliveries to the same receiver: of the same company endpoint, or agent callbacks to the same URL. */
    const sameReceiver = (receiver: { readonly url: string; readonly endpointId: string | null }) =>
      receiver.endpointId === null
        ? sql`url = ${receiver.url} AND endpoint_id IS NULL`
        : sql`endpoint_id = ${receiver.endpointId}`

    const findDelivery = SqlSchema.findOne({
      Request: Id,
      Result: WebhookDelivery,
      execute: (id) => sql`SELECT ${deliveryColumns(sql)} WHERE d.id = ${id}`
    })

    const findByEvent = SqlSchema.findAll({
      Request: Schema.String,
      Result: WebhookDelivery,
      execute: (eventId) =>
        sql`SELECT ${deliveryColumns(sql)} WHERE d.event_id = ${eventId} ORDER BY d.created_at, d.id`
    })

    const findByUrl = SqlSchema.findAll({
      Request: Schema.String,
      Result: WebhookDelivery,
      execute: (url) => sql`SELECT ${deliveryColumns(sql)} WHERE d.url = ${url} ORDER BY d.created_at, d.id`
    })

    const findAttempts = SqlSchema.findAll({
      Request: Id,
      Result: WebhookAttempt,
      execute: (deliveryId) => sql`
        SELECT delivery_id, attempt, started_at, duration_ms, status_code, error, response_body
        FROM webhook_attempts WHERE delivery_id = ${deliveryId} ORDER BY attempt`
    })

    /**
     * Records an event to send to `url`; joins the caller's transaction. Returns the delivery's id (the
     * existing one when this event was already enqueued for this URL). A URL that answered 410 Gone gets
     * the delivery recorded as `disabled`, and nothing is sent. With `endpoint` (a company webhook
     * endpoint) the delivery is signed `v1` with its secret, and the endpoint, not the URL, is what a 410
     * disables.
     */
    const enqueue = Effect.fn("Webhooks.enqueue")(function* (input: {
      readonly url: string
      readonly eventId: string
      readonly eventType: string
      readonly payload: unknown
      readonly endpoint?: { readonly id: string; readonly secret: string } | undefined
    }) {
      const json = JSON.stringify(input.payload)
      if (json === undefined) return yield* Effect.dieMessage("Webhooks.enqueue: the payload is not JSON")
      const receiver = { url: input.url, endpointId: input.endpoint?.id ?? null }
      const id = yield* makeId
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* Effect.annotateCurrentSpan({ "webhook.delivery_id": id, "webhook.event_type": input.eventType })
      const inserted = yield* sql<{ id: Id; status: WebhookStatus }>`
        INSERT INTO webhook_deliveries (id, url, endpoint_id, signing_secret, event_id, event_type, payload, status,
          attempts, next_attempt_at, last_error, created_at, updated_at)
        SELECT ${id}, ${input.url}, ${input.endpoint?.id ?? null}, ${input.endpoint?.secret ?? null}, ${input.eventId},
          ${input.eventType}, ${json}::jsonb, gate.status, 0,
          CASE WHEN gate.status = 'pending' THEN ${now}::timestamptz END,
          CASE WHEN gate.status = 'disabled'
            THEN ${`not sent: this ${receiverOf(receiver)} answered 410 Gone to an earlier delivery`} END,
          ${now}, ${now}
        FROM (SELECT CASE WHEN EXISTS (
          SELECT 1 FROM webhook_deliveries WHERE ${sameReceiver(receiver)} AND status = 'disabled'
        ) THEN 'disabled' ELSE 'pending' END AS status) gate
        ON CONFLICT (url, event_id) DO NOTHING
        RETURNING id, status`.pipe(Effect.orDie)
      const row = inserted[0]
      if (row === undefined) {
        const [existing] = yield* idRows(sql`
          SELECT id FROM webhook_deliveries WHERE url = ${input.url} AND event_id = ${input.eventId}`).pipe(
          Effect.orDie
        )
        return existing.id
      }
      if (row.status === "pending") {
        yield* jobs.enqueue(DeliverWebhook, { deliveryId: id }, { key: id })
      } else {
        yield* Effect.logInfo(`webhook not sent: its ${receiverOf(receiver)} is disabled (410 Gone)`).pipe(
          Effect.annotateLogs({ webhookDeliveryId: id })
        )
      }
      return id
    })

    /**
     * How a delivery is signed: `v1` with its company endpoint's secret, else `v1a` with the Ed25519 key.
     * None when its endpoint was deleted meanwhile (the secret is gone with it).
     */
    const signerOf = (delivery: WebhookDelivery) =>
      delivery.endpointId === null
        ? Effect.map(currentKey, ({ privatePkcs8 }) =>
            Option.some((id: string, timestamp: string, body: string) => signV1a(privatePkcs8, id, timestamp, body))
          )
        : Effect.map(secretRows(sql`SELECT signing_secret FROM webhook_deliveries WHERE id = ${delivery.id}`), (rows) =>
            Option.map(
              Option.fromNullable(rows[0]?.signingSecret),
              (secret) => (id: string, timestamp: string, body: string) => signV1(secret, id, timestamp, body)
            )
          ).pipe(Effect.orDie)

    /** Sends the delivery's body to its URL once, signed by `sign`; what the job does. */
    const attempt = (delivery: WebhookDelivery, sign: (id: string, timestamp: string, body: string) => string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const timestamp = Math.floor(now / 1000).toString()
        // The stored JSON, compact; the signature covers exactly these bytes.
        const body = JSON.stringify(delivery.payload)
        const started = yield* realClock.currentTimeMillis
        const result = yield* Effect.either(
          http.post(delivery.url, {
            body,
            headers: {
              "content-type": "application/json",
              "user-agent": userAgent,
              "webhook-id": delivery.eventId,
              "webhook-timestamp": timestamp,
              "webhook-signature": sign(delivery.eventId, timestamp, body)
            }
          })
        )
        const durationMs = Math.max(0, Math.round((yield* realClock.currentTimeMillis) - started))
        const outcome: Outcome = Either.match(result, {
          onLeft: (error): Outcome =>
            error._tag === "OutboundRefused"
              ? { _tag: "Refused", reason: error.reason }
              : { _tag: "Failed", response: Option.none(), error: error.message, retryAfter: Option.none() },
          onRight: (response): Outcome => {
            if (response.status >= 200 && response.status < 300) return { _tag: "Delivered", response }
            if (response.status === 410) return { _tag: "Gone", response }
            const location = response.headers.location
            const error =
              response.status >= 300 && response.status < 400
                ? `HTTP ${response.status}: redirects are not followed${location === undefined ? "" : ` (Location: ${location})`}`
                : `HTTP ${response.status}`
            return {
              _tag: "Failed",
              response: Option.some(response),
              error,
              retryAfter: Option.map(parseRetryAfter(response.headers["retry-after"], now), (delay) =>
                Duration.min(delay, maxRetryAfter)
              )
            }
          }
        })
        return { outcome, durationMs }
      })

    /**
     * Starts attempt n of a pending delivery: the delivery's `attempts` counted and the attempt logged with
     * no outcome yet, in one statement, unless an attempt of it is still in flight (no outcome, begun less
     * than `attemptOutcomeLimit` ago; an older one is closed as lost). The attempt's number, or none when the
     * delivery is no longer pending; `JobRetryAfter` when another attempt is in flight, or when the delivery
     * changed since it was read.
     */
    const begin = (delivery: WebhookDelivery) =>
      Effect.gen(function* () {
        const now = new Date(yield* Clock.currentTimeMillis)
        const staleBefore = new Date(now.getTime() - Duration.toMillis(attemptOutcomeLimit))
        const [row] = yield* begunRows(sql`
          WITH open AS (
            SELECT started_at FROM webhook_attempts
            WHERE delivery_id = ${delivery.id} AND status_code IS NULL AND error IS NULL
          ),
          begun AS (
            UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = NULL, updated_at = ${now}
            WHERE id = ${delivery.id} AND status = 'pending' AND attempts = ${delivery.attempts}
              AND NOT EXISTS (SELECT 1 FROM open WHERE started_at > ${staleBefore})
            RETURNING attempts
          ),
          lost AS (
            UPDATE webhook_attempts SET error = 'no outcome recorded: its worker stopped during the attempt'
            WHERE delivery_id = ${delivery.id} AND status_code IS NULL AND error IS NULL
              AND EXISTS (SELECT 1 FROM begun)
            RETURNING attempt
          ),
          logged AS (
            INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms)
            SELECT ${delivery.id}, attempts, ${now}, 0 FROM begun
            RETURNING attempt
          )
          SELECT (SELECT attempt FROM logged) AS attempt,
            (SELECT status FROM webhook_deliveries WHERE id = ${delivery.id}) AS status,
            (SELECT max(started_at) FROM open) AS open_since`).pipe(Effect.orDie)
        if (row?.attempt != null) return Option.some(row.attempt)
        // Settled meanwhile (by the attempt in flight, a 410, a deletion): nothing to send.
        if (row?.status !== "pending") return Option.none<number>()
        const since = row.openSince
        const wait =
          since === null ? Duration.zero : Duration.millis(Math.max(0, since.getTime() - staleBefore.getTime()))
        return yield* new JobRetryAfter({
          delay: wait,
          message:
            since === null
              ? `webhook delivery ${delivery.id} changed while it was read; looked at again`
              : `webhook delivery ${delivery.id}: attempt ${delivery.attempts + 1} is still in flight; not sent again`
        })
      })

    /** Records attempt `number`'s outcome on the attempt and its delivery, in one statement. */
    const record = (
      delivery: WebhookDelivery,
      job: Pick<JobInfo, "attempt" | "maxAttempts">,
      number: number,
      { outcome, durationMs }: { readonly outcome: Outcome; readonly durationMs: number }
    ) =>
      Effect.gen(function* () {
        const deliveryId = delivery.id
        const now = new Date(yield* Clock.currentTimeMillis)
        const response =
          outcome._tag === "Refused"
            ? Option.none()
            : outcome._tag === "Failed"
              ? outcome.response
              : Option.some(outcome.response)
        const statusCode = Option.getOrNull(Option.map(response, (r) => r.status))
        const error =
          outcome._tag === "Delivered"
            ? null
            : outcome._tag === "Gone"
              ? `HTTP 410 Gone: this ${receiverOf(delivery)} is disabled`
              : outcome._tag === "Refused"
                ? `refused: ${outcome.reason}`
                : outcome.error
        // Retried unless this was the last attempt the job's schedule allows.
        const last =
          outcome._tag === "Failed" &&
          (job.attempt >= job.maxAttempts || Option.isNone(yield* retryDelay(DeliverWebhook.retry, job.attempt)))
        const nextAttemptAt =
          outcome._tag === "Failed" && !last
            ? new Date(
                now.getTime() +
                  Duration.toMillis(
                    Option.match(outcome.retryAfter, {
                      onNone: () => webhookRetryDelays[job.attempt - 1] ?? Duration.zero,
                      onSome: (after) => Duration.max(after, webhookRetryDelays[job.attempt - 1] ?? Duration.zero)
                    })
                  )
              )
            : null
        const status: WebhookStatus =
          outcome._tag === "Delivered"
            ? "delivered"
            : outcome._tag === "Gone"
              ? "disabled"
              : outcome._tag === "Refused" || last
                ? "failed"
                : "pending"

        // One statement, so atomic without a transaction: embedded PGlite serves concurrent connections on
        // one session, where a transaction held by one handler would mix up the others' statements.
        // A delivery disabled meanwhile (410 to another one) stays disabled, unless this attempt got through.
        const applies = status === "delivered" ? sql`true` : sql`webhook_deliveries.status = 'pending'`
        const [recorded] = yield* attemptRows(sql`
        WITH counted AS (
          UPDATE webhook_deliveries SET
            last_status_code = ${statusCode},
            last_error = ${error === null ? null : clip(error)},
            updated_at = ${now},
            status = CASE WHEN ${applies} THEN ${status} ELSE webhook_deliveries.status END,
            next_attempt_at = CASE WHEN ${applies} THEN ${nextAttemptAt}::timestamptz END,
            delivered_at = CASE WHEN ${applies} THEN ${status === "delivered" ? now : null}::timestamptz
              ELSE webhook_deliveries.delivered_at END
          WHERE id = ${deliveryId}
          RETURNING attempts
        ),
        logged AS (
          UPDATE webhook_attempts SET duration_ms = ${durationMs},
            status_code = ${statusCode}::integer, error = ${error === null ? null : clip(error)},
            response_body = ${Option.getOrNull(Option.map(response, (r) => r.body))}
          WHERE delivery_id = ${deliveryId} AND attempt = ${number} AND EXISTS (SELECT 1 FROM counted)
          RETURNING attempt
        ),
        others AS (
          UPDATE webhook_deliveries SET status = 'disabled', next_attempt_at = NULL, updated_at = ${now},
            last_error = ${`not sent: this ${receiverOf(delivery)} answered 410 Gone to delivery ${deliveryId}`}
          WHERE ${outcome._tag === "Gone"} AND ${sameReceiver(delivery)} AND status = 'pending' AND id <> ${deliveryId}
          RETURNING id
        )
        SELECT attempt FROM logged`).pipe(Effect.orDie)
        if (recorded === undefined) {
          return yield* Effect.dieMessage(`webhook attempt ${number} of ${deliveryId} vanished`)
        }
        return { outcome, status, statusCode, number, last }
      })

    /**
     * Runs the job's attempt `job.attempt` at a delivery: unless it is no longer pending or another attempt
     * is in flight (`begin`), logs a new attempt, sends it, and records its outcome on the attempt and the
     * delivery. Fails (for the job to retry) when it is to be retried.
     */
    const deliver = Effect.fn("Webhooks.deliver")(function* (
      deliveryId: Id,
      job: Pick<JobInfo, "attempt" | "maxAttempts">
    ) {
      yield* Effect.annotateCurrentSpan({ "webhook.delivery_id": deliveryId, "webhook.attempt": job.attempt })
      const found = yield* Effect.orDie(findDelivery(deliveryId))
      if (Option.isNone(found)) return yield* new JobAbandoned({ message: `no webhook delivery ${deliveryId}` })
      const delivery = found.value
      if (delivery.status !== "pending") {
        return yield* Effect.logInfo(`webhook delivery is ${delivery.status}; nothing to send`)
      }
      const signer = yield* signerOf(delivery)
      if (Option.isNone(signer)) return yield* Effect.logInfo("webhook endpoint deleted; nothing to send")
      // Begun, sent and recorded as one piece: a run stopped meanwhile (its lease lost, the time limit, a
      // shutdown) stops the request alone, and the attempt is recorded either way.
      const sent = yield* Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const begun = yield* begin(delivery)
          if (Option.isNone(begun)) return Option.none()
          const number = begun.value
          const exit = yield* Effect.exit(restore(attempt(delivery, signer.value)))
          const stopped: Outcome = {
            _tag: "Failed",
            response: Option.none(),
            error: "stopped before a response came (the job was stopped)",
            retryAfter: Option.none()
          }
          const result = Exit.isSuccess(exit) ? exit.value : { outcome: stopped, durationMs: 0 }
          const recorded = yield* record(delivery, job, number, result)
          if (Exit.isFailure(exit)) return yield* Effect.failCause(exit.cause)
          return Option.some(recorded)
        })
      )
      if (Option.isNone(sent)) return yield* Effect.logInfo("webhook delivery settled meanwhile; nothing to send")
      const { outcome, status, statusCode, number, last } = sent.value

      yield* Effect.annotateCurrentSpan({ "webhook.status": status, "http.response.status_code": statusCode ?? 0 })
      yield* Metric.increment(Metric.tagged(webhookAttempts, "outcome", outcome._tag.toLowerCase()))
      switch (outcome._tag) {
        case "Delivered":
          return yield* Effect.logDebug("webhook delivered")
        case "Gone":
          return yield* Effect.logInfo(
            `webhook delivery ${deliveryId}: HTTP 410 Gone; the URL's deliveries are disabled`
          )
        case "Refused":
          return yield* Effect.logWarning(`webhook delivery ${deliveryId} refused: ${outcome.reason}`)
        case "Failed": {
          const message = `webhook delivery ${deliveryId}, attempt ${number}: ${outcome.error}`
          if (Option.isSome(outcome.retryAfter) && !last) {
            return yield* new JobRetryAfter({ delay: outcome.retryAfter.value, message })
          }
          return yield* new WebhookAttemptFailed({ deliveryId, attempt: number, message })
        }
      }
    })

    /**
     * Pending deliveries with the exact time of their next attempt: the queue's jittered `run_at` (the Jobs
     * service's) once an attempt failed.
     */
    const withNextAttempts = Effect.fn("Webhooks.withNextAttempts")(function* (
      deliveries: ReadonlyArray<WebhookDelivery>
    ) {
      const pending = deliveries.filter((delivery) => delivery.status === "pending").map((delivery) => delivery.id)
      const nextRuns = yield* jobs.nextRunsOf(DeliverWebhook, pending)
      return deliveries.map((delivery) => {
        const runAt = nextRuns.get(delivery.id)
        return runAt === undefined ? delivery : new WebhookDelivery({ ...delivery, nextAttemptAt: runAt })
      })
    })

    /** One delivery, or none. */
    const get = Effect.fn("Webhooks.get")(function* (deliveryId: Id) {
      const found = yield* Effect.orDie(findDelivery(deliveryId))
      if (Option.isNone(found)) return found
      const [delivery] = yield* withNextAttempts([found.value])
      return Option.some(delivery!)
    })

    /** The attempts log of a delivery, oldest first. */
    const attempts = Effect.fn("Webhooks.attempts")(function* (deliveryId: Id) {
      return yield* Effect.orDie(findAttempts(deliveryId))
    })

    /** The deliveries of one event (to every URL), or to one URL (of every event), oldest first. */
    const deliveriesFor = Effect.fn("Webhooks.deliveriesFor")(function* (
      by: { readonly eventId: string } | { readonly url: string }
    ) {
      return yield* withNextAttempts(yield* Effect.orDie("eventId" in by ? findByEvent(by.eventId) : findByUrl(by.url)))
    })

    const deliveryRows = rowsOf(WebhookDelivery)
    const endpointColumns: V3Columns<WebhookDelivery> = {
      paging: "number",
      filters: {},
      sort: {},
      defaultOrder: [{ column: "created_at", descending: true }],
      id: "id"
    }

    /** A company endpoint's deliveries, newest first, paged in SQL. */
    const endpointDeliveries = Effect.fn("Webhooks.endpointDeliveries")(function* (endpointId: string, query: V3Query) {
      const { where, orderBy, limit } = compileV3Query(sql, query, endpointColumns)
      const rows = yield* deliveryRows(
        sql`SELECT ${deliveryColumns(sql)} WHERE d.endpoint_id = ${endpointId} AND ${where} ORDER BY ${orderBy} LIMIT ${limit}`
      ).pipe(Effect.orDie)
      const page = v3Page(rows, query, endpointColumns)
      return { ...page, rows: yield* withNextAttempts(page.rows) }
    })

    /** Which of these company endpoints a 410 Gone has disabled. */
    const disabledEndpoints = Effect.fn("Webhooks.disabledEndpoints")(function* (endpointIds: ReadonlyArray<string>) {
      if (endpointIds.length === 0) return new Set<string>()
      const rows = yield* endpointIdRows(sql`SELECT DISTINCT endpoint_id FROM webhook_deliveries
        WHERE endpoint_id IN ${sql.in(endpointIds)} AND status = 'disabled'`).pipe(Effect.orDie)
      return new Set(rows.map((row) => row.endpointId))
    })

    /**
     * A company endpoint is deleted: its pending deliveries are disabled (their jobs then send nothing) and
     * its secret is erased from every delivery. Joins the caller's transaction.
     */
    const closeEndpoint = Effect.fn("Webhooks.closeEndpoint")(function* (endpointId: string) {
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* sql`UPDATE webhook_deliveries SET signing_secret = NULL,
          status = CASE WHEN status = 'pending' THEN 'disabled' ELSE status END,
          last_error = CASE WHEN status = 'pending' THEN 'not sent: the endpoint was deleted' ELSE last_error END,
          next_attempt_at = CASE WHEN status = 'pending' THEN NULL ELSE next_attempt_at END,
          updated_at = CASE WHEN status = 'pending' THEN ${now} ELSE updated_at END
        WHERE endpoint_id = ${endpointId}`.pipe(Effect.orDie)
    })

    return {
      enqueue,
      deliver,
      get,
      attempts,
      deliveriesFor,
      endpointDeliveries,
      disabledEndpoints,
      closeEndpoint
    } as const
  }),
  dependencies: [SigningKeys.Default, OutboundHttp.Default]
}) {
  /** A worker for webhook deliveries alone (see `deliverWebhookHandler` to run them in a shared worker). */
  static layerWorker(options: WorkerOptions = {}): Layer.Layer<never, never, Jobs | Webhooks> {
    return Jobs.layerWorker([deliverWebhookHandler], options)
  }
}

/** The `webhook.deliver` handler, for `Jobs.run`/`Jobs.layerWorker`; needs `Webhooks`. */
export const deliverWebhookHandler: JobHandler<Webhooks> = DeliverWebhook.handle(({ deliveryId }, job) =>
  Effect.flatMap(Webhooks, (webhooks) => webhooks.deliver(deliveryId, job))
)
