import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option } from "effect"
import { type AccountsAccess, allAccounts, type Environment } from "../../domain/company/Company.js"
import { type Member, type Role, roles } from "../../domain/company/Members.js"
import { type AnyDomainError, codeOf, type FieldIssue } from "../../domain/platform/Errors.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { Accounts } from "../../services/company/Accounts.js"
import { Companies } from "../../services/company/Companies.js"
import { DashboardAccounts } from "../../services/company/DashboardAccounts.js"
import { DashboardSessions } from "../../services/company/DashboardSessions.js"
import { type InvitationDetails, Members } from "../../services/company/Members.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Users } from "../../services/identity/Users.js"
import { Api } from "../Api.js"
import { clientSource, makeAuthFailures } from "../AuthFailures.js"
import { listOf } from "./DashboardApi.js"
import {
  type AccountChoice,
  acceptInvitationPage,
  type FormState,
  leavePage,
  memberPage,
  membersPage,
  removePage,
  signedOutInvitationPage,
  transferPage,
  unusableInvitationPage,
  wrongPersonPage
} from "./membersViews.js"
import { csrfRefusedPage, notFoundPage, tooManyAttemptsPage } from "./pages.js"
import type { CurrentMember } from "./session.js"
import { makeDashboardAuth } from "./session.js"
import { makeSignInFormLimit } from "./signInLimit.js"
import { makeSignInSecondStep } from "./signInSecondStep.js"

/** The accounts a picker offers, per environment (a member limited to more sees the first ones). */
const accountsPerPicker = 100

const accountsQuery: V3Query = {
  filters: {},
  include: [],
  fields: [],
  sort: [],
  page: { number: 1, size: accountsPerPicker, cursor: undefined }
}

/** A refusal as a page shows it: the service's words, and its status. */
interface Refusal {
  readonly message: string
  readonly status: number
}

const refusalOf = (error: AnyDomainError): Refusal => ({ message: error.message, status: codeOf(error)?.status ?? 400 })

/** The accounts a form gives; `undefined` when its `accounts` field is neither "all" nor "selected". */
const accessFrom = (accounts: string, accountIds: string | ReadonlyArray<string>): AccountsAccess | undefined => {
  if (accounts === "all") return allAccounts
  if (accounts !== "selected") return undefined
  return { scope: "selected-accounts", ids: [...listOf(accountIds)] }
}

const pickAccounts = "Pick all accounts or some of them"

/** Field problems by the form's field: the services' paths (`accountsAccess.ids[0]`) to the form's names. */
const fieldErrors = (issues: ReadonlyArray<FieldIssue>, names: Readonly<Record<string, string>>) =>
  Object.fromEntries(
    issues.map((issue) => {
      const field = Object.keys(names).find((path) => issue.path === path || issue.path.startsWith(`${path}.`))
      return [field === undefined ? "form" : names[field]!, issue.message]
    })
  )

const redirect = (to: string) => HttpServerResponse.redirect(to, { status: 303 })

const nameOf = (member: Pick<Member, "displayName" | "email">) => member.displayName ?? member.email

/**
 * The Members pages and an invitation's page (docs/dashboard.md, "Members"). Every action is the Members
 * service's operation, judged there by the company Policy with the member's role read afresh; a refusal is shown
 * on the page it came from with its status, and changes nothing.
 */
export const MembersPagesLive = HttpApiBuilder.group(Api, "dashboardMembers", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const members = yield* Members
    const signUps = yield* DashboardAccounts
    const sessions = yield* DashboardSessions
    const users = yield* Users
    const secondStep = yield* makeSignInSecondStep(auth)
    const companies = yield* Companies
    const accounts = yield* Accounts
    const policy = yield* CompanyPolicy
    const failures = yield* makeAuthFailures

    /** The accounts the member reaches, in both environments: what it may give. */
    const accountChoices = (member: Member) =>
      Effect.flatMap(
        Effect.forEach(["test", "live"] as const, (environment: Environment) =>
          Effect.gen(function* () {
            // No account named, so no account to refuse: the scope cannot fail.
            const scope = yield* Effect.orDie(policy.scopeForMember(member, environment))
            const found = yield* accounts.page(scope, accountsQuery)
            return found.rows.map((account): AccountChoice => ({ id: account.id, name: account.name, environment }))
          })
        ),
        (lists) => Effect.succeed(lists.flat())
      )

    /** The roles the member may give (with its own accounts): an owner gives any, an admin all but owner. */
    const givableRoles = (member: Member) =>
      Effect.filter(roles, (role: Role) =>
        Effect.isSuccess(policy.canManageMember(member, { role, accountsAccess: member.accountsAccess }, "give"))
      )

    const showMembers = (
      current: CurrentMember,
      options: { readonly invite?: FormState; readonly refusal?: Refusal } = {}
    ) =>
      Effect.gen(function* () {
        const { members: list, invitations } = yield* members.list(current.company.id)
        return membersPage(current, {
          members: list,
          invitations,
          accounts: yield* accountChoices(current.member),
          roles: yield* givableRoles(current.member),
          ...(options.invite === undefined ? {} : { invite: options.invite }),
          ...(options.refusal === undefined
            ? {}
            : { status: options.refusal.status, flash: { kind: "error", text: options.refusal.message } as const })
        })
      })

    /** The member a path names, in the signed-in member's company; the 404 page otherwise. */
    const withMember = <E, R>(
      current: CurrentMember,
      userId: string,
      body: (member: Member) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) =>
      Effect.flatMap(Effect.option(members.get(current.company.id, userId.toLowerCase())), (member) =>
        Option.match(member, { onNone: () => Effect.succeed(notFoundPage(current)), onSome: body })
      )

    const showMember = (
      current: CurrentMember,
      member: Member,
      options: { readonly role?: FormState; readonly limit?: FormState; readonly status?: number } = {}
    ) =>
      Effect.gen(function* () {
        const refusal = yield* Effect.flip(
          policy.canManageMember(current.member, member, `change ${nameOf(member)}`)
        ).pipe(Effect.option)
        return memberPage(current, {
          member,
          accounts: yield* accountChoices(current.member),
          roles: yield* givableRoles(current.member),
          refusal: Option.match(refusal, { onNone: () => undefined, onSome: (error) => error.message }),
          ...options
        })
      })

    const formLimit = yield* makeSignInFormLimit

    /**
     * After a person signed out joined by an invitation: signed in to the company joined, as the sign-in page
     * signs in (the second factor first, when the person has it on).
     */
    const afterJoining = (
      request: HttpServerRequest.HttpServerRequest,
      input: { readonly userId: string; readonly member: Member; readonly companyName: string }
    ) =>
      Effect.gen(function* () {
        const joined = { kind: "success", text: `You joined ${input.companyName} as ${input.member.role}.` } as const
        const pending = yield* secondStep.afterPassword(request, {
          userId: input.userId,
          companyId: input.member.companyId
        })
        if (Option.isSome(pending)) return auth.withFlash(pending.value, joined)
        const started = yield* auth.startSession(request, redirect("/dashboard"), {
          userId: input.userId,
          companyId: input.member.companyId,
          sourceAddress: yield* clientSource
        })
        return auth.withFlash(started, joined)
      })

    /** The invitation a link names, or the page saying why it cannot be used. */
    const withInvitation = <E, R>(
      token: string,
      body: (invitation: InvitationDetails) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) =>
      Effect.flatMap(Effect.either(members.invitation(token)), (found) =>
        Either.match(found, {
          onLeft: (error) => {
            const refusal = refusalOf(error)
            return Effect.succeed(unusableInvitationPage(refusal.message, refusal.status))
          },
          onRight: body
        })
      )

    return handlers
      .handle("members", ({ request }) =>
        auth.page(request, { require: "members:manage" }, (current) => showMembers(current))
      )
      .handle("invite", ({ request, payload }) =>
        auth.form(request, payload.csrf, { require: "members:manage" }, (current) =>
          Effect.gen(function* () {
            const accountsAccess = accessFrom(payload.accounts, payload.accountIds)
            const sent: FormState = {
              email: payload.email,
              role: payload.role,
              ...(accountsAccess === undefined ? {} : { accountsAccess })
            }
            if (accountsAccess === undefined) {
              return yield* showMembers(current, {
                invite: { ...sent, errors: { accounts: pickAccounts } },
                refusal: { status: 400, message: "Please correct the fields marked below." }
              })
            }
            const invited = yield* Effect.either(
              members.invite({
                companyId: current.company.id,
                by: current.member,
                email: payload.email,
                // An unknown role is refused by the service, beside its field.
                role: payload.role as Role,
                accountsAccess
              })
            )
            if (Either.isLeft(invited)) {
              const error = invited.left
              const errors =
                error._tag === "InvalidRequest"
                  ? fieldErrors(error.errors, { email: "email", role: "role", accountsAccess: "accounts" })
                  : { form: error.message }
              return yield* showMembers(current, {
                invite: { ...sent, errors },
                refusal:
                  error._tag === "InvalidRequest"
                    ? { status: 400, message: "Please correct the fields marked below." }
                    : refusalOf(error)
              })
            }
            const { invitation, link } = invited.right
            return auth.withFlash(redirect("/dashboard/members"), {
              kind: "success",
              text: `An invitation to join as ${invitation.role} was sent to ${invitation.email}. Its link, valid 7 days, may also be passed on: ${link}`
            })
          })
        )
      )
      .handle("revokeInvitation", ({ request, payload, path }) =>
        auth.form(request, payload.csrf, { require: "members:manage" }, (current) =>
          Effect.gen(function* () {
            const revoked = yield* Effect.either(
              members.revokeInvitation({
                companyId: current.company.id,
                by: current.member,
                invitationId: path.invitationId
              })
            )
            if (Either.isLeft(revoked)) {
              if (revoked.left._tag === "InvitationNotFound") return notFoundPage(current)
              return yield* showMembers(current, { refusal: refusalOf(revoked.left) })
            }
            return auth.withFlash(redirect("/dashboard/members"), {
              kind: "success",
              text: "The invitation was withdrawn: its link no longer works."
            })
          })
        )
      )
      .handle("leavePage", ({ request }) =>
        auth.page(request, { beforeTwoFactor: true }, (current) => Effect.succeed(leavePage(current)))
      )
      .handle("leave", ({ request, payload }) =>
        auth.form(request, payload.csrf, { beforeTwoFactor: true }, (current) =>
          Effect.gen(function* () {
            const left = yield* Effect.either(
              members.remove({ companyId: current.company.id, by: current.member, userId: current.member.userId })
            )
            if (Either.isLeft(left)) return leavePage(current, refusalOf(left.left))
            // Leaving ended the person's sessions in the company; the browser's cookie goes with it.
            const out = yield* auth.signOut(request, redirect("/dashboard/sign-in"))
            return auth.withFlash(out, { kind: "success", text: `You left ${current.company.name}.` })
          })
        )
      )
      .handle("member", ({ request, path }) =>
        auth.page(request, { require: "members:manage" }, (current) =>
          withMember(current, path.userId, (member) => showMember(current, member))
        )
      )
      .handle("changeRole", ({ request, payload, path }) =>
        auth.form(request, payload.csrf, { require: "members:manage" }, (current) =>
          withMember(current, path.userId, (member) =>
            Effect.gen(function* () {
              const changed = yield* Effect.either(
                members.changeRole({
                  companyId: current.company.id,
                  by: current.member,
                  userId: member.userId,
                  // An unknown role is refused by the service, beside its field.
                  role: payload.role as Role
                })
              )
              if (Either.isLeft(changed)) {
                const error = changed.left
                if (error._tag === "MemberNotFound") return notFoundPage(current)
                const errors =
                  error._tag === "InvalidRequest"
                    ? fieldErrors(error.errors, { role: "role" })
                    : { form: error.message }
                return yield* showMember(current, member, {
                  role: { role: payload.role, errors },
                  status: refusalOf(error).status
                })
              }
              return auth.withFlash(redirect(`/dashboard/members/${member.userId}`), {
                kind: "success",
                text: `${nameOf(member)} is now ${changed.right.role === "owner" || changed.right.role === "admin" ? "an" : "a"} ${changed.right.role}.`
              })
            })
          )
        )
      )
      .handle("limitAccounts", ({ request, payload, path }) =>
        auth.form(request, payload.csrf, { require: "members:manage" }, (current) =>
          withMember(current, path.userId, (member) =>
            Effect.gen(function* () {
              const accountsAccess = accessFrom(payload.accounts, payload.accountIds)
              if (accountsAccess === undefined) {
                return yield* showMember(current, member, {
                  limit: { errors: { accounts: pickAccounts } },
                  status: 400
                })
              }
              const limited = yield* Effect.either(
                members.limitAccounts({
                  companyId: current.company.id,
                  by: current.member,
                  userId: member.userId,
                  accountsAccess
                })
              )
              if (Either.isLeft(limited)) {
                const error = limited.left
                if (error._tag === "MemberNotFound") return notFoundPage(current)
                const errors =
                  error._tag === "InvalidRequest"
                    ? fieldErrors(error.errors, { accountsAccess: "accounts" })
                    : { form: error.message }
                return yield* showMember(current, member, {
                  limit: { accountsAccess, errors },
                  status: refusalOf(error).status
                })
              }
              return auth.withFlash(redirect(`/dashboard/members/${member.userId}`), {
                kind: "success",
                text: `The accounts of ${nameOf(member)} were saved.`
              })
            })
          )
        )
      )
      .handle("removePage", ({ request, path }) =>
        auth.page(request, { require: "members:manage" }, (current) =>
          withMember(current, path.userId, (member) =>
            Effect.succeed(
              member.userId === current.member.userId
                ? redirect("/dashboard/members/leave")
                : removePage(current, member)
            )
          )
        )
      )
      .handle("remove", ({ request, payload, path }) =>
        auth.form(request, payload.csrf, { require: "members:manage" }, (current) =>
          withMember(current, path.userId, (member) =>
            Effect.gen(function* () {
              const removed = yield* Effect.either(
                members.remove({ companyId: current.company.id, by: current.member, userId: member.userId })
              )
              if (Either.isLeft(removed)) {
                if (removed.left._tag === "MemberNotFound") return notFoundPage(current)
                return removePage(current, member, refusalOf(removed.left))
              }
              if (member.userId === current.member.userId) {
                const out = yield* auth.signOut(request, redirect("/dashboard/sign-in"))
                return auth.withFlash(out, { kind: "success", text: `You left ${current.company.name}.` })
              }
              return auth.withFlash(redirect("/dashboard/members"), {
                kind: "success",
                text: `${nameOf(member)} was removed from ${current.company.name}.`
              })
            })
          )
        )
      )
      .handle("transferPage", ({ request, path }) =>
        auth.page(request, { require: "company:manage" }, (current) =>
          withMember(current, path.userId, (member) => Effect.succeed(transferPage(current, member)))
        )
      )
      .handle("transfer", ({ request, payload, path }) =>
        auth.form(request, payload.csrf, { require: "company:manage" }, (current) =>
          withMember(current, path.userId, (member) =>
            Effect.gen(function* () {
              const transferred = yield* Effect.either(
                members.transferOwnership({ companyId: current.company.id, by: current.member, to: member.userId })
              )
              if (Either.isLeft(transferred)) {
                if (transferred.left._tag === "MemberNotFound") return notFoundPage(current)
                return transferPage(current, member, refusalOf(transferred.left))
              }
              return auth.withFlash(redirect("/dashboard/members"), {
                kind: "success",
                text: `${nameOf(member)} is now an owner of ${current.company.name}; you are an admin.`
              })
            })
          )
        )
      )
      .handle("invitation", ({ request, path }) =>
        withInvitation(path.token, (invitation) =>
          Effect.gen(function* () {
            const current = yield* auth.currentMember(request)
            if (Option.isSome(current)) {
              const signedIn = current.value
              const page =
                signedIn.user.email.toLowerCase() === invitation.email.toLowerCase()
                  ? acceptInvitationPage(signedIn, path.token, invitation)
                  : wrongPersonPage(signedIn, invitation)
              return auth.clearFlash(request, page)
            }
            const csrf = auth.signedOutCsrf(request)
            return auth.withSignedOutCookie(
              signedOutInvitationPage({ csrf: csrf.token, token: path.token, invitation }),
              csrf.cookie
            )
          })
        )
      )
      .handle("acceptInvitation", ({ request, payload, path }) =>
        // Joining another company is open before this one's required second factor is on (as leaving is).
        auth.form(request, payload.csrf, { beforeTwoFactor: true }, (current) =>
          Effect.gen(function* () {
            const accepted = yield* Effect.either(members.accept(path.token, current.user.id))
            if (Either.isLeft(accepted)) {
              const refusal = refusalOf(accepted.left)
              return unusableInvitationPage(refusal.message, refusal.status)
            }
            const member = accepted.right
            // The session moves to the company joined (the person is a member there now).
            yield* Effect.orDie(sessions.switchCompany(current.session, member.companyId))
            const name = Option.getOrElse(yield* companies.name(member.companyId), () => member.companyId)
            return auth.withFlash(redirect("/dashboard"), {
              kind: "success",
              text: `You joined ${name} as ${member.role}.`
            })
          })
        )
      )
      .handle("signInAndAccept", ({ request, payload, path }) =>
        Effect.gen(function* () {
          if (!auth.signedOutCsrfValid(request, payload.csrf)) return csrfRefusedPage()
          const limited = yield* formLimit
          if (Option.isSome(limited)) return limited.value
          return yield* withInvitation(path.token, (invitation) =>
            Effect.gen(function* () {
              const again = (errors: Record<string, string>, status: number) =>
                signedOutInvitationPage({
                  csrf: auth.signedOutCsrf(request).token,
                  token: path.token,
                  invitation,
                  errors,
                  status
                })
              const signedIn = yield* Effect.either(
                failures.guard(
                  { kind: "sign-in", source: yield* clientSource, account: invitation.email },
                  users.authenticate(invitation.email, payload.password),
                  (error) => error._tag === "InvalidCredentials"
                )
              )
              if (Either.isLeft(signedIn)) {
                const error = signedIn.left
                if (error._tag === "RateLimited") {
                  return tooManyAttemptsPage(error.retryAfterSeconds)
                }
                return again({ password: "The password is not right." }, 401)
              }
              const user = signedIn.right
              const accepted = yield* Effect.either(members.accept(path.token, user.id))
              if (Either.isLeft(accepted)) {
                const refusal = refusalOf(accepted.left)
                return unusableInvitationPage(refusal.message, refusal.status)
              }
              return yield* afterJoining(request, {
                userId: user.id,
                member: accepted.right,
                companyName: invitation.companyName
              })
            })
          )
        })
      )
      .handle("joinByInvitation", ({ request, payload, path }) =>
        Effect.gen(function* () {
          if (!auth.signedOutCsrfValid(request, payload.csrf)) return csrfRefusedPage()
          const limited = yield* formLimit
          if (Option.isSome(limited)) return limited.value
          return yield* withInvitation(path.token, (invitation) =>
            Effect.gen(function* () {
              const again = (errors: Record<string, string>, status: number) =>
                signedOutInvitationPage({
                  csrf: auth.signedOutCsrf(request).token,
                  token: path.token,
                  invitation,
                  displayName: payload.displayName,
                  errors,
                  status
                })
              const joined = yield* Effect.either(
                signUps.joinByInvitation({
                  token: path.token,
                  password: payload.newPassword,
                  displayName: payload.displayName
                })
              )
              if (Either.isLeft(joined)) {
                const error = joined.left
                switch (error._tag) {
                  case "InvalidRequest":
                    return again(
                      fieldErrors(error.errors, { password: "newPassword", displayName: "displayName" }),
                      400
                    )
                  case "EmailTaken":
                    return again(
                      { join: `${invitation.email} already has a Ribbon account: sign in with its password above.` },
                      409
                    )
                  default: {
                    const refusal = refusalOf(error)
                    return unusableInvitationPage(refusal.message, refusal.status)
                  }
                }
              }
              return yield* afterJoining(request, {
                userId: joined.right.user.id,
                member: joined.right.member,
                companyName: invitation.companyName
              })
            })
          )
        })
      )
  })
)
