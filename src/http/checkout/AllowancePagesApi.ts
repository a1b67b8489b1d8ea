import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PathId } from "../../domain/checkout/Checkout.js"
import { showsErrorPages } from "../OpenApiDocument.js"

/**
 * The person's allowance pages (docs/allowances.md): `/allowances/new?client_id=…`, reached from a link the agent
 * hands over, where a spending allowance for that client is set up, and `/allowances`, where the person sees
 * each allowance with its history and revokes it. Browser pages, outside the agent API.
 */

const Html = HttpApiSchema.Text({ contentType: "text/html" })

const Text = (max: number) => Schema.optional(Schema.String.pipe(Schema.maxLength(max)))

/** Taken as typed: every field is checked by the page, which shows each problem beside its field. */
export const AllowanceForm = Schema.Struct({
  client_id: Text(2048),
  currency: Text(16),
  perCheckout: Text(32),
  period: Text(16),
  periodLimit: Text(32),
  total: Text(32),
  countries: Text(4000),
  recipients: Text(4000),
  categories: Text(4000),
  days: Text(8),
  number: Text(64),
  expiry: Text(16),
  cvc: Text(8),
  name: Text(200),
  email: Text(320),
  password: Text(1024),
  code: Text(64)
})
export type AllowanceForm = typeof AllowanceForm.Type

export const AllowanceSignInForm = Schema.Struct({ email: Text(320), password: Text(1024), code: Text(64) })

export const RevokeForm = Schema.Struct({ csrf: Text(128) })

export class AllowancePagesApi extends HttpApiGroup.make("allowancePages")
  .add(
    HttpApiEndpoint.get("newAllowancePage", "/allowances/new")
      .setUrlParams(
        Schema.Struct({
          client_id: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(2048)), { default: () => "" })
        })
      )
      .addSuccess(Html)
      .annotate(OpenApi.Summary, "The allowance set-up page (browser): limits, optional lists, expiry, card, password")
      .annotate(OpenApi.Transform, showsErrorPages([400, 404]))
  )
  .add(
    HttpApiEndpoint.post("createAllowance", "/allowances/new")
      .setPayload(HttpApiSchema.withEncoding(AllowanceForm, { kind: "UrlParams" }))
      .addSuccess(Html, { status: 201 })
      .annotate(
        OpenApi.Summary,
        "The set-up form: the allowance is made once the password (and second factor) confirm it"
      )
      .annotate(OpenApi.Transform, showsErrorPages([400, 401, 404, 422, 429]))
  )
  .add(
    HttpApiEndpoint.get("allowancesPage", "/allowances")
      .addSuccess(Html)
      .annotate(OpenApi.Summary, "The person's allowances with their history, or the sign-in form")
  )
  .add(
    HttpApiEndpoint.post("allowancesSignIn", "/allowances/sign-in")
      .setPayload(HttpApiSchema.withEncoding(AllowanceSignInForm, { kind: "UrlParams" }))
      .addSuccess(Html)
      .annotate(OpenApi.Summary, "Sign-in for the allowances page")
      .annotate(OpenApi.Transform, showsErrorPages([400, 401, 429]))
  )
  .add(
    HttpApiEndpoint.post("revokeAllowancePage", "/allowances/:allowanceId/revoke")
      .setPath(Schema.Struct({ allowanceId: PathId }))
      .setPayload(HttpApiSchema.withEncoding(RevokeForm, { kind: "UrlParams" }))
      .addSuccess(Html)
      .annotate(OpenApi.Summary, "Revokes one of the person's allowances, effective at once")
      .annotate(OpenApi.Transform, showsErrorPages([400, 401, 403, 404]))
  )
  .annotate(OpenApi.Title, "Allowance pages")
  .annotate(OpenApi.Description, "The pages where a person sets up, sees and revokes spending allowances.") {}
