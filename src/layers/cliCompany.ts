import { Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Console, Effect, Either, Layer, Option, Schema } from "effect"
import {
  allAccounts,
  defaultExpirationInDays,
  ExpirationInDays,
  formatTimestamp,
  Permission,
  permissions,
  RateLimit,
  type RateLimitOverrides,
  RateScope
} from "../domain/company/Company.js"
import { Companies } from "../services/company/Companies.js"
import { KeyStore } from "../services/company/KeyStore.js"
import { limitFor } from "../services/platform/RateLimits.js"

/**
 * The leaves of `ribbon company …` and `ribbon keys …` (docs/company-api.md). src/layers/cli.ts mounts them,
 * each given the migrated database with `withDatabase`.
 */

const CompanyServices = Companies.Default.pipe(Layer.provideMerge(KeyStore.Default))

/** A usage error: the message on stderr (the entry point prints nothing more for ValidationError), exit code 1. */
const fail = (message: string) =>
  Console.error(message).pipe(Effect.zipRight(Effect.fail(ValidationError.invalidValue(HelpDoc.p(message)))))

const json = Options.boolean("json").pipe(Options.withDescription("Print JSON on stdout."))
const env = Options.choice("env", ["test", "live"]).pipe(
  Options.withDescription("The environment (default test)."),
  Options.withDefault("test" as const)
)
const company = Options.text("company").pipe(Options.withDescription("The company id."))

const print = (asJson: boolean, value: unknown, text: string) =>
  Console.log(asJson ? JSON.stringify(value, null, 2) : text)

const companyCreate = Command.make(
  "create",
  { name: Options.text("name").pipe(Options.withDescription("The company's name.")), env, json },
  ({ name, env, json }) =>
    Effect.gen(function* () {
      if (name.trim() === "" || name.length > 200) return yield* fail("--name must be 1 to 200 characters")
      const created = yield* (yield* Companies).create({ name, environment: env })
      yield* print(
        json,
        created,
        `Company ${created.companyId} (${env})\nDefault account ${created.accountId}\n` +
          `API key ${created.apiKey} (id ${created.apiKeyId}); it is shown only now.`
      )
    }).pipe(Effect.provide(CompanyServices))
).pipe(Command.withDescription("Create a company with a default account and a first API key (shown once)."))

const companyLimits = Command.make(
  "limits",
  {
    company,
    scope: Options.choice("scope", RateScope.literals).pipe(Options.optional),
    rate: Options.float("rate").pipe(Options.withDescription("Tokens per second."), Options.optional),
    burst: Options.integer("burst").pipe(Options.withDescription("Bucket capacity."), Options.optional),
    reset: Options.boolean("reset").pipe(Options.withDescription("Back to the spec's limits for every scope.")),
    json
  },
  (options) =>
    Effect.gen(function* () {
      const companies = yield* Companies
      let overrides: RateLimitOverrides = yield* companies.rateLimits(options.company)
      if (options.reset) overrides = {}
      if (Option.isSome(options.scope)) {
        const limit = Schema.decodeUnknownEither(RateLimit)({
          rate: Option.getOrUndefined(options.rate),
          burst: Option.getOrUndefined(options.burst)
        })
        if (Either.isLeft(limit)) return yield* fail("--scope needs --rate > 0 and an integer --burst > 0")
        overrides = { ...overrides, [options.scope.value]: limit.right }
      }
      if (options.reset || Option.isSome(options.scope)) yield* companies.setRateLimits(options.company, overrides)
      const effective = Object.fromEntries(RateScope.literals.map((scope) => [scope, limitFor(overrides, scope)]))
      yield* print(
        options.json,
        { companyId: options.company, overrides, effective },
        RateScope.literals
          .map(
            (s) => `${s}: ${effective[s]!.rate}/s, burst ${effective[s]!.burst}${s in overrides ? " (override)" : ""}`
          )
          .join("\n")
      )
    }).pipe(
      Effect.catchTag("CompanyNotFound", (e) => fail(e.message)),
      Effect.provide(CompanyServices)
    )
).pipe(
  Command.withDescription(
    "Show a company's rate limits; with --scope --rate --burst raise (or lower) one scope, with --reset restore the spec's."
  )
)

const companyActivate = Command.make("activate", { company, json }, (options) =>
  Effect.gen(function* () {
    const { accountId, created } = yield* (yield* Companies).activate(options.company)
    yield* print(
      options.json,
      { companyId: options.company, accountId, created },
      created
        ? `Company ${options.company} is live\nLive default account ${accountId}`
        : `Company ${options.company} is already live\nLive default account ${accountId}`
    )
  }).pipe(
    Effect.catchTag("CompanyNotFound", (e) => fail(e.message)),
    Effect.provide(CompanyServices)
  )
).pipe(
  Command.withDescription(
    "Switch a company to live: its live default account with an invoice billing method (once; again, it prints the account)."
  )
)

const keyCreate = Command.make(
  "create",
  {
    company,
    env,
    name: Options.text("name"),
    permissions: Options.text("permissions").pipe(
      Options.withDescription(`Comma-separated permissions (default all): ${permissions.join(", ")}.`),
      Options.optional
    ),
    expiresInDays: Options.integer("expires-in-days").pipe(Options.withDefault(defaultExpirationInDays)),
    enforceMtls: Options.boolean("enforce-mtls"),
    json
  },
  (options) =>
    Effect.gen(function* () {
      yield* (yield* Companies).exists(options.company)
      const granted = Option.match(options.permissions, {
        onNone: () => Either.right([...permissions]),
        onSome: (text) => Schema.decodeUnknownEither(Schema.Array(Permission))(text.split(",").map((p) => p.trim()))
      })
      if (Either.isLeft(granted)) return yield* fail(`--permissions: one of ${permissions.join(", ")}`)
      if (Either.isLeft(Schema.decodeUnknownEither(ExpirationInDays)(options.expiresInDays))) {
        return yield* fail("--expires-in-days must be 30, 60, 90, 180 or 365")
      }
      const { record, apiKey } = yield* (yield* KeyStore).create({
        companyId: options.company,
        environment: options.env,
        name: options.name,
        expirationInDays: options.expiresInDays,
        enforceMtls: options.enforceMtls,
        permissions: granted.right,
        accountsAccess: allAccounts,
        requestSource: null
      })
      yield* print(
        options.json,
        { id: record.id, apiKey, name: record.name, expirationDate: formatTimestamp(record.expiresAt) },
        `API key ${apiKey} (id ${record.id}); it is shown only now.`
      )
    }).pipe(
      Effect.catchTags({
        CompanyNotFound: (e) => fail(e.message),
        InvalidRequest: (e) => fail(e.message),
        ApiKeyLimitReached: (e) => fail(e.message),
        ApiKeyNotFound: (e) => fail(e.message),
        EnvironmentMismatch: (e) => fail(e.message)
      }),
      Effect.provide(CompanyServices)
    )
).pipe(Command.withDescription("Create an API key for a company (shown once)."))

const keyList = Command.make("list", { company, env, json }, (options) =>
  Effect.gen(function* () {
    yield* (yield* Companies).exists(options.company)
    const keys = yield* (yield* KeyStore).list(options.company, options.env)
    const rows = keys.map((key) => ({
      id: key.id,
      name: key.name,
      createdAt: formatTimestamp(key.createdAt),
      expirationDate: formatTimestamp(key.expiresAt),
      enforceMtls: key.enforceMtls,
      permissions: key.permissions
    }))
    yield* print(
      options.json,
      rows,
      rows.length === 0 ? "No keys." : rows.map((k) => `${k.id}  ${k.name}  expires ${k.expirationDate}`).join("\n")
    )
  }).pipe(
    Effect.catchTag("CompanyNotFound", (e) => fail(e.message)),
    Effect.provide(CompanyServices)
  )
).pipe(Command.withDescription("List a company's API keys in one environment (never their values)."))

const keyRevoke = Command.make("revoke", { company, id: Options.text("id") }, (options) =>
  Effect.gen(function* () {
    yield* (yield* KeyStore).revoke(options.company, options.id, "operator")
    yield* Console.log(`Revoked ${options.id}.`)
  }).pipe(
    Effect.catchTags({
      ApiKeyNotFound: (e) => fail(e.message),
      EnvironmentMismatch: (e) => fail(e.message)
    }),
    Effect.provide(CompanyServices)
  )
).pipe(Command.withDescription("Delete an API key; it stops working at once."))

export { companyActivate, companyCreate, companyLimits, keyCreate, keyList, keyRevoke }
