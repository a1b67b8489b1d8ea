import { SqlClient, type Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import {
  Clock,
  Context,
  Deferred,
  Duration,
  Effect,
  FiberId,
  Layer,
  Metric,
  Option,
  PubSub,
  Redacted,
  Schedule,
  type Scope,
  Stream
} from "effect"
import Pg from "pg"

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
 * (Postgres limits). The empty payload, `resync`, means "anything on the channel may have changed".
 */
export interface SignalsShape {
  /** Wakes every current subscriber of `channel` with `payload` (default `resync`). */
  readonly notify: (channel: string, payload?: string) => Effect.Effect<void>
  /**
   * Subscribes to `channel`. Once this effect has completed, every notification sent afterwards reaches
   * the returned stream (until the scope closes). Subscribe first, then read the database, then re-read
   * on each signal: nothing falls in between. Should signals be lost all the same (the LISTEN connection
   * was lost and reopened), the stream receives `resync`.
   */
  readonly subscribe: (channel: string) => Effect.Effect<Stream.Stream<string>, never, Scope.Scope>
  /** The payloads notified on `channel`; the subscription starts when the stream is run. */
  readonly listen: (channel: string) => Stream.Stream<string>
  /**
   * On Postgres, a select-list expression that notifies `channel` with `payload` when the transaction of
   * the statement carrying it commits: a statement that writes what the signal announces can carry it and
   * save a statement of its own. None in-process, where `notify` after the commit is the way.
   */
  readonly onCommit: Option.Option<(channel: string, payload: string) => Statement.Fragment>
}

/**
 * The payload that means "anything on this channel may have changed: re-read it all". `notify(channel)`
 * sends it, and on Postgres every subscriber receives one when the LISTEN connection comes back, since
 * whatever was notified while it was down is lost.
 */
export const resync = ""

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
  readonly onCommit: SignalsShape["onCommit"]
}): SignalsShape => {
  const subscribe = Effect.fn("Signals.subscribe")(function* (channel: string) {
    const messages = yield* PubSub.subscribe(options.hub)
    yield* options.ready(channel)
    return Stream.fromQueue(messages).pipe(
      Stream.filterMap((message) => (message.channel === channel ? Option.some(message.payload) : Option.none()))
    )
  })
  return {
    notify: Effect.fn("Signals.notify")(function* (channel: string, payload = resync) {
      yield* Effect.annotateCurrentSpan("signal.channel", channel)
      yield* options.notify(channel, payload)
    }),
    subscribe,
    listen: (channel) => Stream.unwrapScoped(subscribe(channel)),
    onCommit: options.onCommit
  }
}

const makeInProcess = Effect.gen(function* () {
  const hub = yield* Effect.acquireRelease(PubSub.sliding<Message>(bufferSize), PubSub.shutdown)
  return makeShape({
    hub,
    notify: (channel, payload) => PubSub.publish(hub, { channel, payload }),
    ready: () => Effect.void,
    onCommit: Option.none()
  })
})

/** Runs `self` on the pool even when forked from inside a caller's `sql.withTransaction`. */
export const outsideTransactions = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.mapInputContext(
    self,
    (context: Context.Context<R>) => Context.omit(SqlClient.TransactionConnection)(context) as Context.Context<R>
  )

/*
 * Postgres wire payloads carry a one-character prefix, `:` for an application payload, so that an empty
 * payload still says something. Anything else on a channel (the readiness probes of earlier versions, `?`)
 * is not for subscribers.
 */
const messagePrefix = ":"

/** Times a LISTEN connection has been lost (ended by the server, or gone silent). */
export const listenConnectionLosses = Metric.counter("ribbon_signals_listen_losses_total", {
  description: "Times the Postgres LISTEN connection was lost and had to be reopened",
  incremental: true
})

/** Reopening the LISTEN connection: at once, then after 100 ms doubling (with jitter) up to every 5 seconds. */
const reconnect = Schedule.exponential("100 millis").pipe(
  Schedule.jittered,
  Schedule.union(Schedule.spaced("5 seconds"))
)

/** How often an idle LISTEN connection is checked, and how long the check may take before it counts as lost. */
const probeEvery = Duration.seconds(10)
const probeTimeout = Duration.seconds(5)

/** How long `subscribe` waits for the first LISTEN connection before going on without it (readers also poll). */
const readyTimeout = Duration.seconds(5)

/** The `pg` client settings of the LISTEN connection: those of the pool it sits beside. */
const clientConfig = (config: PgClient.PgClientConfig): Pg.ClientConfig => ({
  connectionString: config.url === undefined ? undefined : Redacted.value(config.url),
  host: config.host,
  port: config.port,
  database: config.database,
  user: config.username,
  password: config.password === undefined ? undefined : Redacted.value(config.password),
  ssl: config.ssl,
  ...(config.stream === undefined ? {} : { stream: config.stream }),
  types: config.types,
  connectionTimeoutMillis: Duration.toMillis(config.connectTimeout ?? "5 seconds"),
  // Tells operators which backend it is in `pg_stat_activity`.
  application_name: "ribbon-signals"
})

/** An open LISTEN connection, and what ends it: the client's `error` or `end` event. */
interface Connection {
  readonly client: Pg.Client
  readonly lost: Deferred.Deferred<unknown>
}

/** Opens a client that hands each notification to `onNotification`; interrupting it closes the client. */
const connect = (config: Pg.ClientConfig, onNotification: (message: Pg.Notification) => void) =>
  Effect.async<Connection, unknown>((resume) => {
    const client = new Pg.Client(config)
    const lost = Deferred.unsafeMake<unknown>(FiberId.none)
    // Listeners from the start, for the life of the client: an `error` event without one would crash the process.
    client.on("error", (error) => Deferred.unsafeDone(lost, Effect.succeed(error)))
    client.on("end", () => Deferred.unsafeDone(lost, Effect.succeed(new Error("Connection ended"))))
    client.on("notification", onNotification)
    client.connect().then(
      () => resume(Effect.succeed({ client, lost })),
      (error: unknown) => resume(Effect.fail(error))
    )
    return close(client)
  })

/** Ends the client, giving up after a second (it runs in finalizers: interruptible, so the timeout can win). */
const close = (client: Pg.Client) =>
  Effect.tryPromise(() => client.end()).pipe(
    Effect.ignore,
    Effect.interruptible,
    Effect.timeoutOption("1 second"),
    Effect.asVoid
  )

const listenOn = (client: Pg.Client, channel: string) =>
  Effect.tryPromise({ try: () => client.query(`LISTEN ${Pg.escapeIdentifier(channel)}`), catch: (error) => error })

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * One connection of its own (not the pool's) `LISTEN`s on every channel subscribed to, for the life of the
 * layer, and hands notifications to subscribers through an in-process hub. Postgres may end that connection
 * (a restart, an outage, `pg_terminate_backend`) or it may go silent: its `error`/`end` events and a probe
 * every 10 seconds tell, and it is reopened on the `reconnect` schedule, `LISTEN`s on every channel again,
 * and each subscriber receives one `resync`, since what was notified in between is lost.
 */
const makePostgres = Effect.gen(function* () {
  const pg = yield* PgClient.PgClient
  const hub = yield* Effect.acquireRelease(PubSub.sliding<Message>(bufferSize), PubSub.shutdown)
  const layerScope = yield* Effect.scope
  const config = clientConfig(pg.config)
  // Probe pacing and reconnections measure network round trips, not business time: they use a real clock
  // so that a TestClock driving the business logic never freezes them.
  const realTime = Clock.make()

  const channels = new Set<string>()
  /** The LISTEN connection while it is open. */
  let current: Pg.Client | undefined
  const firstConnected = yield* Deferred.make<void>()
  /** Since when (real time) signals are not heard, and how many reopenings failed: for one log line each way. */
  let outage: { readonly since: number; failedAttempts: number } | undefined

  const deliver = (message: Pg.Notification) => {
    if (message.payload?.startsWith(messagePrefix)) {
      hub.unsafeOffer({ channel: message.channel, payload: message.payload.slice(messagePrefix.length) })
    }
  }

  // A LISTEN the connection already has: a no-op on the server (and what `pg_stat_activity` keeps showing
  // for it) that fails or hangs on a connection that died without a word (a network partition).
  const probe = (client: Pg.Client) =>
    Effect.suspend(() => listenOn(client, channels.values().next().value!)).pipe(
      Effect.timeoutFail({ duration: probeTimeout, onTimeout: () => new Error("LISTEN probe timed out") }),
      Effect.zipRight(Effect.sleep(probeEvery)),
      Effect.forever,
      Effect.flip
    )

  /** One connection, from opening to loss. Fails when it cannot be opened (or cannot LISTEN). */
  const session = Effect.gen(function* () {
    const { client, lost } = yield* Effect.acquireRelease(
      Effect.interruptible(connect(config, deliver)),
      ({ client }) => close(client)
    )
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (current === client) current = undefined
      })
    )
    // `subscribe` LISTENs on the current connection for a channel it adds: set it before reading the
    // channels (in the same step), so that every channel is LISTENed here or there.
    current = client
    yield* Effect.forEach([...channels], (channel) => listenOn(client, channel), { discard: true })
    yield* Deferred.succeed(firstConnected, undefined)
    if (outage !== undefined) {
      const downMillis = (yield* Clock.currentTimeMillis) - outage.since
      yield* Effect.logInfo("Signals: the LISTEN connection is back").pipe(
        Effect.annotateLogs({ downMillis, failedAttempts: outage.failedAttempts })
      )
      outage = undefined
      for (const channel of channels) hub.unsafeOffer({ channel, payload: resync })
    }

    const error = yield* Effect.raceFirst(Deferred.await(lost), probe(client))
    outage = { since: yield* Clock.currentTimeMillis, failedAttempts: 0 }
    yield* Metric.increment(listenConnectionLosses)
    yield* Effect.logWarning("Signals: the LISTEN connection was lost; reconnecting").pipe(
      Effect.annotateLogs("cause", messageOf(error))
    )
  }).pipe(Effect.scoped)

  const reopenFailed = (error: unknown) =>
    Effect.gen(function* () {
      if (outage === undefined) {
        // Only at start: a loss has already been logged.
        outage = { since: yield* Clock.currentTimeMillis, failedAttempts: 0 }
        yield* Effect.logWarning("Signals: cannot open the LISTEN connection; retrying").pipe(
          Effect.annotateLogs("cause", messageOf(error))
        )
      }
      outage.failedAttempts += 1
      yield* Effect.logDebug("Signals: opening the LISTEN connection failed").pipe(
        Effect.annotateLogs("cause", messageOf(error))
      )
    })

  // A session ends when its connection is lost; the next one starts at once, with a fresh schedule.
  const connection = session.pipe(
    Effect.tapError(reopenFailed),
    Effect.retry(reconnect),
    Effect.forever,
    Effect.withClock(realTime)
  )

  // The first subscriber opens the connection; each subscriber waits until its channel is LISTENed on
  // it (or, while no connection is open, until one is or `readyTimeout` passes: readers also poll).
  const ready = (channel: string) =>
    Effect.gen(function* () {
      const first = channels.size === 0
      channels.add(channel)
      const client = current
      if (first) yield* Effect.forkIn(connection, layerScope)
      yield* (client === undefined ? Deferred.await(firstConnected) : listenOn(client, channel)).pipe(
        Effect.timeout(readyTimeout),
        Effect.ignore,
        Effect.withClock(realTime)
      )
    })

  return makeShape({
    hub,
    notify: (channel, payload) =>
      // On the ambient SqlClient: inside a transaction, Postgres delivers at commit and drops on rollback.
      Effect.orDie(pg`SELECT pg_notify(${channel}, ${messagePrefix + payload})`),
    ready,
    onCommit: Option.some((channel, payload) => pg`pg_notify(${channel}, ${messagePrefix + payload})`)
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
