import {
  Cause,
  Chunk,
  Clock,
  Context,
  Data,
  DateTime,
  Deferred,
  Duration,
  Effect,
  Exit,
  FiberSet,
  Layer,
  Option,
  Queue,
  Schedule,
  Schema,
  Stream,
  SubscriptionRef
} from "effect"
import { type Id, makeId } from "../../domain/platform/Ids.js"
import { type ClaimedJob, Job, JobStatus } from "../../domain/platform/Jobs.js"
import { JobsRepo, type NewJobRow } from "./JobsRepo.js"
import { outsideTransactions, Signals } from "./Signals.js"
import { nowDate } from "./Time.js"

/**
 * Durable background work on the `jobs` table.
 *
 * - `Jobs.enqueue` inserts on the ambient SqlClient, so it commits or rolls back with the caller's
 *   `sql.withTransaction`, then signals workers on the `jobs` channel.
 * - A worker (`Jobs.run`, `Jobs.work`, `Jobs.layerWorker`) claims ready jobs of its kinds with
 *   `SELECT … FOR UPDATE SKIP LOCKED` in one short statement that marks them `running` under a lease,
 *   runs the handler outside any transaction, extends the lease while the handler runs, and records the
 *   outcome: `succeeded`; `pending` again at `now + delay` from the kind's retry `Schedule`; or `dead`.
 * - A job whose lease expired while `running` (its worker stopped) is claimed again. A job interrupted
 *   mid-run is handed back at once (`pending`, ready now, the stopped attempt not counted), so another
 *   worker takes it without waiting for the lease; should that fail too, the lease still runs out. Its work
 *   runs at least once, so handlers must be idempotent (use deterministic idempotency keys).
 * - `Jobs.drain` (on shutdown): no more claims; running jobs get a grace period, and those still running at
 *   its end are stopped and handed back as above.
 * - All times come from `Clock`, so `TestClock` drives `run_at` and leases.
 */

/** The signal channel workers listen on; the payload is the job's kind. */
export const JobsChannel = "jobs"

export { Job, JobStatus }

/** What a handler knows about the job it runs. */
export interface JobInfo {
  readonly id: Id
  readonly kind: string
  readonly key: Option.Option<string>
  /** 1 on the first run. */
  readonly attempt: number
  readonly maxAttempts: number
  readonly createdAt: DateTime.Utc
}

/** A handler failure that asks for the next attempt no sooner than `delay` (e.g. an HTTP `Retry-After`). */
export class JobRetryAfter extends Data.TaggedError("JobRetryAfter")<{
  readonly delay: Duration.DurationInput
  readonly message: string
}> {}

/** A handler failure that must not be retried: the job goes `dead` at once. */
export class JobAbandoned extends Data.TaggedError("JobAbandoned")<{
  readonly message: string
}> {}

/**
 * Retries: exponential from 1 second, doubling, capped at 10 minutes, each delay jittered by 0.8–1.2.
 * With the default 8 attempts a failing job is retried for about 4 minutes before it is dead.
 */
export const defaultRetry: Schedule.Schedule<unknown> = Schedule.exponential("1 second", 2).pipe(
  Schedule.union(Schedule.spaced("10 minutes")),
  Schedule.jittered
)

export const defaultMaxAttempts = 8
export const defaultLease = Duration.minutes(1)

export interface JobKindOptions {
  /** Runs in all, the first included (default 8). */
  readonly maxAttempts?: number
  /** Delays between attempts: its n-th delay follows the n-th failure. When it ends, the job is dead. */
  readonly retry?: Schedule.Schedule<unknown>
  /** How long a claim lasts without a heartbeat; the worker extends it every third of it (default 1 minute). */
  readonly lease?: Duration.DurationInput
  /** A run taking longer fails (and is retried). */
  readonly timeout?: Duration.DurationInput
}

/** A registered handler, made with `JobKind.handle`. `R` is what the handler needs. */
export interface JobHandler<out R = never> {
  readonly kind: JobKind<any, any>
  readonly run: (payload: unknown, job: JobInfo) => Effect.Effect<void, unknown, R>
}

/** What a set of handlers needs. */
export type HandlersContext<Hs extends ReadonlyArray<JobHandler<any>>> =
  Hs[number] extends JobHandler<infer R> ? R : never

/**
 * A kind of job: a name (stored in `jobs.kind`, never changed once shipped), its payload schema and its
 * retry policy. Define it once, next to the service that does the work:
 *
 * ```ts
 * export const DeliverWebhook = JobKind.make("webhook.deliver", Schema.Struct({ deliveryId: Id }), {
 *   retry: Schedule.fromDelays("5 seconds", "5 minutes", "30 minutes").pipe(Schedule.jittered)
 * })
 * yield* jobs.enqueue(DeliverWebhook, { deliveryId }, { key: deliveryId })
 * const handler = DeliverWebhook.handle(({ deliveryId }, job) => webhooks.deliver(deliveryId, job.attempt))
 * ```
 */
export class JobKind<A, I = A> {
  readonly maxAttempts: number
  readonly retry: Schedule.Schedule<unknown>
  readonly lease: Duration.Duration
  readonly timeout: Option.Option<Duration.Duration>

  private constructor(
    readonly name: string,
    readonly payload: Schema.Schema<A, I>,
    options: JobKindOptions
  ) {
    this.maxAttempts = options.maxAttempts ?? defaultMaxAttempts
    this.retry = options.retry ?? defaultRetry
    this.lease = Duration.decode(options.lease ?? defaultLease)
    this.timeout = Option.map(Option.fromNullable(options.timeout), Duration.decode)
    if (name.length === 0) throw new TypeError("JobKind: the name must not be empty")
    if (!Number.isInteger(this.maxAttempts) || this.maxAttempts < 1) {
      throw new TypeError(`JobKind ${name}: maxAttempts must be a positive integer`)
    }
    if (Duration.toMillis(this.lease) < 3) throw new TypeError(`JobKind ${name}: the lease is too short`)
  }

  static make<A, I>(name: string, payload: Schema.Schema<A, I>, options: JobKindOptions = {}): JobKind<A, I> {
    return new JobKind(name, payload, options)
  }

  /** The handler for this kind. A typed failure or a defect is retried; see also JobRetryAfter, JobAbandoned. */
  handle<E, R>(f: (payload: A, job: JobInfo) => Effect.Effect<void, E, R>): JobHandler<R> {
    const decode = Schema.decodeUnknown(this.payload)
    return { kind: this, run: (payload, job) => Effect.flatMap(decode(payload), (a) => f(a, job)) }
  }
}

/**
 * The delay before the next attempt after failed attempt `attempt` (1-based), read from the schedule
 * itself: none when the schedule has ended by then. Delay-based schedules only (no cron).
 */
export const retryDelay = (
  schedule: Schedule.Schedule<unknown>,
  attempt: number
): Effect.Effect<Option.Option<Duration.Duration>> =>
  // Step the schedule `attempt + 1` times: `Schedule.run` stops after the step that ends the schedule, so
  // step `attempt` continued exactly when there is an output after it.
  Effect.map(
    Schedule.run(
      Schedule.delays(schedule),
      0,
      Array.from({ length: attempt + 1 }, () => undefined)
    ),
    (delays) => (Chunk.size(delays) > attempt ? Chunk.get(delays, attempt - 1) : Option.none())
  )

export interface EnqueueOptions {
  /** Run no sooner than this long after now. */
  readonly delay?: Duration.DurationInput
  /** Run no sooner than this instant (wins over `delay`). */
  readonly runAt?: DateTime.DateTime
  /**
   * At most one job per (kind, key), whatever its status: enqueueing again returns the existing job's id
   * and changes nothing.
   */
  readonly key?: string
}

/** Jobs one worker runs at once unless told otherwise (`WORKER_CONCURRENCY`). */
export class WorkerConcurrency extends Context.Reference<WorkerConcurrency>()("ribbon/WorkerConcurrency", {
  defaultValue: () => 8
}) {}

export interface WorkerOptions {
  /** Jobs run at the same time by this worker (default: WorkerConcurrency). */
  readonly concurrency?: number
  /** How often to look for ready jobs without a signal: delayed retries, expired leases (default 1 second). */
  readonly pollInterval?: Duration.DurationInput
}

/** The text kept in `last_error`. */
const maxErrorLength = 4000
const describe = (cause: Cause.Cause<unknown>) => {
  const text = Cause.pretty(cause, { renderErrorCause: true })
  return text.length > maxErrorLength ? `${text.slice(0, maxErrorLength - 1)}…` : text
}

type Claimed = ClaimedJob

/** The worker's heartbeat found the job claimed again by someone else. */
class LeaseLost extends Data.TaggedError("LeaseLost") {}

/** A job still running when the shutdown grace ended (`Jobs.drain`). */
class GraceOver extends Data.TaggedError("GraceOver") {}

export class Jobs extends Effect.Service<Jobs>()("Jobs", {
  effect: Effect.gen(function* () {
    const repo = yield* JobsRepo
    const signals = yield* Signals

    // Shutdown (`drain`): `stopping` once it starts, when nothing more is claimed; `graceOver` once the jobs
    // still running must stop. `inFlight` counts the jobs being run here, by workers and `runNow`.
    const stopping = yield* Deferred.make<void>()
    const graceOver = yield* Deferred.make<void>()
    const inFlight = yield* SubscriptionRef.make(0)
    const counted = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        SubscriptionRef.update(inFlight, (n) => n + 1),
        () => self,
        () => SubscriptionRef.update(inFlight, (n) => n - 1)
      )

    /** The `jobs` row of a new job of `kind`, and when it is due. */
    const newJob = <A, I>(kind: JobKind<A, I>, payload: A, options: EnqueueOptions, now: number) =>
      Effect.gen(function* () {
        const encoded = yield* Effect.orDie(Schema.encode(kind.payload)(payload))
        const runAt =
          options.runAt !== undefined
            ? DateTime.toEpochMillis(options.runAt)
            : now + Duration.toMillis(options.delay ?? Duration.zero)
        const row: NewJobRow = {
          id: yield* makeId,
          kind: kind.name,
          key: options.key ?? null,
          payload: JSON.stringify(encoded),
          status: "pending",
          attempts: 0,
          maxAttempts: kind.maxAttempts,
          runAt: new Date(runAt),
          createdAt: new Date(now),
          updatedAt: new Date(now)
        }
        return { row, due: runAt <= now }
      })

    /** Adds a job; joins the caller's transaction. Returns its id (the existing one for a known key). */
    const enqueue = Effect.fn("Jobs.enqueue")(function* <A, I>(
      kind: JobKind<A, I>,
      payload: A,
      options: EnqueueOptions = {}
    ) {
      const { row, due } = yield* newJob(kind, payload, options, yield* Clock.currentTimeMillis)
      yield* Effect.annotateCurrentSpan({ "job.id": row.id, "job.kind": kind.name })
      const inserted = yield* repo.insert([row])
      if (inserted.length === 0 && options.key !== undefined) {
        const [existing] = yield* repo.idByKey(kind.name, options.key)
        yield* Effect.logDebug("job already enqueued").pipe(
          Effect.annotateLogs({ jobId: existing.id, jobKind: kind.name, jobKey: options.key })
        )
        return existing.id
      }
      yield* Effect.logDebug("job enqueued").pipe(Effect.annotateLogs({ jobId: row.id, jobKind: kind.name }))
      // Wake workers now when the job is ready now; a delayed job is found by their poll.
      if (due) yield* signals.notify(JobsChannel, kind.name)
      return row.id
    })

    /**
     * Adds several jobs of one kind in one statement; joins the caller's transaction. A job whose key is
     * already known is skipped, as `enqueue` skips it.
     */
    const enqueueAll = Effect.fn("Jobs.enqueueAll")(function* <A, I>(
      kind: JobKind<A, I>,
      jobs: ReadonlyArray<{ readonly payload: A; readonly options?: EnqueueOptions }>
    ) {
      if (jobs.length === 0) return
      const now = yield* Clock.currentTimeMillis
      const made = yield* Effect.forEach(jobs, ({ payload, options }) => newJob(kind, payload, options ?? {}, now))
      yield* Effect.annotateCurrentSpan({ "job.kind": kind.name, "job.count": jobs.length })
      yield* repo.insert(made.map(({ row }) => row))
      if (made.some(({ due }) => due)) yield* signals.notify(JobsChannel, kind.name)
    })

    const get = Effect.fn("Jobs.get")(function* (id: Id) {
      return yield* repo.findById(id)
    })

    /** When each still pending job of `kind` with one of these keys runs next, by key. */
    const nextRunsOf = Effect.fn("Jobs.nextRunsOf")(function* (kind: JobKind<any>, keys: ReadonlyArray<string>) {
      if (keys.length === 0) return new Map<string, DateTime.Utc>()
      const rows = yield* repo.nextRuns(kind.name, keys)
      return new Map(rows.map((row) => [row.key, row.runAt]))
    })

    /**
     * Makes the pending job of `kind` with `key` due now when it was due later (a retry that waits), and wakes the
     * workers; joins the caller's transaction. A running or ended job is left alone. Whether it was brought forward.
     */
    const dueNow = Effect.fn("Jobs.dueNow")(function* (kind: JobKind<any, any>, key: string) {
      const brought = yield* repo.readyNowByKey(kind.name, key, yield* nowDate)
      if (brought) yield* signals.notify(JobsChannel, kind.name)
      return brought
    })

    const extendLease = (job: Claimed, lease: Duration.Duration) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        repo.extendLease(job, new Date(now + Duration.toMillis(lease)), new Date(now)).pipe(
          // The heartbeat is interrupted when the handler ends. Interrupting a query sends a
          // pg_cancel_backend, which can land after the connection went back to the pool and cancel
          // whatever runs on it next: let the statement finish instead.
          Effect.uninterruptible
        )
      )

    /** Renews the lease every third of it; fails with LeaseLost (stopping the run) once it is lost. */
    const heartbeat = (job: Claimed, lease: Duration.Duration) => {
      const every = Duration.millis(Math.max(1, Math.floor(Duration.toMillis(lease) / 3)))
      return extendLease(job, lease).pipe(
        Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("could not extend the job's lease", cause), true)),
        Effect.delay(every),
        Effect.repeat({ while: (owned) => owned }),
        Effect.andThen(Effect.fail(new LeaseLost()))
      )
    }

    const recordOutcome = (kind: JobKind<any, any>, job: Claimed, exit: Exit.Exit<void, unknown>) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (Exit.isSuccess(exit)) {
          const owned = yield* repo.succeeded(job, new Date(now))
          if (!owned) return yield* Effect.logWarning("job succeeded, but its lease had been lost")
          return yield* Effect.logDebug("job succeeded")
        }
        const error = describe(exit.cause)
        const failure = Cause.failureOption(exit.cause)
        const abandoned = Option.exists(failure, (e) => e instanceof JobAbandoned)
        const retryAfter = Option.flatMap(failure, (e) =>
          e instanceof JobRetryAfter ? Option.some(Duration.decode(e.delay)) : Option.none()
        )
        const delay =
          abandoned || job.attempts >= job.maxAttempts
            ? Option.none()
            : Option.map(yield* retryDelay(kind.retry, job.attempts), (delay) =>
                Option.match(retryAfter, { onNone: () => delay, onSome: (after) => Duration.max(delay, after) })
              )
        if (Option.isNone(delay)) {
          const owned = yield* repo.dead(job, error, new Date(now))
          if (!owned) return yield* Effect.logWarning("job failed, but its lease had been lost", exit.cause)
          return yield* Effect.logError("job dead", exit.cause)
        }
        const runAt = new Date(now + Math.round(Duration.toMillis(delay.value)))
        const owned = yield* repo.retryAt(job, runAt, error, new Date(now))
        if (!owned) return yield* Effect.logWarning("job failed, but its lease had been lost", exit.cause)
        yield* Effect.logWarning(`job failed; retrying at ${runAt.toISOString()}`, exit.cause)
      }).pipe(Effect.orDie)

    /**
     * Hands a job this worker stopped running back to every worker: `pending` and ready now, with the stopped
     * attempt not counted (it did not fail), and a signal so that another instance claims it at once. Should
     * this fail, the lease still runs out and the job is claimed again then.
     */
    const handBack = (job: Claimed) =>
      Effect.gen(function* () {
        const now = yield* nowDate
        const owned = yield* repo.handBack(job, now)
        if (owned) yield* signals.notify(JobsChannel, job.kind)
      }).pipe(
        // The stopped handler's last statement may have been cancelled with pg_cancel_backend, which can
        // land on this one: try again shortly.
        Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(3)))),
        Effect.catchAllCause((cause) =>
          Effect.logWarning("could not hand the stopped job back; it is claimed again when its lease expires", cause)
        )
      )

    /**
     * Runs one claimed job and records its outcome. A job interrupted, or still running when the shutdown
     * grace ends, is handed back (`handBack`).
     */
    const process = <R>(handler: JobHandler<R>, job: Claimed): Effect.Effect<void, never, R> => {
      const kind = handler.kind
      const info: JobInfo = {
        id: job.id,
        kind: job.kind,
        key: Option.fromNullable(job.key),
        attempt: job.attempts,
        maxAttempts: job.maxAttempts,
        createdAt: job.createdAt
      }
      const run = Effect.try(() => JSON.parse(job.payload) as unknown).pipe(
        Effect.orDie,
        Effect.flatMap((payload) => handler.run(payload, info)),
        (run) =>
          Option.match(kind.timeout, {
            onNone: () => run,
            onSome: (timeout) => Effect.timeout(run, timeout)
          }),
        Effect.raceFirst(heartbeat(job, kind.lease)),
        Effect.raceFirst(Effect.zipRight(Deferred.await(graceOver), Effect.fail(new GraceOver())))
      )
      return Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          yield* Effect.logDebug("job started")
          const exit = yield* Effect.exit(restore(run))
          const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
          if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) {
            yield* Effect.logInfo("job interrupted; handing it back")
            return yield* handBack(job)
          }
          if (Option.exists(failure, (e) => e instanceof GraceOver)) {
            yield* Effect.logWarning("job stopped at the end of the shutdown grace; handing it back")
            return yield* handBack(job)
          }
          if (Option.exists(failure, (e) => e instanceof LeaseLost)) {
            return yield* Effect.logWarning("job stopped: its lease was lost and it was claimed again")
          }
          yield* recordOutcome(kind, job, exit)
        })
      ).pipe(
        counted,
        Effect.annotateLogs({ jobId: job.id, jobKind: job.kind, attempt: job.attempts }),
        Effect.withSpan("Jobs.process", {
          root: true,
          attributes: { "job.id": job.id, "job.kind": job.kind, "job.attempt": job.attempts }
        })
      )
    }

    /**
     * Runs a worker in the current fiber until interrupted: waits for a signal on the `jobs` channel or a
     * poll tick, then claims and runs ready jobs of the handlers' kinds, `concurrency` at a time.
     * Interrupting it interrupts the running handlers; their jobs keep their leases.
     */
    const work = Effect.fn("Jobs.work")(function* <const Hs extends ReadonlyArray<JobHandler<any>>>(
      handlers: Hs,
      options: WorkerOptions = {}
    ) {
      const byKind = new Map<string, JobHandler<HandlersContext<Hs>>>()
      for (const handler of handlers as ReadonlyArray<JobHandler<HandlersContext<Hs>>>) {
        if (byKind.has(handler.kind.name)) return yield* Effect.dieMessage(`two handlers for ${handler.kind.name}`)
        byKind.set(handler.kind.name, handler)
      }
      const kinds = [...byKind.keys()]
      if (kinds.length === 0) return yield* Effect.dieMessage("Jobs.work needs at least one handler")
      const leases = Object.fromEntries(handlers.map((h) => [h.kind.name, Duration.toMillis(h.kind.lease)]))
      const concurrency = options.concurrency ?? (yield* WorkerConcurrency)
      yield* Effect.annotateCurrentSpan({ "jobs.kinds": kinds.join(","), "jobs.concurrency": concurrency })

      const wake = yield* Queue.sliding<void>(1)
      const signalled = yield* signals.subscribe(JobsChannel)
      yield* signalled.pipe(
        Stream.filter((kind) => kind === "" || byKind.has(kind)),
        Stream.runForEach(() => Queue.offer(wake, undefined)),
        Effect.forkScoped
      )
      // The first tick is immediate: it drains what was enqueued before the subscription.
      yield* Queue.offer(wake, undefined).pipe(
        Effect.repeat(Schedule.spaced(options.pollInterval ?? "1 second")),
        Effect.forkScoped
      )

      const permits = yield* Effect.makeSemaphore(concurrency)
      const running = yield* FiberSet.make()
      const claimNext = Effect.gen(function* () {
        yield* permits.take(1)
        // Shutting down: claim nothing more (another instance will).
        if (yield* Deferred.isDone(stopping)) {
          yield* permits.release(1)
          return false
        }
        const [job] = yield* repo
          .claimNext(kinds, leases, yield* nowDate)
          .pipe(Effect.onError(() => permits.release(1)))
        const handler = job === undefined ? undefined : byKind.get(job.kind)
        if (job === undefined || handler === undefined) {
          yield* permits.release(1)
          return false
        }
        if (job.status === "dead") {
          yield* permits.release(1)
          yield* Effect.logError("job dead: its lease expired during its last attempt").pipe(
            Effect.annotateLogs({ jobId: job.id, jobKind: job.kind, attempt: job.attempts })
          )
          return true
        }
        yield* FiberSet.run(running, process(handler, job).pipe(Effect.ensuring(permits.release(1))))
        return true
      })
      const drain = Effect.gen(function* () {
        let more = true
        while (more) more = yield* claimNext
      }).pipe(
        // A database outage must not stop the worker: log, and try again on the next wake-up.
        Effect.catchAllCause((cause) => Effect.logError("Jobs: claiming failed", cause))
      )
      return yield* Effect.forever(Effect.zipRight(Queue.take(wake), drain))
    }, Effect.scoped)

    /** Makes the pending job `id` ready now, and wakes the workers. */
    const readyNow = (id: Id, kind: string) =>
      Effect.gen(function* () {
        const now = yield* nowDate
        yield* repo.readyNow(id, now)
        yield* signals.notify(JobsChannel, kind)
      }).pipe(Effect.orDie)

    /**
     * Runs the job `id` here and now with `handler`, if it is still pending (whatever its `run_at`), under
     * the same lease, outcome and retry rules as a worker. Whether it ran. For work that should start at
     * once where it was enqueued, with a later `run_at` as the fallback should this process stop first.
     * While shutting down, it makes the job ready for any worker at once instead.
     */
    const runNow = Effect.fn("Jobs.runNow")(function* <R>(handler: JobHandler<R>, id: Id) {
      if (yield* Deferred.isDone(stopping)) {
        yield* readyNow(id, handler.kind.name)
        return false
      }
      const lease = Duration.toMillis(handler.kind.lease)
      const [job] = yield* repo.claimPending(id, handler.kind.name, lease, yield* nowDate)
      if (job === undefined) return false
      yield* process(handler, job)
      return true
    }, outsideTransactions)

    /** Starts a worker (see `work`) in the background for the life of the current scope. */
    const run = Effect.fn("Jobs.run")(function* <const Hs extends ReadonlyArray<JobHandler<any>>>(
      handlers: Hs,
      options: WorkerOptions = {}
    ) {
      yield* Effect.forkScoped(outsideTransactions(work(handlers, options)))
    })

    /**
     * Shutdown: from now on nothing more is claimed here (`work`, `runNow`); the jobs running here get
     * `grace` to finish, and those still running then are stopped and handed back, so that another instance
     * takes them at once. Returns when none runs here any more.
     */
    const drain = Effect.fn("Jobs.drain")(function* (grace: Duration.DurationInput) {
      yield* Deferred.succeed(stopping, undefined)
      const idle = inFlight.changes.pipe(
        Stream.takeUntil((n) => n === 0),
        Stream.runDrain
      )
      const left = yield* SubscriptionRef.get(inFlight)
      if (left > 0) yield* Effect.logInfo(`Jobs: waiting for ${left} running job(s) to finish`)
      // Interruptible, so that the timeout can stop the wait when called from a finalizer.
      yield* Effect.interruptible(idle).pipe(
        Effect.timeout(grace),
        Effect.catchTag("TimeoutException", () => Effect.zipRight(Deferred.succeed(graceOver, undefined), idle))
      )
    })

    return { enqueue, enqueueAll, get, nextRunsOf, dueNow, work, run, runNow, drain } as const
  }),
  dependencies: [JobsRepo.Default]
}) {
  /** A layer running a worker for these handlers as long as it is alive. */
  static layerWorker<const Hs extends ReadonlyArray<JobHandler<any>>>(
    handlers: Hs,
    options: WorkerOptions = {}
  ): Layer.Layer<never, never, Jobs | HandlersContext<Hs>> {
    return Layer.scopedDiscard(Effect.flatMap(Jobs, (jobs) => jobs.run(handlers, options)))
  }
}
