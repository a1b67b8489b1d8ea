import { Config, type ConfigError, Effect, LogLevel, Option } from "effect"
import { originOf } from "../http/BrowserOrigins.js"

const positiveInteger = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(fallback)
  )

/** The OpenTelemetry trace samplers, by their OTEL_TRACES_SAMPLER names. */
const samplerNames = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio"
] as const

export interface TracesSampler {
  readonly name: (typeof samplerNames)[number]
  /** The share of new traces kept by the `traceidratio` samplers, 0 to 1. */
  readonly ratio: number
}

/**
 * OTEL_TRACES_SAMPLER (default `parentbased_always_on`: every trace, or the caller's decision) and
 * OTEL_TRACES_SAMPLER_ARG (the ratio of the `traceidratio` samplers, default 1), as the OpenTelemetry
 * SDKs read them; `parentbased_traceidratio` with `0.1` keeps a tenth of the traces Ribbon starts.
 */
const tracesSampler: Config.Config<TracesSampler> = Config.all({
  name: Config.literal(...samplerNames)("OTEL_TRACES_SAMPLER").pipe(
    Config.withDefault("parentbased_always_on" as const)
  ),
  ratio: Config.number("OTEL_TRACES_SAMPLER_ARG").pipe(
    Config.validate({ message: "must be within 0..1", validation: (n) => n >= 0 && n <= 1 }),
    Config.withDefault(1)
  )
})

/**
 * ALLOWED_ORIGINS: comma-separated origins of other sites whose pages may call `/mcp` and the OAuth
 * endpoints from a browser (`http://localhost:6274` for the MCP Inspector); none by default.
 */
const allowedOrigins: Config.Config<ReadonlyArray<string>> = Config.array(
  Config.string().pipe(
    Config.map((origin) => origin.trim()),
    Config.validate({
      message: "must be origins such as https://inspector.example.com (scheme, host and port; no path)",
      validation: (origin) => origin === "" || originOf(origin) !== undefined
    })
  ),
  "ALLOWED_ORIGINS"
).pipe(
  Config.map((origins) => origins.filter((origin) => origin !== "")),
  Config.withDefault([])
)

/**
 * Which adapter of a port Ribbon runs (docs/operations.md, "Payment and fulfillment providers"): one of
 * `choices`, `simulator` by default; any other value stops the start, naming the ones there are.
 */
const adapter = <const Choice extends string>(name: string, what: string, choices: ReadonlyArray<Choice>) =>
  Config.string(name).pipe(
    Config.validate({
      message: `must name the ${what}: ${choices.join(", ")} (the only one Ribbon ships)`,
      validation: (value): value is Choice => (choices as ReadonlyArray<string>).includes(value)
    }),
    Config.withDefault("simulator" as Choice)
  )

/** The whole runtime configuration, read once from `Config.*` (the environment by default). */
export class AppConfig extends Effect.Service<AppConfig>()("AppConfig", {
  effect: Effect.gen(function* () {
    const port = yield* Config.port("PORT").pipe(Config.withDefault(3000))
    const publicUrl = yield* Config.url("PUBLIC_URL").pipe(
      Config.map((url) => url.toString().replace(/\/$/, "")),
      Config.withDefault(`http://localhost:${port}`)
    )
    return {
      port,
      publicUrl,
      dataDir: yield* Config.string("DATA_DIR").pipe(Config.withDefault(".data")),
      databaseUrl: yield* Config.option(Config.redacted("DATABASE_URL")),
      /** Connections to DATABASE_URL (embedded PGlite always uses one). */
      databasePoolSize: yield* positiveInteger("DATABASE_POOL_SIZE", 10),
      /** Jobs (placement, order progress, expiry, callbacks) one instance runs at once. */
      workerConcurrency: yield* positiveInteger("WORKER_CONCURRENCY", 8),
      /** Checkouts one instance holds from payment to placement; more payments wait (docs/performance.md). */
      paymentsInFlight: yield* positiveInteger("PAYMENTS_IN_FLIGHT", 8),
      redisUrl: yield* Config.option(Config.redacted("REDIS_URL")),
      otlpEndpoint: yield* Config.option(Config.url("OTEL_EXPORTER_OTLP_ENDPOINT")).pipe(
        Config.map(Option.map((url) => url.toString().replace(/\/$/, "")))
      ),
      /** Which traces are recorded and exported (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG). */
      tracesSampler: yield* tracesSampler,
      logLevel: yield* Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
      environment: yield* Config.literal(
        "development",
        "test",
        "production"
      )("NODE_ENV").pipe(Config.withDefault("development" as const)),
      /** Other sites whose pages may call `/mcp` and the OAuth endpoints (docs/mcp.md, "Browser clients"). */
      allowedOrigins: yield* allowedOrigins,
      /** Largest request body accepted, in bytes. */
      maxBodyBytes: yield* positiveInteger("MAX_BODY_BYTES", 1024 * 1024),
      /** The mutual-TLS listener, when MTLS_PORT, MTLS_CA, TLS_CERT and TLS_KEY are all set (PEM file paths). */
      mtls: yield* Config.option(
        Config.all({
          port: Config.port("MTLS_PORT"),
          ca: Config.string("MTLS_CA"),
          cert: Config.string("TLS_CERT"),
          key: Config.string("TLS_KEY")
        })
      ),
      /** The Universal Commerce Protocol's ES256 signing key (UCP_SIGNING_KEY, PKCS#8 PEM); one per start if unset. */
      ucpSigningKey: yield* Config.option(Config.redacted("UCP_SIGNING_KEY")),
      /** The fulfillment simulator (docs/checkout.md): supplier latency, transient failure rate, progress step. */
      fulfillment: {
        latency: yield* Config.duration("FULFILLMENT_LATENCY").pipe(Config.withDefault("0 millis")),
        failureRate: yield* Config.number("FULFILLMENT_FAILURE_RATE").pipe(
          Config.validate({ message: "must be within 0..1", validation: (n) => n >= 0 && n <= 1 }),
          Config.withDefault(0)
        ),
        progressEvery: yield* Config.duration("FULFILLMENT_PROGRESS_EVERY").pipe(Config.withDefault("1 minute"))
      },
      /** The fulfillment partner orders are placed with (FULFILLMENT_PARTNER): only the simulator ships. */
      fulfillmentPartner: yield* adapter("FULFILLMENT_PARTNER", "fulfillment partner", ["simulator"] as const),
      /** The payment provider that charges cards (PAYMENT_PROVIDER): only the test-mode simulator ships. */
      paymentProvider: yield* adapter("PAYMENT_PROVIDER", "payment provider", ["simulator"] as const),
      /** Callbacks to loopback addresses (local development and tests only; docs/webhooks.md). */
      webhooksAllowLoopback: yield* Config.boolean("WEBHOOKS_ALLOW_LOOPBACK").pipe(Config.withDefault(false)),
      /** How long in-flight requests may take to finish after a shutdown signal. */
      shutdownGrace: yield* Config.duration("SHUTDOWN_GRACE").pipe(Config.withDefault("10 seconds"))
    }
  })
}) {}

/** One line naming the failing variable, e.g. `Invalid configuration: PORT: Expected a network port…`. */
export const describeConfigError = (error: ConfigError.ConfigError): string => {
  const lines: Array<string> = []
  const walk = (e: ConfigError.ConfigError): void => {
    switch (e._op) {
      case "And":
      case "Or":
        walk(e.left)
        walk(e.right)
        return
      case "InvalidData":
      case "MissingData":
      case "SourceUnavailable":
      case "Unsupported":
        lines.push(`${e.path.join(".")}: ${e.message.replace(/\s*\n\s*/g, " ")}`)
    }
  }
  walk(error)
  return `Invalid configuration: ${lines.join("; ")}`
}
