import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { CatalogExport, type ExportKind, type ExportRequest } from "../../domain/catalog/Exports.js"
import type { AccountScope } from "../../domain/company/Company.js"
import { rowsOf } from "../platform/Rows.js"

const exportColumns = `id, company_id, environment, kind, request, status, total_lines, written_lines, error_message,
  created_at, completed_at, expires_at`

/** A chunk of an export file: its place in the file and the listing, and its NDJSON lines. */
export const ExportChunk = Schema.Struct({
  seq: Schema.Int,
  sourceIndex: Schema.Int,
  nextCursor: Schema.NullOr(Schema.String),
  body: Schema.String
})
export type ExportChunk = typeof ExportChunk.Type

const exportRows = rowsOf(CatalogExport)
const secretRows = rowsOf(Schema.Struct({ downloadSecret: Schema.String }))
const chunkRows = rowsOf(ExportChunk)
const idRows = rowsOf(Schema.Struct({ id: Schema.String }))

/**
 * The `catalog_exports` and `catalog_export_chunks` tables (migration 0016). Only CatalogExports uses it; its
 * statements run in the caller's transaction when there is one. The insert's errors are the caller's (a
 * unique violation is a company's second active export); any other unexpected database error is a defect.
 */
export class CatalogExportsRepo extends Effect.Service<CatalogExportsRepo>()("CatalogExportsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const ofScope = (scope: AccountScope) => sql`company_id = ${scope.companyId} AND environment = ${scope.environment}`

    /** Records an export `pending`; fails with the `SqlError` of the active-export index on a second one. */
    const insert = Effect.fn("CatalogExportsRepo.insert")(function* (row: {
      readonly id: string
      readonly scope: AccountScope
      readonly kind: ExportKind
      readonly request: ExportRequest
      readonly downloadSecret: string
      readonly createdAt: Date
    }) {
      const [created] = yield* exportRows(sql`
          INSERT INTO catalog_exports (id, company_id, environment, kind, request, status, download_secret, created_at)
          VALUES (${row.id}, ${row.scope.companyId}, ${row.scope.environment}, ${row.kind}, ${JSON.stringify(row.request)}::jsonb, 'pending',
            ${row.downloadSecret}, ${row.createdAt})
          RETURNING ${sql.literal(exportColumns)}`)
      return created!
    })

    /** The company's export still pending or processing, if any. */
    const activeOf = Effect.fn("CatalogExportsRepo.activeOf")((companyId: string) =>
      idRows(sql`SELECT id FROM catalog_exports
          WHERE company_id = ${companyId} AND status IN ('pending', 'processing')`).pipe(
        Effect.orDie,
        Effect.map((rows) => rows[0]?.id)
      )
    )

    /** An export of this kind in the scope's company and environment. */
    const findInScope = Effect.fn("CatalogExportsRepo.findInScope")(
      (scope: AccountScope, kind: ExportKind, exportId: string) =>
        exportRows(sql`SELECT ${sql.literal(exportColumns)} FROM catalog_exports
        WHERE id = ${exportId} AND kind = ${kind} AND ${ofScope(scope)}`).pipe(
          Effect.orDie,
          Effect.map((rows) => rows[0])
        )
    )

    /**
     * A page (from 1) of the exports of the scope's company and environment, of both kinds, newest first; one row
     * more than `size` is read to tell whether another page follows.
     */
    const pageInScope = Effect.fn("CatalogExportsRepo.pageInScope")((scope: AccountScope, page: number, size: number) =>
      exportRows(sql`SELECT ${sql.literal(exportColumns)} FROM catalog_exports
        WHERE ${ofScope(scope)}
        ORDER BY created_at DESC, id DESC
        LIMIT ${size + 1} OFFSET ${(page - 1) * size}`).pipe(
        Effect.orDie,
        Effect.map((rows) => ({ rows: rows.slice(0, size), hasNext: rows.length > size }))
      )
    )

    /** An export by id. */
    const find = Effect.fn("CatalogExportsRepo.find")((exportId: string) =>
      exportRows(sql`SELECT ${sql.literal(exportColumns)} FROM catalog_exports WHERE id = ${exportId}`).pipe(
        Effect.orDie,
        Effect.map((rows) => rows[0])
      )
    )

    /** The secret an export's download links are signed with. */
    const downloadSecret = Effect.fn("CatalogExportsRepo.downloadSecret")((exportId: string) =>
      secretRows(sql`SELECT download_secret FROM catalog_exports WHERE id = ${exportId}`).pipe(
        Effect.orDie,
        Effect.map((rows) => rows[0]?.downloadSecret)
      )
    )

    /** The first chunk of a location's file from `seq` on. */
    const chunkFrom = Effect.fn("CatalogExportsRepo.chunkFrom")((exportId: string, location: string, seq: number) =>
      chunkRows(sql`SELECT seq, source_index, next_cursor, body FROM catalog_export_chunks
          WHERE export_id = ${exportId} AND location = ${location} AND seq >= ${seq} ORDER BY seq LIMIT 1`).pipe(
        Effect.orDie
      )
    )

    /** The last chunk written of a location's file, without its body. */
    const lastChunk = Effect.fn("CatalogExportsRepo.lastChunk")((exportId: string, location: string) =>
      chunkRows(sql`SELECT seq, source_index, next_cursor, '' AS body FROM catalog_export_chunks
          WHERE export_id = ${exportId} AND location = ${location} ORDER BY seq DESC LIMIT 1`).pipe(
        Effect.orDie,
        Effect.map((rows) => rows[0])
      )
    )

    /** Writes a chunk and counts its lines as written (run it in a transaction). */
    const writeChunk = Effect.fn("CatalogExportsRepo.writeChunk")(
      (exportId: string, location: string, chunk: ExportChunk, lines: number) =>
        Effect.all([
          sql`INSERT INTO catalog_export_chunks (export_id, location, seq, source_index, next_cursor, lines, body)
                  VALUES (${exportId}, ${location}, ${chunk.seq}, ${chunk.sourceIndex}, ${chunk.nextCursor}, ${lines}, ${chunk.body})`,
          sql`UPDATE catalog_exports SET written_lines = written_lines + ${lines} WHERE id = ${exportId}`
        ]).pipe(Effect.orDie, Effect.asVoid)
    )

    /** Marks a pending or processing export `processing`, with the lines it will have. */
    const markProcessing = Effect.fn("CatalogExportsRepo.markProcessing")((exportId: string, totalLines: number) =>
      sql`UPDATE catalog_exports SET status = 'processing', total_lines = ${totalLines}
          WHERE id = ${exportId} AND status IN ('pending', 'processing')`.pipe(Effect.orDie, Effect.asVoid)
    )

    /** Marks a processing export `completed`, valid until `expiresAt`. */
    const markCompleted = Effect.fn("CatalogExportsRepo.markCompleted")(
      (exportId: string, completedAt: Date, expiresAt: Date) =>
        sql`UPDATE catalog_exports SET status = 'completed', completed_at = ${completedAt},
                expires_at = ${expiresAt} WHERE id = ${exportId} AND status = 'processing'`.pipe(
          Effect.orDie,
          Effect.asVoid
        )
    )

    /** Marks a pending or processing export `failed` and deletes its chunks (run it in a transaction). */
    const markFailed = Effect.fn("CatalogExportsRepo.markFailed")((exportId: string) =>
      Effect.all([
        sql`UPDATE catalog_exports SET status = 'failed',
                        error_message = 'The export could not be written; start a new one.'
                        WHERE id = ${exportId} AND status IN ('pending', 'processing')`,
        sql`DELETE FROM catalog_export_chunks WHERE export_id = ${exportId}`
      ]).pipe(Effect.orDie, Effect.asVoid)
    )

    /** Deletes an export's chunks (its files). */
    const deleteChunks = Effect.fn("CatalogExportsRepo.deleteChunks")((exportId: string) =>
      sql`DELETE FROM catalog_export_chunks WHERE export_id = ${exportId}`.pipe(Effect.orDie, Effect.asVoid)
    )

    return {
      insert,
      activeOf,
      findInScope,
      pageInScope,
      find,
      downloadSecret,
      chunkFrom,
      lastChunk,
      writeChunk,
      markProcessing,
      markCompleted,
      markFailed,
      deleteChunks
    } as const
  })
}) {}
