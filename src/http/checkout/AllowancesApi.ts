import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AllowanceList } from "../../domain/checkout/Allowances.js"
import { PathId } from "../../domain/checkout/Checkout.js"
import { AllowanceNotFound } from "../../domain/checkout/Errors.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { agentOperation, Bearer } from "../identity/Agent.js"

/**
 * The agent's view of its spending allowance (docs/allowances.md; docs/decisions/0082-spending-allowances.md): the
 * person makes it on the hosted page (`/allowances/new?client_id=…`); the client sees its own and may give it up.
 * Paying from it is `POST /v1/checkouts` with `payWith: "allowance"`.
 */
export class AllowancesApi extends HttpApiGroup.make("allowances")
  .add(
    HttpApiEndpoint.get("listAllowances", "/allowances")
      .addSuccess(AllowanceList)
      .annotate(
        OpenApi.Summary,
        "This client's spending allowance from the user (at most one active, with earlier revoked or expired ones): limits, what is spent and what is left"
      )
      .annotateContext(agentOperation("payments:allowance", "read"))
  )
  .add(
    HttpApiEndpoint.del("revokeAllowance", "/allowances/:allowanceId")
      .setPath(Schema.Struct({ allowanceId: PathId }))
      .addSuccess(Schema.Void)
      .addError(lineError("v1", AllowanceNotFound))
      .annotate(OpenApi.Summary, "Give up this client's allowance, effective at once")
      .annotateContext(agentOperation("payments:allowance", "write"))
  )
  .addError(lineError("v1", InvalidRequest))
  .prefix("/v1")
  .middleware(Bearer)
  .annotate(OpenApi.Title, "Allowances")
  .annotate(
    OpenApi.Description,
    "Spending allowances: checkouts paid at once within limits the user set for this client on a hosted page."
  ) {}
