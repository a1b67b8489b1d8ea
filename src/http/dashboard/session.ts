import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Either, Option } from "effect"
import { memberActorName } from "../../domain/company/Audit.js"
import type { Permission } from "../../domain/company/Company.js"
import { type DashboardSession, dashboardSessionLifetimes } from "../../domain/company/Dashboard.js"
import type { Member, MemberRight, Role } from "../../domain/company/Members.js"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { outboxShown, ProductionServer } from "../../services/checkout/Notifications.js"
import { Companies } from "../../services/company/Companies.js"
import { DashboardSessions } from "../../services/company/DashboardSessions.js"
import { grantOf, type MemberGrant, Members } from "../../services/company/Members.js"
import { TwoFactor } from "../../services/identity/TwoFactor.js"
import { actAs } from "../RequestActor.js"
import type { FlashMessage } from "./components.js"
import { csrfRefusedPage, forbiddenPage, sessionEndedPage } from "./pages.js"

/**
 * Who is signed in to the dashboard, and the guards every dashboard page and form goes through
 * (docs/decisions/0056-dashboard-sessions-and-sign-up.md).
 *
 * Adding a page: in a handler group's effect, `const auth = yield* makeDashboardAuth`, then
 * - a GET: `auth.page(request, { require: "members:manage" }, (current) => Effect.succeed(dashboardPage(title,
 *   current, <Body />, { section: "/dashboard/members" })))`: without a live session the browser is sent to
 *   sign in; a member whose role lacks `require` (a member right or an API permission) gets the 403 page;
 * - a POST: `auth.form(request, payload.csrf, { require }, (current) => …)`: the form's CSRF token is checked
 *   before anything else runs (403, nothing changed), and without a session it is a 403 page, not a redirect.
 *   Every form carries `<CsrfField token={current.csrf} />`. After the action, redirect (303) with
 *   `auth.withFlash(HttpServerResponse.redirect(…, { status: 303 }), { kind: "success", text })`.
 * When the company requires two-factor sign-in and the member has none, every page and form but those that
 * pass `{ beforeTwoFactor: true }` (enrolment, sign-out) redirects to the account page to turn it on.
 * The service operations a page calls take `current.member` / `current.grant` and the CompanyPolicy scope
 * (`scopeForMember`), exactly as the API's handlers take a key's: a page never has SQL of its own.
 */

const SESSION_COOKIE = "ribbon_dashboard"
/** Before sign-in, the CSRF token of the sign-in and sign-up forms is bound to this random cookie. */
const SIGNED_OUT_COOKIE = "ribbon_dashboard_csrf"
/** The flash message of the next page (after a redirect): short-lived, read once, never in a URL. */
const FLASH_COOKIE = "ribbon_dashboard_flash"

/** The person signed in, in the company of their session, with what their role lets them do there. */
export interface CurrentMember {
  readonly session: DashboardSession
  /** The token this session's forms carry. */
  readonly csrf: string
  readonly user: { readonly id: string; readonly email: string; readonly displayName: string | null }
  readonly member: Member
  readonly grant: MemberGrant
  readonly company: { readonly id: string; readonly name: string; readonly live: boolean }
  /** Whether the outbox page (and its navigation link) shows: a sandbox company, or a server not in production. */
  readonly outboxShown: boolean
  /** Every company the person belongs to, for the switcher. */
  readonly memberships: ReadonlyArray<{ readonly companyId: string; readonly companyName: string; readonly role: Role }>
  /** The message the previous action left for this page, if any. */
  readonly flash: FlashMessage | undefined
}

/** What a page or form may require of the member: a right only people hold, or an API permission. */
export type Requirement = MemberRight | Permission

export interface GuardOptions {
  readonly require?: Requirement
  /** Open to a member whose company requires two-factor sign-in before it is on (enrolment, sign-out). */
  readonly beforeTwoFactor?: boolean
}

/** Where a member whose company requires two-factor sign-in, and who has none, is sent. */
export const twoFactorEnrolmentPath = "/dashboard/account"

export const holds = (grant: MemberGrant, requirement: Requirement) =>
  (grant.rights as ReadonlyArray<string>).includes(requirement) ||
  (grant.permissions as ReadonlyArray<string>).includes(requirement)

/** A cookie's value; an empty one (a cleared cookie sent back) counts as none. */
const cookieOf = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined => {
  const value = request.cookies[name]
  return value === undefined || value === "" ? undefined : value
}

/** The token a form bound to `binding` (a session's or a signed-out browser's cookie) must carry. */
const csrfTokenOf = (binding: string) =>
  createHmac("sha256", binding).update("ribbon dashboard form").digest("base64url")

const sameToken = (expected: string, presented: string) => {
  const a = Buffer.from(expected)
  const b = Buffer.from(presented)
  return a.length === b.length && timingSafeEqual(a, b)
}

const flashOf = (request: HttpServerRequest.HttpServerRequest): FlashMessage | undefined => {
  const raw = cookieOf(request, FLASH_COOKIE)
  if (raw === undefined) return undefined
  try {
    const parsed = JSON.parse(Buffer.from(raw, "base64url").toString("utf8")) as Partial<FlashMessage>
    const kind = parsed.kind === "error" ? "error" : "success"
    return typeof parsed.text === "string" && parsed.text.length <= 500 ? { kind, text: parsed.text } : undefined
  } catch {
    return undefined
  }
}

export const makeDashboardAuth = Effect.gen(function* () {
  const sessions = yield* DashboardSessions
  const members = yield* Members
  const companies = yield* Companies
  const twoFactor = yield* TwoFactor
  const secure = (yield* PublicUrl).startsWith("https:")
  const production = yield* ProductionServer
  const cookieOptions = { httpOnly: true, sameSite: "lax", path: "/dashboard", secure } as const

  /** The member behind the request's session cookie; none without a live session or a membership. */
  const currentMember = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function* () {
      const cookie = cookieOf(request, SESSION_COOKIE)
      if (cookie === undefined) return Option.none<CurrentMember>()
      const session = yield* sessions.resolve(cookie)
      if (Option.isNone(session)) return Option.none<CurrentMember>()
      const { userId, companyId } = session.value
      // Removed from the company since: the session is over.
      const member = yield* Effect.either(members.get(companyId, userId))
      if (Either.isLeft(member)) return Option.none<CurrentMember>()
      const [name, live, memberships] = yield* Effect.all([
        companies.name(companyId),
        companies.isLive(companyId),
        members.membershipsOf(userId)
      ])
      return Option.some<CurrentMember>({
        session: session.value,
        csrf: csrfTokenOf(cookie),
        user: { id: userId, email: member.right.email, displayName: member.right.displayName },
        member: member.right,
        grant: grantOf(member.right),
        company: { id: companyId, name: Option.getOrElse(name, () => companyId), live },
        outboxShown: outboxShown({ live }, production),
        memberships,
        flash: flashOf(request)
      })
    })

  /** The flash cookie, read by this page, cleared with its response. */
  const clearFlash = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
    cookieOf(request, FLASH_COOKIE) === undefined
      ? response
      : HttpServerResponse.unsafeSetCookie(response, FLASH_COOKIE, "", { ...cookieOptions, maxAge: Duration.zero })

  /** Without a live session: a stale cookie is cleared, and a GET goes to sign-in, anything else a 403 page. */
  const signedOut = (request: HttpServerRequest.HttpServerRequest) => {
    const response =
      request.method === "GET" ? HttpServerResponse.redirect("/dashboard/sign-in", { status: 303 }) : sessionEndedPage()
    return cookieOf(request, SESSION_COOKIE) === undefined ? response : endSession(response)
  }

  /** Whether the member's company requires two-factor sign-in and the member has not turned it on. */
  const lacksRequiredTwoFactor = (current: CurrentMember) =>
    Effect.gen(function* () {
      const required = yield* Effect.orDie(companies.requiresTwoFactor(current.company.id))
      return required && !(yield* twoFactor.isEnabled(current.user.id))
    })

  const guarded = <E, R>(
    request: HttpServerRequest.HttpServerRequest,
    options: GuardOptions,
    body: (current: CurrentMember) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) =>
    Effect.gen(function* () {
      const current = yield* currentMember(request)
      if (Option.isNone(current)) return signedOut(request)
      if (options.beforeTwoFactor !== true && (yield* lacksRequiredTwoFactor(current.value))) {
        return withFlash(HttpServerResponse.redirect(twoFactorEnrolmentPath, { status: 303 }), {
          kind: "error",
          text: `${current.value.company.name} requires two-factor sign-in. Turn it on to continue.`
        })
      }
      if (options.require !== undefined && !holds(current.value.grant, options.require)) {
        return clearFlash(request, forbiddenPage(current.value))
      }
      // What the page changes is the member's doing in the audit log: named by the name they gave, never by e-mail.
      const { user } = current.value
      yield* actAs({ type: "member", id: user.id, name: memberActorName(user.displayName) })
      return clearFlash(request, yield* body(current.value))
    })

  /** A signed-in GET page (see the module's comment). */
  const page = <E, R>(
    request: HttpServerRequest.HttpServerRequest,
    options: GuardOptions,
    body: (current: CurrentMember) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) => guarded(request, options, body)

  /** A signed-in form's POST: its CSRF token first, then the session and the requirement (see the module's comment). */
  const form = <E, R>(
    request: HttpServerRequest.HttpServerRequest,
    csrf: string,
    options: GuardOptions,
    body: (current: CurrentMember) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) => {
    const cookie = cookieOf(request, SESSION_COOKIE)
    if (cookie === undefined) return Effect.succeed(sessionEndedPage())
    if (!sameToken(csrfTokenOf(cookie), csrf)) return Effect.succeed(csrfRefusedPage())
    return guarded(request, options, body)
  }

  /**
   * The CSRF token of a signed-out form (sign-in, sign-up), bound to the browser's session cookie if it has one,
   * else to its signed-out cookie; `cookie` is a new signed-out cookie to set when the browser has neither.
   */
  /** What a signed-out form (and a sign-in waiting for its second factor) is bound to: the browser's cookie. */
  const browserBinding = (request: HttpServerRequest.HttpServerRequest) =>
    cookieOf(request, SESSION_COOKIE) ?? cookieOf(request, SIGNED_OUT_COOKIE)

  const signedOutCsrf = (request: HttpServerRequest.HttpServerRequest) => {
    const binding = browserBinding(request)
    const cookie = binding === undefined ? randomBytes(24).toString("base64url") : undefined
    return { token: csrfTokenOf(binding ?? cookie!), cookie }
  }

  /** Whether a signed-out form's token is the one its browser's cookie gives. */
  const signedOutCsrfValid = (request: HttpServerRequest.HttpServerRequest, presented: string) => {
    const binding = browserBinding(request)
    return binding !== undefined && sameToken(csrfTokenOf(binding), presented)
  }

  /** Sets the signed-out cookie that `signedOutCsrf` made, if it made one. */
  const withSignedOutCookie = (response: HttpServerResponse.HttpServerResponse, cookie: string | undefined) =>
    cookie === undefined
      ? response
      : HttpServerResponse.unsafeSetCookie(response, SIGNED_OUT_COOKIE, cookie, cookieOptions)

  /**
   * A new session's cookie on `response`, and a new signed-out cookie, so that a token of a form shown before
   * sign-in is refused after it. A session the browser held before is revoked.
   */
  const startSession = (
    request: HttpServerRequest.HttpServerRequest,
    response: HttpServerResponse.HttpServerResponse,
    input: { readonly userId: string; readonly companyId: string; readonly sourceAddress: string }
  ) =>
    Effect.gen(function* () {
      const previous = cookieOf(request, SESSION_COOKIE)
      if (previous !== undefined) yield* sessions.revoke(previous)
      const cookie = yield* sessions.create(input)
      return HttpServerResponse.unsafeSetCookie(
        withSignedOutCookie(response, randomBytes(24).toString("base64url")),
        SESSION_COOKIE,
        cookie,
        { ...cookieOptions, maxAge: Duration.hours(dashboardSessionLifetimes.absoluteHours) }
      )
    })

  /** Clears the session cookie on `response` (the row is revoked by `signOut`). */
  const endSession = (response: HttpServerResponse.HttpServerResponse) =>
    HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, "", { ...cookieOptions, maxAge: Duration.zero })

  /** Revokes the request's session, if any, and clears its cookie on `response`. */
  const signOut = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
    Effect.gen(function* () {
      const cookie = cookieOf(request, SESSION_COOKIE)
      if (cookie !== undefined) yield* sessions.revoke(cookie)
      return endSession(response)
    })

  /** A message for the next page the browser shows (set on a redirect). */
  const withFlash = (response: HttpServerResponse.HttpServerResponse, message: FlashMessage) =>
    HttpServerResponse.unsafeSetCookie(
      response,
      FLASH_COOKIE,
      Buffer.from(JSON.stringify(message)).toString("base64url"),
      { ...cookieOptions, maxAge: Duration.minutes(1) }
    )

  return {
    currentMember,
    page,
    form,
    signedOutCsrf,
    signedOutCsrfValid,
    browserBinding,
    withSignedOutCookie,
    startSession,
    signOut,
    withFlash,
    flashOf,
    clearFlash
  } as const
})

export type DashboardAuth = Effect.Effect.Success<typeof makeDashboardAuth>
