import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { createCompany, getWith, keyHeaders, raiseLimits } from "./company.js"
import { eventually } from "./eventually.js"
import { get, type RawResponse, testPublicUrl } from "./http.js"

/** Helpers of the catalog export tests (test/http/catalog/exports.test.ts, exportRules.test.ts). */

export const productExports = "/public-api/v3/products/exports"
export const collectionExports = "/public-api/v3/collections/exports"
export const products = "/public-api/v3/products"

export const v3Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })

export const sqlClient = SqlClient.SqlClient

export const exportCounts = Effect.flatMap(sqlClient, (sql) =>
  Effect.map(
    sql<{ exports: number; jobs: number }>`SELECT (SELECT count(*)::int FROM catalog_exports) AS exports,
      (SELECT count(*)::int FROM jobs WHERE kind = 'catalog-export.run') AS jobs`,
    (rows) => rows[0]!
  )
).pipe(Effect.orDie)

export const chunkCount = (exportId: string) =>
  Effect.flatMap(sqlClient, (sql) =>
    Effect.map(
      sql<{ count: number }>`SELECT count(*)::int AS count FROM catalog_export_chunks WHERE export_id = ${exportId}`,
      (rows) => rows[0]!.count
    )
  ).pipe(Effect.orDie)

export const newCompany = Effect.gen(function* () {
  const company = yield* createCompany()
  yield* raiseLimits(company.companyId)
  return {
    ...company,
    headers: keyHeaders(company.apiKey),
    inAccount: keyHeaders(company.apiKey, { "ribbon-account-id": company.accountId })
  }
})

/** Every item of a list, following `links.next`. */
export const walk = (url: string, headers: Record<string, string>) =>
  Effect.gen(function* () {
    const items: Array<any> = []
    let next: string | null = url
    while (next !== null) {
      const page: RawResponse = yield* getWith(next, headers)
      expect(page.status, JSON.stringify(page.body)).toBe(200)
      items.push(...page.body.data)
      next = page.body.links.next
    }
    return items
  })

/** Polls an export until it has finished. */
export const finished = (url: string, headers: Record<string, string>) =>
  eventually(
    getWith(url, headers),
    (response) => ["completed", "failed"].includes(response.body?.data?.status),
    `export ${url} to finish`
  )

/** The lines of a file at a download URL (absolute, on the public URL). */
export const download = (url: string) => get(url.replace(testPublicUrl, ""))

export const linesOf = (response: RawResponse) =>
  response.text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line))
