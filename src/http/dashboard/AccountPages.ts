import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { FormText, form, Html } from "./DashboardApi.js"

/**
 * The dashboard's account and security pages (docs/dashboard.md, "Account and security"): the person's
 * two-factor sign-in, recovery codes and sessions, the company's two-factor requirement, and the second step
 * of a sign-in. Pages for people, not part of the OpenAPI document.
 */
export class AccountPages extends HttpApiGroup.make("dashboardAccount")
  .add(HttpApiEndpoint.get("account", "/dashboard/account").addSuccess(Html))
  .add(
    HttpApiEndpoint.post("beginTwoFactor", "/dashboard/account/two-factor/begin").setPayload(form({})).addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("enrolPage", "/dashboard/account/two-factor").addSuccess(Html))
  .add(
    HttpApiEndpoint.post("confirmTwoFactor", "/dashboard/account/two-factor/confirm")
      .setPayload(form({ code: FormText }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("disablePage", "/dashboard/account/two-factor/disable").addSuccess(Html))
  .add(
    HttpApiEndpoint.post("disableTwoFactor", "/dashboard/account/two-factor/disable")
      .setPayload(form({ password: FormText }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("recoveryCodesPage", "/dashboard/account/recovery-codes").addSuccess(Html))
  .add(
    HttpApiEndpoint.post("regenerateRecoveryCodes", "/dashboard/account/recovery-codes")
      .setPayload(form({ password: FormText }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("signOutOthersPage", "/dashboard/account/sessions/sign-out-others").addSuccess(Html))
  .add(
    HttpApiEndpoint.post("signOutOthers", "/dashboard/account/sessions/sign-out-others")
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("companySecurity", "/dashboard/account/company-security")
      .setPayload(form({ requireTwoFactor: FormText }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("secondStepPage", "/dashboard/sign-in/two-factor").addSuccess(Html))
  .add(
    HttpApiEndpoint.post("secondStep", "/dashboard/sign-in/two-factor")
      .setPayload(form({ code: FormText }))
      .addSuccess(Html)
  )
  .annotate(OpenApi.Exclude, true) {}
