import { createHash, timingSafeEqual } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Cache, Clock, Effect, FiberSet, Option } from "effect"
import type {
  AccountsAccess,
  ApiKeyRecord,
  Environment,
  Permission,
  RateLimitOverrides,
  RequestSource
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
import { isUniqueViolation } from "../platform/Rows.js"
import { ApiKeysRepo, type KeyForAuthentication } from "./ApiKeysRepo.js"
import { Audit } from "./Audit.js"
import { CompaniesRepo } from "./CompaniesRepo.js"

/**
 * API keys (docs/company-api.md): 24 hex characters (96 random bits), stored only as their SHA-256 and
 * looked up by it, with their first `keyPrefixLength` characters to be recognised by. At most `maxActiveKeys` active keys per company, enforced in a transaction that locks
 * the company row, so parallel creations cannot overshoot. The rows are `ApiKeysRepo`'s.
 */

export const maxActiveKeys = 3

/** How long an authenticated key is reused without a query (see `authenticate`). */
export const authCacheMillis = 1000

/** A key's use is recorded (`lastUsedAt`) at most this often: a busy key does not write on every request. */
export const keyUseRecordMillis = 60_000

/** How many of a key's characters are kept in the clear, to recognise it by: 24 of its 96 bits. */
export const keyPrefixLength = 6

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

const isActive = (key: ApiKeyRecord, now: number) => key.revokedAt === null && key.expiresAt.getTime() > now

export class KeyStore extends Effect.Service<KeyStore>()("KeyStore", {
  dependencies: [ApiKeysRepo.Default, CompaniesRepo.Default, Audit.Default],
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ApiKeysRepo
    const companies = yield* CompaniesRepo
    const audit = yield* Audit
    /** A key's row in the audit log: keys belong to the company, not to an account. */
    const recordKey = (key: ApiKeyRecord, action: "api_key.created" | "api_key.rotated" | "api_key.revoked") =>
      audit.record({
        companyId: key.companyId,
        environment: key.environment,
        accountId: null,
        action,
        target: key.id
      })

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
            if (!(yield* companies.lock(input.companyId))) {
              return yield* InvalidRequest.field("companyId", "No such company.")
            }
            const keys = yield* repo.ofCompany(input.companyId)
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
              const knownIds = yield* companies.accountIdsOf(input.companyId, input.environment, ids)
              const index = ids.findIndex((accountId) => !knownIds.has(accountId))
              if (index >= 0)
                return yield* InvalidRequest.field(`${accountsPath}.ids[${index}]`, "No such account in this company.")
            }
            const accountsAccess = {
              scope: input.accountsAccess.scope,
              ids: input.accountsAccess.ids.map((accountId) => accountId.toLowerCase())
            }
            const row = yield* repo.insert({
              id,
              companyId: input.companyId,
              environment: input.environment,
              name: input.name,
              keyHash: sha256(value),
              prefix: value.slice(0, keyPrefixLength),
              permissions: input.permissions,
              accountsAccess,
              enforceMtls: input.enforceMtls,
              requestSource: input.requestSource,
              createdAt: new Date(now),
              expiresAt
            })
            yield* recordKey(row, "api_key.created")
            if (rotated === undefined || input.rotate === undefined) return { record: row, rotated: undefined }
            const until = new Date(now + input.rotate.graceSeconds * 1000)
            const old = Option.getOrUndefined(yield* repo.expireBy(rotated, until))
            // A rotation changes two keys: the new one's row above, and this one for the key it retires.
            if (old !== undefined) yield* recordKey(old, "api_key.rotated")
            return { record: row, rotated: old }
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
      const keys = yield* repo.list(companyId, environment)
      if (accountIds.length === 0) return keys
      const wanted = new Set(accountIds.map((accountId) => accountId.toLowerCase()))
      return keys.filter(
        (key) => key.accountsAccess.scope === "all-accounts" || key.accountsAccess.ids.some((a) => wanted.has(a))
      )
    })

    /** One page of the company's keys in an environment, as a v3 list query asks. */
    const page = Effect.fn("KeyStore.page")((companyId: string, environment: Environment, query: V3Query) =>
      repo.page(companyId, environment, query)
    )

    /** A key of the company that is not deleted, or none. */
    const find = Effect.fn("KeyStore.find")((companyId: string, apiKeyId: string) =>
      repo.find(companyId, apiKeyId.toLowerCase())
    )

    /** Deletes a key at once: its next request is a 401. */
    const revoke = Effect.fn("KeyStore.revoke")(function* (companyId: string, apiKeyId: string, by: KeyRevoker) {
      const key = yield* repo.find(companyId, apiKeyId.toLowerCase())
      if (Option.isNone(key)) return yield* new ApiKeyNotFound({ message: "No such API key.", apiKeyId })
      if (by !== "operator") {
        if (key.value.environment !== by.environment) {
          return yield* new EnvironmentMismatch({ message: "That key belongs to the other environment." })
        }
        yield* by.guard(key.value)
      }
      const now = yield* Clock.currentTimeMillis
      yield* sql
        .withTransaction(
          Effect.zipRight(repo.revoke(key.value.id, new Date(now)), recordKey(key.value, "api_key.revoked"))
        )
        .pipe(Effect.orDie)
      yield* forget((cached) => cached.id === key.value.id)
    })

    /**
     * Keys by hash, for `authCacheMillis`: without it every request pays one more query than its operation
     * needs. A hash no key has is not kept. Deletion, rotation and limit changes made here evict at once;
     * made by another instance or the CLI, they take effect within `authCacheMillis`. Expiry is checked on
     * every request.
     */
    const cache = yield* Cache.makeWith({
      capacity: maxCachedKeys,
      lookup: (hash: string) => repo.byHash(hash),
      timeToLive: foundFor(authCacheMillis)
    })
    const forget = (match: (key: KeyForAuthentication) => boolean) => forgetWhere(cache, match)
    /** Drops a company's cached keys (its rate limits changed). */
    const forgetCompany = (companyId: string) => forget((key) => key.companyId === companyId)

    /**
     * Uses of keys, recorded off the request's path: a write per key at most every `keyUseRecordMillis` from
     * this instance (the repository's condition holds the other instances to it too). The writes still running
     * when the service stops are interrupted: a use not recorded is no loss.
     */
    const recording = yield* FiberSet.make()
    const recordedAt = new Map<string, number>()
    const recordUse = (apiKeyId: string, now: number) =>
      Effect.suspend(() => {
        const last = recordedAt.get(apiKeyId)
        if (last !== undefined && now - last < keyUseRecordMillis) return Effect.void
        // Bounded as the cache is; forgetting only means one more write for a key.
        if (recordedAt.size >= maxCachedKeys) recordedAt.clear()
        recordedAt.set(apiKeyId, now)
        const write = repo.recordUse(apiKeyId, new Date(now), new Date(now - keyUseRecordMillis))
        return FiberSet.run(
          recording,
          Effect.catchAllCause(write, (cause) => Effect.logWarning("Recording an API key's use failed", cause))
        )
      })

    /** The key a request presents, if it is well formed, known, not deleted and not expired; its use is recorded. */
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
      yield* recordUse(row.id, now)
      const { keyHash, rateLimits, ...key } = row
      return { key, rateLimits } satisfies AuthenticatedKey
    })

    return { create, list, page, find, revoke, authenticate, forgetCompany } as const
  })
}) {}
