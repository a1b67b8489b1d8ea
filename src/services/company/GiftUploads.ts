import { pipeline, Readable } from "node:stream"
import { SqlClient } from "@effect/sql"
import { type CsvError, parse } from "csv-parse"
import { Effect, FiberRef, FiberSet, Option, ParseResult, Schema, Stream } from "effect"
import type { Actor } from "../../domain/company/Audit.js"
import { type CampaignRecord, sendsGifts } from "../../domain/company/Campaigns.js"
import type { AccountScope } from "../../domain/company/Company.js"
import { CampaignNotActive } from "../../domain/company/Errors.js"
import { GiftRecipient, type GiftRecipientInput, type SendingMethod } from "../../domain/company/Gifts.js"
import {
  type GiftUploadRecord,
  GiftUploadRefused,
  type GiftUploadRow,
  maxUploadRows,
  problemText,
  type RowProblem,
  requiredUploadColumns,
  type UploadColumn,
  uploadColumns,
  uploadKeyOf
} from "../../domain/company/GiftUploads.js"
import { makeId } from "../../domain/platform/Ids.js"
import { JobKind, Jobs } from "../platform/Jobs.js"
import { nowDate } from "../platform/Time.js"
import { CurrentActor, withActor } from "./Audit.js"
import { Campaigns } from "./Campaigns.js"
import { Gifts } from "./Gifts.js"
import { type GiftUploadRowOutcome, GiftUploadsRepo, type NewGiftUploadRow } from "./GiftUploadsRepo.js"
import { Members } from "./Members.js"
import { CompanyPolicy } from "./Policy.js"

/**
 * Gift uploads (docs/dashboard.md "Send gifts", docs/decisions/0064-gift-uploads.md): a CSV of recipients for one
 * campaign, judged row by row as it is read (streamed, a batch of rows in memory at a time), kept with every row's
 * verdict for the preview; then, once a member confirms, sent in the background by the `gift_upload.send` job, a
 * batch at a time through `Gifts.create` (the operation `POST /v2/gifts` calls), each row's outcome recorded. A row's
 * gift is idempotent on its key in the campaign, so a file sent twice makes its gifts once.
 */

/** Sends a confirmed upload's rows; keyed by the upload, so it runs once whatever is confirmed twice. */
export const SendGiftUpload = JobKind.make("gift_upload.send", Schema.Struct({ uploadId: Schema.String }))

/** Rows judged and inserted together while a file is read. */
const insertBatch = 500
/** Rows sent through one `Gifts.create` call. */
const sendBatch = 50

/** Who uploads or sends: the member's scope in the environment, and the member. */
export interface UploadCaller {
  readonly scope: AccountScope
  readonly userId: string
}

/** A recipient as a form or a file gives it: text, each column absent or empty when not given. */
export type RecipientFields = Partial<Record<UploadColumn, string>>

/** What a recipient of the given fields would be sent as, or its problems. */
export type Judged =
  | { readonly valid: true; readonly recipient: GiftRecipientInput & { readonly country: string } }
  | { readonly valid: false; readonly problems: ReadonlyArray<RowProblem> }

const schemaColumns: Readonly<Record<string, UploadColumn | "key">> = {
  firstname: "firstName",
  lastname: "lastName",
  email: "email",
  phone: "phone",
  externalId: "externalId",
  key: "key"
}

/** A schema message without the value it quotes (the preview repeats no personal data or long text). */
const messageOf = (issue: ParseResult.ArrayFormatterIssue) =>
  issue._tag === "Missing" ? "is required" : issue.message.replace(/, actual [\s\S]*$/, "")

const decodeRecipient = Schema.decodeUnknownEither(GiftRecipient, { errors: "all" })

/**
 * Judges one recipient by the rules `POST /v2/gifts` judges one by (the same schema, so the same bounds), its key
 * (`uploadKeyOf`), the address the sending method needs, and the campaign's countries.
 */
export const judgeRecipient = (
  fields: RecipientFields,
  context: { readonly sendingMethod: SendingMethod; readonly destinations: ReadonlySet<string> }
): Judged => {
  const value = (column: UploadColumn) => {
    const text = fields[column]?.trim() ?? ""
    return text === "" ? null : text
  }
  const problems: Array<RowProblem> = []
  const email = value("email")
  const externalId = value("externalId")
  const key = uploadKeyOf({ externalId, email })
  // An empty field is a missing property, as a JSON body that leaves it out (a property present as `undefined`
  // would be judged as a value, "Expected string", not as missing).
  const given = Object.entries({
    firstname: value("firstName"),
    lastname: value("lastName"),
    email,
    phone: value("phone"),
    externalId,
    key
  }).filter(([, text]) => text !== null)
  const decoded = decodeRecipient(Object.fromEntries(given))
  if (decoded._tag === "Left") {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
    // An optional field's schema is its type or `undefined`: a bad value fails both, and only the first says why.
    const telling = issues.filter(
      (issue) =>
        !/^Expected undefined\b/.test(issue.message) ||
        !issues.some((other) => other !== issue && String(other.path[0]) === String(issue.path[0]))
    )
    for (const issue of telling) {
      const column = schemaColumns[String(issue.path[0])] ?? "row"
      if (column === "key") {
        // The key is the externalId or the e-mail: say which is missing or too long.
        problems.push(
          key === null
            ? { column: "email", message: "is required when there is no externalId (it is the row's key)" }
            : { column: "email", message: "is longer than 120 characters: give an externalId to be the row's key" }
        )
      } else problems.push({ column, message: messageOf(issue) })
    }
  }
  if (context.sendingMethod === "email" && email === null && !problems.some((p) => p.column === "email")) {
    problems.push({ column: "email", message: "is required to send by e-mail" })
  }
  if (context.sendingMethod === "sms" && value("phone") === null) {
    problems.push({ column: "phone", message: "is required to send by text message" })
  }
  const country = value("country")?.toUpperCase() ?? null
  if (country === null) problems.push({ column: "country", message: "is required" })
  else if (!context.destinations.has(country)) {
    problems.push({ column: "country", message: `${country.slice(0, 10)} is not a country this campaign ships to` })
  }
  if (problems.length > 0 || decoded._tag === "Left" || country === null) return { valid: false, problems }
  const recipient = decoded.right
  return {
    valid: true,
    recipient: {
      firstname: recipient.firstname,
      lastname: recipient.lastname,
      email: recipient.email ?? null,
      phone: recipient.phone ?? null,
      externalId: recipient.externalId ?? null,
      key: recipient.key,
      country
    }
  }
}

/** Bytes as UTF-8 text, refusing bytes that are not UTF-8; a BOM at the start is dropped. */
async function* utf8Of(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true })
  for await (const chunk of bytes) {
    const text = decoder.decode(chunk, { stream: true })
    if (text !== "") yield text
  }
  const rest = decoder.decode()
  if (rest !== "") yield rest
}

interface ParsedRecord {
  readonly record: ReadonlyArray<string>
  readonly info: { readonly lines: number }
}

/** The line a record starts on: csv-parse counts the line it ends on, after any line breaks inside its fields. */
const startLineOf = (parsed: ParsedRecord) =>
  parsed.info.lines - parsed.record.reduce((breaks, field) => breaks + (field.match(/\r\n|\n|\r/g)?.length ?? 0), 0)

const normalColumn = (name: string) =>
  name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]/g, "")

/** The columns a header names, by position; or why the header cannot be used. */
const headerOf = (record: ReadonlyArray<string>): Map<UploadColumn, number> | GiftUploadRefused => {
  const known = new Map(uploadColumns.map((column) => [normalColumn(column), column] as const))
  const index = new Map<UploadColumn, number>()
  const unknown: Array<string> = []
  record.forEach((name, position) => {
    const column = known.get(normalColumn(name))
    if (column === undefined) unknown.push(name.trim().slice(0, 40))
    else if (index.has(column)) unknown.push(`${column} (twice)`)
    else index.set(column, position)
  })
  const missing = requiredUploadColumns.filter((column) => !index.has(column))
  if (unknown.length > 0 || missing.length > 0) {
    const parts = [
      ...(missing.length > 0 ? [`it lacks ${missing.join(", ")}`] : []),
      ...(unknown.length > 0 ? [`it has unknown columns: ${unknown.slice(0, 5).join(", ")}`] : [])
    ]
    return new GiftUploadRefused({
      message: `The first line must name the columns ${uploadColumns.join(",")} (phone and externalId may be left out): ${parts.join("; ")}.`
    })
  }
  return index
}

export class GiftUploads extends Effect.Service<GiftUploads>()("GiftUploads", {
  dependencies: [
    Gifts.Default,
    Campaigns.Default,
    Jobs.Default,
    Members.Default,
    CompanyPolicy.Default,
    GiftUploadsRepo.Default
  ],
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* GiftUploadsRepo
    const gifts = yield* Gifts
    const campaigns = yield* Campaigns
    const jobs = yield* Jobs
    const members = yield* Members
    const policy = yield* CompanyPolicy
    /** The sending jobs started here, run past the request that confirmed them. */
    const sending = yield* FiberSet.make()

    /** A campaign the scope reaches (404) that sends gifts (422 unless active). */
    const activeCampaign = (scope: AccountScope, campaignId: string) =>
      Effect.gen(function* () {
        const campaign = yield* campaigns.get(scope, campaignId)
        if (!sendsGifts(campaign)) {
          return yield* new CampaignNotActive({
            message: `Campaign ${campaign.name} is ${campaign.status}; gifts are sent from an active campaign.`,
            campaignId: campaign.id,
            status: campaign.status
          })
        }
        return campaign
      })

    /** How recipients of the campaign are judged. */
    const contextOf = (campaign: CampaignRecord, sendingMethod: SendingMethod) =>
      Effect.map(gifts.destinationsOf(campaign), (destinations) => ({ sendingMethod, destinations }))

    /**
     * Reads a file, judging each row, into a new upload for the campaign (404 unless the scope reaches it, 422
     * unless active); refused whole (`GiftUploadRefused`, nothing kept) past `maxUploadRows` rows, without a usable
     * header or rows, or when it is not UTF-8 text.
     */
    const upload = Effect.fn("GiftUploads.upload")(function* (
      caller: UploadCaller,
      input: {
        readonly campaignId: string
        readonly sendingMethod: SendingMethod
        readonly fileName: string
        readonly bytes: AsyncIterable<Uint8Array>
      }
    ) {
      const campaign = yield* activeCampaign(caller.scope, input.campaignId)
      const context = yield* contextOf(campaign, input.sendingMethod)
      const id = yield* makeId
      const now = yield* nowDate
      const parser = parse({
        info: true,
        relax_column_count: true,
        skip_empty_lines: true,
        skip_records_with_error: true
      })
      const skipped: Array<CsvError> = []
      parser.on("skip", (error: CsvError) => skipped.push(error))
      pipeline(Readable.from(utf8Of(input.bytes)), parser, () => undefined)

      let header: Map<UploadColumn, number> | undefined
      let rowCount = 0
      let invalidCount = 0
      const seen = new Map<string, number>()
      const invalid = (line: number, problem: string): NewGiftUploadRow => {
        invalidCount++
        return {
          uploadId: id,
          line,
          key: null,
          problem,
          firstName: null,
          lastName: null,
          email: null,
          phone: null,
          externalId: null,
          country: null
        }
      }
      /** Rows csv-parse could not read (an unclosed quote, a stray one), each an invalid row of its line. */
      const unreadable = () =>
        skipped.splice(0).map((error) => {
          rowCount++
          return invalid(
            Math.max(2, Number(error.lines) || 2),
            `row: not valid CSV (${error.message.replace(/:.*$/, "")})`
          )
        })
      const judge = (parsed: ParsedRecord): NewGiftUploadRow | undefined => {
        if (header === undefined) return undefined
        const line = startLineOf(parsed)
        rowCount++
        const { record } = parsed
        if (record.length !== header.size && record.length !== 0) {
          if (record.length < header.size || record.slice(header.size).some((field) => field.trim() !== "")) {
            return invalid(line, `row: has ${record.length} fields where the header has ${header.size}`)
          }
        }
        if (record.some((field) => field.includes("\u0000"))) return invalid(line, "row: contains a NUL character")
        const fields: RecipientFields = {}
        for (const [column, position] of header) fields[column] = record[position] ?? ""
        const judged = judgeRecipient(fields, context)
        if (!judged.valid) return invalid(line, problemText(judged.problems))
        const { recipient } = judged
        const earlier = seen.get(recipient.key)
        if (earlier !== undefined) return invalid(line, `key: duplicate key, the same as line ${earlier}`)
        seen.set(recipient.key, line)
        return {
          uploadId: id,
          line,
          key: recipient.key,
          problem: null,
          firstName: recipient.firstname,
          lastName: recipient.lastname,
          email: recipient.email,
          phone: recipient.phone,
          externalId: recipient.externalId,
          country: recipient.country
        }
      }

      const read = Effect.gen(function* () {
        yield* repo.insert({
          id,
          companyId: campaign.companyId,
          environment: campaign.environment,
          accountId: campaign.accountId,
          campaignId: campaign.id,
          uploadedBy: caller.userId,
          fileName: input.fileName.slice(0, 200),
          sendingMethod: input.sendingMethod,
          rowCount: 0,
          invalidCount: 0,
          createdAt: now
        })
        yield* Stream.fromAsyncIterable(
          parser as AsyncIterable<ParsedRecord>,
          (error) =>
            new GiftUploadRefused({
              message:
                error instanceof TypeError && /encoded|decode/i.test(error.message)
                  ? "The file is not UTF-8 text: save it as CSV UTF-8 and upload it again."
                  : `The file could not be read as CSV: ${String((error as Error)?.message ?? error).slice(0, 200)}`
            })
        ).pipe(
          Stream.grouped(insertBatch),
          Stream.runForEach((batch) =>
            Effect.gen(function* () {
              const rows: Array<NewGiftUploadRow> = []
              for (const parsed of batch) {
                rows.push(...unreadable())
                if (header === undefined) {
                  const made = headerOf(parsed.record)
                  if (made instanceof GiftUploadRefused) return yield* made
                  header = made
                  continue
                }
                const row = judge(parsed)
                if (row !== undefined) rows.push(row)
              }
              if (rowCount > maxUploadRows) {
                return yield* new GiftUploadRefused({
                  message: `The file has more than ${maxUploadRows.toLocaleString("en")} rows: split it and upload each part.`
                })
              }
              yield* repo.insertRows(rows)
            })
          )
        )
        const last = unreadable()
        if (rowCount > maxUploadRows) {
          return yield* new GiftUploadRefused({
            message: `The file has more than ${maxUploadRows.toLocaleString("en")} rows: split it and upload each part.`
          })
        }
        yield* repo.insertRows(last)
        if (header === undefined || rowCount === 0) {
          return yield* new GiftUploadRefused({
            message: "The file has no rows: a header line, then a row per recipient."
          })
        }
        yield* repo.setCounts(id, rowCount, invalidCount)
        return yield* Effect.map(repo.find(campaign.companyId, id), Option.getOrThrow)
      })
      return yield* sql
        .withTransaction(read)
        .pipe(Effect.catchTag("SqlError", Effect.die), Effect.ensuring(Effect.sync(() => parser.destroy())))
    })

    /** An upload of the member's company on an account the scope reaches, with its campaign; none otherwise. */
    const find = Effect.fn("GiftUploads.find")(function* (scope: AccountScope, uploadId: string) {
      const found = yield* repo.find(scope.companyId, uploadId)
      if (Option.isNone(found) || found.value.environment !== scope.environment) return Option.none()
      const campaign = yield* Effect.option(campaigns.get(scope, found.value.campaignId))
      if (Option.isNone(campaign)) return Option.none()
      return Option.some({ upload: found.value, campaign: campaign.value })
    })

    /** The newest uploads on the accounts the scope reaches. */
    const recent = Effect.fn("GiftUploads.recent")(function* (scope: AccountScope, limit: number) {
      return yield* repo.recent(scope, limit)
    })

    const rows = (
      upload: GiftUploadRecord,
      which: "valid" | "invalid" | "all",
      page: { offset: number; limit: number }
    ) => repo.rows(upload.id, which, page)

    const progress = (upload: GiftUploadRecord) => repo.progress(upload.id)

    /** One batch of an upload's rows sent; whether any was left to send. */
    const sendNext = (upload: GiftUploadRecord, scope: AccountScope) =>
      Effect.gen(function* () {
        const batch = yield* repo.rows(upload.id, "pending", { offset: 0, limit: sendBatch })
        if (batch.length === 0) return false
        const recipients = batch.map(
          (row): GiftRecipientInput => ({
            firstname: row.firstName ?? "",
            lastname: row.lastName ?? "",
            email: row.email,
            phone: row.phone,
            externalId: row.externalId,
            key: row.key ?? "",
            country: row.country
          })
        )
        const results = yield* gifts
          .create(
            { scope, account: Option.none(), source: null },
            { campaignId: upload.campaignId, recipients, sendingMethod: upload.sendingMethod }
          )
          .pipe(
            Effect.catchAll((error) =>
              Effect.succeed(
                recipients.map(() => ({ success: false as const, key: "", errorCode: "", message: error.message }))
              )
            )
          )
        const outcomes = batch.map((row, n): GiftUploadRowOutcome => {
          const result = results[n]!
          return result.success
            ? {
                line: row.line,
                outcome: result.created ? "created" : "existing",
                giftId: result.gift.id,
                giftLink: gifts.linkOf(result.gift),
                message: null
              }
            : { line: row.line, outcome: "failed", giftId: null, giftLink: null, message: result.message }
        })
        yield* repo.recordOutcomes(upload.id, outcomes)
        return true
      })

    /** Marks every row still to send as failed, for `reason`. */
    const failRest = (upload: GiftUploadRecord, reason: string) =>
      Effect.gen(function* () {
        for (;;) {
          const batch = yield* repo.rows(upload.id, "pending", { offset: 0, limit: 500 })
          if (batch.length === 0) return
          yield* repo.recordOutcomes(
            upload.id,
            batch.map((row) => ({ line: row.line, outcome: "failed", giftId: null, giftLink: null, message: reason }))
          )
        }
      })

    /**
     * The `gift_upload.send` job: sends the upload's rows not yet sent, a batch at a time, as the member who
     * confirmed it (in that member's reach now: one removed since, or no longer reaching the account, sends nothing
     * more), then marks it sent. Run again after a stop, it carries on where the outcomes end; a row sent but not
     * recorded finds its gift by its key.
     */
    const send = Effect.fn("GiftUploads.send")(function* (uploadId: string) {
      const found = yield* repo.findForSending(uploadId)
      if (Option.isNone(found) || found.value.status !== "sending") return
      const upload = found.value
      const member = yield* Effect.option(members.get(upload.companyId, upload.uploadedBy))
      const scope = Option.isNone(member)
        ? undefined
        : yield* Effect.orDie(policy.scopeForMember(member.value, upload.environment))
      const run = Effect.gen(function* () {
        if (scope === undefined) {
          yield* failRest(upload, "Not sent: the member who confirmed the upload is no longer in the company.")
        } else {
          while (yield* sendNext(upload, scope)) {
            // The next batch.
          }
        }
        yield* repo.finish(upload.id, yield* nowDate)
      })
      yield* upload.actor === null ? run : withActor(upload.actor)(run)
    })

    const handler = SendGiftUpload.handle(({ uploadId }) => send(uploadId))

    /**
     * Confirms a validated upload with valid rows: it is `sending`, as the current actor's doing, and its job runs
     * at once in the background here (should this instance stop first, any worker takes it a minute later). An
     * upload confirmed already is left as it is. Whether this call confirmed it.
     */
    const confirm = Effect.fn("GiftUploads.confirm")(function* (upload: GiftUploadRecord) {
      if (upload.rowCount - upload.invalidCount === 0) return false
      const actor: Actor | null = (yield* FiberRef.get(CurrentActor)) ?? null
      const confirmed = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const changed = yield* repo.confirm(upload.id, actor, yield* nowDate)
            if (Option.isNone(changed)) return Option.none()
            return Option.some(
              yield* jobs.enqueue(SendGiftUpload, { uploadId: upload.id }, { key: upload.id, delay: "1 minute" })
            )
          })
        )
        .pipe(Effect.orDie)
      if (Option.isNone(confirmed)) return false
      yield* FiberSet.run(sending, Effect.ignoreLogged(jobs.runNow(handler, confirmed.value)))
      return true
    })

    /**
     * One recipient from a form: judged as a file's row is, then sent through `Gifts.create` (404/422 for the
     * campaign as there). Its problems, or its result.
     */
    const sendOne = Effect.fn("GiftUploads.sendOne")(function* (
      caller: UploadCaller,
      input: { readonly campaignId: string; readonly sendingMethod: SendingMethod; readonly fields: RecipientFields }
    ) {
      const campaign = yield* activeCampaign(caller.scope, input.campaignId)
      const judged = judgeRecipient(input.fields, yield* contextOf(campaign, input.sendingMethod))
      if (!judged.valid) return { problems: judged.problems } as const
      const [result] = yield* gifts.create(
        { scope: caller.scope, account: Option.none(), source: null },
        { campaignId: campaign.id, recipients: [judged.recipient], sendingMethod: input.sendingMethod }
      )
      return { result: result!, link: result!.success ? gifts.linkOf(result!.gift) : null } as const
    })

    return { upload, find, recent, rows, progress, confirm, send, handler, sendOne, judgeRecipient } as const
  })
}) {}

export type { GiftUploadRow }
