import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormText, form, Html } from "./DashboardApi.js"

/**
 * The dashboard's billing (docs/dashboard.md "Billing"): each reachable account's billing methods with their
 * remaining funds, and a method's ledger with running balances, filtered by dates, as a page and as a CSV download;
 * in the sandbox, adding test funds to a test method.
 */

const Csv = HttpApiSchema.Text({ contentType: "text/csv" })

const filters = { from: FormText, to: FormText }

export class BillingPages extends HttpApiGroup.make("dashboardBilling")
  .add(HttpApiEndpoint.get("methods", "/dashboard/billing").addSuccess(Html))
  .add(
    HttpApiEndpoint.get("ledger", "/dashboard/billing/:billingMethodId")
      .setPath(Schema.Struct({ billingMethodId: Schema.String }))
      .setUrlParams(Schema.Struct({ ...filters, page: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.get("download", "/dashboard/billing/:billingMethodId/ledger.csv")
      .setPath(Schema.Struct({ billingMethodId: Schema.String }))
      .setUrlParams(Schema.Struct(filters))
      .addSuccess(Csv)
  )
  .add(
    HttpApiEndpoint.post("addTestFunds", "/dashboard/billing/:billingMethodId/test-funds")
      .setPath(Schema.Struct({ billingMethodId: Schema.String }))
      .setPayload(form({ amount: FormText }))
      .addSuccess(Html)
  )
  .annotate(OpenApi.Exclude, true) {}
