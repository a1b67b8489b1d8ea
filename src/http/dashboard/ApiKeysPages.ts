import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormText } from "./DashboardApi.js"

/**
 * The dashboard's API keys section (docs/dashboard.md, "API keys"): the list of an environment's keys, the
 * creation form and the page that shows a new key once, and revocation's confirm step. HTML for people, so
 * not in the OpenAPI document; every field is taken as text and judged by the handlers and services.
 */

const Html = HttpApiSchema.Text({ contentType: "text/html" })

/** A form field that may repeat (checkboxes): none, one or several values, as a list. */
export const FormList = Schema.optionalWith(Schema.Union(Schema.String, Schema.Array(Schema.String)), {
  default: () => []
})

/** The values of a `FormList` field. */
export const listOf = (value: string | ReadonlyArray<string>): ReadonlyArray<string> =>
  typeof value === "string" ? [value] : value

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
        HttpApiSchema.withEncoding(
          Schema.Struct({
            csrf: FormText,
            environment: FormText,
            name: FormText,
            expirationInDays: FormText,
            permissions: FormList,
            accounts: FormText,
            accountIds: FormList,
            enforceMtls: FormText
          }),
          { kind: "UrlParams" } as never
        )
      )
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("confirmRevoke", "/dashboard/api-keys/:apiKeyId/revoke").setPath(KeyPath).addSuccess(Html))
  .add(
    HttpApiEndpoint.post("revoke", "/dashboard/api-keys/:apiKeyId/revoke")
      .setPath(KeyPath)
      .setPayload(HttpApiSchema.withEncoding(Schema.Struct({ csrf: FormText }), { kind: "UrlParams" } as never))
      .addSuccess(Html)
  )
  .annotate(OpenApi.Exclude, true) {}
