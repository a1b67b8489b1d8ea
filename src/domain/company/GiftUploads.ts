import { Schema } from "effect"
import { Environment } from "./Company.js"
import { SendingMethod } from "./Gifts.js"

/**
 * Gift uploads (docs/dashboard.md "Send gifts", docs/decisions/0064-gift-uploads.md): a CSV file of recipients sent
 * in the dashboard to one campaign. Every row is judged when the file arrives, by the rules `POST /v2/gifts` judges a
 * recipient by, and the campaign's countries; nothing is sent until a member confirms, and then each valid row
 * becomes a gift, idempotently on its key.
 */

/** The most rows (recipients, the header not counted) one file may hold. */
export const maxUploadRows = 5_000

/** The largest file taken, in bytes. */
export const maxUploadBytes = 1_048_576

/** The file's columns, as its header names them (in any order, case and spaces ignored). */
export const uploadColumns = ["firstName", "lastName", "email", "phone", "externalId", "country"] as const
export type UploadColumn = (typeof uploadColumns)[number]

/** The columns a file must have; `phone` and `externalId` may be left out. */
export const requiredUploadColumns: ReadonlyArray<UploadColumn> = ["firstName", "lastName", "email", "country"]

export const GiftUploadStatus = Schema.Literal("validated", "sending", "sent")
export type GiftUploadStatus = typeof GiftUploadStatus.Type

export const GiftUploadRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  environment: Environment,
  accountId: Schema.String,
  campaignId: Schema.String,
  uploadedBy: Schema.String,
  fileName: Schema.String,
  sendingMethod: SendingMethod,
  status: GiftUploadStatus,
  rowCount: Schema.Int,
  invalidCount: Schema.Int,
  createdAt: Schema.DateFromSelf,
  confirmedAt: Schema.NullOr(Schema.DateFromSelf),
  finishedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type GiftUploadRecord = typeof GiftUploadRecord.Type

export const GiftUploadOutcome = Schema.Literal("created", "existing", "failed")
export type GiftUploadOutcome = typeof GiftUploadOutcome.Type

/** One row of a file: invalid (its `problem`), or a recipient to send to, and once sent its outcome. */
export const GiftUploadRow = Schema.Struct({
  uploadId: Schema.String,
  line: Schema.Int,
  key: Schema.NullOr(Schema.String),
  problem: Schema.NullOr(Schema.String),
  firstName: Schema.NullOr(Schema.String),
  lastName: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  externalId: Schema.NullOr(Schema.String),
  country: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(GiftUploadOutcome),
  giftId: Schema.NullOr(Schema.String),
  giftLink: Schema.NullOr(Schema.String),
  message: Schema.NullOr(Schema.String)
})
export type GiftUploadRow = typeof GiftUploadRow.Type

/** How far sending has come: rows sent (a gift made or found), failed, and still to send. */
export interface GiftUploadProgress {
  readonly created: number
  readonly existing: number
  readonly failed: number
  readonly remaining: number
}

/**
 * A row's key: its `externalId` when it has one, else its e-mail in lower case (so the same person is the same key in
 * every file, and as an integration sending `POST /v2/gifts` with the e-mail as key would name them).
 */
export const uploadKeyOf = (row: { readonly externalId: string | null; readonly email: string | null }) =>
  row.externalId ?? row.email?.toLowerCase() ?? null

/** A file refused whole (too many rows, no header, not UTF-8, too large): nothing of it is kept. */
export class GiftUploadRefused extends Schema.TaggedError<GiftUploadRefused>()("GiftUploadRefused", {
  message: Schema.String
}) {}

/** What is wrong with one row, by column (`row` for the row as a whole, `key` for its key). */
export interface RowProblem {
  readonly column: UploadColumn | "key" | "row"
  readonly message: string
}

/** A row's problems as one line of text, as the preview and the result file show them. */
export const problemText = (problems: ReadonlyArray<RowProblem>) =>
  problems
    .map((problem) => (problem.column === "row" ? problem.message : `${problem.column}: ${problem.message}`))
    .join("; ")
