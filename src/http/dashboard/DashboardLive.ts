import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option } from "effect"
import { spendChartDays } from "../../domain/company/Billing.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { Accounts } from "../../services/company/Accounts.js"
import { Billing } from "../../services/company/Billing.js"
import { CompanyOrders } from "../../services/company/CompanyOrders.js"
import { DashboardAccounts } from "../../services/company/DashboardAccounts.js"
import { DashboardSessions } from "../../services/company/DashboardSessions.js"
import { Gifts } from "../../services/company/Gifts.js"
import { Members } from "../../services/company/Members.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Users } from "../../services/identity/Users.js"
import { Api } from "../Api.js"
import { clientSource, makeAuthFailures } from "../AuthFailures.js"
import { homePage } from "./homeViews.js"
import { csrfRefusedPage, emailTaken, notFoundPage, signInPage, signUpPage, tooManyAttemptsPage } from "./pages.js"
import { environmentParam, pageNumber } from "./params.js"
import { holds, makeDashboardAuth } from "./session.js"
import { makeSignInFormLimit } from "./signInLimit.js"
import { makeSignInSecondStep } from "./signInSecondStep.js"

/** Accounts per page on the home page. */
const accountsPerPage = 20
/** The latest orders and gifts the home page shows. */
const latestShown = 5

const latestOrders: V3Query = {
  filters: {},
  include: [],
  fields: [],
  sort: [],
  page: { number: 1, size: latestShown, cursor: undefined }
}

/**
 * The dashboard's sign-up, sign-in, sign-out, company switch and home (docs/dashboard.md). Sign-in and sign-up
 * count against the same limits as the OAuth sign-in: per source for the forms, and failed sign-ins per source
 * and per account.
 */
export const DashboardLive = HttpApiBuilder.group(Api, "dashboard", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const signUps = yield* DashboardAccounts
    const sessions = yield* DashboardSessions
    const users = yield* Users
    const members = yield* Members
    const accounts = yield* Accounts
    const policy = yield* CompanyPolicy
    const billing = yield* Billing
    const gifts = yield* Gifts
    const orders = yield* CompanyOrders
    const failures = yield* makeAuthFailures
    const secondStep = yield* makeSignInSecondStep(auth)

    const home = HttpServerResponse.redirect("/dashboard", { status: 303 })

    const formLimit = yield* makeSignInFormLimit

    return handlers
      .handle("home", ({ request, urlParams }) =>
        auth.page(request, {}, (current) =>
          Effect.gen(function* () {
            const environment = environmentParam(urlParams.environment, current)
            const name = urlParams.name.trim().slice(0, 200)
            const page = pageNumber(urlParams.page)
            const query: V3Query = {
              filters: name === "" ? {} : { name },
              include: [],
              fields: [],
              sort: [],
              page: { number: page, size: accountsPerPage, cursor: undefined }
            }
            // The same operation and scope as `GET /public-api/v3/accounts`, for the member's accounts.
            // No account named, so no account to refuse: the scope cannot fail.
            const scope = yield* Effect.orDie(policy.scopeForMember(current.member, environment))
            const found = yield* accounts.page(scope, query)
            // Each part only for a role that reads what it is made of (docs/decisions/0063-dashboard-home-charts.md),
            // through the operation the API's read calls, in the member's scope.
            const may = (...any: ReadonlyArray<Parameters<typeof holds>[1]>) =>
              any.some((requirement) => holds(current.grant, requirement))
            const readsBilling = may("accounts:read")
            const readsGifts = may("gifts:read:masked", "gifts:read:unmasked")
            const readsOrders = may("orders:read:masked", "orders:read:unmasked")
            const whenAllowed = <A, E, R>(allowed: boolean, read: Effect.Effect<A, E, R>) =>
              allowed ? Effect.map(read, (value): A | undefined => value) : Effect.succeed(undefined)
            const [methods, spend, funnel, latestGifts, latest] = yield* Effect.all(
              [
                whenAllowed(
                  readsBilling,
                  billing.ofAccounts(
                    scope,
                    found.rows.map((account) => account.id)
                  )
                ),
                whenAllowed(readsBilling, billing.spendPerDay(scope, spendChartDays)),
                whenAllowed(readsGifts, gifts.funnel(scope, spendChartDays)),
                whenAllowed(
                  readsGifts,
                  gifts.page(scope, {
                    skip: 0,
                    limit: latestShown,
                    statuses: [],
                    campaignIds: [],
                    keys: [],
                    createdBefore: undefined,
                    createdAfter: undefined
                  })
                ),
                whenAllowed(readsOrders, orders.page(scope, latestOrders))
              ],
              { concurrency: "unbounded" }
            )
            return homePage(current, {
              environment,
              name,
              accounts: found.rows,
              links: { path: "/dashboard", params: { name, environment }, page, hasNext: found.hasNext },
              methods,
              ledgerLinks: holds(current.grant, "billing:manage"),
              spend,
              funnel,
              gifts: latestGifts,
              orders: latest?.rows
            })
          })
        )
      )
      .handle("signUpPage", ({ request }) =>
        Effect.gen(function* () {
          if (Option.isSome(yield* auth.currentMember(request))) return home
          const csrf = auth.signedOutCsrf(request)
          return auth.withSignedOutCookie(signUpPage({ csrf: csrf.token }), csrf.cookie)
        })
      )
      .handle("signUp", ({ request, payload }) =>
        Effect.gen(function* () {
          if (!auth.signedOutCsrfValid(request, payload.csrf)) return csrfRefusedPage()
          const limited = yield* formLimit
          if (Option.isSome(limited)) return limited.value
          const csrf = auth.signedOutCsrf(request).token
          const again = (errors: Record<string, string>, status: number) =>
            signUpPage({ csrf, email: payload.email, companyName: payload.companyName, errors }, status)
          const result = yield* Effect.either(signUps.signUp(payload))
          if (Either.isLeft(result)) {
            const error = result.left
            if (error._tag === "EmailTaken") return again({ email: emailTaken }, 409)
            return again(Object.fromEntries(error.errors.map((issue) => [issue.path, issue.message])), 400)
          }
          const { user, companyId } = result.right
          const started = yield* auth.startSession(request, home, {
            userId: user.id,
            companyId,
            sourceAddress: yield* clientSource
          })
          return auth.withFlash(started, {
            kind: "success",
            text: "Your company is ready: a sandbox with a funded test account."
          })
        })
      )
      .handle("signInPage", ({ request }) =>
        Effect.gen(function* () {
          if (Option.isSome(yield* auth.currentMember(request))) return home
          const csrf = auth.signedOutCsrf(request)
          const page = signInPage({ csrf: csrf.token, flash: auth.flashOf(request) })
          return auth.clearFlash(request, auth.withSignedOutCookie(page, csrf.cookie))
        })
      )
      .handle("signIn", ({ request, payload }) =>
        Effect.gen(function* () {
          if (!auth.signedOutCsrfValid(request, payload.csrf)) return csrfRefusedPage()
          const limited = yield* formLimit
          if (Option.isSome(limited)) return limited.value
          const csrf = auth.signedOutCsrf(request).token
          const source = yield* clientSource
          const signedIn = yield* Effect.either(
            failures.guard(
              { kind: "sign-in", source, account: payload.email },
              users.authenticate(payload.email, payload.password),
              (error) => error._tag === "InvalidCredentials"
            )
          )
          if (Either.isLeft(signedIn)) {
            const error = signedIn.left
            if (error._tag === "RateLimited") {
              return tooManyAttemptsPage(error.retryAfterSeconds)
            }
            return signInPage({ csrf, email: payload.email, error: error.message }, 401)
          }
          const user = signedIn.right
          const [first] = yield* members.membershipsOf(user.id)
          if (first === undefined) {
            const error = "This account is not a member of any company. Ask a company's owner for an invitation."
            return signInPage({ csrf, email: payload.email, error }, 403)
          }
          const pending = yield* secondStep.afterPassword(request, { userId: user.id, companyId: first.companyId })
          if (Option.isSome(pending)) return pending.value
          return yield* auth.startSession(request, home, {
            userId: user.id,
            companyId: first.companyId,
            sourceAddress: source
          })
        })
      )
      .handle("signOut", ({ request, payload }) =>
        auth.form(request, payload.csrf, { beforeTwoFactor: true }, () =>
          Effect.map(
            auth.signOut(request, HttpServerResponse.redirect("/dashboard/sign-in", { status: 303 })),
            (response) => auth.withFlash(response, { kind: "success", text: "You are signed out." })
          )
        )
      )
      .handle("switchCompany", ({ request, payload }) =>
        auth.form(request, payload.csrf, { beforeTwoFactor: true }, (current) =>
          Effect.gen(function* () {
            // Not a member there (or no such company): the same 404 either way, and the session stays put.
            const switched = yield* Effect.either(sessions.switchCompany(current.session, payload.companyId))
            const to = current.memberships.find((m) => m.companyId === payload.companyId)
            if (Either.isLeft(switched) || to === undefined) return notFoundPage(current)
            return auth.withFlash(home, { kind: "success", text: `Switched to ${to.companyName}.` })
          })
        )
      )
      .handle("notFound", ({ request }) => auth.page(request, {}, (current) => Effect.succeed(notFoundPage(current))))
  })
)
