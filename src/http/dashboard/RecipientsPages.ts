import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormText, form, Html } from "./DashboardApi.js"

/**
 * The dashboard's recipients (docs/dashboard.md "Recipients"): the company's recipients, searched by name or
 * e-mail and paged, masked as the v2 reads mask them for the member's role; a recipient's page; and erasing one
 * (the v2 DELETE) after a confirm step.
 */

const RecipientPath = Schema.Struct({ recipientId: Schema.String })

export class RecipientsPages extends HttpApiGroup.make("dashboardRecipients")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/recipients")
      .setUrlParams(Schema.Struct({ search: FormText, environment: FormText, page: FormText }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("recipient", "/dashboard/recipients/:recipientId").setPath(RecipientPath).addSuccess(Html))
  .add(
    HttpApiEndpoint.get("confirmErase", "/dashboard/recipients/:recipientId/erase")
      .setPath(RecipientPath)
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("erase", "/dashboard/recipients/:recipientId/erase")
      .setPath(RecipientPath)
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .annotate(OpenApi.Exclude, true) {}
