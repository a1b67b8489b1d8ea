import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Chunk, DateTime, Effect, Option, Schema, Stream } from "effect"
import type { CatalogProduct } from "../../domain/catalog/CatalogV3.js"
import {
  CollectionNotFound,
  ExportExpired,
  ExportInProgress,
  ExportLinkInvalid,
  ExportNotFound
} from "../../domain/catalog/Errors.js"
import {
  type CatalogExport,
  type DownloadUrls,
  type ExportKind,
  type ExportRequest,
  exportLifetimeHours
} from "../../domain/catalog/Exports.js"
import type { AccountScope } from "../../domain/company/Company.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { Audit, soleAccount } from "../company/Audit.js"
import { JobKind, Jobs } from "../platform/Jobs.js"
import { isUniqueViolation } from "../platform/Rows.js"
import { nowDate } from "../platform/Time.js"
import { PublicUrl } from "./Catalog.js"
import { CatalogExportsRepo } from "./CatalogExportsRepo.js"
import { CatalogRepo } from "./CatalogRepo.js"
import { CatalogV3 } from "./CatalogV3.js"
import { Pricing } from "./Pricing.js"

/**
 * Catalog exports (docs/decisions/0043-catalog-exports.md, docs/catalog.md "Exports"), in the tables of migration 0016
 * (CatalogExportsRepo).
 *
 * - `start` records the export `pending` and enqueues its `catalog-export.run` job in one transaction; the
 *   partial unique index on active exports turns a second start of the company into 409.
 * - The job walks the listing by keyset pages (`CatalogV3.products` / `collectionProducts`, the queries
 *   `GET /v3/products` runs) and writes each page as one chunk of NDJSON lines, with the cursor after it,
 *   in one transaction with the progress. Memory holds one page whatever the catalog's size, and a job
 *   that stopped resumes after its last chunk.
 * - A completed export's files are downloaded at URLs signed with the export's own secret (HMAC-SHA256 of
 *   id, location and expiry), valid 48 hours; `catalog-export.expire` deletes the chunks then.
 */

export const RunCatalogExport = JobKind.make("catalog-export.run", Schema.Struct({ exportId: Schema.String }), {
  // A large export takes minutes: the lease is extended while it runs, and a retry resumes where it stopped.
  maxAttempts: 5
})

export const ExpireCatalogExport = JobKind.make("catalog-export.expire", Schema.Struct({ exportId: Schema.String }))

/** Products per chunk: one keyset page of the listing. */
const pageSize = 200

/** One line of an export file: the product as `GET /v3/products/{id}` shows it, for the request. */
export type ExportLine = (product: CatalogProduct, request: ExportRequest) => object

/** The path of a file, from the public URL; the query adds `expires` and `signature`. */
export const exportFilePath = (exportId: string, location: string) => `/export-files/${exportId}/${location}`

const signatureOf = (secret: string, exportId: string, location: string, expires: number) =>
  createHmac("sha256", secret).update(`${exportId}\n${location}\n${expires}`).digest("base64url")

const sameText = (a: string, b: string) => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

export class CatalogExports extends Effect.Service<CatalogExports>()("CatalogExports", {
  dependencies: [
    CatalogV3.Default,
    Pricing.Default,
    Jobs.Default,
    CatalogRepo.Default,
    CatalogExportsRepo.Default,
    Audit.Default
  ],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* CatalogExportsRepo
    const catalogRepo = yield* CatalogRepo
    const catalog = yield* CatalogV3
    const pricing = yield* Pricing
    const jobs = yield* Jobs
    const audit = yield* Audit
    const publicUrl = (yield* PublicUrl).replace(/\/$/, "")

    /** Every location a supported country (400 on `locations` otherwise), upper-cased. */
    const checkLocations = Effect.fn("CatalogExports.checkLocations")(function* (locations: ReadonlyArray<string>) {
      const countries = (yield* pricing.reference()).country
      const codes = locations.map((code) => code.toUpperCase())
      const unknown = codes.find((code) => !countries.has(code))
      if (unknown !== undefined) {
        return yield* InvalidRequest.field("locations", `${unknown} is not a supported country.`)
      }
      return [...new Set(codes)]
    })

    /** Every collection known (404 naming the first that is not). */
    const checkCollections = Effect.fn("CatalogExports.checkCollections")(function* (ids: ReadonlyArray<string>) {
      const wanted = [...new Set(ids.map((id) => id.toLowerCase()))]
      if (wanted.length === 0) return wanted
      const known = new Set(yield* catalogRepo.existingCollections(wanted))
      const missing = wanted.find((id) => !known.has(id))
      if (missing !== undefined) {
        return yield* new CollectionNotFound({ message: `No collection ${missing}.`, collectionId: missing })
      }
      return wanted
    })

    /**
     * Records an export of the scope's company and environment `pending`, enqueues its job and records the start in
     * the company's audit log. 409 while the company has another export pending or processing, of either kind.
     */
    const start = (scope: AccountScope, kind: ExportKind, stored: ExportRequest) =>
      Effect.gen(function* () {
        const id = yield* makeId
        const now = yield* nowDate
        const insert = Effect.gen(function* () {
          const created = yield* repo.insert({
            id,
            scope,
            kind,
            request: stored,
            downloadSecret: randomBytes(32).toString("base64url"),
            createdAt: now
          })
          yield* jobs.enqueue(RunCatalogExport, { exportId: id }, { key: id })
          yield* audit.record({
            companyId: scope.companyId,
            environment: scope.environment,
            accountId: soleAccount(scope.accountIds),
            action: "export.started",
            target: id
          })
          return created
        })
        return yield* sql
          .withTransaction(insert)
          .pipe(
            Effect.catchTag("SqlError", (error) =>
              isUniqueViolation(error) ? inProgress(scope.companyId) : Effect.die(error)
            )
          )
      })

    /** Starts an export of the products a `GET /v3/products` filter lists (`collectionIds` unused). */
    const startProducts = Effect.fn("CatalogExports.startProducts")(function* (
      scope: AccountScope,
      request: ExportRequest
    ) {
      const locations = yield* checkLocations(request.locations)
      return yield* start(scope, "products", { ...request, locations, collectionIds: [] })
    })

    /** Starts an export of the products of `collectionIds`, each collection in its order (404 for an unknown one). */
    const startCollections = Effect.fn("CatalogExports.startCollections")(function* (
      scope: AccountScope,
      request: ExportRequest
    ) {
      const locations = yield* checkLocations(request.locations)
      const collectionIds = yield* checkCollections(request.collectionIds)
      return yield* start(scope, "collections", { ...request, locations, collectionIds, filters: {} })
    })

    const inProgress = (companyId: string) =>
      Effect.gen(function* () {
        const active = yield* repo.activeOf(companyId)
        return yield* new ExportInProgress({
          message: `Export ${active ?? ""} is still running; one export runs at a time per company.`,
          exportId: active ?? ""
        })
      })

    /** An export of this kind in the scope's company and environment (404 otherwise). */
    const find = Effect.fn("CatalogExports.find")(function* (scope: AccountScope, kind: ExportKind, exportId: string) {
      const found = yield* repo.findInScope(scope, kind, exportId.toLowerCase())
      if (found === undefined) return yield* new ExportNotFound({ message: `No export ${exportId}.`, exportId })
      return found
    })

    /** A completed export's signed download URLs by location; empty for any other. */
    const downloadUrls = Effect.fn("CatalogExports.downloadUrls")(function* (exported: CatalogExport) {
      if (exported.status !== "completed" || exported.expiresAt === null) return {} as DownloadUrls
      const secret = yield* repo.downloadSecret(exported.id)
      const expires = Math.floor(exported.expiresAt.getTime() / 1000)
      return Object.fromEntries(
        exported.request.locations.map((location) => {
          const signature = signatureOf(secret!, exported.id, location, expires)
          const query = new URLSearchParams({ expires: String(expires), signature })
          return [location, `${publicUrl}${exportFilePath(exported.id, location)}?${query}`]
        })
      ) as DownloadUrls
    })

    /** A location's file, streamed chunk by chunk from the database: one chunk in memory at a time. */
    const linesOf = (exportId: string, location: string) =>
      Stream.paginateChunkEffect(0, (seq) =>
        repo
          .chunkFrom(exportId, location, seq)
          .pipe(
            Effect.map((chunks) => [
              Chunk.fromIterable(chunks.map((chunk) => chunk.body)),
              chunks.length < 1 ? Option.none() : Option.some(chunks[chunks.length - 1]!.seq + 1)
            ])
          )
      ).pipe(Stream.encodeText)

    /**
     * A file's lines, streamed chunk by chunk: 403 unless the signature is the one `downloadUrls` made for
     * this export, location and expiry; 410 once that expiry has passed.
     */
    const file = Effect.fn("CatalogExports.file")(function* (
      exportId: string,
      location: string,
      expires: number,
      signature: string
    ) {
      const id = exportId.toLowerCase()
      const secret = yield* repo.downloadSecret(id)
      const invalid = new ExportLinkInvalid({
        message: "This download link is not valid; use the export's downloadUrls."
      })
      if (secret === undefined || !sameText(signatureOf(secret, id, location, expires), signature)) {
        return yield* invalid
      }
      const now = yield* nowDate
      if (now.getTime() >= expires * 1000) {
        return yield* new ExportExpired({ message: "This export has expired; start a new one." })
      }
      // Signed, unexpired links are only made for completed exports.
      return linesOf(id, location)
    })

    /**
     * A completed export's file for one of its locations, as `file` streams it, for a caller that found the export
     * in its own scope (the dashboard): 404 for a location the export has not, or an export not completed; 410 once
     * it has expired.
     */
    const fileOf = Effect.fn("CatalogExports.fileOf")(function* (exported: CatalogExport, location: string) {
      if (
        exported.status !== "completed" ||
        exported.expiresAt === null ||
        !exported.request.locations.includes(location)
      ) {
        return yield* new ExportNotFound({
          message: `Export ${exported.id} has no file for ${location}.`,
          exportId: exported.id
        })
      }
      const now = yield* nowDate
      if (now.getTime() >= exported.expiresAt.getTime()) {
        return yield* new ExportExpired({ message: "This export has expired; start a new one." })
      }
      return linesOf(exported.id, location)
    })

    /**
     * A page (from 1) of the exports of the scope's company and environment, of both kinds, newest first, paged in
     * SQL, with whether another page follows.
     */
    const page = Effect.fn("CatalogExports.page")(function* (scope: AccountScope, page: number, size: number) {
      return yield* repo.pageInScope(scope, page, size)
    })

    /** The `GET /v3/products` query an export walks for a location, in the list's default order. */
    const queryFor = (request: ExportRequest, location: string, cursor: string | undefined): V3Query => ({
      filters: { ...request.filters, country: location },
      include: request.include,
      fields: request.fields,
      sort: [],
      page: { number: 1, size: pageSize, cursor }
    })

    /** What an export lists: the whole catalog, or each of its collections in turn. */
    const sourcesOf = (exported: CatalogExport): ReadonlyArray<string | undefined> =>
      exported.kind === "products" ? [undefined] : exported.request.collectionIds

    /**
     * One page of one source for a location, read untraced: an ended span keeps its effect's result, so the
     * spans of each page read (`CatalogV3.products` and its `sql.execute`) held the page, its rows and
     * products, and V8 moved nearly every page into its old generation, which only a full collection frees
     * (measured in-process: ~1 KB per line promoted traced, ~30 B untraced; docs/performance.md,
     * `bench:export`). The job's span (`CatalogExports.run`) and the chunk writes stay traced.
     */
    const readPage = (exported: CatalogExport, collectionId: string | undefined, location: string, cursor?: string) => {
      const query = queryFor(exported.request, location, cursor)
      return Effect.withTracerEnabled(
        collectionId === undefined ? catalog.products(query) : catalog.collectionProducts(collectionId, query),
        false
      )
    }

    /** Lines of all locations, for the progress figure. */
    const countLines = (exported: CatalogExport) =>
      Effect.forEach(exported.request.locations, (location) =>
        Effect.forEach(sourcesOf(exported), (collectionId) =>
          catalog.productCount(queryFor(exported.request, location, undefined), collectionId)
        )
      ).pipe(Effect.map((counts) => counts.flat().reduce((sum, count) => sum + count, 0)))

    /** Writes one location's file from where its last chunk left off. */
    const writeLocation = (exported: CatalogExport, location: string, line: ExportLine) =>
      Effect.gen(function* () {
        const last = yield* repo.lastChunk(exported.id, location)
        let seq = last === undefined ? 0 : last.seq + 1
        let source = last === undefined ? 0 : last.nextCursor === null ? last.sourceIndex + 1 : last.sourceIndex
        let cursor = last?.nextCursor ?? undefined
        const sources = sourcesOf(exported)
        while (source < sources.length) {
          const collectionId = sources[source]
          const page = yield* readPage(exported, collectionId, location, cursor)
          const body = page.rows
            .map((product) => {
              const shown = line(product, exported.request)
              return `${JSON.stringify(collectionId === undefined ? shown : { collectionId, ...shown })}\n`
            })
            .join("")
          yield* sql
            .withTransaction(
              repo.writeChunk(
                exported.id,
                location,
                { seq, sourceIndex: source, nextCursor: page.nextCursor, body },
                page.rows.length
              )
            )
            .pipe(Effect.orDie)
          seq += 1
          if (page.nextCursor === null) {
            source += 1
            cursor = undefined
          } else {
            cursor = page.nextCursor
          }
        }
      })

    /**
     * The `catalog-export.run` job: counts the lines, writes every location's file, and completes the export
     * with its 48-hour expiry (and the job that deletes the files then). On the last attempt a failure marks
     * the export `failed`, which frees the company's slot. Idempotent: a rerun resumes; a finished export is
     * left alone.
     */
    const run = Effect.fn("CatalogExports.run")(function* (exportId: string, lastAttempt: boolean, line: ExportLine) {
      const found = yield* repo.find(exportId)
      if (found === undefined || found.status === "completed" || found.status === "failed") return
      yield* Effect.annotateCurrentSpan({ "export.id": exportId, "export.kind": found.kind })
      const work = Effect.gen(function* () {
        const total = found.totalLines ?? (yield* countLines(found))
        yield* repo.markProcessing(exportId, total)
        for (const location of found.request.locations) yield* writeLocation(found, location, line)
        const completedAt = yield* nowDate
        const expiresAt = new Date(completedAt.getTime() + exportLifetimeHours * 3_600_000)
        yield* sql
          .withTransaction(
            Effect.gen(function* () {
              yield* repo.markCompleted(exportId, completedAt, expiresAt)
              yield* jobs.enqueue(
                ExpireCatalogExport,
                { exportId },
                { key: exportId, runAt: DateTime.unsafeFromDate(expiresAt) }
              )
            })
          )
          .pipe(Effect.orDie)
        yield* Effect.logInfo("export completed").pipe(Effect.annotateLogs({ exportId, lines: total }))
      })
      yield* lastAttempt
        ? work.pipe(
            Effect.catchAllCause((cause) =>
              Effect.gen(function* () {
                yield* Effect.logError("export failed", cause).pipe(Effect.annotateLogs({ exportId }))
                yield* sql.withTransaction(repo.markFailed(exportId)).pipe(Effect.orDie)
              })
            )
          )
        : work
    })

    /** The `catalog-export.expire` job: deletes an expired export's files (its row stays, so links say 410). */
    const expire = Effect.fn("CatalogExports.expire")(function* (exportId: string) {
      yield* repo.deleteChunks(exportId)
    })

    return { startProducts, startCollections, find, page, downloadUrls, file, fileOf, run, expire } as const
  })
}) {}
