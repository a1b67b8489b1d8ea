import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormText, Html } from "./DashboardApi.js"

/**
 * The dashboard's audit log (docs/dashboard.md "Audit log"): the company's audit events, filtered by actor, action
 * and dates, as a page and as a CSV download with the same filters.
 */

const Csv = HttpApiSchema.Text({ contentType: "text/csv" })

/** The filters of the page and of its download, taken as any text: the page says what is wrong with one. */
const filters = { environment: FormText, actor: FormText, action: FormText, from: FormText, to: FormText }

export class AuditLogPages extends HttpApiGroup.make("dashboardAuditLog")
  .add(
    HttpApiEndpoint.get("page", "/dashboard/audit-log")
      .setUrlParams(Schema.Struct({ ...filters, page: FormText }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("download", "/dashboard/audit-log.csv").setUrlParams(Schema.Struct(filters)).addSuccess(Csv))
  .annotate(OpenApi.Exclude, true) {}
