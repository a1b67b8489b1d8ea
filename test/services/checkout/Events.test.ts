import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Config, Context, Duration, Effect, Fiber, Layer, Option, Queue, Redacted, Stream } from "effect"
import type { EventType } from "../../../src/domain/checkout/Checkout.js"
import { makeId } from "../../../src/domain/platform/Ids.js"
import { postgres } from "../../../src/layers/Database.js"
import { type EventRow, Events, EventsChannel, EventsPollInterval } from "../../../src/services/checkout/Events.js"
import { resync, Signals } from "../../../src/services/platform/Signals.js"
import { TestDatabase } from "../../support/database.js"
import { eventually } from "../../support/eventually.js"

/**
 * Event streams across instances: two `Events` services on one Postgres database, each with its own pool
 * and LISTEN connection, as two servers would have. The sweep for missed signals is switched off, so only
 * the `LISTEN/NOTIFY` signal can wake a stream. (Embedded PGlite is one instance: its signals are in-process.)
 */

const databaseUrl = Effect.runSync(Config.option(Config.redacted("DATABASE_URL")))

/** An `Events` service with its own connections to the test database. */
const instance = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [{ name }] = yield* sql<{ name: string }>`SELECT current_database() AS name`
  const url = new URL(Redacted.value(Option.getOrThrow(databaseUrl)))
  url.pathname = `/${name}`
  const context = yield* Layer.build(
    Events.Default.pipe(
      // No sweep for missed signals: only NOTIFY can wake a stream.
      Layer.provide(Layer.succeed(EventsPollInterval, Duration.hours(1))),
      Layer.provideMerge(Signals.layerPostgres),
      Layer.provideMerge(postgres(Redacted.make(url.toString()), { maxConnections: 2 }))
    )
  )
  return { events: Context.get(context, Events), sql: Context.get(context, SqlClient.SqlClient) }
})

/** A user and a checkout for the events to be about. */
const fixture = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const userId = yield* makeId
  const checkoutId = yield* makeId
  const now = new Date()
  yield* sql`
    INSERT INTO users (id, email, password_hash, default_country, receipt_preference, created_at)
    VALUES (${userId}, ${`${userId}@example.com`}, 'not-a-hash', 'GB', 'email', ${now})`
  yield* sql`
    INSERT INTO checkouts (id, user_id, status, country_code, currency, locale, total_amount, shipping_required,
      recipient, shipping_address, sms_consent, payment_token, expires_at, created_at, updated_at)
    VALUES (${checkoutId}, ${userId}, 'pending_payment', 'GB', 'GBP', 'en-GB', 100, false, '{}'::jsonb,
      '{"countryCode":"GB"}'::jsonb, false, ${`token-${checkoutId}`}, ${now}, ${now}, ${now})`
  return { userId, checkoutId }
})

const received = (queue: Queue.Queue<EventRow>) =>
  Queue.take(queue).pipe(
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("no event reached the stream") })
  )

describe.skipIf(Option.isNone(databaseUrl))("events across instances (Postgres LISTEN/NOTIFY)", () => {
  layer(TestDatabase, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.scoped("a stream on one instance follows events appended on another, woken by NOTIFY alone", () =>
      Effect.gen(function* () {
        const { userId, checkoutId } = yield* fixture
        const reader = yield* instance
        const writer = yield* instance
        const append = (...types: ReadonlyArray<EventType>) =>
          writer.sql
            .withTransaction(
              Effect.gen(function* () {
                // The checkout's row lock, as Checkouts.record's callers hold it.
                yield* writer.sql`SELECT id FROM checkouts WHERE id = ${checkoutId} FOR UPDATE`
                yield* writer.events.append(types.map((type) => ({ type, checkoutId, userId, data: { type } })))
              })
            )
            .pipe(Effect.zipRight(writer.events.publish(checkoutId)))

        const queue = yield* Queue.unbounded<EventRow>()
        const following = yield* reader.events.stream(checkoutId, "0", { follow: true }).pipe(
          Stream.runForEach((row) => Queue.offer(queue, row)),
          Effect.fork
        )

        yield* append("checkout.created")
        expect((yield* received(queue)).type).toBe("checkout.created")
        // The stream has read once already; with no poll, only the writer's NOTIFY can bring the next.
        yield* append("checkout.payment_declined")
        const declined = yield* received(queue)
        expect(declined.type).toBe("checkout.payment_declined")
        // Several events appended by one statement: read in the order given, their ids ascending.
        yield* append("checkout.payment_declined", "checkout.paid", "checkout.placing")
        const batch = [yield* received(queue), yield* received(queue), yield* received(queue)]
        expect(batch.map((row) => row.type)).toEqual(["checkout.payment_declined", "checkout.paid", "checkout.placing"])
        expect(batch.map((row) => row.data)).toEqual(batch.map((row) => ({ type: row.type })))
        const ids = [declined, ...batch].map((row) => BigInt(row.id))
        expect(ids.every((id, n) => n === 0 || id > ids[n - 1]!)).toBe(true)
        yield* append("checkout.cancelled")
        expect((yield* received(queue)).type).toBe("checkout.cancelled")
        // A final event ends the stream.
        yield* Fiber.join(following)
      })
    )

    it.scoped("after Postgres ends the LISTEN connections, streams catch up and are woken by NOTIFY again", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { userId, checkoutId } = yield* fixture
        const reader = yield* instance
        const writer = yield* instance
        const append = (type: EventType) =>
          writer.sql
            .withTransaction(
              Effect.gen(function* () {
                yield* writer.sql`SELECT id FROM checkouts WHERE id = ${checkoutId} FOR UPDATE`
                yield* writer.events.append([{ type, checkoutId, userId, data: { type } }])
              })
            )
            .pipe(Effect.zipRight(writer.events.publish(checkoutId)))
        const queue = yield* Queue.unbounded<EventRow>()
        yield* reader.events.stream(checkoutId, "0", { follow: true }).pipe(
          Stream.runForEach((row) => Queue.offer(queue, row)),
          Effect.forkScoped
        )
        yield* append("checkout.created")
        expect((yield* received(queue)).type).toBe("checkout.created")

        const listeners = sql<{ pid: number }>`
          SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'`.pipe(
          Effect.map((rows) => rows.map((row) => row.pid))
        )
        const before = yield* listeners
        yield* sql`
          SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND query ILIKE 'LISTEN%'`
        // Appended while the reader is (most likely) not listening: its NOTIFY is lost, and the sweep after
        // the reconnection finds it.
        yield* append("checkout.payment_declined")
        expect((yield* received(queue)).type).toBe("checkout.payment_declined")
        yield* eventually(
          listeners,
          (pids) => pids.length >= before.length && pids.every((pid) => !before.includes(pid)),
          "new LISTEN connections"
        )
        yield* append("checkout.cancelled")
        expect((yield* received(queue)).type).toBe("checkout.cancelled")
      })
    )
  })
})

describe("events: signals are hints", () => {
  layer(TestDatabase, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.scoped("an event whose signal never came still reaches the stream, found by the sweep", () =>
      Effect.gen(function* () {
        const { userId, checkoutId } = yield* fixture
        const sql = yield* SqlClient.SqlClient
        const events = yield* Layer.build(
          Events.Default.pipe(
            Layer.provide(Layer.succeed(EventsPollInterval, Duration.millis(50))),
            Layer.provide(Signals.layerInProcess)
          )
        ).pipe(Effect.map(Context.get(Events)))
        // Nothing here ever publishes: the stream can only learn of an event by reading.
        const append = (type: EventType) =>
          sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`SELECT id FROM checkouts WHERE id = ${checkoutId} FOR UPDATE`
              yield* events.append([{ type, checkoutId, userId, data: { type } }])
            })
          )

        // Appended before the stream opens: its first read returns it, so that read has happened.
        yield* append("checkout.created")
        const queue = yield* Queue.unbounded<EventRow>()
        yield* events.stream(checkoutId, "0", { follow: true }).pipe(
          Stream.runForEach((row) => Queue.offer(queue, row)),
          Effect.forkScoped
        )
        expect((yield* received(queue)).type).toBe("checkout.created")
        // Never signalled, and after the stream's only unprompted read: only the sweep can find it.
        yield* append("checkout.payment_declined")
        expect((yield* received(queue)).type).toBe("checkout.payment_declined")
      })
    )

    it.scoped("a resync (signals were lost) runs the sweep at once", () =>
      Effect.gen(function* () {
        const { userId, checkoutId } = yield* fixture
        const sql = yield* SqlClient.SqlClient
        const context = yield* Layer.build(
          Events.Default.pipe(
            // Only the start's sweep: after it, a resync is the only way to have one.
            Layer.provide(Layer.succeed(EventsPollInterval, Duration.hours(1))),
            Layer.provideMerge(Signals.layerInProcess)
          )
        )
        const events = Context.get(context, Events)
        const append = (type: EventType) =>
          sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`SELECT id FROM checkouts WHERE id = ${checkoutId} FOR UPDATE`
              yield* events.append([{ type, checkoutId, userId, data: { type } }])
            })
          )

        yield* append("checkout.created")
        const queue = yield* Queue.unbounded<EventRow>()
        yield* events.stream(checkoutId, "0", { follow: true }).pipe(
          Stream.runForEach((row) => Queue.offer(queue, row)),
          Effect.forkScoped
        )
        expect((yield* received(queue)).type).toBe("checkout.created")
        // Appended and never published, as if its signal had been lost with the LISTEN connection.
        yield* append("checkout.payment_declined")
        yield* Context.get(context, Signals).notify(EventsChannel, resync)
        expect((yield* received(queue)).type).toBe("checkout.payment_declined")
      })
    )
  })
})

describe("events: shutdown", () => {
  layer(TestDatabase, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.scoped("endStreams ends the open streams after what they have read, and any opened later", () =>
      Effect.gen(function* () {
        const { userId, checkoutId } = yield* fixture
        const sql = yield* SqlClient.SqlClient
        const events = yield* Layer.build(Events.Default.pipe(Layer.provide(Signals.layerInProcess))).pipe(
          Effect.map(Context.get(Events))
        )
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`SELECT id FROM checkouts WHERE id = ${checkoutId} FOR UPDATE`
            yield* events.append([{ type: "checkout.created", checkoutId, userId, data: {} }])
          })
        )
        const queue = yield* Queue.unbounded<EventRow>()
        const following = yield* events.stream(checkoutId, "0", { follow: true }).pipe(
          Stream.runForEach((row) => Queue.offer(queue, row)),
          Effect.fork
        )
        expect((yield* received(queue)).type).toBe("checkout.created")
        expect(yield* events.streamsEnded).toBe(false)

        yield* events.endStreams
        // No final event: the stream ends because the instance shuts down.
        yield* Fiber.join(following).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "still open" }))
        expect(yield* events.streamsEnded).toBe(true)
        yield* Stream.runDrain(events.stream(checkoutId, "0", { follow: true })).pipe(
          Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "a later stream still open" })
        )
      })
    )
  })
})
