import type { DashboardSession } from "../../domain/company/Dashboard.js"
import type { TwoFactorEnrolment, TwoFactorStatus } from "../../domain/identity/TwoFactor.js"
import { Badge, ConfirmStep, CsrfField, EmptyState, Field, FormError, Table } from "./components.js"
import { dashboardPage, publicPage } from "./layout.js"
import type { CurrentMember } from "./session.js"

/**
 * The bodies of the account and security pages (docs/dashboard.md, "Account and security"); their handlers
 * are in AccountPagesLive.ts.
 */

const section = "/dashboard/account" as const

/** A time as the pages show it: to the minute, in UTC. */
const shownTime = (at: Date) => `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`

/** A base32 key in groups of four, as people copy it into an app by hand (apps ignore the spaces). */
const groupedKey = (secret: string) => secret.replace(/(.{4})(?=.)/g, "$1 ")

/** The QR code's SVG at a size a phone's camera reads, as an element of the page (not an image URL). */
const sizedQr = (svg: string) => svg.replace(/^<svg /, '<svg width="200" height="200" focusable="false" ')

export interface AccountState {
  readonly twoFactor: TwoFactorStatus
  /** The company requires two-factor sign-in of its members. */
  readonly companyRequires: boolean
  /** An enrolment was begun and not confirmed. */
  readonly enrolmentUnderWay: boolean
  readonly sessions: ReadonlyArray<DashboardSession>
  /** The member may change the company's security settings (`company:manage`). */
  readonly managesCompany: boolean
  /** The company-security form's problem, if it was refused. */
  readonly companyError?: string
}

const Sessions = ({ current, sessions }: { current: CurrentMember; sessions: ReadonlyArray<DashboardSession> }) => {
  const companyName = (companyId: string) =>
    current.memberships.find((m) => m.companyId === companyId)?.companyName ?? companyId
  return (
    <>
      <Table
        caption="Your signed-in sessions"
        columns={[
          {
            header: "Company",
            cell: (s: DashboardSession) => (
              <>
                {companyName(s.companyId)}{" "}
                {s.idHash === current.session.idHash ? <Badge tone="warning">This session</Badge> : null}
              </>
            )
          },
          { header: "Signed in", cell: (s: DashboardSession) => shownTime(s.createdAt) },
          { header: "Last active", cell: (s: DashboardSession) => shownTime(s.lastSeenAt) },
          { header: "From", cell: (s: DashboardSession) => <code>{s.sourceAddress}</code> }
        ]}
        rows={sessions}
        rowKey={(s) => s.idHash}
        links={{ path: section, params: {}, page: 1, hasNext: false }}
        empty={<EmptyState title="No sessions." />}
      />
      {sessions.length > 1 ? (
        <p>
          <a href="/dashboard/account/sessions/sign-out-others">Sign out other sessions</a>
        </p>
      ) : (
        <p class="hint">This is your only session.</p>
      )}
    </>
  )
}

export const accountPage = (current: CurrentMember, state: AccountState, status = 200) =>
  dashboardPage(
    "Account and security",
    current,
    <>
      <h1>Account and security</h1>
      <dl class="facts">
        <dt>E-mail</dt>
        <dd>{current.user.email}</dd>
        <dt>Role</dt>
        <dd>{current.member.role}</dd>
      </dl>

      <h2>Two-factor sign-in</h2>
      {state.twoFactor.enabled ? (
        <>
          <p>
            <Badge>On</Badge> Signing in asks for a code from your authenticator app after your password.{" "}
            {state.twoFactor.recoveryCodesLeft === 1
              ? "1 recovery code left."
              : `${state.twoFactor.recoveryCodesLeft} recovery codes left.`}
          </p>
          <ul>
            <li>
              <a href="/dashboard/account/recovery-codes">Make new recovery codes</a>
            </li>
            <li>
              <a href="/dashboard/account/two-factor/disable">Turn off two-factor sign-in</a>
            </li>
          </ul>
        </>
      ) : (
        <>
          {state.companyRequires ? (
            <FormError>
              {current.company.name} requires two-factor sign-in of every member: set it up to use the dashboard.
            </FormError>
          ) : null}
          <p>
            <Badge tone="warning">Off</Badge> Add a second step to signing in: a 6-digit code from an authenticator app
            on your phone (any app for time-based codes).
          </p>
          {state.enrolmentUnderWay ? (
            <p>
              <a href="/dashboard/account/two-factor">Continue setting up two-factor sign-in</a>
            </p>
          ) : null}
          <form method="post" action="/dashboard/account/two-factor/begin">
            <CsrfField token={current.csrf} />
            <button type="submit">
              {state.enrolmentUnderWay ? "Start again with a new key" : "Set up two-factor sign-in"}
            </button>
          </form>
        </>
      )}

      <h2>Sessions</h2>
      <Sessions current={current} sessions={state.sessions} />

      {state.managesCompany ? (
        <>
          <h2>Company security</h2>
          {state.companyError === undefined ? null : <FormError>{state.companyError}</FormError>}
          <form method="post" action="/dashboard/account/company-security">
            <CsrfField token={current.csrf} />
            <label htmlFor="requireTwoFactor">Require two-factor for every member</label>
            <p class="hint" id="requireTwoFactor-hint">
              A member without it is sent to set it up before any other page of {current.company.name}.
            </p>
            <select id="requireTwoFactor" name="requireTwoFactor" aria-describedby="requireTwoFactor-hint">
              <option value="no" selected={!state.companyRequires}>
                No: each member chooses
              </option>
              <option value="yes" selected={state.companyRequires}>
                Yes: required of every member
              </option>
            </select>
            <button type="submit">Save</button>
          </form>
        </>
      ) : null}
    </>,
    { section, status }
  )

export const enrolPage = (
  current: CurrentMember,
  enrolment: TwoFactorEnrolment,
  state: { readonly error?: string } = {},
  status = 200
) =>
  dashboardPage(
    "Set up two-factor sign-in",
    current,
    <>
      <h1>Set up two-factor sign-in</h1>
      <ol>
        <li>
          <p>In your authenticator app, add an account by scanning this QR code:</p>
          <div
            class="qr"
            role="img"
            aria-label="QR code of your two-factor key"
            // The QR code library's SVG of the key's URI: paths only, no text of the person's.
            dangerouslySetInnerHTML={{ __html: sizedQr(enrolment.qrSvg) }}
          />
          <p>
            Or enter this key by hand (time-based, 6 digits):{" "}
            <code id="two-factor-key">{groupedKey(enrolment.secret)}</code>
          </p>
          <p>
            On this phone? <a href={enrolment.otpauthUri}>Open the key in your authenticator app</a>.
          </p>
        </li>
        <li>
          <p>Enter the 6-digit code the app now shows for Ribbon.</p>
        </li>
      </ol>
      {state.error === undefined ? null : <FormError>{state.error}</FormError>}
      <form method="post" action="/dashboard/account/two-factor/confirm" noValidate>
        <CsrfField token={current.csrf} />
        <Field
          name="code"
          label="Code from the app"
          autocomplete="one-time-code"
          inputMode="numeric"
          maxLength={20}
          error={state.error}
        />
        <button type="submit">Turn on two-factor sign-in</button>
      </form>
      <p>
        <a href={section}>Cancel</a>
      </p>
    </>,
    { section, status, narrow: true }
  )

/** The recovery codes, the only time they are shown (the page, like every dashboard page, is never cached). */
export const recoveryCodesPage = (current: CurrentMember, codes: ReadonlyArray<string>, text: string) =>
  dashboardPage(
    "Your recovery codes",
    current,
    <>
      <h1>Your recovery codes</h1>
      <p>
        If you lose your phone, each of these codes signs you in once in place of a code from the app.{" "}
        <strong>Save them now, somewhere safe: they are not shown again.</strong>
      </p>
      <ol class="recovery-codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ol>
      <p>
        <a href={section}>I have saved them</a>
      </p>
    </>,
    { section, flash: { kind: "success", text }, narrow: true }
  )

const PasswordAgain = ({ error }: { readonly error?: string | undefined }) => (
  <Field
    name="password"
    label="Your password"
    type="password"
    autocomplete="current-password"
    hint="Asked again for this change."
    error={error}
  />
)

export const disablePage = (
  current: CurrentMember,
  state: { readonly companyRequires: boolean; readonly error?: string },
  status = 200
) =>
  dashboardPage(
    "Turn off two-factor sign-in",
    current,
    <ConfirmStep
      title="Turn off two-factor sign-in"
      action="/dashboard/account/two-factor/disable"
      csrf={current.csrf}
      inputs={<PasswordAgain error={state.error} />}
      confirmLabel="Turn off two-factor sign-in"
      cancelHref={section}
    >
      <p>Signing in will ask only for your password. Your key and your recovery codes stop working.</p>
      {state.companyRequires ? (
        <p>{current.company.name} requires two-factor sign-in: you will be asked to set it up again at once.</p>
      ) : null}
    </ConfirmStep>,
    { section, status, narrow: true }
  )

export const regeneratePage = (current: CurrentMember, state: { readonly error?: string } = {}, status = 200) =>
  dashboardPage(
    "Make new recovery codes",
    current,
    <ConfirmStep
      title="Make new recovery codes"
      action="/dashboard/account/recovery-codes"
      csrf={current.csrf}
      inputs={<PasswordAgain error={state.error} />}
      confirmLabel="Make new recovery codes"
      cancelHref={section}
    >
      <p>You get ten new codes; every code you have now stops working.</p>
    </ConfirmStep>,
    { section, status, narrow: true }
  )

export const signOutOthersPage = (current: CurrentMember, others: number) =>
  dashboardPage(
    "Sign out other sessions",
    current,
    <ConfirmStep
      title="Sign out other sessions"
      action="/dashboard/account/sessions/sign-out-others"
      csrf={current.csrf}
      confirmLabel="Sign out other sessions"
      cancelHref={section}
    >
      <p>
        {others === 1 ? "Your 1 other session ends" : `Your ${others} other sessions end`}, in every company, on every
        device; this one stays signed in.
      </p>
    </ConfirmStep>,
    { section, narrow: true }
  )

export interface SecondStepState {
  readonly csrf: string
  readonly error?: string
}

/** The second step of a sign-in, before any session. */
export const secondStepPage = (state: SecondStepState, status = 200) =>
  publicPage(
    "Two-factor sign-in",
    <>
      <h1>Two-factor sign-in</h1>
      <p>Enter the 6-digit code your authenticator app shows for Ribbon, or one of your recovery codes.</p>
      <form method="post" action="/dashboard/sign-in/two-factor" noValidate>
        <CsrfField token={state.csrf} />
        <Field
          name="code"
          label="Code"
          autocomplete="one-time-code"
          maxLength={40}
          hint="A recovery code looks like xxxx-xxxx-xxxx."
          error={state.error}
        />
        <button type="submit">Sign in</button>
      </form>
      <p>
        <a href="/dashboard/sign-in">Start again</a>
      </p>
    </>,
    { status }
  )
