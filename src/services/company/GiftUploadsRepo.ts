import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { Actor } from "../../domain/company/Audit.js"
import type { AccountScope } from "../../domain/company/Company.js"
import {
  type GiftUploadOutcome,
  type GiftUploadProgress,
  GiftUploadRecord,
  GiftUploadRow
} from "../../domain/company/GiftUploads.js"
import { accountsIn, ScopeParam } from "./Scope.js"

/** The columns of a new upload: it starts `validated`, neither confirmed nor finished. */
export type NewGiftUpload = Omit<GiftUploadRecord, "status" | "confirmedAt" | "finishedAt">

/** A row as judged on arrival, before any outcome. */
export type NewGiftUploadRow = Omit<GiftUploadRow, "outcome" | "giftId" | "giftLink" | "message">

/** A sent row's outcome. */
export interface GiftUploadRowOutcome {
  readonly line: number
  readonly outcome: GiftUploadOutcome
  readonly giftId: string | null
  readonly giftLink: string | null
  readonly message: string | null
}

const UploadWithActor = Schema.Struct({
  ...GiftUploadRecord.fields,
  actor: Schema.NullOr(Schema.Unknown)
})

const Counts = Schema.Struct({
  created: Schema.NumberFromString,
  existing: Schema.NumberFromString,
  failed: Schema.NumberFromString,
  remaining: Schema.NumberFromString
})

/**
 * The `gift_uploads` and `gift_upload_rows` tables (migration 0036). Only the GiftUploads service uses them and keeps
 * the transactions; unexpected database errors are defects.
 */
export class GiftUploadsRepo extends Effect.Service<GiftUploadsRepo>()("GiftUploadsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = (upload: NewGiftUpload) =>
      sql`INSERT INTO gift_uploads (id, company_id, environment, account_id, campaign_id, uploaded_by, file_name,
          sending_method, status, row_count, invalid_count, created_at)
        VALUES (${upload.id}, ${upload.companyId}, ${upload.environment}, ${upload.accountId}, ${upload.campaignId},
          ${upload.uploadedBy}, ${upload.fileName}, ${upload.sendingMethod}, 'validated', ${upload.rowCount},
          ${upload.invalidCount}, ${upload.createdAt})`.pipe(Effect.asVoid, Effect.orDie)

    /** Rows in one statement (a batch of the file as it is read). */
    const insertRows = (rows: ReadonlyArray<NewGiftUploadRow>) =>
      rows.length === 0
        ? Effect.void
        : sql`INSERT INTO gift_upload_rows (upload_id, line, key, problem, first_name, last_name, email, phone,
              external_id, country)
            SELECT upload_id, line, key, problem, first_name, last_name, email, phone, external_id, country
            FROM jsonb_to_recordset(${JSON.stringify(
              rows.map((row) => ({
                upload_id: row.uploadId,
                line: row.line,
                key: row.key,
                problem: row.problem,
                first_name: row.firstName,
                last_name: row.lastName,
                email: row.email,
                phone: row.phone,
                external_id: row.externalId,
                country: row.country
              }))
            )}::jsonb) AS x(upload_id text, line integer, key text, problem text, first_name text, last_name text,
              email text, phone text, external_id text, country text)`.pipe(Effect.asVoid, Effect.orDie)

    /** The counts of an upload judged: set once its rows are in. */
    const setCounts = (id: string, rowCount: number, invalidCount: number) =>
      sql`UPDATE gift_uploads SET row_count = ${rowCount}, invalid_count = ${invalidCount} WHERE id = ${id}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const byId = SqlSchema.findOne({
      Request: Schema.Struct({ companyId: Schema.String, id: Schema.String }),
      Result: GiftUploadRecord,
      execute: ({ companyId, id }) => sql`SELECT * FROM gift_uploads WHERE id = ${id} AND company_id = ${companyId}`
    })

    const find = (companyId: string, id: string) => Effect.orDie(byId({ companyId, id }))

    const withActor = SqlSchema.findOne({
      Request: Schema.String,
      Result: UploadWithActor,
      execute: (id) => sql`SELECT * FROM gift_uploads WHERE id = ${id}`
    })

    /** An upload with the actor who confirmed it (for the sending job). */
    const findForSending = (id: string) =>
      Effect.map(
        Effect.orDie(withActor(id)),
        Option.map((row) => ({ ...row, actor: row.actor as Actor | null }))
      )

    const confirmRow = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, actor: Schema.String, now: Schema.DateFromSelf }),
      Result: GiftUploadRecord,
      execute: ({ id, actor, now }) => sql`UPDATE gift_uploads
        SET status = 'sending', confirmed_at = ${now}, actor = ${actor}::jsonb
        WHERE id = ${id} AND status = 'validated' RETURNING *`
    })

    /** Marks a validated upload `sending`, as `actor`'s doing; none when it was confirmed already. */
    const confirm = (id: string, actor: Actor | null, now: Date) =>
      Effect.orDie(confirmRow({ id, actor: JSON.stringify(actor), now }))

    const finish = (id: string, now: Date) =>
      sql`UPDATE gift_uploads SET status = 'sent', finished_at = ${now} WHERE id = ${id} AND status = 'sending'`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const rowsWhere = SqlSchema.findAll({
      Request: Schema.Struct({
        uploadId: Schema.String,
        which: Schema.Literal("pending", "valid", "invalid", "all"),
        offset: Schema.Int,
        limit: Schema.Int
      }),
      Result: GiftUploadRow,
      execute: ({ uploadId, which, offset, limit }) => sql`SELECT * FROM gift_upload_rows
        WHERE upload_id = ${uploadId} AND ${
          which === "pending"
            ? sql`problem IS NULL AND outcome IS NULL`
            : which === "valid"
              ? sql`problem IS NULL`
              : which === "invalid"
                ? sql`problem IS NOT NULL`
                : sql`TRUE`
        }
        ORDER BY line LIMIT ${limit} OFFSET ${offset}`
    })

    /** An upload's rows of one kind, in file order, paged. */
    const rows = (
      uploadId: string,
      which: "pending" | "valid" | "invalid" | "all",
      page: { readonly offset: number; readonly limit: number }
    ) => Effect.orDie(rowsWhere({ uploadId, which, ...page }))

    /** Sent rows' outcomes, in one statement. */
    const recordOutcomes = (uploadId: string, outcomes: ReadonlyArray<GiftUploadRowOutcome>) =>
      outcomes.length === 0
        ? Effect.void
        : sql`UPDATE gift_upload_rows r
            SET outcome = x.outcome, gift_id = x.gift_id, gift_link = x.gift_link, message = x.message
            FROM jsonb_to_recordset(${JSON.stringify(
              outcomes.map((o) => ({
                line: o.line,
                outcome: o.outcome,
                gift_id: o.giftId,
                gift_link: o.giftLink,
                message: o.message
              }))
            )}::jsonb) AS x(line integer, outcome text, gift_id text, gift_link text, message text)
            WHERE r.upload_id = ${uploadId} AND r.line = x.line`.pipe(Effect.asVoid, Effect.orDie)

    const countsRow = SqlSchema.single({
      Request: Schema.String,
      Result: Counts,
      execute: (uploadId) => sql`SELECT
          count(*) FILTER (WHERE outcome = 'created')::text AS created,
          count(*) FILTER (WHERE outcome = 'existing')::text AS existing,
          count(*) FILTER (WHERE outcome = 'failed')::text AS failed,
          count(*) FILTER (WHERE problem IS NULL AND outcome IS NULL)::text AS remaining
        FROM gift_upload_rows WHERE upload_id = ${uploadId}`
    })

    const progress = (uploadId: string): Effect.Effect<GiftUploadProgress> => Effect.orDie(countsRow(uploadId))

    const recentRows = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, limit: Schema.Int }),
      Result: GiftUploadRecord,
      execute: ({ scope, limit }) => sql`SELECT * FROM gift_uploads
        WHERE company_id = ${scope.companyId} AND environment = ${scope.environment}
          AND ${accountsIn(sql, scope, "account_id")}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })

    /** The newest uploads on the accounts the scope reaches. */
    const recent = (scope: AccountScope, limit: number) => Effect.orDie(recentRows({ scope, limit }))

    return {
      insert,
      insertRows,
      setCounts,
      find,
      findForSending,
      confirm,
      finish,
      rows,
      recordOutcomes,
      progress,
      recent
    } as const
  })
}) {}
