import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormText, Html } from "./DashboardApi.js"

/**
 * The dashboard's outbox (docs/dashboard.md "Outbox"): the e-mails and text messages Ribbon would send that concern
 * the company (invitations to it, its gifts' messages), newest first; sandboxes and servers outside production only.
 */
export class OutboxPages extends HttpApiGroup.make("dashboardOutbox")
  .add(
    HttpApiEndpoint.get("page", "/dashboard/outbox")
      .setUrlParams(Schema.Struct({ page: FormText }))
      .addSuccess(Html)
  )
  .annotate(OpenApi.Exclude, true) {}
