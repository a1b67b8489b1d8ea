import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, LogLevel, Option, Redacted } from "effect"
import { AppConfig, describeConfigError } from "../../src/layers/Config.js"

const load = (env: Record<string, string>) =>
  Effect.gen(function* () {
    return yield* AppConfig
  }).pipe(
    Effect.provide(AppConfig.Default),
    Effect.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

describe("AppConfig", () => {
  it.effect("has defaults for a fresh machine", () =>
    Effect.gen(function* () {
      const config = yield* load({})
      expect(config.port).toBe(3000)
      expect(config.publicUrl).toBe("http://localhost:3000")
      expect(config.dataDir).toBe(".data")
      expect(Option.isNone(config.databaseUrl)).toBe(true)
      expect(Option.isNone(config.otlpEndpoint)).toBe(true)
      expect(config.logLevel).toEqual(LogLevel.Info)
      expect(config.environment).toBe("development")
      expect(config.maxBodyBytes).toBe(1024 * 1024)
      expect([config.databasePoolSize, config.workerConcurrency, config.paymentsInFlight]).toEqual([10, 8, 8])
      expect(config.allowedOrigins).toEqual([])
    })
  )

  it.effect("reads every variable", () =>
    Effect.gen(function* () {
      const config = yield* load({
        PORT: "8080",
        PUBLIC_URL: "https://ribbon.example/",
        DATA_DIR: "/var/lib/ribbon",
        DATABASE_URL: "postgres://db/ribbon",
        REDIS_URL: "redis://cache:6379",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
        LOG_LEVEL: "Debug",
        NODE_ENV: "production",
        DATABASE_POOL_SIZE: "16",
        WORKER_CONCURRENCY: "12",
        PAYMENTS_IN_FLIGHT: "3",
        ALLOWED_ORIGINS: "http://localhost:6274, https://inspector.example.com/"
      })
      expect(config.port).toBe(8080)
      expect(config.publicUrl).toBe("https://ribbon.example")
      expect(config.dataDir).toBe("/var/lib/ribbon")
      expect(Option.map(config.databaseUrl, Redacted.value)).toEqual(Option.some("postgres://db/ribbon"))
      expect(Option.map(config.redisUrl, Redacted.value)).toEqual(Option.some("redis://cache:6379"))
      expect(config.otlpEndpoint).toEqual(Option.some("http://collector:4318"))
      expect(config.logLevel).toEqual(LogLevel.Debug)
      expect(config.environment).toBe("production")
      expect([config.databasePoolSize, config.workerConcurrency, config.paymentsInFlight]).toEqual([16, 12, 3])
      expect(config.allowedOrigins).toEqual(["http://localhost:6274", "https://inspector.example.com/"])
    })
  )

  it.effect("rejects an invalid value with one line naming the variable", () =>
    Effect.gen(function* () {
      for (const [name, value] of [
        ["PORT", "not-a-port"],
        ["PUBLIC_URL", "not a url"],
        ["LOG_LEVEL", "Loud"],
        ["NODE_ENV", "staging"],
        ["MAX_BODY_BYTES", "-5"],
        ["DATABASE_POOL_SIZE", "0"],
        ["WORKER_CONCURRENCY", "many"],
        ["PAYMENTS_IN_FLIGHT", "1.5"],
        ["ALLOWED_ORIGINS", "https://inspector.example.com/app"],
        ["ALLOWED_ORIGINS", "*"]
      ] as const) {
        const exit = yield* Effect.exit(load({ [name]: value }))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
          const line = describeConfigError(exit.cause.error)
          expect(line).toContain(name)
          expect(line).not.toContain("\n")
        } else {
          expect.fail(`${name}=${value} should fail with a config error`)
        }
      }
    })
  )

  it.effect("runs the simulators unless told otherwise, and names the adapters there are for any other", () =>
    Effect.gen(function* () {
      const config = yield* load({})
      expect([config.fulfillmentPartner, config.paymentProvider]).toEqual(["simulator", "simulator"])
      const chosen = yield* load({ FULFILLMENT_PARTNER: "simulator", PAYMENT_PROVIDER: "simulator" })
      expect([chosen.fulfillmentPartner, chosen.paymentProvider]).toEqual(["simulator", "simulator"])
      for (const [name, value] of [
        ["FULFILLMENT_PARTNER", "acme-logistics"],
        ["PAYMENT_PROVIDER", "stripe"]
      ] as const) {
        const exit = yield* Effect.exit(load({ [name]: value }))
        if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
          const line = describeConfigError(exit.cause.error)
          expect(line).toContain(name)
          expect(line).toContain("simulator")
          expect(line).not.toContain("\n")
        } else {
          expect.fail(`${name}=${value} should fail with a config error`)
        }
      }
    })
  )
})
