import { Chunk, Clock, Context, Deferred, Duration, Effect, Option, Queue, Schedule, Stream } from "effect"
import { type EventType, terminalStatuses } from "../../domain/checkout/Checkout.js"
import { EventRow, type NewEvent } from "../../domain/checkout/Events.js"
import { resync, Signals } from "../platform/Signals.js"
import { EventsRepo } from "./EventsRepo.js"

/**
 * The `events` table (docs/decisions/0029-events-and-sse.md): every state change of a checkout or its orders appends a
 * row in the same transaction as the change, under a global sequence. It is the source of the event stream
 * (`eventsUrl`, replayed from `Last-Event-ID`) and of agent callbacks.
 *
 * Each append signals the `events` channel with the checkout id when its transaction commits: on Postgres
 * (`LISTEN/NOTIFY` across instances) the appending statement carries the `pg_notify`; embedded, `publish`
 * sends it on an in-process PubSub after the commit. Streams re-read on each signal.
 * Signals are hints, so every 2 seconds (and at once on a `resync`, when signals were lost) one query per
 * instance also finds the streams that missed one.
 */

export const EventsChannel = "events"

export { EventRow, type NewEvent }

/** Event types after which a checkout's stream ends: those announcing a final status. */
export const terminalEventTypes: ReadonlySet<string> = new Set(
  [...terminalStatuses].map((status) => `checkout.${status}`)
)

/** Rows read per round trip while replaying. */
const pageSize = 200

/**
 * How often the service looks for events its streams were not signalled (signals are hints). A Reference,
 * read when the service is built, so tests can stop it.
 */
export class EventsPollInterval extends Context.Reference<EventsPollInterval>()("ribbon/EventsPollInterval", {
  defaultValue: (): Duration.Duration => Duration.seconds(2)
}) {}

/** An open stream, as the service sees it: how to wake it, and the last event id it read. */
interface Watcher {
  readonly wake: Queue.Queue<void>
  cursor: string
}

export class Events extends Effect.Service<Events>()("Events", {
  scoped: Effect.gen(function* () {
    const repo = yield* EventsRepo
    const signals = yield* Signals

    const watchers = new Map<string, Set<Watcher>>()
    // Completed on shutdown (`endStreams`): every stream ends, so that its client reconnects elsewhere.
    const ending = yield* Deferred.make<void>()

    // Signals are hints, so every `EventsPollInterval` one query looks for watched checkouts with events
    // past a stream's cursor and wakes those streams: one statement per instance, however many are open.
    const sweep = Effect.gen(function* () {
      if (watchers.size === 0) return
      const latest = yield* repo.lastIds([...watchers.keys()]).pipe(
        // Never cancelled mid-statement (see `after`).
        Effect.uninterruptible
      )
      for (const { checkoutId, lastId } of latest) {
        for (const watcher of watchers.get(checkoutId) ?? []) {
          if (BigInt(lastId) > BigInt(watcher.cursor)) yield* Queue.offer(watcher.wake, undefined)
        }
      }
    })
    const sweepOrLog = sweep.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Events: the sweep for missed signals failed", cause))
    )

    // One subscription for the service, fanned out by checkout id to the streams watching it: a signal
    // wakes one checkout's streams, not every open stream (which costs most of the CPU with many open).
    // A `resync` (signals were lost) runs the sweep at once rather than leaving it to the next interval.
    const signalled = yield* signals.subscribe(EventsChannel)
    yield* signalled.pipe(
      Stream.runForEach((checkoutId) =>
        checkoutId === resync
          ? sweepOrLog
          : Effect.forEach(watchers.get(checkoutId) ?? [], (watcher) => Queue.offer(watcher.wake, undefined), {
              discard: true
            })
      ),
      Effect.forkScoped
    )

    yield* sweepOrLog.pipe(
      Effect.repeat(Schedule.spaced(yield* EventsPollInterval)),
      // Paced in real time, as Signals' probes are: a TestClock moving business time by days must not run
      // a sweep for every 2 seconds of it.
      Effect.withClock(Clock.make()),
      Effect.forkScoped
    )

    /** A stream's watcher of `checkoutId` from `afterId`, registered for the scope. */
    const watch = (checkoutId: string, afterId: string) =>
      Effect.acquireRelease(
        Effect.map(Queue.sliding<void>(1), (wake) => {
          const watcher: Watcher = { wake, cursor: afterId }
          const set = watchers.get(checkoutId) ?? new Set()
          set.add(watcher)
          watchers.set(checkoutId, set)
          return watcher
        }),
        (watcher) =>
          Effect.sync(() => {
            const set = watchers.get(checkoutId)
            set?.delete(watcher)
            if (set?.size === 0) watchers.delete(checkoutId)
          })
      )

    /**
     * Appends events on the ambient SqlClient, in one statement, their ids ascending in the order given: call
     * it inside the transaction of the change, holding the checkout's row lock (Checkouts.recordAll), so that
     * one checkout's events commit in the order of their ids.
     */
    const append = Effect.fn("Events.append")(function* (batch: ReadonlyArray<NewEvent>) {
      const createdAt = new Date(yield* Clock.currentTimeMillis)
      const rows = yield* repo.append(batch, createdAt, signalOnCommit(batch))
      return rows.map((row) => ({ id: row.id, createdAt }))
    })

    /**
     * The append's signals, where the appending statement can carry them (Postgres): one per checkout of the
     * batch, sent when it commits.
     */
    const signalOnCommit = (batch: ReadonlyArray<NewEvent>) =>
      Option.map(signals.onCommit, (notify) =>
        [...new Set(batch.map((event) => event.checkoutId))].map((id) => notify(EventsChannel, id))
      )

    /**
     * Wakes the streams of `checkoutId`; call after the transaction that appended has committed. Nothing to
     * do where the append's own statement signalled (`signalOnCommit`).
     */
    const publish = Effect.fn("Events.publish")((checkoutId: string) =>
      Option.isSome(signals.onCommit) ? Effect.void : signals.notify(EventsChannel, checkoutId)
    )

    /** A checkout's events with an id above `afterId`, oldest first. */
    const after = Effect.fn("Events.after")(function* (checkoutId: string, afterId: string, limit = pageSize) {
      return yield* repo.after(checkoutId, afterId, limit).pipe(
        // A stream is interrupted when its client goes; a cancelled query's late pg_cancel_backend could
        // hit the pooled connection's next statement, so the read finishes first.
        Effect.uninterruptible
      )
    })

    /**
     * The checkout's events after `afterId`, then (`follow`) new ones as they are appended; ends after a
     * terminal event, or once `endStreams` was called. Watches for signals before the first read, so nothing
     * appended in between is missed.
     */
    const stream = (
      checkoutId: string,
      afterId: string,
      options: { readonly follow: boolean }
    ): Stream.Stream<EventRow> =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const watcher = yield* watch(checkoutId, afterId)
          const readNew = Effect.gen(function* () {
            const rows = yield* after(checkoutId, watcher.cursor)
            if (rows.length > 0) watcher.cursor = rows[rows.length - 1]!.id
            return rows
          })
          const wakeUps = Stream.concat(Stream.make(undefined), Stream.fromQueue(watcher.wake))
          // A full page may have more behind it: read again at once rather than waiting for a wake-up.
          const drain = Stream.paginateChunkEffect(undefined, () =>
            Effect.map(
              readNew,
              (rows) =>
                [
                  Chunk.unsafeFromArray(rows),
                  rows.length === pageSize ? Option.some(undefined) : Option.none()
                ] as const
            )
          )
          // Not following (the checkout is already final): what is there, then the end.
          return (options.follow ? Stream.flatMap(wakeUps, () => drain) : drain).pipe(
            Stream.takeUntil((row) => terminalEventTypes.has(row.type)),
            Stream.interruptWhen(Deferred.await(ending))
          )
        })
      )

    /** How many events of `type` a checkout has, and when the latest of them was appended. */
    const countOf = Effect.fn("Events.countOf")(function* (checkoutId: string, type: EventType) {
      const row = Option.getOrUndefined(yield* repo.countOf(checkoutId, type))
      return { count: row?.count ?? 0, latestAt: Option.fromNullable(row?.latestAt) }
    })

    /** Shutdown: ends every stream, open now or opened later, after the events it has already read. */
    const endStreams = Deferred.succeed(ending, undefined).pipe(Effect.asVoid)

    /** Whether `endStreams` was called: a stream that ended may have ended for that reason. */
    const streamsEnded = Deferred.isDone(ending)

    return { append, publish, after, countOf, stream, endStreams, streamsEnded } as const
  }),
  dependencies: [EventsRepo.Default]
}) {}
