import { Schema } from "effect"
import { Id } from "./Ids.js"

/** Where a job stands: waiting to run (or to run again), running under a lease, done, or given up. */
export const JobStatus = Schema.Literal("pending", "running", "succeeded", "dead")
export type JobStatus = typeof JobStatus.Type

/** A row of `jobs`, as read back (payload still encoded). */
export class Job extends Schema.Class<Job>("Job")({
  id: Id,
  kind: Schema.String,
  key: Schema.NullOr(Schema.String),
  payload: Schema.parseJson(),
  status: JobStatus,
  attempts: Schema.Int,
  maxAttempts: Schema.Int,
  runAt: Schema.DateTimeUtcFromDate,
  leaseExpiresAt: Schema.NullOr(Schema.DateTimeUtcFromDate),
  lastError: Schema.NullOr(Schema.String),
  createdAt: Schema.DateTimeUtcFromDate,
  updatedAt: Schema.DateTimeUtcFromDate
}) {}

/** A job as a worker claims it: what running it needs (payload still encoded). */
export const ClaimedJob = Schema.Struct({
  id: Id,
  kind: Schema.String,
  key: Schema.NullOr(Schema.String),
  status: JobStatus,
  payload: Schema.String,
  attempts: Schema.Int,
  maxAttempts: Schema.Int,
  createdAt: Schema.DateTimeUtcFromDate
})
export type ClaimedJob = typeof ClaimedJob.Type
