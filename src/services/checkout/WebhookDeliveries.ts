import { Clock, Data, Duration, Effect, Either, Exit, type Layer, Metric, Option, Schedule, Schema } from "effect"
import { type SigningScheme, WebhookAttempt, WebhookDelivery, WebhookStatus } from "../../domain/checkout/Webhooks.js"
import { Id, makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { PublicUrl } from "../catalog/Catalog.js"
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
import { SigningKeys } from "../platform/SigningKeys.js"
import { UcpSigningKey } from "../platform/UcpSigningKey.js"
import { type EndpointKind, receiverOf, WebhookDeliveriesRepo } from "./WebhookDeliveriesRepo.js"
import { signingSchemes } from "./WebhookSigning.js"

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
 * - A delivery to a company webhook endpoint (`endpoint`, docs/decisions/0050-company-webhooks.md) or to an ACP
 *   order webhook endpoint (`acpEndpoint`, docs/decisions/0084-acp-order-webhooks.md) goes through the same outbox,
 *   schedule and log, but is signed with the endpoint's `whsec_` secret, which its row carries, and a 410 disables
 *   that endpoint's deliveries rather than the URL's.
 * - How a delivery is signed, and which headers say so, is its `signingScheme`'s (src/services/checkout/WebhookSigning.ts).
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

export { WebhookAttempt, WebhookDelivery, WebhookStatus }

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

/**
 * The job that sends one delivery (key: the delivery id, or `{id}/resend-{n}` for its n-th resend: a job key is
 * never reused, so each resend runs under a job of its own).
 */
export const DeliverWebhook = JobKind.make("webhook.deliver", Schema.Struct({ deliveryId: Id }), {
  maxAttempts: webhookMaxAttempts,
  retry: webhookRetry,
  // A safety net above the outbound request's own 10 s limit.
  timeout: "1 minute"
})

/** The key of the job a delivery runs under now (see `DeliverWebhook`). */
export const deliveryJobKey = (delivery: { readonly id: string; readonly resends: number }) =>
  delivery.resends === 0 ? delivery.id : `${delivery.id}/resend-${delivery.resends}`

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

export { signatureBase, signV1, signV1a } from "./WebhookSigning.js"

/** The body every attempt of a delivery sends: its stored JSON, compact; the signature covers exactly these bytes. */
export const requestBody = (delivery: WebhookDelivery) => JSON.stringify(delivery.payload)

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

export class WebhookDeliveries extends Effect.Service<WebhookDeliveries>()("WebhookDeliveries", {
  effect: Effect.gen(function* () {
    const repo = yield* WebhookDeliveriesRepo
    const jobs = yield* Jobs
    const keys = yield* SigningKeys
    const http = yield* OutboundHttp
    // One key look-up at a time: the first one creates the key pair in a transaction, which concurrent
    // handlers must not race on embedded PGlite (one session shared by every connection).
    const keyLock = yield* Effect.makeSemaphore(1)
    const currentKey = keyLock.withPermits(1)(keys.current())
    const ucpKey = yield* UcpSigningKey
    // Where the server runs, its public URL; a delivery engine built without one (unit tests) names none.
    const ucp = {
      key: ucpKey,
      profile: `${Option.getOrElse(yield* Effect.serviceOption(PublicUrl), () => "")}/.well-known/ucp`
    }

    /**
     * Records an event to send to `url`; joins the caller's transaction. Returns the delivery's id (the
     * existing one when this event was already enqueued for this URL). A URL that answered 410 Gone gets
     * the delivery recorded as `disabled`, and nothing is sent. With `endpoint` (a company webhook
     * endpoint) the delivery is signed `v1` with its secret, and the endpoint, not the URL, is what a 410
     * disables.
     */
    const enqueue = Effect.fn("WebhookDeliveries.enqueue")(function* (input: {
      readonly url: string
      readonly eventId: string
      readonly eventType: string
      readonly payload: unknown
      readonly endpoint?:
        | {
            readonly id: string
            readonly secret: string
            /** Disabled by its company: the delivery is recorded `disabled`, not sent. */
            readonly disabled?: boolean
          }
        | undefined
      /** An agent platform's ACP order webhook endpoint: the delivery is signed with its secret (`Merchant-Signature`). */
      readonly acpEndpoint?: { readonly id: string; readonly secret: string } | undefined
      /** A UCP order event: signed with RFC 9421 by Ribbon's UCP key (decision 0088). */
      readonly ucp?: boolean | undefined
    }) {
      const json = JSON.stringify(input.payload)
      if (json === undefined) return yield* Effect.dieMessage("WebhookDeliveries.enqueue: the payload is not JSON")
      const receiver = {
        url: input.url,
        endpointId: input.endpoint?.id ?? null,
        acpEndpointId: input.acpEndpoint?.id ?? null
      }
      const signingScheme: SigningScheme =
        input.endpoint !== undefined
          ? "standard_v1"
          : input.acpEndpoint !== undefined
            ? "acp_hmac"
            : input.ucp === true
              ? "ucp_rfc9421"
              : "standard_v1a"
      const id = yield* makeId
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* Effect.annotateCurrentSpan({ "webhook.delivery_id": id, "webhook.event_type": input.eventType })
      const inserted = yield* repo.insert({
        id,
        url: input.url,
        endpoint: input.endpoint,
        acpEndpoint: input.acpEndpoint,
        signingScheme,
        eventId: input.eventId,
        eventType: input.eventType,
        json,
        now,
        disabled: input.endpoint?.disabled === true
      })
      const row = inserted[0]
      if (row === undefined) {
        const [existing] = yield* repo.idOf(input.url, input.eventId)
        return existing.id
      }
      if (row.status === "pending") {
        yield* jobs.enqueue(DeliverWebhook, { deliveryId: id }, { key: id })
      } else {
        yield* Effect.logInfo(`webhook not sent: its ${receiverOf(receiver)} is disabled`).pipe(
          Effect.annotateLogs({ webhookDeliveryId: id })
        )
      }
      return id
    })

    /**
     * The key a delivery's scheme signs with: Ribbon's Ed25519 private key, or the secret its row carries. None when
     * its endpoint was deleted meanwhile (the secret is gone with it).
     */
    const signingKeyOf = (delivery: WebhookDelivery) => {
      switch (signingSchemes[delivery.signingScheme].key) {
        case "platform":
          return Effect.map(currentKey, ({ privatePkcs8 }) => Option.some(privatePkcs8))
        case "ucp":
          // The UCP scheme signs with the parsed key it is given with the input.
          return Effect.succeed(Option.some(""))
        case "secret":
          return Effect.map(repo.signingSecret(delivery.id), (rows) => Option.fromNullable(rows[0]?.signingSecret))
      }
    }

    /** The request of one attempt: its body, and its headers signed now by its scheme with `key`. */
    const signedRequest = (delivery: WebhookDelivery, key: string) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const body = requestBody(delivery)
        const signed = signingSchemes[delivery.signingScheme].headers(key, {
          eventId: delivery.eventId,
          now,
          url: delivery.url,
          body,
          ucp
        })
        const headers: Readonly<Record<string, string>> = {
          "content-type": "application/json",
          "user-agent": userAgent,
          ...signed
        }
        return { now, body, headers }
      })

    /** Sends the delivery's request to its URL once; what the job does. */
    const attempt = (
      delivery: WebhookDelivery,
      request: { readonly now: number; readonly body: string; readonly headers: Readonly<Record<string, string>> }
    ) =>
      Effect.gen(function* () {
        const now = request.now
        const started = yield* realClock.currentTimeMillis
        const result = yield* Effect.either(http.post(delivery.url, { body: request.body, headers: request.headers }))
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
    const begin = (delivery: WebhookDelivery, requestHeaders: Readonly<Record<string, string>>) =>
      Effect.gen(function* () {
        const now = new Date(yield* Clock.currentTimeMillis)
        const staleBefore = new Date(now.getTime() - Duration.toMillis(attemptOutcomeLimit))
        const row = yield* repo.begin(delivery, requestHeaders, now, staleBefore)
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
        const recorded = yield* repo.record(
          delivery,
          {
            number,
            status,
            statusCode,
            error: error === null ? null : clip(error),
            responseBody: Option.getOrNull(Option.map(response, (r) => r.body)),
            responseTruncated: Option.getOrNull(Option.map(response, (r) => r.truncated)),
            durationMs,
            nextAttemptAt,
            gone: outcome._tag === "Gone"
          },
          now
        )
        if (!recorded) {
          return yield* Effect.dieMessage(`webhook attempt ${number} of ${deliveryId} vanished`)
        }
        return { outcome, status, statusCode, number, last }
      })

    /**
     * Runs the job's attempt `job.attempt` at a delivery: unless it is no longer pending or another attempt
     * is in flight (`begin`), logs a new attempt, sends it, and records its outcome on the attempt and the
     * delivery. Fails (for the job to retry) when it is to be retried.
     */
    const deliver = Effect.fn("WebhookDeliveries.deliver")(function* (
      deliveryId: Id,
      job: Pick<JobInfo, "attempt" | "maxAttempts">
    ) {
      yield* Effect.annotateCurrentSpan({ "webhook.delivery_id": deliveryId, "webhook.attempt": job.attempt })
      const found = yield* repo.findById(deliveryId)
      if (Option.isNone(found)) return yield* new JobAbandoned({ message: `no webhook delivery ${deliveryId}` })
      const delivery = found.value
      if (delivery.status !== "pending") {
        return yield* Effect.logInfo(`webhook delivery is ${delivery.status}; nothing to send`)
      }
      const key = yield* signingKeyOf(delivery)
      if (Option.isNone(key)) return yield* Effect.logInfo("webhook endpoint deleted; nothing to send")
      // Begun, sent and recorded as one piece: a run stopped meanwhile (its lease lost, the time limit, a
      // shutdown) stops the request alone, and the attempt is recorded either way.
      const sent = yield* Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const request = yield* signedRequest(delivery, key.value)
          const begun = yield* begin(delivery, request.headers)
          if (Option.isNone(begun)) return Option.none()
          const number = begun.value
          const exit = yield* Effect.exit(restore(attempt(delivery, request)))
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
    const withNextAttempts = Effect.fn("WebhookDeliveries.withNextAttempts")(function* (
      deliveries: ReadonlyArray<WebhookDelivery>
    ) {
      const pending = deliveries.filter((delivery) => delivery.status === "pending").map(deliveryJobKey)
      const nextRuns = yield* jobs.nextRunsOf(DeliverWebhook, pending)
      return deliveries.map((delivery) => {
        const runAt = delivery.status === "pending" ? nextRuns.get(deliveryJobKey(delivery)) : undefined
        return runAt === undefined ? delivery : new WebhookDelivery({ ...delivery, nextAttemptAt: runAt })
      })
    })

    /** One delivery, or none. */
    const get = Effect.fn("WebhookDeliveries.get")(function* (deliveryId: Id) {
      const found = yield* repo.findById(deliveryId)
      if (Option.isNone(found)) return found
      const [delivery] = yield* withNextAttempts([found.value])
      return Option.some(delivery!)
    })

    /** The attempts log of a delivery, oldest first. */
    const attempts = Effect.fn("WebhookDeliveries.attempts")(function* (deliveryId: Id) {
      return yield* repo.attempts(deliveryId)
    })

    /** The deliveries of one event (to every URL), or to one URL (of every event), oldest first. */
    const deliveriesFor = Effect.fn("WebhookDeliveries.deliveriesFor")(function* (
      by: { readonly eventId: string } | { readonly url: string }
    ) {
      return yield* withNextAttempts(yield* "eventId" in by ? repo.byEvent(by.eventId) : repo.byUrl(by.url))
    })

    /**
     * A company endpoint's deliveries, newest first, paged in SQL, with `latencies`: by delivery id, the
     * duration in milliseconds of its latest attempt that has an outcome (none before the first).
     */
    const endpointDeliveries = Effect.fn("WebhookDeliveries.endpointDeliveries")(function* (
      endpointId: string,
      query: V3Query
    ) {
      const page = yield* repo.endpointPage(endpointId, query)
      const timed = page.rows.length === 0 ? [] : yield* repo.lastLatencies(page.rows.map((row) => row.id))
      const latencies: ReadonlyMap<string, number> = new Map(timed.map((row) => [row.deliveryId, row.durationMs]))
      return { ...page, rows: yield* withNextAttempts(page.rows), latencies }
    })

    /** A company endpoint's delivery of one event (by its `webhook-id`), or none. */
    const endpointDelivery = Effect.fn("WebhookDeliveries.endpointDelivery")(function* (
      endpointId: string,
      eventId: string
    ) {
      const found = yield* repo.ofEndpoint(endpointId, eventId)
      if (Option.isNone(found)) return found
      const [delivery] = yield* withNextAttempts([found.value])
      return Option.some(delivery!)
    })

    /** Which of these company endpoints a 410 Gone has closed (until `reopenEndpoint`). */
    const goneEndpoints = Effect.fn("WebhookDeliveries.goneEndpoints")(function* (endpointIds: ReadonlyArray<string>) {
      if (endpointIds.length === 0) return new Set<string>()
      const rows = yield* repo.goneEndpoints(endpointIds)
      return new Set(rows.map((row) => row.endpointId))
    })

    /**
     * An endpoint (a company's, or with `kind` "acp" an agent platform's) is deleted (`deleted`: its secret is erased
     * from every delivery too) or disabled by its company (`disabled`): its pending deliveries are disabled, and their
     * jobs then send nothing. Joins the caller's transaction.
     */
    const closeEndpoint = Effect.fn("WebhookDeliveries.closeEndpoint")(function* (
      endpointId: string,
      why: "deleted" | "disabled",
      kind: EndpointKind = "company"
    ) {
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* repo.closeEndpoint(
        { id: endpointId, kind },
        { reason: `not sent: the endpoint was ${why}`, eraseSecret: why === "deleted" },
        now
      )
    })

    /**
     * A company endpoint is enabled again: a 410 Gone its receiver answered no longer closes it, so later events
     * are sent. Deliveries disabled meanwhile stay so (`resend` sends one again). Joins the caller's transaction.
     */
    const reopenEndpoint = Effect.fn("WebhookDeliveries.reopenEndpoint")(function* (endpointId: string) {
      yield* repo.reopenEndpoint(endpointId)
    })

    /**
     * Sends a delivery again, with the same `webhook-id` and body (a new timestamp and signature, as any attempt):
     * an ended one (delivered, failed, disabled) becomes pending under a job of its own, a new run of the retry
     * schedule; a pending one waiting for its next attempt has it made due now (one in flight is left to end).
     * Never sends here: joins the caller's transaction, and the job sends once it commits. The delivery as it
     * now stands, or none when there is no such delivery.
     */
    const resend = Effect.fn("WebhookDeliveries.resend")(function* (deliveryId: Id) {
      yield* Effect.annotateCurrentSpan({ "webhook.delivery_id": deliveryId })
      const now = new Date(yield* Clock.currentTimeMillis)
      const [restarted] = yield* repo.restart(deliveryId, now)
      if (restarted !== undefined) {
        const key = deliveryJobKey({ id: deliveryId, resends: restarted.resends })
        yield* jobs.enqueue(DeliverWebhook, { deliveryId }, { key })
      } else {
        const found = yield* repo.findById(deliveryId)
        if (Option.isNone(found)) return found
        yield* repo.dueNow(deliveryId, now)
        yield* jobs.dueNow(DeliverWebhook, deliveryJobKey(found.value))
      }
      return yield* get(deliveryId)
    })

    return {
      enqueue,
      deliver,
      get,
      attempts,
      deliveriesFor,
      endpointDeliveries,
      endpointDelivery,
      goneEndpoints,
      closeEndpoint,
      reopenEndpoint,
      resend
    } as const
  }),
  dependencies: [SigningKeys.Default, OutboundHttp.Default, WebhookDeliveriesRepo.Default]
}) {
  /** A worker for webhook deliveries alone (see `deliverWebhookHandler` to run them in a shared worker). */
  static layerWorker(options: WorkerOptions = {}): Layer.Layer<never, never, Jobs | WebhookDeliveries> {
    return Jobs.layerWorker([deliverWebhookHandler], options)
  }
}

/** The `webhook.deliver` handler, for `Jobs.run`/`Jobs.layerWorker`; needs `Webhooks`. */
export const deliverWebhookHandler: JobHandler<WebhookDeliveries> = DeliverWebhook.handle(({ deliveryId }, job) =>
  Effect.flatMap(WebhookDeliveries, (webhooks) => webhooks.deliver(deliveryId, job))
)
