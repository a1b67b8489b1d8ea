import * as Http from "node:http"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Config, Context, Duration, Effect, Fiber, Layer, Option, Redacted, Schedule } from "effect"
import { makeId } from "../../src/domain/platform/Ids.js"
import { postgres } from "../../src/layers/Database.js"
import { issueTestToken } from "../support/auth.js"
import { availableVariants, londonAddress, payWith, recipient } from "../support/checkout.js"
import { serve, socketClient, tempDataDir, text, withNode } from "../support/cli.js"
import { ribbonClient } from "../support/http.js"

/**
 * Graceful shutdown of the real `ribbon serve` (src/layers/Shutdown.ts): SIGTERM drains the connections and
 * the event streams and exits within SHUTDOWN_GRACE; a placement still running when the drain's time is up
 * is handed to another instance at once rather than when its lease runs out (1 minute).
 */

const databaseUrl = Effect.runSync(Config.option(Config.redacted("DATABASE_URL")))

/** Waits (on the real clock) for `self` to satisfy `done`, for at most `within`. */
const waitFor = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  done: (a: A) => boolean,
  within: Duration.DurationInput,
  what: string
) =>
  self.pipe(
    Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: done }),
    Effect.timeoutFail({
      duration: within,
      onTimeout: () => new Error(`${what}: not within ${Duration.format(within)}`)
    })
  )

/** A user and a checkout awaiting payment, whose payment-page event stream can be followed with `token`. */
const pendingCheckout = (sql: SqlClient.SqlClient) =>
  Effect.gen(function* () {
    const userId = yield* makeId
    const checkoutId = yield* makeId
    const token = `token-${checkoutId}`
    const now = new Date()
    yield* sql`
      INSERT INTO users (id, email, password_hash, default_country, receipt_preference, created_at)
      VALUES (${userId}, ${`${userId}@example.com`}, 'not-a-hash', 'GB', 'email', ${now})`
    yield* sql`
      INSERT INTO checkouts (id, user_id, status, country_code, currency, locale, total_amount, shipping_required,
        recipient, shipping_address, sms_consent, payment_token, expires_at, created_at, updated_at)
      VALUES (${checkoutId}, ${userId}, 'pending_payment', 'GB', 'GBP', 'en-GB', 100, false,
        ${JSON.stringify(recipient)}::jsonb, ${JSON.stringify(londonAddress)}::jsonb, false, ${token},
        ${new Date(now.getTime() + 3_600_000)}, ${now}, ${now})`
    return { checkoutId, token }
  })

/** A keep-alive connection left idle after one request; `closed` resolves when the server closes it. */
const idleConnection = (url: string) =>
  Effect.async<{ readonly closed: Promise<void> }>((resume) => {
    const agent = new Http.Agent({ keepAlive: true })
    Http.get(`${url}/health`, { agent }, (response) => {
      const socket = response.socket
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
      response.resume()
      response.once("end", () => resume(Effect.succeed({ closed })))
    }).once("error", (error) => resume(Effect.die(error)))
  })

/** An event stream, once open; `ended` resolves with everything it received when the server ends it. */
const eventStream = (url: string) =>
  Effect.async<{ readonly ended: Promise<string> }>((resume) => {
    Http.get(url, { headers: { accept: "text/event-stream" } }, (response) => {
      let body = ""
      const ended = new Promise<string>((resolve) => response.once("end", () => resolve(body)))
      response.setEncoding("utf8")
      if (response.statusCode !== 200) {
        response.once("end", () =>
          resume(Effect.dieMessage(`the event stream answered ${response.statusCode}: ${body}`))
        )
      }
      response.on("data", (chunk: string) => {
        const opening = !body.includes(": stream open")
        body += chunk
        if (opening && body.includes(": stream open")) resume(Effect.succeed({ ended }))
      })
    }).once("error", (error) => resume(Effect.die(error)))
  })

/**
 * A request under way: a POST whose body is not sent yet, once the server has it (it answered `100 Continue`).
 * `finish` sends the body and resolves with the response's `Connection` header.
 */
const requestUnderWay = (url: string) =>
  Effect.async<{ readonly finish: Effect.Effect<string | undefined> }>((resume) => {
    const body = "grant_type=client_credentials"
    const request = Http.request(`${url}/oauth/token`, {
      method: "POST",
      agent: new Http.Agent({ keepAlive: true }),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "content-length": String(body.length),
        expect: "100-continue"
      }
    })
    const connection = new Promise<string | undefined>((resolve, reject) => {
      request.once("response", (response) => {
        response.resume()
        resolve(response.headers.connection)
      })
      request.once("error", reject)
    })
    const finish = Effect.promise(() => {
      request.end(body)
      return connection
    })
    request.once("continue", () => resume(Effect.succeed({ finish })))
    request.flushHeaders()
  })

const within = (promise: Promise<unknown>, what: string) =>
  Effect.promise(() => promise).pipe(
    Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error(`${what}: not within 20 seconds`) })
  )

describe("graceful shutdown", () => {
  it.scopedLive(
    "SIGTERM closes idle connections, answers with Connection: close, ends event streams with a retry and exits within the grace",
    () =>
      withNode(
        Effect.gen(function* () {
          const dataDir = yield* tempDataDir
          const server = yield* serve(dataDir, { SHUTDOWN_GRACE: "20 seconds" })
          const sql = yield* socketClient(dataDir)
          const { checkoutId, token } = yield* pendingCheckout(sql)

          const idle = yield* idleConnection(server.url)
          const stream = yield* eventStream(`${server.url}/pay/${checkoutId}/events?t=${token}`)
          const underWay = yield* requestUnderWay(server.url)

          const signalled = yield* Effect.fork(server.process.kill("SIGTERM"))
          // The idle connection is closed and the stream ends with its farewell, long before the grace ends.
          yield* within(idle.closed, "the idle connection to close")
          const received = yield* within(stream.ended, "the event stream to end")
          expect(received).toMatch(/\n: shutting down, reconnect with Last-Event-ID\nretry: \d+\n\n$/)
          // A response sent while draining closes its connection.
          yield* waitFor(text(server.output), (all) => all.includes("Shutting down"), "20 seconds", "the drain")
          expect(yield* underWay.finish).toBe("close")

          expect(yield* server.exitCode("20 seconds")).toBe(0)
          yield* Fiber.join(signalled)
          expect(yield* text(server.output)).toContain("Shutting down: drained in")
        })
      ),
    120_000
  )
})

/** A new database on the Postgres server for this test, dropped after it. */
const freshDatabase = (serverUrl: Redacted.Redacted<string>) =>
  Effect.gen(function* () {
    const admin = yield* Layer.build(postgres(serverUrl, { maxConnections: 1 })).pipe(
      Effect.map(Context.get(SqlClient.SqlClient))
    )
    const name = `ribbon_test_shutdown_${Date.now().toString(36)}`
    yield* Effect.acquireRelease(admin`CREATE DATABASE ${admin(name)}`, () =>
      admin`DROP DATABASE IF EXISTS ${admin(name)} WITH (FORCE)`.pipe(Effect.orDie)
    )
    const url = new URL(Redacted.value(serverUrl))
    url.pathname = `/${name}`
    return url.toString()
  }).pipe(Effect.orDie)

/** The agent API of the server at `baseUrl`, as `token`'s user. */
const agentOf = (baseUrl: string, token: string) =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.map(
      HttpClient.HttpClient,
      HttpClient.mapRequest((request) =>
        HttpClientRequest.bearerToken(HttpClientRequest.prependUrl(request, baseUrl), token)
      )
    )
  ).pipe(Layer.provide(FetchHttpClient.layer))

describe.skipIf(Option.isNone(databaseUrl))("graceful shutdown across instances (Postgres)", () => {
  it.scopedLive(
    "a placement still running when an instance is stopped is taken over by another instance within seconds",
    () =>
      withNode(
        Effect.gen(function* () {
          const url = yield* freshDatabase(Option.getOrThrow(databaseUrl))
          // The first instance's supplier never answers in time; the second one's answers at once.
          const first = yield* serve(yield* tempDataDir, {
            DATABASE_URL: url,
            FULFILLMENT_LATENCY: "1 hour",
            SHUTDOWN_GRACE: "6 seconds"
          })
          yield* serve(yield* tempDataDir, { DATABASE_URL: url })
          const sql = yield* Layer.build(postgres(Redacted.make(url), { maxConnections: 2 })).pipe(
            Effect.map(Context.get(SqlClient.SqlClient))
          )

          // A checkout paid on the first instance, which starts placing it there.
          // For the first instance's API, whose public URL is http://localhost:PORT by default.
          const publicUrl = first.url.replace("127.0.0.1", "localhost")
          const user = yield* issueTestToken({ defaultCountry: "GB" }, publicUrl).pipe(
            Effect.provideService(SqlClient.SqlClient, sql)
          )
          const checkout = yield* Effect.gen(function* () {
            const client = yield* ribbonClient
            const [variantId] = yield* availableVariants("GB", "mug", 1)
            const quote = yield* client.quotes.createQuote({ payload: { variantId: variantId!, countryCode: "GB" } })
            const checkout = yield* client.checkouts.createCheckout({
              payload: { items: [{ quoteId: quote.id }], recipient, shippingAddress: londonAddress }
            })
            expect((yield* payWith(checkout)).status).toBe(200)
            return checkout
          }).pipe(Effect.provide(agentOf(first.url, user.accessToken)))
          const statusOf = sql<{ status: string }>`SELECT status FROM checkouts WHERE id = ${checkout.id}`.pipe(
            Effect.map(([row]) => row!.status)
          )
          yield* waitFor(statusOf, (status) => status === "placing", "20 seconds", "placing on the first instance")

          // Stopped, the first instance gives the placement most of its grace, then hands it back: the second
          // places it at once, where the job's lease would have kept it from the second for a minute.
          const signalled = yield* Effect.fork(first.process.kill("SIGTERM"))
          yield* waitFor(statusOf, (status) => status === "confirmed", "20 seconds", "the second instance to place it")
          expect(yield* first.exitCode("20 seconds")).toBe(0)
          yield* Fiber.join(signalled)

          // One order for the one item, one confirmation, and the job done.
          const [orders] = yield* sql<{ count: number }>`
            SELECT count(*)::int AS count FROM orders WHERE checkout_id = ${checkout.id}`
          expect(orders!.count).toBe(1)
          const [confirmed] = yield* sql<{ count: number }>`
            SELECT count(*)::int AS count FROM events WHERE checkout_id = ${checkout.id} AND type = 'checkout.confirmed'`
          expect(confirmed!.count).toBe(1)
          const jobs = yield* sql<{ status: string }>`
            SELECT status FROM jobs WHERE kind = 'checkout.place' AND payload->>'checkoutId' = ${checkout.id}`
          expect(jobs.map((job) => job.status)).toEqual(["succeeded"])
          expect(yield* text(first.output)).toContain("job stopped at the end of the shutdown grace; handing it back")
        })
      ),
    180_000
  )
})
