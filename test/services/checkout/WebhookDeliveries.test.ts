import { createPublicKey, verify } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import {
  Data,
  DateTime,
  Duration,
  Effect,
  FiberRef,
  HashSet,
  Layer,
  Logger,
  LogLevel,
  Metric,
  Option,
  TestClock,
  TestContext
} from "effect"
import type { Id } from "../../../src/domain/platform/Ids.js"
import { migrations } from "../../../src/layers/Migrations.js"
import webhooksMigration from "../../../src/layers/migrations/0008_webhooks.js"
import {
  DeliverWebhook,
  deliverWebhookHandler,
  parseRetryAfter,
  signatureBase,
  userAgent,
  WebhookDeliveries,
  type WebhookDelivery,
  webhookAttempts,
  webhookMaxAttempts,
  webhookRetryDelays
} from "../../../src/services/checkout/WebhookDeliveries.js"
import { Jobs } from "../../../src/services/platform/Jobs.js"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { Signals } from "../../../src/services/platform/Signals.js"
import { SigningKeys } from "../../../src/services/platform/SigningKeys.js"
import { TestDatabase } from "../../support/database.js"
import { eventually, settle } from "../../support/eventually.js"
import { certificate, type Received, httpsReceiver as receiver } from "../../support/receiver.js"

/**
 * Agent callbacks end to end: `WebhookDeliveries.enqueue`, the Jobs worker running `deliverWebhookHandler` on
 * TestClock, and a real HTTPS receiver on loopback (test/support/receiver.ts, self-signed certificate) that
 * verifies nothing itself: the tests verify each received signature with the JWKS's public key.
 */

// On real Postgres the workers are woken through LISTEN/NOTIFY, as in production.
const SignalsLive = process.env.DATABASE_URL === undefined ? Signals.layerInProcess : Signals.layerPostgres

/** The webhook tables, unless the migration list already has them. */
const WebhookTables: Layer.Layer<never, never, SqlClient.SqlClient> =
  "0008_webhooks" in migrations ? Layer.empty : Layer.effectDiscard(Effect.orDie(webhooksMigration))

const TestLayer = Layer.mergeAll(WebhookDeliveries.Default, SigningKeys.Default).pipe(
  Layer.provideMerge(Jobs.Default),
  Layer.provide(OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })),
  Layer.provideMerge(SignalsLive),
  Layer.provideMerge(WebhookTables),
  Layer.provideMerge(TestDatabase),
  Layer.merge(Logger.minimumLogLevel(process.env.TEST_LOG === undefined ? LogLevel.None : LogLevel.Debug))
)

const wakeWorkers = Effect.flatMap(Signals, (signals) => signals.notify("jobs", DeliverWebhook.name))

/**
 * Starts a worker for webhook deliveries for the rest of the test. The signing key is made first, as the
 * server does at start: its creating transaction, run concurrently with the handlers' statements, would
 * mix them up on embedded PGlite (one session for every connection).
 */
const startWorker = (concurrency = 4) =>
  Effect.flatMap(SigningKeys, (keys) => keys.current()).pipe(
    Effect.zipRight(Jobs),
    Effect.flatMap((jobs) => jobs.run([deliverWebhookHandler], { concurrency, pollInterval: "1 hour" }))
  )

const delivery = (id: Id) =>
  Effect.flatMap(WebhookDeliveries, (webhooks) => webhooks.get(id)).pipe(Effect.map(Option.getOrThrow))

interface JobRow {
  readonly status: string
  readonly attempts: number
  readonly runAt: Date
  readonly updatedAt: Date
  readonly lastError: string | null
}

/** The delivery's job, as the queue sees it. */
const jobOf = (id: Id) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<JobRow>`SELECT status, attempts, run_at, updated_at, last_error FROM jobs
      WHERE kind = ${DeliverWebhook.name} AND key = ${id}`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows[0])
    )
  )

const millis = (dateTime: DateTime.DateTime | null) => (dateTime === null ? null : DateTime.toEpochMillis(dateTime))

/** Checks a received callback's signature with the public key of the JWKS. */
const verifySignature = (request: Received) =>
  Effect.gen(function* () {
    const { keys } = yield* Effect.flatMap(SigningKeys, (signingKeys) => signingKeys.jwks())
    const publicKey = createPublicKey({ key: { ...keys[0] }, format: "jwk" })
    const id = String(request.headers["webhook-id"])
    const timestamp = String(request.headers["webhook-timestamp"])
    const signatures = String(request.headers["webhook-signature"]).split(" ")
    return signatures.some((entry) => {
      const [version, signature] = entry.split(",")
      return (
        version === "v1a" &&
        verify(
          null,
          Buffer.from(signatureBase(id, timestamp, request.body)),
          publicKey,
          Buffer.from(signature, "base64")
        )
      )
    })
  })

interface LogLine {
  readonly level: string
  readonly message: string
}

/**
 * Keeps every log line (Debug and above) for the rest of the test's scope, the worker's included when it
 * is started afterwards: what an operator would read.
 */
const keptLogs = Effect.gen(function* () {
  const lines: Array<LogLine> = []
  const keep = Logger.make(({ logLevel, message }) => {
    lines.push({ level: logLevel.label, message: (Array.isArray(message) ? message : [message]).join(" ") })
  })
  yield* Effect.locallyScoped(FiberRef.currentLoggers, HashSet.make(keep))
  yield* Effect.locallyScoped(FiberRef.currentMinimumLogLevel, LogLevel.Debug)
  return lines as ReadonlyArray<LogLine>
})

/** The lines at warning level and above. */
const loud = (lines: ReadonlyArray<LogLine>) =>
  lines.filter((line) => line.level === "WARN" || line.level === "ERROR" || line.level === "FATAL")

class Unexpected extends Data.TaggedError("Unexpected")<{ readonly message: string }> {}

const start = DateTime.toEpochMillis(DateTime.unsafeMake("2026-03-01T12:00:00Z"))

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates, ignores what it cannot read", () => {
    const now = Date.parse("Wed, 21 Oct 2026 07:28:00 GMT")
    expect(parseRetryAfter("120", now)).toEqual(Option.some(Duration.seconds(120)))
    expect(parseRetryAfter(" 0 ", now)).toEqual(Option.some(Duration.seconds(0)))
    expect(parseRetryAfter("Wed, 21 Oct 2026 07:30:00 GMT", now)).toEqual(Option.some(Duration.minutes(2)))
    expect(parseRetryAfter("Wed, 21 Oct 2026 07:00:00 GMT", now)).toEqual(Option.some(Duration.zero))
    expect(parseRetryAfter(undefined, now)).toEqual(Option.none())
    expect(parseRetryAfter("soon", now)).toEqual(Option.none())
    expect(parseRetryAfter("-5", now)).toEqual(Option.none())
  })
})

describe("Webhooks", () => {
  layer(TestLayer, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.scoped("delivers a POST signed with v1a that verifies with the JWKS, and logs the attempt", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(start)
        const webhooks = yield* WebhookDeliveries
        const delivered = Metric.tagged(webhookAttempts, "outcome", "delivered")
        const deliveredBefore = (yield* Metric.value(delivered)).count
        const server = yield* receiver(() => ({ status: 204 }))
        const payload = { id: "42", type: "checkout.completed", data: { total: { amount: 2500, currency: "USD" } } }
        const id = yield* webhooks.enqueue({
          url: server.url("/callbacks/1"),
          eventId: "evt_signed",
          eventType: "checkout.completed",
          payload
        })
        yield* startWorker()
        const done = yield* eventually(delivery(id), (row) => row.status === "delivered", "the delivery")

        expect(server.received).toHaveLength(1)
        const [request] = server.received
        expect(request.path).toBe("/callbacks/1")
        expect(request.headers["content-type"]).toBe("application/json")
        expect(request.headers["user-agent"]).toBe(userAgent)
        expect(request.headers["webhook-id"]).toBe("evt_signed")
        expect(request.headers["webhook-timestamp"]).toBe(String(start / 1000))
        expect(request.headers["webhook-signature"]).toMatch(/^v1a,[A-Za-z0-9+/]+=*$/)
        expect(JSON.parse(request.body)).toEqual(payload)
        expect(yield* verifySignature(request)).toBe(true)
        // A changed body or id does not verify.
        expect(yield* verifySignature({ ...request, body: request.body.replace("2500", "1") })).toBe(false)
        expect(yield* verifySignature({ ...request, headers: { ...request.headers, "webhook-id": "evt_other" } })).toBe(
          false
        )

        expect(done.attempts).toBe(1)
        expect((yield* Metric.value(delivered)).count).toBe(deliveredBefore + 1)
        expect(done.lastStatusCode).toBe(204)
        expect(done.lastError).toBeNull()
        expect(millis(done.deliveredAt)).toBe(start)
        expect(done.nextAttemptAt).toBeNull()
        expect(done.payload).toEqual(payload)
        const log = yield* webhooks.attempts(id)
        expect(log).toHaveLength(1)
        expect(log[0]).toMatchObject({ deliveryId: id, attempt: 1, statusCode: 204, error: null, responseBody: "" })
        expect(millis(log[0].startedAt)).toBe(start)
        expect(log[0].durationMs).toBeGreaterThanOrEqual(0)
        expect(yield* eventually(jobOf(id), (job) => job.status === "succeeded", "the job")).toMatchObject({
          attempts: 1
        })
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("retries after a 500 at the schedule's first delay, then delivers", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(start)
        const webhooks = yield* WebhookDeliveries
        const server = yield* receiver((_, index) =>
          index === 0 ? { status: 500, body: "database on fire" } : { status: 200, body: "thanks" }
        )
        const id = yield* webhooks.enqueue({
          url: server.url("/flaky"),
          eventId: "evt_flaky",
          eventType: "order.placed",
          payload: { n: 1 }
        })
        yield* startWorker()

        const waiting = yield* eventually(
          jobOf(id),
          (job) => job.status === "pending" && job.attempts === 1,
          "the first attempt to fail"
        )
        const delay = waiting.runAt.getTime() - start
        expect(delay).toBeGreaterThanOrEqual(4_000)
        expect(delay).toBeLessThanOrEqual(6_000)
        const pending = yield* delivery(id)
        expect(pending.status).toBe("pending")
        expect(pending.attempts).toBe(1)
        expect(pending.lastStatusCode).toBe(500)
        expect(pending.lastError).toBe("HTTP 500")
        // The reader reports the queue's (jittered) time of the next attempt.
        expect(millis(pending.nextAttemptAt)).toBe(waiting.runAt.getTime())

        yield* TestClock.setTime(waiting.runAt.getTime() - 1)
        yield* wakeWorkers
        yield* settle
        expect(server.received).toHaveLength(1)

        yield* TestClock.setTime(waiting.runAt.getTime())
        yield* wakeWorkers
        const done = yield* eventually(delivery(id), (row) => row.status === "delivered", "the retry")
        expect(done.attempts).toBe(2)
        expect(done.lastStatusCode).toBe(200)
        expect(done.lastError).toBeNull()
        expect(server.received).toHaveLength(2)
        // Same event id on every attempt (receivers de-duplicate by it); each attempt freshly signed.
        expect(server.received.map((request) => request.headers["webhook-id"])).toEqual(["evt_flaky", "evt_flaky"])
        expect(server.received[1].headers["webhook-timestamp"]).toBe(String(Math.floor(waiting.runAt.getTime() / 1000)))
        for (const request of server.received) expect(yield* verifySignature(request)).toBe(true)

        const log = yield* webhooks.attempts(id)
        expect(
          log.map(({ attempt, statusCode, error, responseBody }) => ({ attempt, statusCode, error, responseBody }))
        ).toEqual([
          { attempt: 1, statusCode: 500, error: "HTTP 500", responseBody: "database on fire" },
          { attempt: 2, statusCode: 200, error: null, responseBody: "thanks" }
        ])
        expect(millis(log[1].startedAt)).toBe(waiting.runAt.getTime())
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("honours Retry-After: the next attempt waits for it, not for the schedule", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(start)
        const webhooks = yield* WebhookDeliveries
        const server = yield* receiver((_, index) =>
          index === 0 ? { status: 503, headers: { "retry-after": "120" } } : { status: 200 }
        )
        const id = yield* webhooks.enqueue({
          url: server.url("/busy"),
          eventId: "evt_busy",
          eventType: "order.placed",
          payload: { n: 1 }
        })
        yield* startWorker()
        const waiting = yield* eventually(
          jobOf(id),
          (job) => job.status === "pending" && job.attempts === 1,
          "the throttled attempt"
        )
        expect(waiting.runAt.getTime()).toBe(start + 120_000)
        const pending = yield* delivery(id)
        expect(millis(pending.nextAttemptAt)).toBe(start + 120_000)
        expect(pending.lastStatusCode).toBe(503)

        // Past the schedule's 5 s (±20 %), still waiting.
        yield* TestClock.setTime(start + 60_000)
        yield* wakeWorkers
        yield* settle
        expect(server.received).toHaveLength(1)
        expect((yield* delivery(id)).status).toBe("pending")

        yield* TestClock.setTime(start + 120_000)
        yield* wakeWorkers
        yield* eventually(delivery(id), (row) => row.status === "delivered", "the delivery after Retry-After")
        expect(server.received).toHaveLength(2)
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("410 Gone disables the delivery, the URL's other pending deliveries and later ones", () =>
      Effect.gen(function* () {
        const lines = yield* keptLogs
        yield* TestClock.setTime(start)
        const webhooks = yield* WebhookDeliveries
        const server = yield* receiver((request) => (request.path === "/gone" ? { status: 410 } : { status: 200 }))
        const gone = server.url("/gone")
        const ids: Array<Id> = []
        for (const n of [1, 2, 3]) {
          ids.push(
            yield* webhooks.enqueue({ url: gone, eventId: `evt_gone_${n}`, eventType: "order.placed", payload: { n } })
          )
        }
        const other = yield* webhooks.enqueue({
          url: server.url("/alive"),
          eventId: "evt_gone_1",
          eventType: "order.placed",
          payload: { n: 1 }
        })
        // One at a time: whichever delivery to /gone goes first gets the 410, the others are never sent.
        yield* startWorker(1)
        for (const id of [...ids, other]) {
          yield* eventually(jobOf(id), (job) => job.status !== "pending" && job.status !== "running", "the jobs")
        }

        expect(server.received.filter((request) => request.path === "/gone")).toHaveLength(1)
        const deliveries = yield* webhooks.deliveriesFor({ url: gone })
        expect(deliveries.map((row) => row.status)).toEqual(["disabled", "disabled", "disabled"])
        const answered = deliveries.filter((row) => row.attempts === 1)
        expect(answered).toHaveLength(1)
        expect(answered[0].lastStatusCode).toBe(410)
        expect(yield* webhooks.attempts(answered[0].id)).toMatchObject([{ attempt: 1, statusCode: 410 }])
        for (const row of deliveries.filter((row) => row.attempts === 0)) {
          expect(row.lastError).toContain("410 Gone")
          expect(yield* webhooks.attempts(row.id)).toEqual([])
        }
        // The delivery ends, not the job: one info line, nothing louder.
        expect((yield* jobOf(answered[0].id)).status).toBe("succeeded")
        expect(loud(lines)).toEqual([])
        expect(lines.filter((line) => line.message.includes("410 Gone"))).toEqual([
          { level: "INFO", message: expect.stringContaining(`webhook delivery ${answered[0].id}: HTTP 410 Gone`) }
        ])
        // Another URL is not affected; the same event went there.
        expect((yield* delivery(other)).status).toBe("delivered")
        expect((yield* webhooks.deliveriesFor({ eventId: "evt_gone_1" })).map((row) => row.url).sort()).toEqual(
          [server.url("/alive"), gone].sort()
        )

        // A later event for the disabled URL is recorded, disabled, and not sent.
        const later = yield* webhooks.enqueue({
          url: gone,
          eventId: "evt_gone_4",
          eventType: "order.placed",
          payload: {}
        })
        const row = yield* delivery(later)
        expect(row.status).toBe("disabled")
        expect(yield* jobOf(later)).toBeUndefined()
        yield* wakeWorkers
        yield* settle
        expect(server.received.filter((request) => request.path === "/gone")).toHaveLength(1)
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("a URL the SSRF guard refuses fails at once, with the reason in the attempts log and a warning", () =>
      Effect.gen(function* () {
        const lines = yield* keptLogs
        yield* TestClock.setTime(start)
        const webhooks = yield* WebhookDeliveries
        const server = yield* receiver(() => ({ status: 200 }))
        const cases = [
          [server.url("/hook").replace("https:", "http:"), "must be https"],
          ["https://10.0.0.7/hook", "10.0.0.7 is not a public address (private (RFC 1918))"],
          ["https://169.254.169.254/latest/meta-data/", "link-local"],
          ["https://[fd00::1]/hook", "unique-local"]
        ] as const
        const ids: Array<Id> = []
        for (const [url] of cases) {
          ids.push(yield* webhooks.enqueue({ url, eventId: "evt_ssrf", eventType: "order.placed", payload: {} }))
        }
        yield* startWorker()
        for (const [i, [, reason]] of cases.entries()) {
          const row = yield* eventually(delivery(ids[i]), (row) => row.status !== "pending", "the refusal")
          expect(row.status).toBe("failed")
          expect(row.attempts).toBe(1)
          expect(row.lastStatusCode).toBeNull()
          expect(row.lastError).toContain(reason)
          expect(row.nextAttemptAt).toBeNull()
          const log = yield* webhooks.attempts(ids[i])
          expect(log).toHaveLength(1)
          expect(log[0].statusCode).toBeNull()
          expect(log[0].responseBody).toBeNull()
          expect(log[0].error).toMatch(/^refused: /)
          expect(log[0].error).toContain(reason)
          const job = yield* eventually(jobOf(ids[i]), (job) => job.status === "succeeded", "the job to end")
          expect(job.attempts).toBe(1)
        }
        expect(server.connections()).toBe(0)
        // One warning per refused delivery, naming it and the reason; no error.
        expect(loud(lines)).toHaveLength(cases.length)
        for (const [i, [, reason]] of cases.entries()) {
          const line = loud(lines).find((line) => line.message.startsWith(`webhook delivery ${ids[i]} refused: `))
          expect(line?.level).toBe("WARN")
          expect(line?.message).toContain(reason)
        }
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("a 302 is a failed attempt: the redirect is not followed", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(start)
        const webhooks = yield* WebhookDeliveries
        const server = yield* receiver((request, index) =>
          index === 0 ? { status: 302, headers: { location: `https://${request.headers.host}/new` } } : { status: 200 }
        )
        const id = yield* webhooks.enqueue({
          url: server.url("/moved"),
          eventId: "evt_moved",
          eventType: "order.placed",
          payload: {}
        })
        yield* startWorker()
        const waiting = yield* eventually(
          jobOf(id),
          (job) => job.status === "pending" && job.attempts === 1,
          "the attempt"
        )
        const row = yield* delivery(id)
        expect(row.status).toBe("pending")
        expect(row.lastStatusCode).toBe(302)
        expect(row.lastError).toContain("redirects are not followed")
        expect(server.received.map((request) => request.path)).toEqual(["/moved"])
        // The retry goes to the URL it was given again, not to the Location.
        yield* TestClock.setTime(waiting.runAt.getTime())
        yield* wakeWorkers
        yield* eventually(delivery(id), (row) => row.status === "delivered", "the retry")
        expect(server.received.map((request) => request.path)).toEqual(["/moved", "/moved"])
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("after 7 attempts at the jittered delays the delivery is failed: a warning per retry, one error", () =>
      Effect.gen(function* () {
        const lines = yield* keptLogs
        yield* TestClock.setTime(start)
        const webhooks = yield* WebhookDeliveries
        const server = yield* receiver(() => ({ status: 500 }))
        const id = yield* webhooks.enqueue({
          url: server.url("/down"),
          eventId: "evt_down",
          eventType: "order.placed",
          payload: {}
        })
        yield* startWorker()
        expect(webhookMaxAttempts).toBe(7)
        for (const [i, base] of webhookRetryDelays.entries()) {
          const job = yield* eventually(
            jobOf(id),
            (job) => job.status === "pending" && job.attempts === i + 1,
            `attempt ${i + 1}`
          )
          const delay = job.runAt.getTime() - job.updatedAt.getTime()
          expect(delay).toBeGreaterThanOrEqual(Duration.toMillis(base) * 0.8)
          expect(delay).toBeLessThanOrEqual(Duration.toMillis(base) * 1.2)
          const row = yield* delivery(id)
          expect(row.status).toBe("pending")
          // The table keeps the nominal time; the reader reports the queue's jittered one.
          expect(millis(row.nextAttemptAt)).toBe(job.runAt.getTime())
          yield* TestClock.setTime(job.runAt.getTime())
          yield* wakeWorkers
        }
        const failed = yield* eventually(delivery(id), (row) => row.status === "failed", "the delivery to fail")
        expect(failed.attempts).toBe(7)
        expect(failed.nextAttemptAt).toBeNull()
        expect(failed.lastError).toBe("HTTP 500")
        expect((yield* eventually(jobOf(id), (job) => job.status === "dead", "the job to die")).attempts).toBe(7)
        const log = yield* webhooks.attempts(id)
        expect(log.map((attempt) => [attempt.attempt, attempt.statusCode])).toEqual(
          [1, 2, 3, 4, 5, 6, 7].map((n) => [n, 500])
        )
        expect(server.received).toHaveLength(7)
        expect(loud(lines).map((line) => [line.level, line.message.replace(/ at .*$/, "")])).toEqual([
          ...webhookRetryDelays.map(() => ["WARN", "job failed; retrying"]),
          ["ERROR", "job dead"]
        ])
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("enqueue commits or rolls back with the caller's transaction, and is idempotent per URL and event", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const webhooks = yield* WebhookDeliveries
        const url = "https://agent.example/callbacks/tx"
        const failed = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              yield* webhooks.enqueue({ url, eventId: "evt_rolled_back", eventType: "order.placed", payload: {} })
              return yield* new Unexpected({ message: "the change failed" })
            })
          )
          .pipe(Effect.flip)
        expect(failed).toBeInstanceOf(Unexpected)
        expect(yield* webhooks.deliveriesFor({ eventId: "evt_rolled_back" })).toEqual([])

        const id = yield* sql.withTransaction(
          webhooks.enqueue({ url, eventId: "evt_kept", eventType: "order.placed", payload: { a: 1 } })
        )
        const again = yield* webhooks.enqueue({
          url,
          eventId: "evt_kept",
          eventType: "order.placed",
          payload: { a: 2 }
        })
        expect(again).toBe(id)
        const rows: ReadonlyArray<WebhookDelivery> = yield* webhooks.deliveriesFor({ eventId: "evt_kept" })
        expect(rows.map((row) => [row.id, row.status, row.payload])).toEqual([[id, "pending", { a: 1 }]])
        expect((yield* jobOf(id))?.status).toBe("pending")
        const [count] = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM jobs WHERE kind = ${DeliverWebhook.name} AND key = ${id}`
        expect(count.count).toBe(1)
      }).pipe(Effect.provide(TestContext.TestContext))
    )
  })
})
