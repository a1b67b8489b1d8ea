import { HttpServerResponse } from "@effect/platform"
import type { Environment } from "../../domain/company/Company.js"
import { CsrfField, Field, FormError } from "./components.js"
import { dashboardPage, publicPage } from "./layout.js"
import type { CurrentMember } from "./session.js"

/**
 * The dashboard's own pages: sign-up, sign-in, and the refusals (403, 404, an expired form, a
 * session that ended); the home is homeViews.tsx. Other sections add their pages beside these (see src/http/dashboard/session.ts).
 */

/** A sign-up form's values and its problems by field (`email`, `password`, `companyName`). */
export interface SignUpState {
  readonly csrf: string
  readonly email?: string
  readonly companyName?: string
  readonly errors?: Readonly<Record<string, string>>
  /** A problem with the whole form. */
  readonly error?: string
}

export const signUpPage = (state: SignUpState, status = 200) =>
  publicPage(
    "Create your company",
    <>
      <h1>Create your company</h1>
      <p>Start in the sandbox: a test account with test money, so you can try every operation before going live.</p>
      {state.errors === undefined && state.error === undefined ? null : (
        <FormError>
          {state.error ?? "Please correct the fields marked below."}
          {state.errors?.email === emailTaken ? (
            <>
              {" "}
              <a href="/dashboard/sign-in">Sign in</a>
            </>
          ) : null}
        </FormError>
      )}
      <form method="post" action="/dashboard/sign-up" noValidate>
        <CsrfField token={state.csrf} />
        <Field
          name="email"
          label="Email"
          type="email"
          autocomplete="email"
          value={state.email}
          error={state.errors?.email}
        />
        <Field
          name="password"
          label="Password"
          type="password"
          autocomplete="new-password"
          hint="At least 8 characters; not a common password."
          error={state.errors?.password}
        />
        <Field
          name="companyName"
          label="Company name"
          autocomplete="organization"
          value={state.companyName}
          error={state.errors?.companyName}
        />
        <button type="submit">Create company</button>
      </form>
      <p>
        Already registered? <a href="/dashboard/sign-in">Sign in</a>.
      </p>
    </>,
    { status }
  )

/** What the sign-up form says of an e-mail already registered: no more than that. */
export const emailTaken = "This e-mail is already registered. Sign in instead."

export interface SignInState {
  readonly csrf: string
  readonly email?: string
  readonly error?: string
  readonly flash?: import("./components.js").FlashMessage | undefined
}

export const signInPage = (state: SignInState, status = 200) =>
  publicPage(
    "Sign in",
    <>
      <h1>Sign in to your company</h1>
      {state.error === undefined ? null : <FormError>{state.error}</FormError>}
      <form method="post" action="/dashboard/sign-in" noValidate>
        <CsrfField token={state.csrf} />
        <Field name="email" label="Email" type="email" autocomplete="username" value={state.email} />
        <Field name="password" label="Password" type="password" autocomplete="current-password" />
        <button type="submit">Sign in</button>
      </form>
      <p>
        New to Ribbon? <a href="/dashboard/sign-up">Create your company</a>.
      </p>
    </>,
    { status, flash: state.flash }
  )

export const environmentNames: Readonly<Record<Environment, string>> = { test: "Test (sandbox)", live: "Live" }

/** The member's role does not allow this page or action. */
export const forbiddenPage = (current: CurrentMember): HttpServerResponse.HttpServerResponse =>
  dashboardPage(
    "Not allowed",
    current,
    <>
      <h1>Not allowed</h1>
      <p>
        Your role in {current.company.name} ({current.member.role}) does not allow this. An owner or an admin of the
        company can change your role.
      </p>
      <p>
        <a href="/dashboard">Back to the dashboard home</a>
      </p>
    </>,
    { status: 403 }
  )

/** No such dashboard page, or nothing of that id in the member's company. */
export const notFoundPage = (current: CurrentMember): HttpServerResponse.HttpServerResponse =>
  dashboardPage(
    "Not found",
    current,
    <>
      <h1>Not found</h1>
      <p>There is no such page in {current.company.name}'s dashboard.</p>
      <p>
        <a href="/dashboard">Back to the dashboard home</a>
      </p>
    </>,
    { status: 404 }
  )

/** A form whose CSRF token is missing or not this browser's: nothing was done. */
export const csrfRefusedPage = () =>
  publicPage(
    "Form expired",
    <>
      <h1>This form has expired</h1>
      <p>It was not sent from this browser's dashboard page, or the page is too old. Nothing was changed.</p>
      <p>
        <a href="/dashboard">Go back to the dashboard</a> and try again.
      </p>
    </>,
    { status: 403 }
  )

/** A form sent without a live session (signed out, expired, revoked): nothing was done. */
export const sessionEndedPage = () =>
  publicPage(
    "Signed out",
    <>
      <h1>You are signed out</h1>
      <p>Your session has ended, so nothing was changed.</p>
      <p>
        <a href="/dashboard/sign-in">Sign in again</a>
      </p>
    </>,
    { status: 403 }
  )

/** Too many sign-in attempts from this address or for this account: the 429 page with its `Retry-After`. */
export const tooManyAttemptsPage = (retryAfterSeconds: number) =>
  HttpServerResponse.setHeader(
    publicPage(
      "Too many attempts",
      <>
        <h1>Too many attempts</h1>
        <p>Wait {retryAfterSeconds} seconds, then try again.</p>
        <p>
          <a href="/dashboard/sign-in">Back to sign-in</a>
        </p>
      </>,
      { status: 429 }
    ),
    "retry-after",
    String(retryAfterSeconds)
  )

/** Whether a request path is the dashboard's (its failures are rendered as pages, not JSON). */
export const isDashboardPath = (path: string) => path === "/dashboard" || /^\/dashboard[/?]/.test(path)

/**
 * A failure no page handled (a body too large, a form sent as JSON, the database unavailable, a defect): the
 * status and the message as a page (a 500's request id is in its `X-Request-Id` header).
 */
export const dashboardErrorPage = (status: number, message: string) =>
  publicPage(
    status >= 500 ? "Something went wrong" : "Request refused",
    <>
      <h1>{status >= 500 ? "Something went wrong" : "This request was refused"}</h1>
      <p>{message}</p>
      <p>
        <a href="/dashboard">Back to the dashboard</a>
      </p>
    </>,
    { status }
  )
