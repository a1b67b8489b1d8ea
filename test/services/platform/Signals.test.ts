import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Chunk, Context, Data, type Duration, Effect, Layer, Option, Queue, Redacted, type Scope, Stream } from "effect"
import { postgres } from "../../../src/layers/Database.js"
import { resync, Signals } from "../../../src/services/platform/Signals.js"
import { TestDatabase } from "../../support/database.js"
import { eventually } from "../../support/eventually.js"

/** Collects what a subscription receives, from the moment `subscribe` returns. */
const collect = (signals: Signals, channel: string) =>
  Effect.gen(function* () {
    const received = yield* Queue.unbounded<string>()
    const stream = yield* signals.subscribe(channel)
    yield* Effect.forkScoped(Stream.runForEach(stream, (payload) => Queue.offer(received, payload)))
    return received
  })

const next = (received: Queue.Queue<string>) =>
  Queue.take(received).pipe(
    Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("no signal within 5 seconds") })
  )

/** What arrived within `wait` (nothing more is expected). */
const drainAfter = (received: Queue.Queue<string>, wait: Duration.DurationInput) =>
  Effect.sleep(wait).pipe(Effect.andThen(Queue.takeAll(received)), Effect.map(Chunk.toReadonlyArray))

class Rollback extends Data.TaggedError("Rollback") {}

/** What both implementations do; `makeSignals` builds a fresh instance for each test. */
const behaviour = <R>(
  it: { readonly scoped: (name: string, self: () => Effect.Effect<void, Error, Scope.Scope | R>) => void },
  makeSignals: Effect.Effect<Signals, never, Scope.Scope | R>
) => {
  it.scoped("delivers payloads to the subscribers of that channel only, in order", () =>
    Effect.gen(function* () {
      const signals = yield* makeSignals
      const jobs = yield* collect(signals, "jobs")
      const events = yield* collect(signals, "events")
      yield* signals.notify("jobs", "a")
      yield* signals.notify("events", "x")
      yield* signals.notify("jobs")
      yield* signals.notify("jobs", "b")
      expect([yield* next(jobs), yield* next(jobs), yield* next(jobs)]).toEqual(["a", "", "b"])
      expect(yield* next(events)).toBe("x")
      expect(yield* drainAfter(events, "100 millis")).toEqual([])
    })
  )

  it.scoped("a subscriber that stops does not silence the others", () =>
    Effect.gen(function* () {
      const signals = yield* makeSignals
      const staying = yield* collect(signals, "shared")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const leaving = yield* collect(signals, "shared")
          yield* signals.notify("shared", "both")
          expect(yield* next(leaving)).toBe("both")
        })
      )
      expect(yield* next(staying)).toBe("both")
      yield* signals.notify("shared", "after")
      expect(yield* next(staying)).toBe("after")
    })
  )

  it.scoped("listen is a stream of the payloads", () =>
    Effect.gen(function* () {
      const signals = yield* makeSignals
      const fiber = yield* Effect.forkScoped(Stream.runCollect(Stream.take(signals.listen("listened"), 2)))
      // `listen` subscribes when the stream starts: keep notifying until the stream has both.
      yield* signals
        .notify("listened", "ping")
        .pipe(Effect.andThen(Effect.sleep("20 millis")), Effect.repeat({ while: () => fiber.unsafePoll() === null }))
      const received = Chunk.toReadonlyArray(yield* fiber.await.pipe(Effect.flatten))
      expect(received).toEqual(["ping", "ping"])
    })
  )
}

describe("Signals", () => {
  describe("in-process", () => {
    layer(Layer.empty, { excludeTestServices: true })((it) => {
      behaviour(it, Effect.map(Layer.build(Signals.layerInProcess), Context.get(Signals)))
    })
  })

  const url = process.env.DATABASE_URL
  describe.skipIf(url === undefined)("Postgres LISTEN/NOTIFY", () => {
    layer(Layer.mergeAll(TestDatabase, Signals.layerPostgres.pipe(Layer.provideMerge(TestDatabase))), {
      excludeTestServices: true,
      timeout: "60 seconds"
    })((it) => {
      /** Another instance: its own PgClient (pool and LISTEN connection) on the test database. */
      const otherInstance = Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [{ name }] = yield* Effect.orDie(sql<{ name: string }>`SELECT current_database() AS name`)
        const databaseUrl = new URL(url!)
        databaseUrl.pathname = `/${name}`
        const client = postgres(Redacted.make(databaseUrl.toString()), { maxConnections: 2 })
        return yield* Effect.map(
          Layer.build(Signals.layerPostgres.pipe(Layer.provide(client))).pipe(Effect.orDie),
          Context.get(Signals)
        )
      })

      behaviour(it, otherInstance)

      it.scoped("carries signals between instances", () =>
        Effect.gen(function* () {
          const here = yield* Signals
          const there = yield* otherInstance
          const received = yield* collect(there, "jobs")
          yield* here.notify("jobs", "from here")
          expect(yield* next(received)).toBe("from here")
        })
      )

      it.scoped("inside a transaction, delivers at commit and drops on rollback", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const here = yield* Signals
          const there = yield* otherInstance
          const received = yield* collect(there, "events")

          yield* sql.withTransaction(
            Effect.gen(function* () {
              yield* here.notify("events", "committed")
              expect(yield* drainAfter(received, "300 millis")).toEqual([])
            })
          )
          expect(yield* next(received)).toBe("committed")

          const rolledBack = yield* sql
            .withTransaction(
              Effect.gen(function* () {
                yield* here.notify("events", "rolled back")
                return yield* new Rollback()
              })
            )
            .pipe(Effect.flip)
          expect(rolledBack).toBeInstanceOf(Rollback)
          yield* here.notify("events", "later")
          expect(yield* next(received)).toBe("later")
          expect(yield* drainAfter(received, "100 millis")).toEqual([])
        })
      )

      it.scoped("when Postgres ends the LISTEN connection, a new one LISTENs again and subscribers resync", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const here = yield* Signals
          const there = yield* otherInstance
          const received = yield* collect(there, "reconnected")
          // What an operator (or an outage) does: end every LISTEN backend of this database.
          const listeners = Effect.orDie(sql<{ pid: number }>`
            SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'`).pipe(
            Effect.map((rows) => rows.map((row) => row.pid))
          )
          const before = yield* listeners
          expect(before.length).toBeGreaterThan(0)
          yield* Effect.orDie(sql`
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND query ILIKE 'LISTEN%'`)

          yield* eventually(
            listeners,
            (pids) => pids.length > 0 && pids.every((pid) => !before.includes(pid)),
            "a new LISTEN connection"
          )
          // Whatever was notified while the connection was down is lost: subscribers are told to re-read.
          expect(yield* next(received)).toBe(resync)
          // Signals has no poll of its own: only the new connection can bring this one.
          yield* here.notify("reconnected", "after")
          expect(yield* next(received)).toBe("after")
          expect(yield* drainAfter(received, "100 millis")).toEqual([])
        })
      )

      it.scoped("payloads not sent by notify (earlier versions' readiness probes) never reach subscribers", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const here = yield* Signals
          const received = yield* collect(here, "probed")
          yield* Effect.orDie(sql`SELECT pg_notify('probed', '?')`)
          yield* Effect.orDie(sql`SELECT pg_notify('probed', 'unprefixed')`)
          yield* here.notify("probed", "real")
          expect(yield* next(received)).toBe("real")
          expect(Option.isNone(yield* Queue.poll(received))).toBe(true)
          expect(yield* drainAfter(received, "200 millis")).toEqual([])
        })
      )
    })
  })
})
