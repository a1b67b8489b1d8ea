import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailable } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"

export class Health extends Schema.Class<Health>("Health")({ status: Schema.Literal("ok") }) {}

export class Ready extends Schema.Class<Ready>("Ready")({
  status: Schema.Literal("ready"),
  migration: Schema.Int.annotations({ description: "The newest applied migration" })
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
  )
  .annotate(OpenApi.Title, "Health")
  .annotate(OpenApi.Description, "Liveness and readiness probes for load balancers and orchestrators.") {}
