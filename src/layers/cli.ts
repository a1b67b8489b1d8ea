import { stripVTControlCharacters } from "node:util"
import { Command, Options, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Cause, Clock, ConfigError, Console, Effect, Layer, Logger, Option } from "effect"
import packageJson from "../../package.json" with { type: "json" }
import { Seed } from "../services/catalog/Seed.js"
import { AppConfig, describeConfigError } from "./Config.js"
import { companyActivate, companyCreate, companyLimits, keyCreate, keyList, keyRevoke } from "./cliCompany.js"
import { outbox } from "./cliOutbox.js"
import { CliDatabaseLive, DataDirInUse, embeddedSocketPath } from "./Database.js"
import { LoggingLive } from "./Logging.js"
import { MigrationsLive, runMigrations } from "./Migrations.js"

/**
 * `ribbon …` (`npm run ribbon -- …`). Each subcommand is one small `Command` below, appended to the list
 * in `ribbon`. A command that needs the migrated database pipes through `withDatabase`:
 *
 *   const products = Options.integer("products").pipe(Options.withDefault(100))
 *   const seed = Command.make("seed", { products }, ({ products }) => seedCatalog(products)).pipe(
 *     withDatabase,
 *     Command.withDescription("Seed the demo catalog.")
 *   )
 *
 * stdout carries only a command's output (so `--json` stays parseable); logs go to stderr.
 * This module is the entry point and runs the CLI when imported, so commands are defined here (or in
 * modules this one imports), never in a module that imports it.
 */

/**
 * Serves until SIGINT/SIGTERM, then shuts down gracefully: what `npm start` and `ribbon serve` run.
 * The server's modules (HTTP, telemetry) load only here, so that other commands start quickly. The first
 * line says which Node.js runs it (the project brings its own, see docs/operations.md).
 */
const launchServer = Effect.logInfo(`Node.js ${process.version}`).pipe(
  Effect.zipRight(Effect.promise(() => import("./Server.js"))),
  Effect.flatMap(({ ServerLive }) => Layer.launch(ServerLive)),
  Effect.provide(LoggingLive)
)

/** LOG_LEVEL and the format of LoggingLive, but on stderr, so that stdout stays machine-readable (`--json`). */
const CommandLoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      Logger.replace(
        Logger.defaultLogger,
        Logger.withConsoleError(config.environment === "production" ? Logger.jsonLogger : Logger.logfmtLogger)
      ),
      Logger.minimumLogLevel(config.logLevel)
    )
  )
)

/** Config, stderr logging, and the database (DATABASE_URL, the running server's socket, or DATA_DIR), unmigrated. */
const CommandSqlLive = CliDatabaseLive.pipe(
  Layer.provideMerge(CommandLoggingLive),
  Layer.provideMerge(AppConfig.Default)
)

/** As CommandSqlLive, with pending migrations applied first: what most commands want. */
const CommandDatabaseLive = MigrationsLive.pipe(Layer.provideMerge(CommandSqlLive))

/** Gives a command's handler AppConfig and SqlClient/PgClient on the migrated database: `.pipe(withDatabase)`. */
export const withDatabase = <Name extends string, R, E, A>(command: Command.Command<Name, R, E, A>) =>
  Command.provide(command, CommandDatabaseLive)

/** Where a command's SQL goes, in words (never the DATABASE_URL itself: it may carry a password). */
const describeDatabase = Effect.gen(function* () {
  const { config: pg } = yield* PgClient.PgClient
  const { dataDir } = yield* AppConfig
  if (pg.url !== undefined) return "DATABASE_URL"
  if (pg.host?.startsWith("/")) return `the running server's socket ${embeddedSocketPath(dataDir)}`
  return `the embedded database in ${dataDir}`
})

/** `0001_extensions`, as the migration is named in src/layers/Migrations.ts. */
const migrationName = (id: number, name: string) => `${String(id).padStart(4, "0")}_${name}`

const serve = Command.make("serve", {}, () => launchServer).pipe(
  Command.withDescription("Run the HTTP server on PORT (as `npm start` does) until SIGINT or SIGTERM.")
)

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function* () {
    yield* Console.log(`Database: ${yield* describeDatabase}`)
    const applied = yield* runMigrations
    if (applied.length === 0) return yield* Console.log("No pending migrations.")
    for (const [id, name] of applied) yield* Console.log(`Applied ${migrationName(id, name)}`)
  })
).pipe(
  Command.provide(CommandSqlLive),
  Command.withDescription("Apply pending database migrations and print which were applied.")
)

/** A progress bar on stderr, redrawn in place with `\r`: `[#######-------]  50%  50,000/100,000 products`. */
const progressBar = (started: number) => {
  let first: number | undefined
  return (done: number, total: number) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.sync(() => {
        first ??= done // a resumed run starts part-way: the rate counts this run's products only
        const width = 30
        const ratio = total === 0 ? 1 : done / total
        const filled = Math.round(ratio * width)
        const seconds = Math.max((now - started) / 1000, 0.001)
        const rate = Math.round((done - first) / seconds).toLocaleString("en-US")
        const line =
          `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%  ` +
          `${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")} products  ${rate}/s`
        process.stderr.write(`\r${line}${done >= total ? "\n" : ""}`)
      })
    )
}

const seedProducts = Options.integer("products").pipe(
  Options.filterMap(
    (n) => (n >= 0 ? Option.some(n) : Option.none()),
    "--products must be a whole number of at least 0"
  ),
  Options.withDescription("Also generate a synthetic catalog of this many products (deterministic; resumable)."),
  Options.optional
)

const seed = Command.make("seed", { products: seedProducts }, ({ products }) =>
  Effect.gen(function* () {
    yield* Console.log(`Database: ${yield* describeDatabase}`)
    const seed = yield* Seed
    const started = yield* Clock.currentTimeMillis
    const curated = yield* seed.ensureDemoCatalog()
    const curatedMillis = (yield* Clock.currentTimeMillis) - started
    yield* Console.log(
      curated.seeded ? `Seeded the demo catalog in ${curatedMillis} ms.` : "The demo catalog was already seeded."
    )
    if (Option.isSome(products)) {
      const from = yield* Clock.currentTimeMillis
      const generated = yield* seed.generate(products.value, progressBar(from))
      const seconds = ((yield* Clock.currentTimeMillis) - from) / 1000
      yield* Console.log(
        `Generated ${generated.added.toLocaleString("en-US")} products in ${seconds.toFixed(1)} s ` +
          `(${generated.total.toLocaleString("en-US")} synthetic in all).`
      )
    }
    const counts = yield* seed.counts
    yield* Console.log(
      `Catalog: ${counts.products} products, ${counts.variants} variants, ${counts.collections} collections, ` +
        `${counts.tags} tags, ${counts.countries} countries.`
    )
  }).pipe(Effect.provide(Seed.Default))
).pipe(
  withDatabase,
  Command.withDescription("Seed the demo catalog (once), and with --products N a synthetic catalog of N products.")
)

const company = Command.make("company").pipe(
  Command.withDescription(
    "Companies: create one (with a default account and a first API key), show or change its rate limits, switch one to live."
  ),
  Command.withSubcommands([withDatabase(companyCreate), withDatabase(companyLimits), withDatabase(companyActivate)])
)

const keys = Command.make("keys").pipe(
  Command.withDescription("A company's API keys: create, list, revoke."),
  Command.withSubcommands([withDatabase(keyCreate), withDatabase(keyList), withDatabase(keyRevoke)])
)

/** Every `ribbon` subcommand. */
const ribbon = Command.make("ribbon").pipe(
  Command.withDescription("Ribbon: a gifting marketplace API for AI agents and companies."),
  Command.withSubcommands([serve, migrate, seed, company, keys, withDatabase(outbox)])
)

const cli = Command.run(ribbon, { name: "ribbon", version: packageJson.version })

/**
 * Failures end the process with exit code 1 and one report on stderr: the configuration problem in one
 * line naming the variable, the data directory in use, nothing more for a usage error (the CLI already printed it with the usage),
 * and the full cause otherwise.
 */
const reportFailure = (cause: Cause.Cause<unknown>) => {
  if (Cause.isInterruptedOnly(cause)) return Effect.void
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && ConfigError.isConfigError(failure.value)) {
    return Console.error(describeConfigError(failure.value))
  }
  if (Option.isSome(failure) && failure.value instanceof DataDirInUse) return Console.error(failure.value.message)
  if (Option.isSome(failure) && ValidationError.isValidationError(failure.value)) return Effect.void
  return Console.error(Cause.pretty(cause, { renderErrorCause: true }))
}

/**
 * @effect/cli writes its help and usage errors as ANSI text. A stream that is not a terminal (a pipe, a
 * file) gets them plain, and so does every stream when NO_COLOR is set (https://no-color.org).
 */
const noColor = (process.env.NO_COLOR ?? "") !== ""
const plainStdout = noColor || process.stdout.isTTY !== true
const plainStderr = noColor || process.stderr.isTTY !== true
const plain = (args: ReadonlyArray<unknown>) =>
  args.map((arg) => (typeof arg === "string" ? stripVTControlCharacters(arg) : arg))
/** The console `self` runs with, plain where `plainStdout` / `plainStderr` say so. */
const withPlainText = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Console.consoleWith((console) =>
    Effect.withConsole(self, {
      ...console,
      log: (...args) => console.log(...(plainStdout ? plain(args) : args)),
      error: (...args) => console.error(...(plainStderr ? plain(args) : args))
    })
  )

/** Without arguments, show the help rather than doing nothing. */
const argv = process.argv.length <= 2 ? [...process.argv, "--help"] : process.argv

cli(argv).pipe(
  Effect.tapErrorCause(reportFailure),
  withPlainText,
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
