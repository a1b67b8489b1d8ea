import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormList, FormText, form, Html } from "./DashboardApi.js"

/**
 * The dashboard's Members pages (docs/dashboard.md, "Members"): the company's members and pending invitations,
 * inviting, withdrawing an invitation, a member's role and accounts, removal, the transfer of ownership,
 * leaving the company; and the page an invitation's link opens. Pages for people, not part of the OpenAPI
 * document; each form's fields are taken as text for the services to judge.
 */

/** The accounts a form gives: `accounts` "all" or "selected", and the `accountIds` picked. */
const accountsFields = { accounts: FormText, accountIds: FormList }

const UserPath = Schema.Struct({ userId: Schema.String })
const TokenPath = Schema.Struct({ token: Schema.String })

export class MembersPages extends HttpApiGroup.make("dashboardMembers")
  .add(HttpApiEndpoint.get("members", "/dashboard/members").addSuccess(Html))
  .add(
    HttpApiEndpoint.post("invite", "/dashboard/members/invitations")
      .setPayload(form({ email: FormText, role: FormText, ...accountsFields }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("revokeInvitation", "/dashboard/members/invitations/:invitationId/revoke")
      .setPath(Schema.Struct({ invitationId: Schema.String }))
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("leavePage", "/dashboard/members/leave").addSuccess(Html))
  .add(HttpApiEndpoint.post("leave", "/dashboard/members/leave").setPayload(form({})).addSuccess(Html))
  .add(HttpApiEndpoint.get("member", "/dashboard/members/:userId").setPath(UserPath).addSuccess(Html))
  .add(
    HttpApiEndpoint.post("changeRole", "/dashboard/members/:userId/role")
      .setPath(UserPath)
      .setPayload(form({ role: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("limitAccounts", "/dashboard/members/:userId/accounts")
      .setPath(UserPath)
      .setPayload(form(accountsFields))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("removePage", "/dashboard/members/:userId/remove").setPath(UserPath).addSuccess(Html))
  .add(
    HttpApiEndpoint.post("remove", "/dashboard/members/:userId/remove")
      .setPath(UserPath)
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("transferPage", "/dashboard/members/:userId/transfer").setPath(UserPath).addSuccess(Html))
  .add(
    HttpApiEndpoint.post("transfer", "/dashboard/members/:userId/transfer")
      .setPath(UserPath)
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("invitation", "/dashboard/invitations/:token").setPath(TokenPath).addSuccess(Html))
  .add(
    HttpApiEndpoint.post("acceptInvitation", "/dashboard/invitations/:token/accept")
      .setPath(TokenPath)
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("signInAndAccept", "/dashboard/invitations/:token/sign-in")
      .setPath(TokenPath)
      .setPayload(form({ password: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("joinByInvitation", "/dashboard/invitations/:token/join")
      .setPath(TokenPath)
      .setPayload(form({ displayName: FormText, newPassword: FormText }))
      .addSuccess(Html)
  )
  .annotate(OpenApi.Exclude, true) {}
