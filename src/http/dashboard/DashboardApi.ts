import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"

/**
 * The company dashboard's own routes (docs/dashboard.md): HTML pages and their forms, for people in a browser,
 * so not part of the API the OpenAPI document describes. Form fields are taken as any text: the services
 * judge them and the page shows each problem beside its field, never a JSON error.
 */

export const Html = HttpApiSchema.Text({ contentType: "text/html" })

/** A form or query field; absent is empty. */
export const FormText = Schema.optionalWith(Schema.String, { default: () => "" })

/** A field that may repeat (checkboxes): none, one or several values. */
export const FormList = Schema.optionalWith(Schema.Union(Schema.String, Schema.Array(Schema.String)), {
  default: () => []
})

/** The values of a `FormList` field, as a list. */
export const listOf = (value: string | ReadonlyArray<string>): ReadonlyArray<string> =>
  typeof value === "string" ? [value] : value

/** A form's fields (each taken as text unless said otherwise), with the CSRF token every dashboard form carries. */
export const form = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  HttpApiSchema.withEncoding(Schema.Struct({ csrf: FormText, ...fields }), { kind: "UrlParams" } as never)

export class DashboardApi extends HttpApiGroup.make("dashboard")
  .add(
    HttpApiEndpoint.get("home", "/dashboard")
      .setUrlParams(Schema.Struct({ environment: FormText, name: FormText, page: FormText }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("signUpPage", "/dashboard/sign-up").addSuccess(Html))
  .add(
    HttpApiEndpoint.post("signUp", "/dashboard/sign-up")
      .setPayload(form({ email: FormText, password: FormText, companyName: FormText }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("signInPage", "/dashboard/sign-in").addSuccess(Html))
  .add(
    HttpApiEndpoint.post("signIn", "/dashboard/sign-in")
      .setPayload(form({ email: FormText, password: FormText }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.post("signOut", "/dashboard/sign-out").setPayload(form({})).addSuccess(Html))
  .add(
    HttpApiEndpoint.post("switchCompany", "/dashboard/switch-company")
      .setPayload(form({ companyId: FormText }))
      .addSuccess(Html)
  )
  // Any other dashboard path: the dashboard's own 404 page (the sections' routes, being static, come first).
  .add(HttpApiEndpoint.get("notFound", "/dashboard/*").addSuccess(Html))
  .annotate(OpenApi.Exclude, true) {}
