import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import {
  Chunk,
  Clock,
  Context,
  Data,
  DateTime,
  Deferred,
  Duration,
  Effect,
  Fiber,
  HashMap,
  Layer,
  List,
  Logger,
  LogLevel,
  Option,
  Random,
  Ref,
  Schedule,
  Schema,
  TestClock,
  TestContext
} from "effect"
import type { Id } from "../../../src/domain/platform/Ids.js"
import {
  defaultRetry,
  JobAbandoned,
  JobKind,
  JobRetryAfter,
  Jobs,
  retryDelay
} from "../../../src/services/platform/Jobs.js"
import { Signals } from "../../../src/services/platform/Signals.js"
import { TestDatabase } from "../../support/database.js"
import { eventually, settle } from "../../support/eventually.js"

// On real Postgres the workers are woken through LISTEN/NOTIFY, as in production.
const SignalsLive = process.env.DATABASE_URL === undefined ? Signals.layerInProcess : Signals.layerPostgres

const TestLayer = Jobs.Default.pipe(
  Layer.provideMerge(SignalsLive),
  Layer.provideMerge(TestDatabase),
  Layer.merge(Logger.minimumLogLevel(process.env.TEST_LOG === undefined ? LogLevel.None : LogLevel.Debug))
)

class Boom extends Data.TaggedError("Boom")<{ readonly message: string }> {}

const Payload = Schema.Struct({ n: Schema.Number })

const job = (id: Id) => Effect.flatMap(Jobs, (jobs) => jobs.get(id)).pipe(Effect.map(Option.getOrThrow))

const epochMillis = (dateTime: DateTime.DateTime | null) =>
  dateTime === null ? null : DateTime.toEpochMillis(dateTime)

/** What a worker killed mid-run (`kill -9`) leaves behind: its job running, under a lease nobody renews. */
const killedWhileRunning = (id: Id, lease: Duration.DurationInput) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = yield* Clock.currentTimeMillis
    yield* sql`
      UPDATE jobs SET status = 'running', attempts = attempts + 1,
        lease_expires_at = ${new Date(now + Duration.toMillis(Duration.decode(lease)))}
      WHERE id = ${id}`
  })

/**
 * Wakes workers without enqueueing anything, so that they look at the current (test) time. Under TestClock
 * a poll tick's phase drifts with database round trips, so tests that move the clock also signal; polling
 * itself is tested on the real clock.
 */
const wakeWorkers = (kind: JobKind<any, any>) => Effect.flatMap(Signals, (signals) => signals.notify("jobs", kind.name))

describe("retryDelay", () => {
  it.effect("reads the n-th delay from the schedule, and none once it has ended", () =>
    Effect.gen(function* () {
      const schedule = Schedule.fromDelays("1 second", "5 seconds", "1 minute")
      const delays = yield* Effect.forEach([1, 2, 3, 4], (attempt) => retryDelay(schedule, attempt))
      expect(delays.map(Option.map(Duration.toMillis))).toEqual([
        Option.some(1_000),
        Option.some(5_000),
        Option.some(60_000),
        Option.none()
      ])
      const exponential = yield* Effect.forEach([1, 2, 3, 4, 5], (attempt) =>
        retryDelay(Schedule.exponential("10 seconds").pipe(Schedule.intersect(Schedule.recurs(4))), attempt)
      )
      expect(exponential.map(Option.map(Duration.toMillis))).toEqual([
        Option.some(10_000),
        Option.some(20_000),
        Option.some(40_000),
        Option.some(80_000),
        Option.none()
      ])
    })
  )

  it.effect("jitters the default schedule around 1 s, 2 s, 4 s… and caps it at 10 minutes (±20 %)", () =>
    Effect.gen(function* () {
      for (let round = 0; round < 20; round++) {
        for (const [attempt, base] of [
          [1, 1_000],
          [2, 2_000],
          [3, 4_000],
          [12, 600_000]
        ] as const) {
          const delay = Duration.toMillis(Option.getOrThrow(yield* retryDelay(defaultRetry, attempt)))
          expect(delay).toBeGreaterThanOrEqual(base * 0.8)
          expect(delay).toBeLessThanOrEqual(base * 1.2)
        }
      }
    }).pipe(Effect.withRandom(Random.make("jobs")))
  )
})

describe("Jobs", () => {
  layer(TestLayer, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.scoped("3 concurrent workers run each of 50 jobs exactly once", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const jobs = yield* Jobs
        yield* sql`CREATE TABLE job_runs (job_id text NOT NULL, worker integer NOT NULL, attempt integer NOT NULL)`
        const Work = JobKind.make("test.concurrent", Payload)
        const worker = (n: number) =>
          Work.handle((_, info) =>
            Effect.gen(function* () {
              yield* sql`INSERT INTO job_runs (job_id, worker, attempt) VALUES (${info.id}, ${n}, ${info.attempt})`
              yield* Effect.sleep(Duration.millis(yield* Random.nextIntBetween(0, 20)))
            }).pipe(Effect.orDie)
          )

        const ids: Array<Id> = []
        for (let n = 0; n < 25; n++) ids.push(yield* jobs.enqueue(Work, { n }))
        yield* Effect.forEach([1, 2, 3], (n) => jobs.run([worker(n)], { concurrency: 4, pollInterval: "200 millis" }))
        for (let n = 25; n < 50; n++) ids.push(yield* jobs.enqueue(Work, { n }))

        yield* eventually(
          sql<{
            count: number
          }>`SELECT count(*)::int AS count FROM jobs WHERE kind = ${Work.name} AND status = 'succeeded'`,
          ([row]) => row.count === 50,
          "50 succeeded jobs"
        )
        const runs = yield* sql<{ jobId: string; worker: number; attempt: number }>`SELECT * FROM job_runs`
        expect(runs).toHaveLength(50)
        expect(new Set(runs.map((run) => run.jobId))).toEqual(new Set(ids))
        expect(runs.every((run) => run.attempt === 1)).toBe(true)
        // The work was shared: the test would prove little if one worker had done it all.
        expect(new Set(runs.map((run) => run.worker)).size).toBeGreaterThan(1)
        const rows = yield* sql<{ status: string; attempts: number; leaseExpiresAt: Date | null }>`
          SELECT status, attempts, lease_expires_at FROM jobs WHERE kind = ${Work.name}`
        expect(
          rows.every((row) => row.status === "succeeded" && row.attempts === 1 && row.leaseExpiresAt === null)
        ).toBe(true)
      })
    )

    it.scoped("an enqueue inside a transaction commits or rolls back with it", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const jobs = yield* Jobs
        yield* sql`CREATE TABLE parcels (id text PRIMARY KEY)`
        const Send = JobKind.make("test.transactional", Schema.Struct({ gift: Schema.String }))
        const sent = yield* Ref.make<ReadonlyArray<string>>([])
        yield* jobs.run([Send.handle(({ gift }) => Ref.update(sent, (gifts) => [...gifts, gift]))], {
          pollInterval: "200 millis"
        })

        const rolledBack = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              yield* sql`INSERT INTO parcels (id) VALUES ('lost')`
              yield* jobs.enqueue(Send, { gift: "lost" })
              return yield* new Boom({ message: "payment declined" })
            })
          )
          .pipe(Effect.flip)
        expect(rolledBack).toBeInstanceOf(Boom)

        // Committed, after the workers were woken while the transaction was still open.
        const id = yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO parcels (id) VALUES ('kept')`
            const id = yield* jobs.enqueue(Send, { gift: "kept" })
            yield* settle
            return id
          })
        )
        yield* eventually(job(id), (row) => row.status === "succeeded", "the committed job to run")
        yield* settle
        expect(yield* Ref.get(sent)).toEqual(["kept"])
        expect(yield* sql`SELECT id FROM parcels`).toEqual([{ id: "kept" }])
        const rows = yield* sql<{
          payload: string
        }>`SELECT payload::text AS payload FROM jobs WHERE kind = ${Send.name}`
        expect(rows.map((row) => JSON.parse(row.payload))).toEqual([{ gift: "kept" }])
      })
    )

    it.scoped("a job whose worker was killed mid-run is claimed again once its lease expires", () =>
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const Slow = JobKind.make("test.killed", Payload, { lease: "30 seconds" })
        const attempts = yield* Ref.make<ReadonlyArray<number>>([])
        const handler = Slow.handle((_, info) => Ref.update(attempts, (all) => [...all, info.attempt]))

        const id = yield* jobs.enqueue(Slow, { n: 1 })
        yield* killedWhileRunning(id, "30 seconds")
        const orphaned = yield* job(id)
        expect(orphaned.status).toBe("running")
        expect(orphaned.attempts).toBe(1)
        expect(epochMillis(orphaned.leaseExpiresAt)).toBe(30_000)

        yield* jobs.run([handler], { pollInterval: "5 seconds" })
        yield* TestClock.adjust("29 seconds")
        yield* wakeWorkers(Slow)
        yield* settle
        expect(yield* Ref.get(attempts)).toEqual([])
        expect((yield* job(id)).status).toBe("running")

        yield* TestClock.adjust("2 seconds")
        yield* wakeWorkers(Slow)
        const done = yield* eventually(job(id), (row) => row.status === "succeeded", "the job to be reclaimed")
        expect(yield* Ref.get(attempts)).toEqual([2])
        expect(done.attempts).toBe(2)
        expect(done.lastError).toContain("lease expired")
        expect(done.leaseExpiresAt).toBeNull()
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("a job whose worker was killed during its last attempt ends dead, not run again", () =>
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const Once = JobKind.make("test.killed-last", Payload, { lease: "30 seconds", maxAttempts: 1 })
        const runs = yield* Ref.make(0)
        const handler = Once.handle(() => Ref.update(runs, (n) => n + 1))
        const id = yield* jobs.enqueue(Once, { n: 1 })
        yield* killedWhileRunning(id, "30 seconds")
        yield* jobs.run([handler], { pollInterval: "5 seconds" })
        yield* TestClock.adjust("31 seconds")
        yield* wakeWorkers(Once)
        const dead = yield* eventually(job(id), (row) => row.status === "dead", "the job to die")
        expect(dead.attempts).toBe(1)
        expect(dead.lastError).toContain("lease expired")
        expect(dead.leaseExpiresAt).toBeNull()
        yield* settle
        expect(yield* Ref.get(runs)).toBe(0)
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("a job whose worker is interrupted mid-run is handed back at once, the stopped attempt not counted", () =>
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const Stopped = JobKind.make("test.interrupted", Payload, { lease: "30 seconds" })
        const attempts = yield* Ref.make<ReadonlyArray<number>>([])
        const handler = Stopped.handle((_, info) =>
          Ref.modify(attempts, (all) => [all.length, [...all, info.attempt]]).pipe(
            // The first run hangs until its worker is interrupted; the second one finishes.
            Effect.flatMap((before) => (before === 0 ? Effect.never : Effect.void))
          )
        )
        const id = yield* jobs.enqueue(Stopped, { n: 1 })
        const first = yield* Effect.fork(jobs.work([handler], { pollInterval: "5 seconds" }))
        yield* eventually(Ref.get(attempts), (all) => all.length === 1, "the job to start")
        yield* Fiber.interrupt(first)

        const handedBack = yield* job(id)
        expect(handedBack.status).toBe("pending")
        expect(handedBack.attempts).toBe(0)
        expect(handedBack.leaseExpiresAt).toBeNull()
        // Another worker takes it at once: no clock moves, so no lease ran out.
        yield* jobs.run([handler], { pollInterval: "5 seconds" })
        const done = yield* eventually(job(id), (row) => row.status === "succeeded", "the job to run again")
        expect(done.attempts).toBe(1)
        expect(yield* Ref.get(attempts)).toEqual([1, 1])
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped(
      "draining, an instance claims nothing more, lets its jobs finish within the grace and hands the rest to another at once",
      () =>
        Effect.gen(function* () {
          // Two instances on the same database, as two servers.
          const instance = Effect.map(Layer.build(Layer.fresh(Jobs.Default)), Context.get(Jobs))
          const stopping = yield* instance
          const other = yield* instance
          const Work = JobKind.make("test.drain", Payload)
          const finish = yield* Deferred.make<void>()
          const runs = yield* Ref.make<ReadonlyArray<string>>([])
          // On the stopping instance, job 1 runs until `finish` and job 2 never ends; elsewhere they just run.
          const on = (name: string) =>
            Work.handle(({ n }) =>
              Ref.update(runs, (all) => [...all, `${name} ${n}`]).pipe(
                Effect.andThen(name === "stopping" ? (n === 1 ? Deferred.await(finish) : Effect.never) : Effect.void)
              )
            )
          const succeeded = (id: Id, what: string) => eventually(job(id), (row) => row.status === "succeeded", what)

          const finishing = yield* stopping.enqueue(Work, { n: 1 })
          const stuck = yield* stopping.enqueue(Work, { n: 2 })
          yield* stopping.run([on("stopping")], { pollInterval: "1 minute" })
          yield* eventually(Ref.get(runs), (all) => all.length === 2, "both jobs to start")
          yield* other.run([on("other")], { pollInterval: "1 minute" })

          const drained = yield* Effect.fork(stopping.drain("2 seconds"))
          yield* settle
          // Nothing more is claimed there: a new job goes to the other instance, and `runNow` hands its job over.
          yield* succeeded(yield* stopping.enqueue(Work, { n: 3 }), "the job enqueued during the drain")
          const paid = yield* stopping.enqueue(Work, { n: 4 }, { delay: "1 hour" })
          expect(yield* stopping.runNow(on("stopping"), paid)).toBe(false)
          yield* succeeded(paid, "the job runNow handed over")
          // A job that finishes within the grace is recorded as usual.
          yield* Deferred.succeed(finish, undefined)
          expect((yield* succeeded(finishing, "the job finishing within the grace")).attempts).toBe(1)
          // One still running when the grace ends is handed back and taken at once, not when its lease
          // (1 minute) would have run out; its stopped attempt does not count.
          yield* Fiber.join(drained)
          expect((yield* succeeded(stuck, "the stuck job, elsewhere")).attempts).toBe(1)
          expect([...(yield* Ref.get(runs))].sort()).toEqual([
            "other 2",
            "other 3",
            "other 4",
            "stopping 1",
            "stopping 2"
          ])
        })
    )

    it.scoped("a run longer than the lease keeps it by heartbeat: no other worker takes the job", () =>
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const Long = JobKind.make("test.long", Payload, { lease: "30 seconds" })
        const release = yield* Deferred.make<void>()
        const runs = yield* Ref.make(0)
        const handler = Long.handle(() => Ref.update(runs, (n) => n + 1).pipe(Effect.andThen(Deferred.await(release))))
        const id = yield* jobs.enqueue(Long, { n: 1 })
        yield* jobs.run([handler], { pollInterval: "5 seconds" })
        yield* eventually(Ref.get(runs), (n) => n === 1, "the job to start")
        yield* jobs.run([handler], { pollInterval: "5 seconds" })
        for (let i = 0; i < 6; i++) {
          yield* TestClock.adjust("15 seconds")
          yield* wakeWorkers(Long)
          yield* settle
        }
        const running = yield* job(id)
        expect(running.status).toBe("running")
        // Renewed well past the first lease (30 s), 90 s into the run.
        expect(epochMillis(running.leaseExpiresAt)).toBeGreaterThan(90_000)
        expect(yield* Ref.get(runs)).toBe(1)
        yield* Deferred.succeed(release, undefined)
        const done = yield* eventually(job(id), (row) => row.status === "succeeded", "the job to finish")
        expect(done.attempts).toBe(1)
        expect(yield* Ref.get(runs)).toBe(1)
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("retries at the delays of the kind's schedule, and only once the clock reaches them", () =>
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const Flaky = JobKind.make("test.flaky", Payload, {
          maxAttempts: 4,
          retry: Schedule.exponential("10 seconds")
        })
        const runs = yield* Ref.make<ReadonlyArray<number>>([])
        const handler = Flaky.handle((_, info) =>
          Ref.update(runs, (all) => [...all, info.attempt]).pipe(
            Effect.andThen(info.attempt < 3 ? new Boom({ message: `boom ${info.attempt}` }) : Effect.void)
          )
        )
        const id = yield* jobs.enqueue(Flaky, { n: 1 })
        yield* jobs.run([handler], { pollInterval: "5 seconds" })

        const afterFirst = yield* eventually(job(id), (row) => row.attempts === 1 && row.status === "pending", "try 1")
        expect(epochMillis(afterFirst.runAt)).toBe(10_000)
        expect(afterFirst.lastError).toContain("boom 1")
        yield* TestClock.adjust("9 seconds")
        yield* wakeWorkers(Flaky)
        yield* settle
        expect(yield* Ref.get(runs)).toEqual([1])

        yield* TestClock.adjust("1 second")
        yield* wakeWorkers(Flaky)
        const afterSecond = yield* eventually(job(id), (row) => row.attempts === 2 && row.status === "pending", "try 2")
        expect(epochMillis(afterSecond.runAt)).toBe(10_000 + 20_000)
        expect(afterSecond.lastError).toContain("boom 2")
        yield* TestClock.adjust("19 seconds")
        yield* wakeWorkers(Flaky)
        yield* settle
        expect(yield* Ref.get(runs)).toEqual([1, 2])

        yield* TestClock.adjust("1 second")
        yield* wakeWorkers(Flaky)
        const done = yield* eventually(job(id), (row) => row.status === "succeeded", "try 3")
        expect(done.attempts).toBe(3)
        expect(yield* Ref.get(runs)).toEqual([1, 2, 3])
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("a job that always fails ends dead after max attempts, with its last error", () =>
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const Doomed = JobKind.make("test.doomed", Payload, { maxAttempts: 3 })
        const runs = yield* Ref.make(0)
        // A defect, not a typed failure: it is retried all the same, and its text recorded.
        const handler = Doomed.handle((_, info) =>
          Ref.update(runs, (n) => n + 1).pipe(Effect.andThen(Effect.dieMessage(`kaboom on attempt ${info.attempt}`)))
        )
        const id = yield* jobs.enqueue(Doomed, { n: 1 })
        yield* jobs.run([handler], { pollInterval: "5 seconds" })

        for (const [attempt, base] of [
          [1, 1_000],
          [2, 2_000]
        ] as const) {
          const row = yield* eventually(
            job(id),
            (row) => row.attempts === attempt && row.status === "pending",
            "a retry"
          )
          const delay = epochMillis(row.runAt)! - epochMillis(row.updatedAt)!
          expect(delay).toBeGreaterThanOrEqual(base * 0.8)
          expect(delay).toBeLessThanOrEqual(base * 1.2)
          expect(row.lastError).toContain(`kaboom on attempt ${attempt}`)
          yield* TestClock.setTime(epochMillis(row.runAt)!)
          yield* wakeWorkers(Doomed)
        }
        const dead = yield* eventually(job(id), (row) => row.status === "dead", "the job to die")
        expect(dead.attempts).toBe(3)
        expect(dead.lastError).toContain("kaboom on attempt 3")
        expect(dead.leaseExpiresAt).toBeNull()
        yield* TestClock.adjust("20 seconds")
        yield* wakeWorkers(Doomed)
        yield* settle
        expect(yield* Ref.get(runs)).toBe(3)
        expect((yield* job(id)).status).toBe("dead")
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("JobAbandoned kills at once; JobRetryAfter delays at least as asked", () =>
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const Hopeless = JobKind.make("test.abandoned", Payload)
        const Throttled = JobKind.make("test.retry-after", Payload, { retry: Schedule.spaced("1 second") })
        const abandoned = yield* jobs.enqueue(Hopeless, { n: 1 })
        const throttled = yield* jobs.enqueue(Throttled, { n: 1 })
        yield* jobs.run(
          [
            Hopeless.handle(() => new JobAbandoned({ message: "the endpoint is gone" })),
            Throttled.handle((_, info) =>
              info.attempt === 1 ? new JobRetryAfter({ delay: "2 minutes", message: "429" }) : Effect.void
            )
          ],
          { pollInterval: "1 minute" }
        )
        const dead = yield* eventually(job(abandoned), (row) => row.status === "dead", "the abandoned job")
        expect(dead.attempts).toBe(1)
        expect(dead.lastError).toContain("the endpoint is gone")
        const waiting = yield* eventually(
          job(throttled),
          (row) => row.attempts === 1 && row.status === "pending",
          "the throttled job"
        )
        expect(epochMillis(waiting.runAt)).toBe(120_000)
        yield* TestClock.adjust("119 seconds")
        yield* wakeWorkers(Throttled)
        yield* settle
        expect((yield* job(throttled)).status).toBe("pending")
        yield* TestClock.adjust("1 second")
        yield* wakeWorkers(Throttled)
        yield* eventually(job(throttled), (row) => row.status === "succeeded", "the throttled job to succeed")
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("a key deduplicates, and delayed jobs wait for their time", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const jobs = yield* Jobs
        const Place = JobKind.make("test.keyed", Payload)
        const first = yield* jobs.enqueue(Place, { n: 1 }, { key: "checkout-1", delay: "1 minute" })
        const again = yield* jobs.enqueue(Place, { n: 2 }, { key: "checkout-1" })
        const other = yield* jobs.enqueue(Place, { n: 3 }, { key: "checkout-2", runAt: DateTime.unsafeMake(5_000) })
        expect(again).toBe(first)
        expect(other).not.toBe(first)
        const rows = yield* sql<{ key: string; payload: string }>`
          SELECT key, payload::text AS payload FROM jobs WHERE kind = ${Place.name} ORDER BY key`
        expect(rows.map((row) => [row.key, JSON.parse(row.payload)])).toEqual([
          ["checkout-1", { n: 1 }],
          ["checkout-2", { n: 3 }]
        ])
        const seen = yield* Ref.make<ReadonlyArray<number>>([])
        yield* jobs.run([Place.handle(({ n }) => Ref.update(seen, (all) => [...all, n]))], { pollInterval: "1 minute" })
        yield* wakeWorkers(Place)
        yield* settle
        expect(yield* Ref.get(seen)).toEqual([])
        yield* TestClock.adjust("5 seconds")
        yield* wakeWorkers(Place)
        yield* eventually(Ref.get(seen), (all) => all.length === 1, "the job at 5 s")
        yield* TestClock.adjust("55 seconds")
        yield* wakeWorkers(Place)
        yield* eventually(Ref.get(seen), (all) => all.length === 2, "the job at 1 min")
        expect(yield* Ref.get(seen)).toEqual([3, 1])
      }).pipe(Effect.provide(TestContext.TestContext))
    )

    it.scoped("without any signal, the poll finds delayed jobs", () =>
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const Later = JobKind.make("test.polled", Payload)
        const seen = yield* Ref.make<ReadonlyArray<number>>([])
        yield* jobs.run([Later.handle(({ n }) => Ref.update(seen, (all) => [...all, n]))], {
          pollInterval: "100 millis"
        })
        // A delayed enqueue sends no signal; only the poll can find it.
        yield* jobs.enqueue(Later, { n: 1 }, { delay: "300 millis" })
        yield* Effect.sleep("150 millis")
        expect(yield* Ref.get(seen)).toEqual([])
        yield* eventually(Ref.get(seen), (all) => all.length === 1, "the polled job")
      })
    )

    it.scoped("logs carry the job id, kind and attempt", () =>
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const Logged = JobKind.make("test.logged", Payload, { maxAttempts: 1 })
        const logs = yield* Ref.make(List.empty<{ message: string; annotations: Record<string, unknown> }>())
        const capture = Logger.make(({ message, annotations }) => {
          const entry = {
            message: String(Array.isArray(message) ? message[0] : message),
            annotations: Object.fromEntries(HashMap.toEntries(annotations))
          }
          Effect.runSync(Ref.update(logs, List.prepend(entry)))
        })
        const id = yield* jobs.enqueue(Logged, { n: 1 })
        yield* jobs
          .run([Logged.handle(() => new Boom({ message: "no" }))])
          .pipe(
            Effect.provide(Logger.replace(Logger.defaultLogger, capture)),
            Logger.withMinimumLogLevel(LogLevel.Debug)
          )
        yield* eventually(job(id), (row) => row.status === "dead", "the job to die")
        const entries = Chunk.toReadonlyArray(Chunk.fromIterable(yield* Ref.get(logs)))
        const dead = entries.find((entry) => entry.message === "job dead")
        expect(dead?.annotations).toMatchObject({ jobId: id, jobKind: Logged.name, attempt: 1 })
        expect(entries.find((entry) => entry.message === "job started")?.annotations).toMatchObject({ jobId: id })
      }).pipe(Effect.provide(TestContext.TestContext))
    )
  })
})
