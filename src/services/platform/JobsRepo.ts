import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Id } from "../../domain/platform/Ids.js"
import { ClaimedJob, Job } from "../../domain/platform/Jobs.js"

/** A new job's row, as `Jobs` makes it (payload encoded as JSON text). */
export const NewJobRow = Schema.Struct({
  id: Id,
  kind: Schema.String,
  key: Schema.NullOr(Schema.String),
  payload: Schema.String,
  status: Schema.Literal("pending"),
  attempts: Schema.Int,
  maxAttempts: Schema.Int,
  runAt: Schema.DateFromSelf,
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf
})
export type NewJobRow = typeof NewJobRow.Type

/** A claimed job, as far as a change of it needs: it is still this worker's while it runs this attempt. */
export const OwnedJob = Schema.Struct({ id: Id, attempts: Schema.Int })
export type OwnedJob = typeof OwnedJob.Type

const IdRow = Schema.Struct({ id: Id })

/**
 * The `jobs` table. Only the Jobs service uses it; every other context enqueues and reads jobs through that
 * service. Statements run on the ambient SqlClient, so inside the caller's transaction when there is one.
 * Unexpected database errors are defects, except where the service retries the statement (`handBack`).
 */
export class JobsRepo extends Effect.Service<JobsRepo>()("JobsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Inserts new jobs' rows, skipping those whose (kind, key) is taken: the ids of those inserted. */
    const insertRows = SqlSchema.findAll({
      Request: Schema.Array(NewJobRow),
      Result: IdRow,
      execute: (rows) => sql`
        INSERT INTO jobs ${sql.insert(rows)}
        ON CONFLICT (kind, key) WHERE key IS NOT NULL DO NOTHING
        RETURNING id`
    })

    const findIdByKey = SqlSchema.findAll({
      Request: Schema.Struct({ kind: Schema.String, key: Schema.String }),
      Result: IdRow,
      execute: ({ kind, key }) => sql`
          SELECT id FROM jobs WHERE kind = ${kind} AND key = ${key}`
    })

    const findById = SqlSchema.findOne({
      Request: Id,
      Result: Job,
      execute: (id) => sql`
        SELECT id, kind, key, payload::text AS payload, status, attempts, max_attempts, run_at, lease_expires_at,
          last_error, created_at, updated_at
        FROM jobs WHERE id = ${id}`
    })

    const findNextRuns = SqlSchema.findAll({
      Request: Schema.Struct({ kind: Schema.String, keys: Schema.Array(Schema.String) }),
      Result: Schema.Struct({ key: Schema.String, runAt: Schema.DateTimeUtcFromDate }),
      execute: ({ kind, keys }) => sql`
        SELECT key, run_at FROM jobs WHERE kind = ${kind} AND key IN ${sql.in(keys)} AND status = 'pending'`
    })

    /**
     * Claims the next ready job of these kinds, or none. One statement, so a short transaction. A job whose
     * lease expired during its last attempt is not run again: the same statement marks it dead.
     */
    const claimNext = SqlSchema.findAll({
      Request: Schema.Struct({
        kinds: Schema.Array(Schema.String),
        leases: Schema.Record({ key: Schema.String, value: Schema.Number }),
        now: Schema.DateFromSelf
      }),
      Result: ClaimedJob,
      execute: ({ kinds, leases, now }) => sql`
        WITH next AS MATERIALIZED (
          SELECT id, status = 'running' AS orphaned, status = 'running' AND attempts >= max_attempts AS exhausted
          FROM jobs
          WHERE kind IN ${sql.in(kinds)}
            AND ((status = 'pending' AND run_at <= ${now}) OR (status = 'running' AND lease_expires_at <= ${now}))
          ORDER BY run_at, id
          LIMIT 1
          FOR UPDATE SKIP LOCKED
        )
        UPDATE jobs SET
          status = CASE WHEN next.exhausted THEN 'dead' ELSE 'running' END,
          attempts = CASE WHEN next.exhausted THEN jobs.attempts ELSE jobs.attempts + 1 END,
          lease_expires_at = CASE WHEN next.exhausted THEN NULL ELSE ${now}::timestamptz
            + (${JSON.stringify(leases)}::jsonb ->> jobs.kind)::bigint * interval '1 millisecond' END,
          last_error = CASE WHEN next.orphaned
            THEN 'attempt ' || jobs.attempts || ': the lease expired (the worker stopped)'
            ELSE jobs.last_error END,
          updated_at = ${now}
        FROM next
        WHERE jobs.id = next.id
        RETURNING jobs.id, jobs.kind, jobs.key, jobs.status, jobs.payload::text AS payload, jobs.attempts,
          jobs.max_attempts, jobs.created_at`
    })

    /** Claims the pending job `id` of `kind`, whatever its `run_at`, as a worker would claim it. */
    const claimPending = SqlSchema.findAll({
      Request: Schema.Struct({ id: Id, kind: Schema.String, lease: Schema.Number, now: Schema.DateFromSelf }),
      Result: ClaimedJob,
      execute: ({ id, kind, lease, now }) => sql`
        UPDATE jobs SET status = 'running', attempts = attempts + 1,
          lease_expires_at = ${new Date(now.getTime() + lease)}, updated_at = ${now}
        WHERE id = ${id} AND kind = ${kind} AND status = 'pending'
        RETURNING id, kind, key, status, payload::text AS payload, attempts, max_attempts, created_at`
    })

    /** Updates a job this worker still owns (same id, still running, same attempt). */
    const whileOwned = (job: typeof OwnedJob.Encoded) =>
      sql`id = ${job.id} AND status = 'running' AND attempts = ${job.attempts}`

    const updateLease = SqlSchema.findAll({
      Request: Schema.Struct({ job: OwnedJob, leaseExpiresAt: Schema.DateFromSelf, now: Schema.DateFromSelf }),
      Result: IdRow,
      execute: ({ job, leaseExpiresAt, now }) => sql`
          UPDATE jobs SET lease_expires_at = ${leaseExpiresAt}, updated_at = ${now}
          WHERE ${whileOwned(job)} RETURNING id`
    })

    const updateSucceeded = SqlSchema.findAll({
      Request: Schema.Struct({ job: OwnedJob, now: Schema.DateFromSelf }),
      Result: IdRow,
      execute: ({ job, now }) => sql`
            UPDATE jobs SET status = 'succeeded', lease_expires_at = NULL, updated_at = ${now}
            WHERE ${whileOwned(job)} RETURNING id`
    })

    const updateDead = SqlSchema.findAll({
      Request: Schema.Struct({ job: OwnedJob, error: Schema.String, now: Schema.DateFromSelf }),
      Result: IdRow,
      execute: ({ job, error, now }) => sql`
            UPDATE jobs SET status = 'dead', lease_expires_at = NULL, last_error = ${error}, updated_at = ${now}
            WHERE ${whileOwned(job)} RETURNING id`
    })

    const updateRetry = SqlSchema.findAll({
      Request: Schema.Struct({
        job: OwnedJob,
        runAt: Schema.DateFromSelf,
        error: Schema.String,
        now: Schema.DateFromSelf
      }),
      Result: IdRow,
      execute: ({ job, runAt, error, now }) => sql`
          UPDATE jobs SET status = 'pending', lease_expires_at = NULL, run_at = ${runAt}, last_error = ${error},
            updated_at = ${now}
          WHERE ${whileOwned(job)} RETURNING id`
    })

    const updateHandedBack = SqlSchema.findAll({
      Request: Schema.Struct({ job: OwnedJob, now: Schema.DateFromSelf }),
      Result: IdRow,
      execute: ({ job, now }) => sql`
          UPDATE jobs SET status = 'pending', attempts = attempts - 1, run_at = ${now}, lease_expires_at = NULL,
            updated_at = ${now}
          WHERE ${whileOwned(job)} RETURNING id`
    })

    const updateReady = SqlSchema.void({
      Request: Schema.Struct({ id: Id, now: Schema.DateFromSelf }),
      execute: ({ id, now }) =>
        sql`UPDATE jobs SET run_at = ${now}, updated_at = ${now} WHERE id = ${id} AND status = 'pending'`
    })

    const updateReadyByKey = SqlSchema.findAll({
      Request: Schema.Struct({ kind: Schema.String, key: Schema.String, now: Schema.DateFromSelf }),
      Result: IdRow,
      execute: ({ kind, key, now }) => sql`UPDATE jobs SET run_at = ${now}, updated_at = ${now}
          WHERE kind = ${kind} AND key = ${key} AND status = 'pending' AND run_at > ${now} RETURNING id`
    })

    const owned = (rows: ReadonlyArray<unknown>) => rows.length > 0

    return {
      /** Inserts new jobs, skipping those whose (kind, key) is taken: the ids of those inserted. */
      insert: Effect.fn("JobsRepo.insert")((rows: ReadonlyArray<NewJobRow>) => Effect.orDie(insertRows(rows))),
      /** The id of the job of `kind` with `key`, whatever its status. */
      idByKey: Effect.fn("JobsRepo.idByKey")((kind: string, key: string) => Effect.orDie(findIdByKey({ kind, key }))),
      findById: Effect.fn("JobsRepo.findById")((id: Id) => Effect.orDie(findById(id))),
      /** When each still pending job of `kind` with one of these keys runs next. */
      nextRuns: Effect.fn("JobsRepo.nextRuns")((kind: string, keys: ReadonlyArray<string>) =>
        Effect.orDie(findNextRuns({ kind, keys }))
      ),
      /** Claims the next ready job of these kinds (`SELECT … FOR UPDATE SKIP LOCKED`), or none. */
      claimNext: Effect.fn("JobsRepo.claimNext")(
        (kinds: ReadonlyArray<string>, leases: Record<string, number>, now: Date) =>
          Effect.orDie(claimNext({ kinds, leases, now }))
      ),
      /** Claims the pending job `id` of `kind` under a lease of `lease` milliseconds, or none. */
      claimPending: Effect.fn("JobsRepo.claimPending")((id: Id, kind: string, lease: number, now: Date) =>
        Effect.orDie(claimPending({ id, kind, lease, now }))
      ),
      /** Extends the lease of a job this worker still owns: whether it still does. */
      extendLease: Effect.fn("JobsRepo.extendLease")((job: OwnedJob, leaseExpiresAt: Date, now: Date) =>
        Effect.map(Effect.orDie(updateLease({ job, leaseExpiresAt, now })), owned)
      ),
      /** Marks an owned job succeeded: whether it was still owned. */
      succeeded: Effect.fn("JobsRepo.succeeded")((job: OwnedJob, now: Date) =>
        Effect.map(Effect.orDie(updateSucceeded({ job, now })), owned)
      ),
      /** Marks an owned job dead with its last error: whether it was still owned. */
      dead: Effect.fn("JobsRepo.dead")((job: OwnedJob, error: string, now: Date) =>
        Effect.map(Effect.orDie(updateDead({ job, error, now })), owned)
      ),
      /** Makes an owned job pending again at `runAt`, with its last error: whether it was still owned. */
      retryAt: Effect.fn("JobsRepo.retryAt")((job: OwnedJob, runAt: Date, error: string, now: Date) =>
        Effect.map(Effect.orDie(updateRetry({ job, runAt, error, now })), owned)
      ),
      /**
       * Hands an owned job back: pending and ready now, the stopped attempt not counted. Whether it was still
       * owned. Its database errors stay failures: the service tries again.
       */
      handBack: Effect.fn("JobsRepo.handBack")((job: OwnedJob, now: Date) =>
        Effect.map(updateHandedBack({ job, now }), owned)
      ),
      /** Makes the pending job `id` ready now. */
      readyNow: Effect.fn("JobsRepo.readyNow")((id: Id, now: Date) => Effect.orDie(updateReady({ id, now }))),
      /** Makes the pending job of `kind` with `key` ready at `now` if it was due later: whether it was. */
      readyNowByKey: Effect.fn("JobsRepo.readyNowByKey")((kind: string, key: string, now: Date) =>
        Effect.map(Effect.orDie(updateReadyByKey({ kind, key, now })), owned)
      )
    } as const
  })
}) {}
