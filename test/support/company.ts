import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { Environment } from "../../src/domain/company/Company.js"
import { Companies } from "../../src/services/company/Companies.js"
import { KeyStore } from "../../src/services/company/KeyStore.js"
import { CompanyPolicy } from "../../src/services/company/Policy.js"
import { raw } from "./http.js"

/** Companies and KeyStore on the test's database. */
export const CompanyServicesLive = Layer.mergeAll(Companies.Default, CompanyPolicy.Default).pipe(
  Layer.provideMerge(KeyStore.Default)
)

let counter = 0

/** A new company (default account and a first key holding every permission) through the service the CLI uses. */
export const createCompany = (environment: Environment = "test") =>
  Effect.flatMap(Companies, (companies) =>
    companies.create({ name: `Company ${++counter} ${Math.random().toString(36).slice(2, 8)}`, environment })
  ).pipe(Effect.provide(CompanyServicesLive))

/** Limits high enough never to bite (for tests about something else): the override the CLI sets. */
export const raiseLimits = (companyId: string) =>
  Effect.flatMap(Companies, (companies) =>
    companies.setRateLimits(companyId, {
      global: { rate: 10_000, burst: 10_000 },
      "authentication:read": { rate: 10_000, burst: 10_000 },
      "authentication:write": { rate: 10_000, burst: 10_000 },
      "administration:read": { rate: 10_000, burst: 10_000 },
      "administration:write": { rate: 10_000, burst: 10_000 },
      "marketplace:write": { rate: 10_000, burst: 10_000 }
    })
  ).pipe(Effect.provide(CompanyServicesLive), Effect.orDie)

/** An account of `companyId` inserted directly (accounts get their own API in a later area). */
export const insertAccount = (companyId: string, environment: Environment, id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO accounts (id, company_id, environment, name, created_at)
      VALUES (${id}, ${companyId}, ${environment}, ${`Account ${id}`}, now())`.pipe(Effect.orDie)
  )

export const keyHeaders = (apiKey: string, extra: Record<string, string> = {}) => ({ "x-api-key": apiKey, ...extra })

export const getWith = (url: string, headers: Record<string, string>) =>
  raw(HttpClientRequest.get(url).pipe(HttpClientRequest.setHeaders(headers)))

export const postWith = (url: string, body: unknown, headers: Record<string, string>) =>
  raw(
    HttpClientRequest.post(url).pipe(
      HttpClientRequest.setHeaders(headers),
      HttpClientRequest.bodyText(typeof body === "string" ? body : JSON.stringify(body), "application/json")
    )
  )

/** A POST with no body and no content type, as `curl -X POST` sends it. */
export const postWithoutBody = (url: string, headers: Record<string, string>) =>
  raw(HttpClientRequest.post(url).pipe(HttpClientRequest.setHeaders(headers)))

export const patchWith = (url: string, body: unknown, headers: Record<string, string>) =>
  raw(
    HttpClientRequest.patch(url).pipe(
      HttpClientRequest.setHeaders(headers),
      HttpClientRequest.bodyText(typeof body === "string" ? body : JSON.stringify(body), "application/json")
    )
  )

export const deleteWith = (url: string, headers: Record<string, string>) =>
  raw(HttpClientRequest.del(url).pipe(HttpClientRequest.setHeaders(headers)))

export const v2Keys = "/public-api/v2/authentication/apiKeys"
export const v3Keys = "/public-api/v3/authentication/api-keys"

/** `YYYY-MM-DDThh:mm:ss.sZ` */
export const timestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** Company orders, ledger entries and supplier bookings in the database: a refused order changes none. */
export const orderCounts = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ orders: number; entries: number; bookings: number }>`SELECT
      (SELECT count(*)::int FROM company_orders) AS orders,
      (SELECT count(*)::int FROM billing_entries) AS entries,
      (SELECT count(*)::int FROM orders WHERE user_id IS NULL) AS bookings`,
    (rows) => rows[0]!
  )
).pipe(Effect.orDie)
