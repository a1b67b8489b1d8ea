import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect, Option } from "effect"
import type { AuditAction } from "../../domain/company/Audit.js"
import { defaultBillingMethod } from "../../domain/company/Billing.js"
import {
  allAccounts,
  defaultExpirationInDays,
  type Environment,
  permissions,
  type RateLimitOverrides
} from "../../domain/company/Company.js"
import { makeId } from "../../domain/platform/Ids.js"
import { Audit } from "./Audit.js"
import { Billing } from "./Billing.js"
import { CompaniesRepo } from "./CompaniesRepo.js"
import { KeyStore } from "./KeyStore.js"

/**
 * Companies and their accounts (docs/company-api.md). A company is created from the CLI with a default
 * account, its default billing method (funded test money in `test`) and a first API key in one
 * environment, or by the dashboard's sign-up without a key; accounts and keys carry their environment. The
 * rows are `CompaniesRepo`'s.
 */

export class CompanyNotFound extends Data.TaggedError("CompanyNotFound")<{ readonly message: string }> {}

export class Companies extends Effect.Service<Companies>()("Companies", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* CompaniesRepo
    const keys = yield* KeyStore
    const billing = yield* Billing
    const audit = yield* Audit

    /** The audit row of a change to the company as a whole: of no environment and no account. */
    const recorded = (companyId: string, action: AuditAction) =>
      audit.record({ companyId, environment: null, accountId: null, action, target: companyId })

    /**
     * A company with its default account and that account's default billing method (funded test money in
     * `test`), in one transaction (the caller's, when there is one); no API key. The dashboard's sign-up makes
     * companies this way: its person makes keys once signed in.
     */
    const createWithoutKey = Effect.fn("Companies.createWithoutKey")(function* (options: {
      readonly name: string
      readonly environment: Environment
    }) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const companyId = yield* makeId
      const accountId = yield* makeId
      yield* sql
        .withTransaction(
          Effect.gen(function* () {
            yield* repo.insert(companyId, options.name, now)
            yield* repo.insertDefaultAccount({
              id: accountId,
              companyId,
              environment: options.environment,
              name: options.name,
              at: now
            })
            yield* billing.create(accountId, defaultBillingMethod[options.environment])
          })
        )
        .pipe(Effect.orDie)
      return { companyId, accountId, environment: options.environment }
    })

    /** A company, its default account and a first key with every permission (shown once): what the CLI makes. */
    const create = Effect.fn("Companies.create")(function* (options: {
      readonly name: string
      readonly environment: Environment
    }) {
      const created = yield* createWithoutKey(options)
      const first = yield* keys
        .create({
          companyId: created.companyId,
          environment: options.environment,
          name: "Default key",
          expirationInDays: defaultExpirationInDays,
          enforceMtls: false,
          permissions: [...permissions],
          accountsAccess: allAccounts,
          requestSource: null
        })
        .pipe(Effect.orDie)
      return { ...created, apiKey: first.apiKey, apiKeyId: first.record.id }
    })

    const exists = Effect.fn("Companies.exists")(function* (companyId: string) {
      if (!(yield* repo.exists(companyId))) return yield* new CompanyNotFound({ message: `No company ${companyId}.` })
    })

    /** The company's name (what a gift's recipient is told it comes from), if the company exists. */
    const name = Effect.fn("Companies.name")((companyId: string) => repo.nameOf(companyId))

    /** One of the company's accounts, or none. Who may reach it is the Policy's to say. */
    const account = Effect.fn("Companies.account")((companyId: string, accountId: string) =>
      repo.accountOf(companyId, accountId.toLowerCase())
    )

    /** Replaces the company's rate-limit overrides (`{}` restores the spec's limits). */
    const setRateLimits = Effect.fn("Companies.setRateLimits")(function* (
      companyId: string,
      overrides: RateLimitOverrides
    ) {
      yield* exists(companyId)
      yield* repo.setRateLimits(companyId, overrides)
      yield* keys.forgetCompany(companyId)
    })

    const rateLimits = Effect.fn("Companies.rateLimits")(function* (companyId: string) {
      const overrides = yield* repo.rateLimits(companyId)
      if (Option.isNone(overrides)) return yield* new CompanyNotFound({ message: `No company ${companyId}.` })
      return overrides.value
    })

    /**
     * The owner's setting that every member sign in with a second factor: a member without one is sent to
     * enrol after signing in (docs/decisions/0059-two-factor-sign-in.md).
     */
    const requireTwoFactor = Effect.fn("Companies.requireTwoFactor")(function* (companyId: string, required: boolean) {
      yield* sql
        .withTransaction(
          Effect.gen(function* () {
            if (!(yield* repo.setRequireTwoFactor(companyId, required))) {
              return yield* new CompanyNotFound({ message: `No company ${companyId}.` })
            }
            yield* recorded(companyId, required ? "company.two_factor_required" : "company.two_factor_not_required")
          })
        )
        .pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** Whether the company requires a second factor of its members. */
    const requiresTwoFactor = Effect.fn("Companies.requiresTwoFactor")(function* (companyId: string) {
      const required = yield* repo.requireTwoFactor(companyId)
      if (Option.isNone(required)) return yield* new CompanyNotFound({ message: `No company ${companyId}.` })
      return required.value
    })

    /**
     * Switches a company to live, the operator's act (`ribbon company activate`): its live default account with
     * the live default billing method, unless it has one already. Idempotent; the live default account's id.
     */
    const activate = Effect.fn("Companies.activate")(function* (companyId: string) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const accountId = yield* makeId
      return yield* sql
        .withTransaction(
          Effect.gen(function* () {
            // The lock makes two activations at once create one account.
            if (!(yield* repo.lock(companyId))) {
              return yield* new CompanyNotFound({ message: `No company ${companyId}.` })
            }
            const existing = yield* repo.defaultAccountOf(companyId, "live")
            if (Option.isSome(existing)) return { accountId: existing.value.id, created: false }
            const name = Option.getOrElse(yield* repo.nameOf(companyId), () => companyId)
            yield* repo.insertDefaultAccount({ id: accountId, companyId, environment: "live", name, at: now })
            yield* billing.create(accountId, defaultBillingMethod.live)
            yield* recorded(companyId, "company.activated")
            return { accountId, created: true }
          })
        )
        .pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** Whether the company is live: it has a live default account (until then the dashboard shows "Sandbox"). */
    const isLive = Effect.fn("Companies.isLive")(function* (companyId: string) {
      return Option.isSome(yield* repo.defaultAccountOf(companyId, "live"))
    })

    return {
      create,
      createWithoutKey,
      exists,
      name,
      account,
      setRateLimits,
      rateLimits,
      requireTwoFactor,
      requiresTwoFactor,
      activate,
      isLive
    } as const
  }),
  dependencies: [CompaniesRepo.Default, KeyStore.Default, Billing.Default, Audit.Default]
}) {}
