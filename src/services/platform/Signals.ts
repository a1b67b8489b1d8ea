import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Deferred, Effect, FiberId, Layer, Option, PubSub, Schedule, type Scope, Stream } from "effect"

/**
 * Wake-up signals: "something changed on `channel`, go and look". The database stays the source of
 * truth; a signal only says when to read it again. Signals can be coalesced or (rarely) lost, so every
 * reader also polls or re-reads on its own schedule.
 *
 * Two implementations:
 * - `Signals.layerInProcess`: an in-process `PubSub`, for embedded PGlite (one process, and PGlite's
 *   socket server does not carry `LISTEN/NOTIFY` across connections). `notify` delivers at once.
 * - `Signals.layerPostgres`: Postgres `LISTEN/NOTIFY`, across every instance on the database. `notify`
 *   runs `pg_notify` on the ambient SqlClient, so inside `sql.withTransaction` it is delivered when the
 *   transaction commits and dropped when it rolls back.
 *
 * Use a few fixed channel names (`jobs`, `events`) and put specifics in the payload: each channel is
 * listened to for the life of the layer. Channel names are at most 63 bytes and payloads under 8000 bytes
 * (Postgres limits).
 */
export interface SignalsShape {
  /** Wakes every current subscriber of `channel` with `payload` (default `""`). */
  readonly notify: (channel: string, payload?: string) => Effect.Effect<void>
  /**
   * Subscribes to `channel`. Once this effect has completed, every notification sent afterwards reaches
   * the returned stream (until the scope closes). Subscribe first, then read the database, then re-read
   * on each signal: nothing falls in between.
   */
  readonly subscribe: (channel: string) => Effect.Effect<Stream.Stream<string>, never, Scope.Scope>
  /** The payloads notified on `channel`; the subscription starts when the stream is run. */
  readonly listen: (channel: string) => Stream.Stream<string>
}

interface Message {
  readonly channel: string
  readonly payload: string
}

/** Messages a slow subscriber may lag behind before the oldest are dropped (signals are hints). */
const bufferSize = 1024

const makeShape = (options: {
  readonly hub: PubSub.PubSub<Message>
  readonly notify: (channel: string, payload: string) => Effect.Effect<void>
  readonly ready: (channel: string) => Effect.Effect<void>
}): SignalsShape => {
  const subscribe = Effect.fn("Signals.subscribe")(function* (channel: string) {
    const messages = yield* PubSub.subscribe(options.hub)
    yield* options.ready(channel)
    return Stream.fromQueue(messages).pipe(
      Stream.filterMap((message) => (message.channel === channel ? Option.some(message.payload) : Option.none()))
    )
  })
  return {
    notify: Effect.fn("Signals.notify")(function* (channel: string, payload = "") {
      yield* Effect.annotateCurrentSpan("signal.channel", channel)
      yield* options.notify(channel, payload)
    }),
    subscribe,
    listen: (channel) => Stream.unwrapScoped(subscribe(channel))
  }
}

const makeInProcess = Effect.gen(function* () {
  const hub = yield* Effect.acquireRelease(PubSub.sliding<Message>(bufferSize), PubSub.shutdown)
  return makeShape({
    hub,
    notify: (channel, payload) => PubSub.publish(hub, { channel, payload }),
    ready: () => Effect.void
  })
})

/** Runs `self` on the pool even when forked from inside a caller's `sql.withTransaction`. */
export const outsideTransactions = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.mapInputContext(
    self,
    (context: Context.Context<R>) => Context.omit(SqlClient.TransactionConnection)(context) as Context.Context<R>
  )

/*
 * Postgres wire payloads carry a one-character prefix: `:` for an application payload, `?` for a readiness
 * probe. (PgClient.listen drops notifications whose payload is empty, and probes must not reach
 * subscribers.)
 */
const messagePrefix = ":"
const probePrefix = "?"

/**
 * One `LISTEN` per channel per layer, fanned out to subscribers through an in-process hub. (PgClient.listen
 * shares one connection and `UNLISTEN`s when a stream ends, which would silence the other streams of that
 * channel; so a channel's listener lives as long as the layer.)
 */
const makePostgres = Effect.gen(function* () {
  const pg = yield* PgClient.PgClient
  const hub = yield* Effect.acquireRelease(PubSub.sliding<Message>(bufferSize), PubSub.shutdown)
  const layerScope = yield* Effect.scope
  const listening = new Map<string, Deferred.Deferred<void>>()
  // Probe pacing and listener restarts measure network round trips, not business time: they use a real
  // clock so that a TestClock driving the business logic never freezes them.
  const realTime = Clock.make()

  const listener = (channel: string, ready: Deferred.Deferred<void>) =>
    pg.listen(channel).pipe(
      Stream.runForEach((raw) => {
        if (raw.startsWith(messagePrefix)) return PubSub.publish(hub, { channel, payload: raw.slice(1) })
        if (raw.startsWith(probePrefix)) return Deferred.succeed(ready, undefined)
        return Effect.void
      }),
      Effect.catchAllCause((cause) => Effect.logWarning("Signals: the LISTEN connection failed", cause)),
      Effect.repeat(Schedule.exponential("500 millis").pipe(Schedule.union(Schedule.spaced("30 seconds")))),
      Effect.annotateLogs("signal.channel", channel),
      Effect.withClock(realTime)
    )

  // Notifies a probe until this listener hears one: from then on, LISTEN is active on the server.
  // Gives up (and lets subscribers go on) after 5 seconds: the signal is a hint, readers also poll.
  const confirm = (channel: string, ready: Deferred.Deferred<void>) =>
    Effect.raceFirst(
      Deferred.await(ready),
      // Not PgClient.notify: it sends `NOTIFY channel, $1`, which Postgres rejects (NOTIFY takes no parameters).
      pg`SELECT pg_notify(${channel}, ${probePrefix})`.pipe(
        // Never cancelled mid-statement when the race ends: a late pg_cancel_backend would hit the
        // pooled connection's next statement (see Jobs' heartbeat).
        Effect.uninterruptible,
        Effect.catchAll((error) => Effect.logWarning("Signals: probe failed", error)),
        Effect.repeat(Schedule.spaced("50 millis")),
        Effect.andThen(Effect.never)
      )
    ).pipe(
      Effect.timeoutTo({
        duration: "5 seconds",
        onSuccess: () => Effect.void,
        onTimeout: () =>
          Effect.logWarning("Signals: LISTEN not confirmed within 5 seconds; continuing").pipe(
            Effect.andThen(Deferred.succeed(ready, undefined)),
            Effect.asVoid
          )
      }),
      Effect.flatten,
      Effect.annotateLogs("signal.channel", channel),
      Effect.withClock(realTime)
    )

  // The first subscriber of a channel starts its listener (for the life of the layer, not of that
  // subscriber) and every subscriber waits until the listener is confirmed.
  const ready = (channel: string) =>
    Effect.suspend(() => {
      const existing = listening.get(channel)
      if (existing !== undefined) return Deferred.await(existing)
      const deferred = Deferred.unsafeMake<void>(FiberId.none)
      listening.set(channel, deferred)
      return Effect.forkIn(outsideTransactions(listener(channel, deferred)), layerScope).pipe(
        Effect.andThen(Effect.forkIn(outsideTransactions(confirm(channel, deferred)), layerScope)),
        Effect.andThen(Deferred.await(deferred))
      )
    })

  return makeShape({
    hub,
    notify: (channel, payload) =>
      // On the ambient SqlClient: inside a transaction, Postgres delivers at commit and drops on rollback.
      Effect.orDie(pg`SELECT pg_notify(${channel}, ${messagePrefix + payload})`),
    ready
  })
})

export class Signals extends Effect.Service<Signals>()("Signals", { scoped: makeInProcess }) {
  /** In-process signals: embedded mode (one instance). */
  static readonly layerInProcess: Layer.Layer<Signals> = Signals.Default
  /** Postgres `LISTEN/NOTIFY`: every instance on the same database. */
  static readonly layerPostgres: Layer.Layer<Signals, never, PgClient.PgClient> = Layer.scoped(
    Signals,
    Effect.map(makePostgres, (shape) => Signals.make(shape))
  )
}
