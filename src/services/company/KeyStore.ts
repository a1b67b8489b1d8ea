import { createHash, timingSafeEqual } from "node:crypto"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Cache, Clock, Effect, Option, Schema } from "effect"
import {
  type AccountsAccess,
  ApiKeyRecord,
  type Environment,
  type Permission,
  RateLimitOverrides,
  type RequestSource
} from "../../domain/company/Company.js"
import {
  type AccountsAccessDenied,
  ApiKeyExpired,
  ApiKeyInvalid,
  ApiKeyLimitReached,
  ApiKeyNotFound,
  EnvironmentMismatch,
  type PermissionDenied
} from "../../domain/company/Errors.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { forgetWhere, foundFor, lookupIn } from "../platform/Caches.js"
import { isUniqueViolation, rowsOf } from "../platform/Rows.js"
import { compileV3Query, type V3Columns, v3Page } from "../platform/V3QuerySql.js"

/**
 * API keys (docs/company-api.md): 24 hex characters (96 random bits), stored only as their SHA-256 and
 * looked up by it. At most `maxActiveKeys` active keys per company, enforced in a transaction that locks
 * the company row, so parallel creations cannot overshoot.
 */

export const maxActiveKeys = 3

/** How long an authenticated key is reused without a query (see `authenticate`). */
export const authCacheMillis = 1000

const maxCachedKeys = 10_000

const keyPattern = /^[a-fA-F0-9]{24}$/

const sha256 = (value: string) => createHash("sha256").update(value.toLowerCase()).digest("hex")

const newKeyValue = () => Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(12))).toString("hex")

const dayMillis = 24 * 60 * 60 * 1000

/** The requesting key's say over an existing key it would rotate out or revoke (`CompanyPolicy.canManageKey`). */
export type KeyGuard = (key: ApiKeyRecord) => Effect.Effect<void, PermissionDenied | AccountsAccessDenied>

/** Who revokes a key: an API key (only its environment's keys, and only those its guard lets through), or the CLI's operator. */
export type KeyRevoker = { readonly environment: Environment; readonly guard: KeyGuard } | "operator"

export interface CreateKeyInput {
  readonly companyId: string
  readonly environment: Environment
  readonly name: string
  readonly expirationInDays: number
  readonly enforceMtls: boolean
  readonly permissions: ReadonlyArray<Permission>
  readonly accountsAccess: AccountsAccess
  readonly requestSource: RequestSource | null
  /**
   * Rotation: the key this one replaces, which stops working `graceSeconds` from now (or at its own expiry
   * if sooner), if the requesting key's guard lets it.
   */
  readonly rotate?: { readonly apiKeyId: string; readonly graceSeconds: number; readonly guard: KeyGuard } | undefined
  /** Where in the request body accountsAccess sits, for 400 paths. */
  readonly accountsPath?: string
}

/** The key as authenticated: its record and its company's rate-limit overrides. */
export interface AuthenticatedKey {
  readonly key: ApiKeyRecord
  readonly rateLimits: RateLimitOverrides
}

/** A key as authentication reads it: with its hash and its company's rate-limit overrides. */
const CachedKey = Schema.Struct({
  ...ApiKeyRecord.fields,
  keyHash: Schema.String,
  rateLimits: RateLimitOverrides
})
type CachedKey = typeof CachedKey.Type

const isActive = (key: ApiKeyRecord, now: number) => key.revokedAt === null && key.expiresAt.getTime() > now

/** Rows of the inline statements below, decoded (decoders built once). */
const idRows = rowsOf(Schema.Struct({ id: Schema.String }))

export class KeyStore extends Effect.Service<KeyStore>()("KeyStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const keysOf = rowsOf(ApiKeyRecord)

    const columns = sql`id, company_id, environment, name, permissions, accounts_access, enforce_mtls,
      request_source, created_at, expires_at, revoked_at`

    const findKey = (companyId: string, apiKeyId: string) =>
      keysOf(sql`SELECT ${columns} FROM api_keys
        WHERE company_id = ${companyId} AND id = ${apiKeyId.toLowerCase()} AND revoked_at IS NULL`).pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]))
      )

    /** Creates a key (and, for a rotation, schedules the old one's expiry) in one transaction. */
    const create = Effect.fn("KeyStore.create")(function* (input: CreateKeyInput) {
      const now = yield* Clock.currentTimeMillis
      const id = yield* makeId
      const value = newKeyValue()
      const expiresAt = new Date(now + input.expirationInDays * dayMillis)
      const { record, rotated } = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            // The lock serialises key creation per company: the count below cannot go stale.
            const company = yield* sql`SELECT id FROM companies WHERE id = ${input.companyId} FOR UPDATE`
            if (company.length === 0) return yield* InvalidRequest.field("companyId", "No such company.")
            const keys = yield* keysOf(sql`SELECT ${columns} FROM api_keys
              WHERE company_id = ${input.companyId} AND revoked_at IS NULL`)
            const { rotate } = input
            const rotated = rotate === undefined ? undefined : rotate.apiKeyId.toLowerCase()
            if (rotate !== undefined) {
              const old = keys.find((key) => key.id === rotated && isActive(key, now))
              if (old === undefined)
                return yield* new ApiKeyNotFound({
                  message: "No such active key to rotate.",
                  apiKeyId: rotate.apiKeyId
                })
              if (old.environment !== input.environment) {
                return yield* new EnvironmentMismatch({ message: "That key belongs to the other environment." })
              }
              yield* rotate.guard(old)
            }
            // A key being rotated out no longer counts: rotation works at the limit.
            const active = keys.filter((key) => isActive(key, now) && key.id !== rotated).length
            if (active >= maxActiveKeys) {
              return yield* new ApiKeyLimitReached({
                message: `A company has at most ${maxActiveKeys} active API keys; delete one before creating another.`,
                limit: maxActiveKeys
              })
            }
            if (keys.some((key) => key.name === input.name)) {
              return yield* InvalidRequest.field("name", `An API key named "${input.name}" already exists.`)
            }
            const accountsPath = input.accountsPath ?? "accountsAccess"
            if (input.accountsAccess.scope === "selected-accounts" && input.accountsAccess.ids.length > 0) {
              const ids = input.accountsAccess.ids.map((accountId) => accountId.toLowerCase())
              const known = yield* idRows(sql`SELECT id FROM accounts
                WHERE company_id = ${input.companyId} AND environment = ${input.environment} AND id IN ${sql.in(ids)}`)
              const knownIds = new Set(known.map((row) => row.id))
              const index = ids.findIndex((accountId) => !knownIds.has(accountId))
              if (index >= 0)
                return yield* InvalidRequest.field(`${accountsPath}.ids[${index}]`, "No such account in this company.")
            }
            const accountsAccess = {
              scope: input.accountsAccess.scope,
              ids: input.accountsAccess.ids.map((accountId) => accountId.toLowerCase())
            }
            const [row] = yield* keysOf(sql`INSERT INTO api_keys
                (id, company_id, environment, name, key_hash, permissions, accounts_access, enforce_mtls,
                 request_source, created_at, expires_at)
              VALUES (${id}, ${input.companyId}, ${input.environment}, ${input.name}, ${sha256(value)},
                ${JSON.stringify(input.permissions)}::jsonb, ${JSON.stringify(accountsAccess)}::jsonb,
                ${input.enforceMtls}, ${input.requestSource}, ${new Date(now)}, ${expiresAt})
              RETURNING ${columns}`)
            if (rotated === undefined || input.rotate === undefined) return { record: row!, rotated: undefined }
            const until = new Date(now + input.rotate.graceSeconds * 1000)
            const [old] = yield* keysOf(sql`UPDATE api_keys SET expires_at = LEAST(expires_at, ${until})
              WHERE id = ${rotated} RETURNING ${columns}`)
            return { record: row!, rotated: old }
          })
        )
        .pipe(
          // Two creations with one name in parallel: the unique index decides, with the same 400.
          Effect.catchTag("SqlError", (error) =>
            isUniqueViolation(error)
              ? Effect.fail(InvalidRequest.field("name", `An API key named "${input.name}" already exists.`))
              : Effect.die(error)
          )
        )
      if (rotated !== undefined) yield* forget((cached) => cached.id === rotated.id)
      return { record, apiKey: value, rotated }
    })

    /** The company's keys in one environment that are not deleted, newest first; optionally those reaching any of `accountIds`. */
    const list = Effect.fn("KeyStore.list")(function* (
      companyId: string,
      environment: Environment,
      accountIds: ReadonlyArray<string> = []
    ) {
      const keys = yield* keysOf(sql`SELECT ${columns} FROM api_keys
        WHERE company_id = ${companyId} AND environment = ${environment} AND revoked_at IS NULL
        ORDER BY created_at DESC, id DESC`).pipe(Effect.orDie)
      if (accountIds.length === 0) return keys
      const wanted = new Set(accountIds.map((accountId) => accountId.toLowerCase()))
      return keys.filter(
        (key) => key.accountsAccess.scope === "all-accounts" || key.accountsAccess.ids.some((a) => wanted.has(a))
      )
    })

    /** How the v3 key list's query reaches the table (filters, sorts and pages in SQL). */
    const listColumns: V3Columns<ApiKeyRecord> = {
      paging: "number",
      filters: {
        name: (name) => sql`name = ${name}`,
        enforceMtls: (value) => sql`enforce_mtls = ${value === "true"}`
      },
      sort: { createdAt: "created_at", name: "name", expirationDate: "expires_at" },
      defaultOrder: [{ column: "created_at", descending: true }],
      id: "id"
    }

    /** One page of the company's keys in an environment, as a v3 list query asks. */
    const page = Effect.fn("KeyStore.page")(function* (companyId: string, environment: Environment, query: V3Query) {
      const { where, orderBy, limit } = compileV3Query(sql, query, listColumns)
      const rows = yield* keysOf(sql`SELECT ${columns} FROM api_keys
        WHERE company_id = ${companyId} AND environment = ${environment} AND revoked_at IS NULL AND ${where}
        ORDER BY ${orderBy} LIMIT ${limit}`).pipe(Effect.orDie)
      return v3Page(rows, query, listColumns)
    })

    /** Deletes a key at once: its next request is a 401. */
    const revoke = Effect.fn("KeyStore.revoke")(function* (companyId: string, apiKeyId: string, by: KeyRevoker) {
      const key = yield* findKey(companyId, apiKeyId).pipe(Effect.orDie)
      if (Option.isNone(key)) return yield* new ApiKeyNotFound({ message: "No such API key.", apiKeyId })
      if (by !== "operator") {
        if (key.value.environment !== by.environment) {
          return yield* new EnvironmentMismatch({ message: "That key belongs to the other environment." })
        }
        yield* by.guard(key.value)
      }
      const now = yield* Clock.currentTimeMillis
      yield* sql`UPDATE api_keys SET revoked_at = ${new Date(now)} WHERE id = ${key.value.id}`.pipe(Effect.orDie)
      yield* forget((cached) => cached.id === key.value.id)
    })

    const findByHash = SqlSchema.findOne({
      Request: Schema.String,
      Result: CachedKey,
      execute: (hash) => sql`SELECT k.id, k.company_id, k.environment, k.name, k.permissions, k.accounts_access,
          k.enforce_mtls, k.request_source, k.created_at, k.expires_at, k.revoked_at, k.key_hash, c.rate_limits
        FROM api_keys k JOIN companies c ON c.id = k.company_id WHERE k.key_hash = ${hash}`
    })

    /**
     * Keys by hash, for `authCacheMillis`: without it every request pays one more query than its operation
     * needs. A hash no key has is not kept. Deletion, rotation and limit changes made here evict at once;
     * made by another instance or the CLI, they take effect within `authCacheMillis`. Expiry is checked on
     * every request.
     */
    const cache = yield* Cache.makeWith({
      capacity: maxCachedKeys,
      lookup: (hash: string) => Effect.orDie(findByHash(hash)),
      timeToLive: foundFor(authCacheMillis)
    })
    const forget = (match: (key: CachedKey) => boolean) => forgetWhere(cache, match)
    /** Drops a company's cached keys (its rate limits changed). */
    const forgetCompany = (companyId: string) => forget((key) => key.companyId === companyId)

    /** The key a request presents, if it is well formed, known, not deleted and not expired. */
    const authenticate = Effect.fn("KeyStore.authenticate")(function* (presented: string) {
      if (!keyPattern.test(presented)) return yield* new ApiKeyInvalid({ message: "The API key is not valid." })
      const hash = sha256(presented)
      const now = yield* Clock.currentTimeMillis
      const found = yield* lookupIn(cache, hash)
      const row = Option.getOrUndefined(found)
      // Looked up by hash; the comparison itself runs in constant time all the same.
      if (row === undefined || !timingSafeEqual(Buffer.from(row.keyHash, "hex"), Buffer.from(hash, "hex"))) {
        return yield* new ApiKeyInvalid({ message: "The API key is not valid." })
      }
      if (row.revokedAt !== null) return yield* new ApiKeyInvalid({ message: "The API key is not valid." })
      if (row.expiresAt.getTime() <= now) {
        return yield* new ApiKeyExpired({ message: "The API key has expired; create a new one." })
      }
      const { keyHash, rateLimits, ...key } = row
      return { key, rateLimits } satisfies AuthenticatedKey
    })

    return { create, list, page, revoke, authenticate, forgetCompany } as const
  })
}) {}
