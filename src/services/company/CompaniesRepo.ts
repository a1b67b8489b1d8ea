import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import {
  type Account,
  AccountRecord,
  type AccountScope,
  Environment,
  RateLimitOverrides
} from "../../domain/company/Company.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { jsonRecordOf } from "../platform/Rows.js"
import { compileV3Query, likeEscape, type V3Columns, v3Page } from "../platform/V3QuerySql.js"
import { MethodJson, methodsOf } from "./BillingRepo.js"
import { accountsIn, QueryParam, ScopeParam } from "./Scope.js"

const accountColumns = "id, company_id, environment, name, is_default"

/** An account with its default billing method (null when it has none). */
export const AccountWithMethod = Schema.Struct({ ...AccountRecord.fields, defaultMethod: Schema.NullOr(MethodJson) })
export type AccountWithMethod = typeof AccountWithMethod.Type

/**
 * The `companies` and `accounts` tables. The company context's services use it (the company row's lock
 * serialises what a company may hold only so many of); other contexts go through those services. Its
 * statements run in the caller's transaction. Unexpected database errors are defects.
 */
export class CompaniesRepo extends Effect.Service<CompaniesRepo>()("CompaniesRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const methods = methodsOf(sql)
    const listColumns: V3Columns<Account> = {
      paging: "number",
      filters: { name: (value) => sql`name ILIKE ${`%${likeEscape(value)}%`}` },
      sort: { createdAt: "created_at", name: "name" },
      defaultOrder: [{ column: "created_at", descending: false }],
      id: "id"
    }

    const insertCompany = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, name: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ id, name, at }) => sql`INSERT INTO companies (id, name, created_at) VALUES (${id}, ${name}, ${at})`
    })

    const findCompany = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Unknown,
      execute: (companyId) => sql`SELECT 1 FROM companies WHERE id = ${companyId}`
    })

    const findCompanyName = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ name: Schema.String }),
      execute: (companyId) => sql`SELECT name FROM companies WHERE id = ${companyId}`
    })

    const lockCompany = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (companyId) => sql`SELECT id FROM companies WHERE id = ${companyId} FOR UPDATE`
    })

    const updateRateLimits = SqlSchema.void({
      Request: Schema.Struct({ companyId: Schema.String, overrides: RateLimitOverrides }),
      execute: ({ companyId, overrides }) =>
        sql`UPDATE companies SET rate_limits = ${JSON.stringify(overrides)}::jsonb WHERE id = ${companyId}`
    })

    const findRateLimits = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ rateLimits: RateLimitOverrides }),
      execute: (companyId) => sql`SELECT rate_limits FROM companies WHERE id = ${companyId}`
    })

    const updateRequireTwoFactor = SqlSchema.findAll({
      Request: Schema.Struct({ companyId: Schema.String, required: Schema.Boolean }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ companyId, required }) =>
        sql`UPDATE companies SET require_two_factor = ${required} WHERE id = ${companyId} RETURNING id`
    })

    const findRequireTwoFactor = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ requireTwoFactor: Schema.Boolean }),
      execute: (companyId) => sql`SELECT require_two_factor FROM companies WHERE id = ${companyId}`
    })

    const insertDefaultAccount = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        companyId: Schema.String,
        environment: Environment,
        name: Schema.String,
        at: Schema.DateFromSelf
      }),
      execute: ({ id, companyId, environment, name, at }) =>
        sql`INSERT INTO accounts (id, company_id, environment, name, is_default, created_at)
              VALUES (${id}, ${companyId}, ${environment}, ${name}, true, ${at})`
    })

    const insertAccount = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        companyId: Schema.String,
        environment: Environment,
        name: Schema.String,
        at: Schema.DateFromSelf
      }),
      Result: AccountRecord,
      execute: ({
        id,
        companyId,
        environment,
        name,
        at
      }) => sql`INSERT INTO accounts (id, company_id, environment, name, created_at)
          VALUES (${id}, ${companyId}, ${environment}, ${name}, ${at})
          ON CONFLICT (company_id, environment, name) DO NOTHING
          RETURNING ${sql.literal(accountColumns)}`
    })

    const findAccount = SqlSchema.findOne({
      Request: Schema.Struct({ companyId: Schema.String, id: Schema.String }),
      Result: AccountRecord,
      execute: ({ companyId, id }) => sql`SELECT id, company_id, environment, name, is_default FROM accounts
        WHERE id = ${id} AND company_id = ${companyId}`
    })

    const findDefaultAccount = SqlSchema.findOne({
      Request: Schema.Struct({ companyId: Schema.String, environment: Environment }),
      Result: AccountRecord,
      execute: ({ companyId, environment }) => sql`SELECT ${sql.literal(accountColumns)} FROM accounts
        WHERE company_id = ${companyId} AND environment = ${environment} AND is_default`
    })

    const findAccountInScope = SqlSchema.findOne({
      Request: Schema.Struct({ scope: ScopeParam, id: Schema.String }),
      Result: AccountRecord,
      execute: ({ scope, id }) => sql`SELECT ${sql.literal(accountColumns)} FROM accounts
        WHERE id = ${id} AND ${accountsIn(sql, scope, "id")}`
    })

    const findFirstTwo = SqlSchema.findAll({
      Request: ScopeParam,
      Result: AccountRecord,
      execute: (scope) => sql`SELECT ${sql.literal(accountColumns)} FROM accounts
        WHERE ${accountsIn(sql, scope, "id")} ORDER BY is_default DESC, created_at LIMIT 2`
    })

    const findFirstTwoWithMethod = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, id: Schema.UndefinedOr(Schema.String) }),
      Result: AccountWithMethod,
      execute: ({ scope, id }) => sql`SELECT ${sql.literal(accountColumns)},
          (SELECT ${jsonRecordOf(sql, MethodJson, "methods")} FROM ${methods}
            WHERE methods.account_id = accounts.id AND methods.is_default) AS default_method
        FROM accounts
        WHERE ${accountsIn(sql, scope, "id")}
          ${id === undefined ? sql`` : sql`AND id = ${id}`}
        ORDER BY is_default DESC, created_at LIMIT 2`
    })

    const findAccountPage = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, query: QueryParam }),
      Result: AccountRecord,
      execute: ({ scope, query }) => {
        const { where, orderBy, limit } = compileV3Query(sql, query, listColumns)
        return sql`SELECT ${sql.literal(accountColumns)} FROM accounts WHERE ${accountsIn(sql, scope, "id")} AND ${where}
          ORDER BY ${orderBy} LIMIT ${limit}`
      }
    })

    const findAccountIds = SqlSchema.findAll({
      Request: Schema.Struct({
        companyId: Schema.String,
        environment: Environment,
        ids: Schema.Array(Schema.String)
      }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ companyId, environment, ids }) => sql`SELECT id FROM accounts
                WHERE company_id = ${companyId} AND environment = ${environment} AND id IN ${sql.in(ids)}`
    })

    /** A new company row. */
    const insert = Effect.fn("CompaniesRepo.insert")((id: string, name: string, at: Date) =>
      Effect.orDie(insertCompany({ id, name, at }))
    )

    /** Whether the company exists. */
    const exists = Effect.fn("CompaniesRepo.exists")(function* (companyId: string) {
      const rows = yield* Effect.orDie(findCompany(companyId))
      return rows.length > 0
    })

    /** The company's name, if it exists. */
    const nameOf = Effect.fn("CompaniesRepo.nameOf")(function* (companyId: string) {
      return Option.map(yield* Effect.orDie(findCompanyName(companyId)), (row) => row.name)
    })

    /**
     * Locks the company's row until the transaction ends, serialising what counts a company's keys or
     * endpoints; whether the company exists.
     */
    const lock = Effect.fn("CompaniesRepo.lock")(function* (companyId: string) {
      const rows = yield* Effect.orDie(lockCompany(companyId))
      return rows.length > 0
    })

    /** Replaces the company's rate-limit overrides. */
    const setRateLimits = Effect.fn("CompaniesRepo.setRateLimits")((companyId: string, overrides: RateLimitOverrides) =>
      Effect.orDie(updateRateLimits({ companyId, overrides }))
    )

    /** The company's rate-limit overrides, or none when there is no such company. */
    const rateLimits = Effect.fn("CompaniesRepo.rateLimits")(function* (companyId: string) {
      return Option.map(yield* Effect.orDie(findRateLimits(companyId)), (company) => company.rateLimits)
    })

    /** Sets whether every member must sign in with a second factor; whether the company exists. */
    const setRequireTwoFactor = Effect.fn("CompaniesRepo.setRequireTwoFactor")(function* (
      companyId: string,
      required: boolean
    ) {
      const rows = yield* Effect.orDie(updateRequireTwoFactor({ companyId, required }))
      return rows.length > 0
    })

    /** Whether every member must sign in with a second factor, or none when there is no such company. */
    const requireTwoFactor = Effect.fn("CompaniesRepo.requireTwoFactor")(function* (companyId: string) {
      return Option.map(yield* Effect.orDie(findRequireTwoFactor(companyId)), (row) => row.requireTwoFactor)
    })

    /** A company's default account in one environment. */
    const insertDefault = Effect.fn("CompaniesRepo.insertDefaultAccount")(
      (account: {
        readonly id: string
        readonly companyId: string
        readonly environment: Environment
        readonly name: string
        readonly at: Date
      }) => Effect.orDie(insertDefaultAccount(account))
    )

    /** A new account, unless its company already has one of that name in its environment (then none). */
    const insertNamed = Effect.fn("CompaniesRepo.insertAccount")(
      (account: {
        readonly id: string
        readonly companyId: string
        readonly environment: Environment
        readonly name: string
        readonly at: Date
      }) => Effect.orDie(insertAccount(account))
    )

    /** One of the company's accounts, in either environment, or none. */
    const accountOf = Effect.fn("CompaniesRepo.accountOf")((companyId: string, accountId: string) =>
      Effect.orDie(findAccount({ companyId, id: accountId }))
    )

    /** The company's default account in one environment, or none. */
    const defaultAccountOf = Effect.fn("CompaniesRepo.defaultAccountOf")(
      (companyId: string, environment: Environment) => Effect.orDie(findDefaultAccount({ companyId, environment }))
    )

    /** An account the scope reaches, or none. */
    const accountIn = Effect.fn("CompaniesRepo.accountIn")((scope: AccountScope, accountId: string) =>
      Effect.orDie(findAccountInScope({ scope, id: accountId }))
    )

    /** The first two accounts the scope reaches, the default first, then the oldest. */
    const firstAccountsIn = Effect.fn("CompaniesRepo.firstAccountsIn")((scope: AccountScope) =>
      Effect.orDie(findFirstTwo(scope))
    )

    /**
     * As `firstAccountsIn` (only `accountId` when given), each with its default billing method, in one
     * statement.
     */
    const firstAccountsWithMethodIn = Effect.fn("CompaniesRepo.firstAccountsWithMethodIn")(
      (scope: AccountScope, accountId: string | undefined) =>
        Effect.orDie(findFirstTwoWithMethod({ scope, id: accountId }))
    )

    /** The accounts the scope reaches, filtered, sorted and paged as a v3 list query asks. */
    const accountPage = Effect.fn("CompaniesRepo.accountPage")(function* (scope: AccountScope, query: V3Query) {
      const rows = yield* Effect.orDie(findAccountPage({ scope, query }))
      return v3Page(rows, query, listColumns)
    })

    /** Which of `ids` name accounts of the company in the environment. */
    const accountIdsOf = Effect.fn("CompaniesRepo.accountIdsOf")(function* (
      companyId: string,
      environment: Environment,
      ids: ReadonlyArray<string>
    ) {
      const rows = yield* Effect.orDie(findAccountIds({ companyId, environment, ids }))
      return new Set(rows.map((row) => row.id))
    })

    return {
      insert,
      exists,
      nameOf,
      lock,
      setRateLimits,
      rateLimits,
      setRequireTwoFactor,
      requireTwoFactor,
      insertDefaultAccount: insertDefault,
      insertAccount: insertNamed,
      accountOf,
      defaultAccountOf,
      accountIn,
      firstAccountsIn,
      firstAccountsWithMethodIn,
      accountPage,
      accountIdsOf
    } as const
  })
}) {}
