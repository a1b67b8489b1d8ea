import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormList, FormText, form, Html } from "./DashboardApi.js"

/**
 * The dashboard's API keys section (docs/dashboard.md, "API keys"): the list of an environment's keys, the
 * creation form and the page that shows a new key once, and revocation's confirm step. HTML for people, so
 * not in the OpenAPI document; every field is taken as text and judged by the handlers and services.
 */

const KeyPath = Schema.Struct({ apiKeyId: Schema.String })

export class ApiKeysPages extends HttpApiGroup.make("dashboardApiKeys")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/api-keys")
      .setUrlParams(Schema.Struct({ environment: FormText, page: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.get("new", "/dashboard/api-keys/new")
      .setUrlParams(Schema.Struct({ environment: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("create", "/dashboard/api-keys")
      .setPayload(
        form({
          environment: FormText,
          name: FormText,
          expirationInDays: FormText,
          permissions: FormList,
          accounts: FormText,
          accountIds: FormList,
          enforceMtls: FormText
        })
      )
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("confirmRevoke", "/dashboard/api-keys/:apiKeyId/revoke").setPath(KeyPath).addSuccess(Html))
  .add(
    HttpApiEndpoint.post("revoke", "/dashboard/api-keys/:apiKeyId/revoke")
      .setPath(KeyPath)
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .annotate(OpenApi.Exclude, true) {}
