import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option } from "effect"
import { Companies } from "../../services/company/Companies.js"
import { DashboardSessions } from "../../services/company/DashboardSessions.js"
import { isFailedSecondFactor, TwoFactor } from "../../services/identity/TwoFactor.js"
import { Api } from "../Api.js"
import { clientSource, makeAuthFailures } from "../AuthFailures.js"
import {
  accountPage,
  disablePage,
  enrolPage,
  recoveryCodesPage,
  regeneratePage,
  secondStepPage,
  signOutOthersPage
} from "./accountViews.js"
import { csrfRefusedPage, tooManyAttemptsPage } from "./pages.js"
import { type CurrentMember, holds, makeDashboardAuth } from "./session.js"
import { makeSignInSecondStep } from "./signInSecondStep.js"

/**
 * The account and security pages (docs/dashboard.md, "Account and security"). Every member manages their own
 * two-factor sign-in and sessions; the company's requirement needs `company:manage` (owners). Codes are
 * checked under the same backoff as failed sign-ins (kind `two-factor`, per source and per person), and a
 * password asked again under the sign-in's (kind `sign-in`, per source and per e-mail).
 */

const accountPath = "/dashboard/account"

const toAccount = HttpServerResponse.redirect(accountPath, { status: 303 })

export const AccountPagesLive = HttpApiBuilder.group(Api, "dashboardAccount", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const secondStep = yield* makeSignInSecondStep(auth)
    const twoFactor = yield* TwoFactor
    const sessions = yield* DashboardSessions
    const companies = yield* Companies
    const failures = yield* makeAuthFailures

    const companyRequires = (current: CurrentMember) => Effect.orDie(companies.requiresTwoFactor(current.company.id))

    const accountState = (current: CurrentMember, companyError?: string) =>
      Effect.gen(function* () {
        const [status, requires, underWay, live] = yield* Effect.all([
          twoFactor.status(current.user.id),
          companyRequires(current),
          twoFactor.enrolment(current.user.id, current.user.email),
          sessions.listFor(current.user.id)
        ])
        return {
          twoFactor: status,
          companyRequires: requires,
          enrolmentUnderWay: Option.isSome(underWay),
          sessions: live,
          managesCompany: holds(current.grant, "company:manage"),
          ...(companyError === undefined ? {} : { companyError })
        }
      })

    /** A code or a password checked under the backoff of its kind: the failure counted, a 429 past the free ones. */
    const guardedCode = <A, E extends { readonly _tag: string }, R>(
      current: CurrentMember,
      check: Effect.Effect<A, E, R>
    ) =>
      Effect.flatMap(clientSource, (source) =>
        Effect.either(
          failures.guard({ kind: "two-factor", source, account: current.user.id }, check, isFailedSecondFactor)
        )
      )

    const guardedPassword = <A, E extends { readonly _tag: string }, R>(
      current: CurrentMember,
      check: Effect.Effect<A, E, R>
    ) =>
      Effect.flatMap(clientSource, (source) =>
        Effect.either(
          failures.guard(
            { kind: "sign-in", source, account: current.user.email },
            check,
            (error) => error._tag === "InvalidCredentials"
          )
        )
      )

    /** Back to sign-in, the pending second step forgotten, with a message. */
    const signInAgain = (text: string) =>
      auth.withFlash(secondStep.clear(HttpServerResponse.redirect("/dashboard/sign-in", { status: 303 })), {
        kind: "error",
        text
      })

    return handlers
      .handle("account", ({ request }) =>
        auth.page(request, { beforeTwoFactor: true }, (current) =>
          Effect.map(accountState(current), (state) => accountPage(current, state))
        )
      )
      .handle("beginTwoFactor", ({ request, payload }) =>
        auth.form(request, payload.csrf, { beforeTwoFactor: true }, (current) =>
          Effect.gen(function* () {
            const begun = yield* Effect.either(twoFactor.begin(current.user.id, current.user.email))
            if (Either.isLeft(begun)) {
              return auth.withFlash(toAccount, { kind: "error", text: begun.left.message })
            }
            return HttpServerResponse.redirect("/dashboard/account/two-factor", { status: 303 })
          })
        )
      )
      .handle("enrolPage", ({ request }) =>
        auth.page(request, { beforeTwoFactor: true }, (current) =>
          Effect.map(twoFactor.enrolment(current.user.id, current.user.email), (enrolment) =>
            Option.isSome(enrolment) ? enrolPage(current, enrolment.value) : toAccount
          )
        )
      )
      .handle("confirmTwoFactor", ({ request, payload }) =>
        auth.form(request, payload.csrf, { beforeTwoFactor: true }, (current) =>
          Effect.gen(function* () {
            const confirmed = yield* guardedCode(current, twoFactor.confirm(current.user.id, payload.code))
            if (Either.isRight(confirmed)) {
              return recoveryCodesPage(current, confirmed.right, "Two-factor sign-in is on.")
            }
            const error = confirmed.left
            if (error._tag === "RateLimited") return tooManyAttemptsPage(error.retryAfterSeconds)
            if (error._tag !== "TwoFactorInvalidCode")
              return auth.withFlash(toAccount, { kind: "error", text: error.message })
            const enrolment = yield* twoFactor.enrolment(current.user.id, current.user.email)
            if (Option.isNone(enrolment)) return toAccount
            return enrolPage(current, enrolment.value, { error: error.message }, 400)
          })
        )
      )
      .handle("disablePage", ({ request }) =>
        auth.page(request, {}, (current) =>
          Effect.gen(function* () {
            if (!(yield* twoFactor.isEnabled(current.user.id))) return toAccount
            return disablePage(current, { companyRequires: yield* companyRequires(current) })
          })
        )
      )
      .handle("disableTwoFactor", ({ request, payload }) =>
        auth.form(request, payload.csrf, {}, (current) =>
          Effect.gen(function* () {
            const disabled = yield* guardedPassword(current, twoFactor.disable(current.user.id, payload.password))
            if (Either.isRight(disabled)) {
              return auth.withFlash(toAccount, { kind: "success", text: "Two-factor sign-in is off." })
            }
            const error = disabled.left
            if (error._tag === "RateLimited") return tooManyAttemptsPage(error.retryAfterSeconds)
            if (error._tag === "TwoFactorNotEnrolled")
              return auth.withFlash(toAccount, { kind: "error", text: error.message })
            return disablePage(current, { companyRequires: yield* companyRequires(current), error: error.message }, 401)
          })
        )
      )
      .handle("recoveryCodesPage", ({ request }) =>
        auth.page(request, {}, (current) =>
          Effect.map(twoFactor.isEnabled(current.user.id), (enabled) => (enabled ? regeneratePage(current) : toAccount))
        )
      )
      .handle("regenerateRecoveryCodes", ({ request, payload }) =>
        auth.form(request, payload.csrf, {}, (current) =>
          Effect.gen(function* () {
            const codes = yield* guardedPassword(
              current,
              twoFactor.regenerateRecoveryCodes(current.user.id, payload.password)
            )
            if (Either.isRight(codes)) {
              return recoveryCodesPage(current, codes.right, "New recovery codes: the old ones no longer work.")
            }
            const error = codes.left
            if (error._tag === "RateLimited") return tooManyAttemptsPage(error.retryAfterSeconds)
            if (error._tag === "TwoFactorNotEnrolled")
              return auth.withFlash(toAccount, { kind: "error", text: error.message })
            return regeneratePage(current, { error: error.message }, 401)
          })
        )
      )
      .handle("signOutOthersPage", ({ request }) =>
        auth.page(request, {}, (current) =>
          Effect.map(sessions.listFor(current.user.id), (live) => {
            const others = live.filter((s) => s.idHash !== current.session.idHash).length
            return others === 0 ? toAccount : signOutOthersPage(current, others)
          })
        )
      )
      .handle("signOutOthers", ({ request, payload }) =>
        auth.form(request, payload.csrf, {}, (current) =>
          Effect.map(sessions.revokeOthers(current.session), (ended) =>
            auth.withFlash(toAccount, {
              kind: "success",
              text: ended === 1 ? "1 other session is signed out." : `${ended} other sessions are signed out.`
            })
          )
        )
      )
      .handle("companySecurity", ({ request, payload }) =>
        auth.form(request, payload.csrf, { require: "company:manage", beforeTwoFactor: true }, (current) =>
          Effect.gen(function* () {
            if (payload.requireTwoFactor !== "yes" && payload.requireTwoFactor !== "no") {
              const state = yield* accountState(current, "Choose whether to require two-factor sign-in: yes or no.")
              return accountPage(current, state, 400)
            }
            const required = payload.requireTwoFactor === "yes"
            yield* Effect.orDie(companies.requireTwoFactor(current.company.id, required))
            return auth.withFlash(toAccount, {
              kind: "success",
              text: required
                ? `${current.company.name} now requires two-factor sign-in of every member.`
                : `Two-factor sign-in is now each member's choice in ${current.company.name}.`
            })
          })
        )
      )
      .handle("secondStepPage", ({ request }) =>
        Effect.gen(function* () {
          if (Option.isSome(yield* auth.currentMember(request)))
            return HttpServerResponse.redirect("/dashboard", { status: 303 })
          if (Option.isNone(yield* secondStep.pendingOf(request))) {
            return secondStep.hasCookie(request)
              ? signInAgain("Your sign-in took too long. Sign in again.")
              : HttpServerResponse.redirect("/dashboard/sign-in", { status: 303 })
          }
          return secondStepPage({ csrf: auth.signedOutCsrf(request).token })
        })
      )
      .handle("secondStep", ({ request, payload }) =>
        Effect.gen(function* () {
          if (!auth.signedOutCsrfValid(request, payload.csrf)) return csrfRefusedPage()
          const pending = yield* secondStep.pendingOf(request)
          if (Option.isNone(pending)) return signInAgain("Your sign-in took too long. Sign in again.")
          const { userId, companyId } = pending.value
          const source = yield* clientSource
          const verified = yield* Effect.either(
            failures.guard(
              { kind: "two-factor", source, account: userId },
              twoFactor.verify(userId, payload.code),
              isFailedSecondFactor
            )
          )
          if (Either.isLeft(verified)) {
            const error = verified.left
            if (error._tag === "RateLimited") return tooManyAttemptsPage(error.retryAfterSeconds)
            // Turned off since the password step: start again from the password.
            if (error._tag === "TwoFactorNotEnrolled") return signInAgain(error.message)
            return secondStepPage({ csrf: auth.signedOutCsrf(request).token, error: error.message }, 401)
          }
          const started = yield* auth.startSession(
            request,
            secondStep.clear(HttpServerResponse.redirect("/dashboard", { status: 303 })),
            { userId, companyId, sourceAddress: source }
          )
          const { method, recoveryCodesLeft } = verified.right
          if (method === "totp") return started
          return auth.withFlash(started, {
            kind: recoveryCodesLeft < 3 ? "error" : "success",
            text: `You signed in with a recovery code; ${recoveryCodesLeft} left. Make new ones in Account and security.`
          })
        })
      )
  })
)
