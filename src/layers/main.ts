import { NodeRuntime } from "@effect/platform-node"
import { ConfigError, Console, Effect, Layer } from "effect"
import { describeConfigError } from "./Config.js"
import { LoggingLive } from "./Logging.js"
import { ServerLive } from "./Server.js"

/** `npm start`: serve until SIGINT/SIGTERM, then shut down gracefully. */
Layer.launch(ServerLive).pipe(
  Effect.provide(LoggingLive),
  Effect.catchIf(ConfigError.isConfigError, (error) =>
    Console.error(describeConfigError(error)).pipe(Effect.zipRight(Effect.sync(() => process.exit(1))))
  ),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
