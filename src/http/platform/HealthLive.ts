import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Readiness } from "../../services/platform/Readiness.js"
import { Api } from "../Api.js"

export const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function* () {
    const readiness = yield* Readiness
    return handlers
      .handle("health", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () =>
        Effect.map(readiness.check(), ({ migration, rateLimits }) => ({
          status: "ready" as const,
          migration,
          rateLimits:
            rateLimits.status === "enforced"
              ? { status: rateLimits.status }
              : {
                  status: rateLimits.status,
                  since: rateLimits.since.toISOString(),
                  checksLetThrough: rateLimits.checksLetThrough
                }
        }))
      )
  })
)
