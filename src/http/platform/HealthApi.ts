import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailable } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"

export class Health extends Schema.Class<Health>("Health")({ status: Schema.Literal("ok") }) {}

export class RateLimitsReadiness extends Schema.Class<RateLimitsReadiness>("RateLimitsReadiness")({
  status: Schema.Literal("enforced", "failing_open").annotations({
    description: "`failing_open` while the rate-limit store (Redis) is unreachable: requests go through unlimited"
  }),
  since: Schema.optional(
    Schema.String.annotations({ description: "When the store became unreachable (UTC, milliseconds)" })
  ),
  checksLetThrough: Schema.optional(
    Schema.Int.annotations({
      description: "Rate-limit checks let through since then (a request makes one or two)"
    })
  )
}) {}

export class Ready extends Schema.Class<Ready>("Ready")({
  status: Schema.Literal("ready"),
  migration: Schema.Int.annotations({ description: "The newest applied migration" }),
  rateLimits: RateLimitsReadiness
}) {}

export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Health)
      .annotate(OpenApi.Summary, "Liveness: the process serves requests")
  )
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(Ready)
      .addError(lineError("v1", ServiceUnavailable))
      .annotate(OpenApi.Summary, "Readiness: the database is reachable and migrated")
      .annotate(
        OpenApi.Description,
        "503 while the database is unreachable or not migrated. Rate limits failing open (Redis unreachable) leave the instance ready, and say so under `rateLimits`."
      )
  )
  .annotate(OpenApi.Title, "Health")
  .annotate(OpenApi.Description, "Liveness and readiness probes for load balancers and orchestrators.") {}
