import { Effect, Layer, Logger } from "effect"
import { AppConfig } from "./Config.js"

/** JSON lines in production, logfmt elsewhere; LOG_LEVEL sets the minimum level. */
export const LoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      config.environment === "production" ? Logger.json : Logger.logFmt,
      Logger.minimumLogLevel(config.logLevel)
    )
  )
).pipe(Layer.provide(AppConfig.Default))
