import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Data, Effect, Option, Schema } from "effect"
import { defaultBillingMethod } from "../../domain/company/Billing.js"
import {
  AccountRecord,
  allAccounts,
  defaultExpirationInDays,
  type Environment,
  permissions,
  RateLimitOverrides
} from "../../domain/company/Company.js"
import { makeId } from "../../domain/platform/Ids.js"
import { Billing } from "./Billing.js"
import { KeyStore } from "./KeyStore.js"

/**
 * Companies and their accounts (docs/company-api.md). A company is created from the CLI with a default
 * account, its default billing method (funded test money in `test`) and a first API key in one
 * environment; accounts and keys carry their environment.
 */

export class CompanyNotFound extends Data.TaggedError("CompanyNotFound")<{ readonly message: string }> {}

export class Companies extends Effect.Service<Companies>()("Companies", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* KeyStore
    const billing = yield* Billing

    /** A company, its default account and a first key with every permission (shown once). */
    const create = Effect.fn("Companies.create")(function* (options: {
      readonly name: string
      readonly environment: Environment
    }) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const companyId = yield* makeId
      const accountId = yield* makeId
      yield* sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO companies (id, name, created_at) VALUES (${companyId}, ${options.name}, ${now})`
            yield* sql`INSERT INTO accounts (id, company_id, environment, name, is_default, created_at)
              VALUES (${accountId}, ${companyId}, ${options.environment}, ${options.name}, true, ${now})`
            yield* billing.create(accountId, defaultBillingMethod[options.environment])
          })
        )
        .pipe(Effect.orDie)
      const first = yield* keys
        .create({
          companyId,
          environment: options.environment,
          name: "Default key",
          expirationInDays: defaultExpirationInDays,
          enforceMtls: false,
          permissions: [...permissions],
          accountsAccess: allAccounts,
          requestSource: null
        })
        .pipe(Effect.orDie)
      return { companyId, accountId, environment: options.environment, apiKey: first.apiKey, apiKeyId: first.record.id }
    })

    const exists = Effect.fn("Companies.exists")(function* (companyId: string) {
      const rows = yield* sql`SELECT 1 FROM companies WHERE id = ${companyId}`.pipe(Effect.orDie)
      if (rows.length === 0) return yield* new CompanyNotFound({ message: `No company ${companyId}.` })
    })

    const findAccount = SqlSchema.findOne({
      Request: Schema.Struct({ companyId: Schema.String, id: Schema.String }),
      Result: AccountRecord,
      execute: ({ companyId, id }) => sql`SELECT id, company_id, environment, name, is_default FROM accounts
        WHERE id = ${id} AND company_id = ${companyId}`
    })

    /** One of the company's accounts, or none. Who may reach it is the Policy's to say. */
    const account = Effect.fn("Companies.account")((companyId: string, accountId: string) =>
      Effect.orDie(findAccount({ companyId, id: accountId.toLowerCase() }))
    )

    /** Replaces the company's rate-limit overrides (`{}` restores the spec's limits). */
    const setRateLimits = Effect.fn("Companies.setRateLimits")(function* (
      companyId: string,
      overrides: RateLimitOverrides
    ) {
      yield* exists(companyId)
      yield* sql`UPDATE companies SET rate_limits = ${JSON.stringify(overrides)}::jsonb WHERE id = ${companyId}`.pipe(
        Effect.orDie
      )
      yield* keys.forgetCompany(companyId)
    })

    const findRateLimits = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ rateLimits: RateLimitOverrides }),
      execute: (companyId) => sql`SELECT rate_limits FROM companies WHERE id = ${companyId}`
    })

    const rateLimits = Effect.fn("Companies.rateLimits")(function* (companyId: string) {
      const company = yield* Effect.orDie(findRateLimits(companyId))
      if (Option.isNone(company)) return yield* new CompanyNotFound({ message: `No company ${companyId}.` })
      return company.value.rateLimits
    })

    return { create, exists, account, setRateLimits, rateLimits } as const
  }),
  dependencies: [KeyStore.Default, Billing.Default]
}) {}
