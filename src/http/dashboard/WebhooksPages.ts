import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormList, FormText, form, Html } from "./DashboardApi.js"

/**
 * The dashboard's webhooks section (docs/dashboard.md "Webhooks"): the company's endpoints, each with its
 * deliveries, a delivery's request and attempts, and the forms that create, test, disable, enable, delete and
 * resend. Ids in paths are taken as any text: one that names nothing of the member's company is the 404 page.
 */

const Endpoint = Schema.Struct({ webhookId: Schema.String })
const Delivery = Schema.Struct({ webhookId: Schema.String, deliveryId: Schema.String })

export class WebhooksPages extends HttpApiGroup.make("dashboardWebhooks")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/webhooks")
      .setUrlParams(Schema.Struct({ environment: FormText, page: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.get("newEndpoint", "/dashboard/webhooks/new")
      .setUrlParams(Schema.Struct({ environment: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("create", "/dashboard/webhooks")
      .setPayload(form({ environment: FormText, url: FormText, eventTypes: FormList }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.get("endpoint", "/dashboard/webhooks/:webhookId")
      .setPath(Endpoint)
      .setUrlParams(Schema.Struct({ page: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("sendTest", "/dashboard/webhooks/:webhookId/test")
      .setPath(Endpoint)
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("setStatus", "/dashboard/webhooks/:webhookId/status")
      .setPath(Endpoint)
      .setPayload(form({ status: FormText }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("confirmDelete", "/dashboard/webhooks/:webhookId/delete").setPath(Endpoint).addSuccess(Html))
  .add(
    HttpApiEndpoint.post("delete", "/dashboard/webhooks/:webhookId/delete")
      .setPath(Endpoint)
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.get("delivery", "/dashboard/webhooks/:webhookId/deliveries/:deliveryId")
      .setPath(Delivery)
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("resend", "/dashboard/webhooks/:webhookId/deliveries/:deliveryId/resend")
      .setPath(Delivery)
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .annotate(OpenApi.Exclude, true) {}
