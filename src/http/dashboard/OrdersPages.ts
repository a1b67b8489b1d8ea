import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormText, form, Html } from "./DashboardApi.js"

/**
 * The dashboard's orders (docs/dashboard.md "Orders"): the company's orders filtered and paged in SQL; an order with
 * its timeline; cancelling it after a confirm step that shows the credit; and in the sandbox, moving a test order's
 * shipment on.
 */

const OrderPath = Schema.Struct({ orderId: Schema.String })

export class OrdersPages extends HttpApiGroup.make("dashboardOrders")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/orders")
      .setUrlParams(
        Schema.Struct({
          environment: FormText,
          status: FormText,
          fulfillment: FormText,
          account: FormText,
          from: FormText,
          to: FormText,
          q: FormText,
          page: FormText
        })
      )
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("order", "/dashboard/orders/:orderId").setPath(OrderPath).addSuccess(Html))
  .add(HttpApiEndpoint.get("confirmCancel", "/dashboard/orders/:orderId/cancel").setPath(OrderPath).addSuccess(Html))
  .add(
    HttpApiEndpoint.post("cancel", "/dashboard/orders/:orderId/cancel")
      .setPath(OrderPath)
      .setPayload(form({ reason: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("simulate", "/dashboard/orders/:orderId/simulate")
      .setPath(OrderPath)
      .setPayload(form({ to: FormText }))
      .addSuccess(Html)
  )
  .annotate(OpenApi.Exclude, true) {}
