import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { ApiKeyRecord, type Environment, RateLimitOverrides } from "../../domain/company/Company.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { compileV3Query, type V3Columns, v3Page } from "../platform/V3QuerySql.js"
import { QueryParam } from "./Scope.js"

/** A key as authentication reads it: with its hash and its company's rate-limit overrides. */
export const KeyForAuthentication = Schema.Struct({
  ...ApiKeyRecord.fields,
  keyHash: Schema.String,
  rateLimits: RateLimitOverrides
})
export type KeyForAuthentication = typeof KeyForAuthentication.Type

/** A new key's row: its value only as its hash. */
export interface NewApiKey {
  readonly id: string
  readonly companyId: string
  readonly environment: Environment
  readonly name: string
  readonly keyHash: string
  readonly prefix: string
  readonly permissions: ReadonlyArray<string>
  readonly accountsAccess: { readonly scope: string; readonly ids: ReadonlyArray<string> }
  readonly enforceMtls: boolean
  readonly requestSource: string | null
  readonly createdAt: Date
  readonly expiresAt: Date
}

/**
 * The `api_keys` table. Only the KeyStore service uses it. Its statements run in the caller's transaction.
 * Unexpected database errors are defects, except the insert's: a taken name is the unique index's to say.
 */
export class ApiKeysRepo extends Effect.Service<ApiKeysRepo>()("ApiKeysRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const columns = sql`id, company_id, environment, name, permissions, accounts_access, enforce_mtls,
      request_source, created_at, expires_at, revoked_at, key_prefix AS prefix, last_used_at`

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

    const findKey = SqlSchema.findOne({
      Request: Schema.Struct({ companyId: Schema.String, id: Schema.String }),
      Result: ApiKeyRecord,
      execute: ({ companyId, id }) => sql`SELECT ${columns} FROM api_keys
        WHERE company_id = ${companyId} AND id = ${id} AND revoked_at IS NULL`
    })

    const findOfCompany = SqlSchema.findAll({
      Request: Schema.String,
      Result: ApiKeyRecord,
      execute: (companyId) => sql`SELECT ${columns} FROM api_keys
              WHERE company_id = ${companyId} AND revoked_at IS NULL`
    })

    const insertKey = SqlSchema.single({
      Request: Schema.Struct({
        id: Schema.String,
        companyId: Schema.String,
        environment: Schema.String,
        name: Schema.String,
        keyHash: Schema.String,
        prefix: Schema.String,
        permissions: Schema.Array(Schema.String),
        accountsAccess: Schema.Struct({ scope: Schema.String, ids: Schema.Array(Schema.String) }),
        enforceMtls: Schema.Boolean,
        requestSource: Schema.NullOr(Schema.String),
        createdAt: Schema.DateFromSelf,
        expiresAt: Schema.DateFromSelf
      }),
      Result: ApiKeyRecord,
      execute: (key) => sql`INSERT INTO api_keys
                (id, company_id, environment, name, key_hash, key_prefix, permissions, accounts_access, enforce_mtls,
                 request_source, created_at, expires_at)
              VALUES (${key.id}, ${key.companyId}, ${key.environment}, ${key.name}, ${key.keyHash}, ${key.prefix},
                ${JSON.stringify(key.permissions)}::jsonb, ${JSON.stringify(key.accountsAccess)}::jsonb,
                ${key.enforceMtls}, ${key.requestSource}, ${key.createdAt}, ${key.expiresAt})
              RETURNING ${columns}`
    })

    const updateExpiry = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, until: Schema.DateFromSelf }),
      Result: ApiKeyRecord,
      execute: ({ id, until }) => sql`UPDATE api_keys SET expires_at = LEAST(expires_at, ${until})
              WHERE id = ${id} RETURNING ${columns}`
    })

    const findOfEnvironment = SqlSchema.findAll({
      Request: Schema.Struct({ companyId: Schema.String, environment: Schema.String }),
      Result: ApiKeyRecord,
      execute: ({ companyId, environment }) => sql`SELECT ${columns} FROM api_keys
        WHERE company_id = ${companyId} AND environment = ${environment} AND revoked_at IS NULL
        ORDER BY created_at DESC, id DESC`
    })

    const findPage = SqlSchema.findAll({
      Request: Schema.Struct({ companyId: Schema.String, environment: Schema.String, query: QueryParam }),
      Result: ApiKeyRecord,
      execute: ({ companyId, environment, query }) => {
        const { where, orderBy, limit } = compileV3Query(sql, query, listColumns)
        return sql`SELECT ${columns} FROM api_keys
        WHERE company_id = ${companyId} AND environment = ${environment} AND revoked_at IS NULL AND ${where}
        ORDER BY ${orderBy} LIMIT ${limit}`
      }
    })

    const updateRevoked = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ id, at }) => sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id}`
    })

    const updateLastUsed = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf, unlessAfter: Schema.DateFromSelf }),
      execute: ({ id, at, unlessAfter }) => sql`UPDATE api_keys SET last_used_at = ${at}
        WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at <= ${unlessAfter})`
    })

    const findByHash = SqlSchema.findOne({
      Request: Schema.String,
      Result: KeyForAuthentication,
      execute: (hash) => sql`SELECT k.id, k.company_id, k.environment, k.name, k.permissions, k.accounts_access,
          k.enforce_mtls, k.request_source, k.created_at, k.expires_at, k.revoked_at, k.key_prefix AS prefix,
          k.last_used_at, k.key_hash, c.rate_limits
        FROM api_keys k JOIN companies c ON c.id = k.company_id WHERE k.key_hash = ${hash}`
    })

    /** A key of the company that is not deleted, or none. */
    const find = Effect.fn("ApiKeysRepo.find")((companyId: string, apiKeyId: string) =>
      Effect.orDie(findKey({ companyId, id: apiKeyId }))
    )

    /** The company's keys that are not deleted, in both environments. */
    const ofCompany = Effect.fn("ApiKeysRepo.ofCompany")((companyId: string) => Effect.orDie(findOfCompany(companyId)))

    /** Inserts a key; fails with the `SqlError` when a unique index refuses it (a name taken meanwhile). */
    const insert = Effect.fn("ApiKeysRepo.insert")((key: NewApiKey) =>
      insertKey(key).pipe(Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die }))
    )

    /** Brings the key's expiry forward to `until` (never later); the key as it now is, or none. */
    const expireBy = Effect.fn("ApiKeysRepo.expireBy")((apiKeyId: string, until: Date) =>
      Effect.orDie(updateExpiry({ id: apiKeyId, until }))
    )

    /** The company's keys in one environment that are not deleted, newest first. */
    const list = Effect.fn("ApiKeysRepo.list")((companyId: string, environment: Environment) =>
      Effect.orDie(findOfEnvironment({ companyId, environment }))
    )

    /** One page of the company's keys in an environment, as a v3 list query asks. */
    const page = Effect.fn("ApiKeysRepo.page")(function* (companyId: string, environment: Environment, query: V3Query) {
      const rows = yield* Effect.orDie(findPage({ companyId, environment, query }))
      return v3Page(rows, query, listColumns)
    })

    /** Marks the key deleted at `at`. */
    const revoke = Effect.fn("ApiKeysRepo.revoke")((apiKeyId: string, at: Date) =>
      Effect.orDie(updateRevoked({ id: apiKeyId, at }))
    )

    /**
     * Records a use of the key at `at`, unless a use after `unlessAfter` is recorded already (by another
     * instance, say): so the row is written at most once a period, however many instances serve the key.
     */
    const recordUse = Effect.fn("ApiKeysRepo.recordUse")((apiKeyId: string, at: Date, unlessAfter: Date) =>
      Effect.orDie(updateLastUsed({ id: apiKeyId, at, unlessAfter }))
    )

    /** The key with this hash, deleted or not, with its company's rate-limit overrides; or none. */
    const byHash = Effect.fn("ApiKeysRepo.byHash")((hash: string) => Effect.orDie(findByHash(hash)))

    return { find, ofCompany, insert, expireBy, list, page, revoke, recordUse, byHash } as const
  })
}) {}
