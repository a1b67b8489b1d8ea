import type { ComponentChildren } from "preact"
import type { AccountsAccess, Environment } from "../../domain/company/Company.js"
import { type Invitation, type Member, type Role, roleDescriptions } from "../../domain/company/Members.js"
import type { InvitationDetails } from "../../services/company/Members.js"
import { Badge, ConfirmStep, CsrfField, EmptyState, Field, type FlashMessage, FormError, Table } from "./components.js"
import { dashboardPage, publicPage } from "./layout.js"
import type { CurrentMember } from "./session.js"

/**
 * The bodies of the Members pages and of an invitation's page (handlers in MembersPagesLive.tsx).
 */

/** An account a member may be given, as the pickers show it. */
export interface AccountChoice {
  readonly id: string
  readonly name: string
  readonly environment: Environment
}

/** What a role or accounts form sent, and its problems by field (`email`, `role`, `accounts`, `form`). */
export interface FormState {
  readonly email?: string
  readonly role?: string
  readonly accountsAccess?: AccountsAccess
  readonly errors?: Readonly<Record<string, string>>
}

const environmentNames: Readonly<Record<Environment, string>> = { test: "test", live: "live" }

/** A moment as the dashboard writes it: `2026-05-01 14:03 UTC`. */
export const formatMoment = (at: Date) => `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`

const nameOf = (member: Pick<Member, "displayName" | "email">) => member.displayName ?? member.email

const membersPath = "/dashboard/members"
const memberPath = (userId: string) => `${membersPath}/${encodeURIComponent(userId)}`
const noPages = { path: membersPath, params: {}, page: 1, hasNext: false } as const

/** "All accounts", or the names of the accounts given (an id when the account is not among `accounts`). */
const AccountsText = (props: { readonly access: AccountsAccess; readonly accounts: ReadonlyArray<AccountChoice> }) => {
  if (props.access.scope === "all-accounts") return <>All accounts</>
  if (props.access.ids.length === 0) return <>No accounts</>
  const names = props.access.ids.map((id) => {
    const account = props.accounts.find((a) => a.id === id)
    return account === undefined ? id : `${account.name} (${environmentNames[account.environment]})`
  })
  return <>{names.join(", ")}</>
}

/** A group of radio buttons or checkboxes with its legend and its error (tied to it for screen readers). */
const Choices = (props: {
  readonly id: string
  readonly legend: string
  readonly error?: string | undefined
  readonly children: ComponentChildren
}) => (
  <fieldset
    class={props.error === undefined ? "choices" : "choices invalid"}
    aria-describedby={props.error === undefined ? undefined : `${props.id}-error`}
  >
    <legend>{props.legend}</legend>
    {props.children}
    {props.error === undefined ? null : (
      <p class="field-error" id={`${props.id}-error`}>
        {props.error}
      </p>
    )}
  </fieldset>
)

/**
 * The roles to pick from, each with what it is for. A select rather than radio buttons: typing a role's first
 * letter picks it, so the keyboard alone needs no arrow keys.
 */
const RoleSelect = (props: {
  readonly idPrefix: string
  readonly roles: ReadonlyArray<Role>
  readonly selected: string | undefined
  readonly error?: string | undefined
}) => {
  const id = `${props.idPrefix}role`
  return (
    <div class={props.error === undefined ? "field" : "field invalid"}>
      <label htmlFor={id}>Role</label>
      <select
        id={id}
        name="role"
        aria-invalid={props.error === undefined ? undefined : "true"}
        aria-describedby={props.error === undefined ? undefined : `${id}-error`}
      >
        {props.roles.map((role) => (
          <option value={role} selected={role === props.selected} key={role}>
            {role}: {roleDescriptions[role]}
          </option>
        ))}
      </select>
      {props.error === undefined ? null : (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  )
}

/** All of the company's accounts, or some of them (checkboxes). */
const AccountsChoices = (props: {
  readonly idPrefix: string
  readonly accounts: ReadonlyArray<AccountChoice>
  readonly access: AccountsAccess
  readonly error?: string | undefined
}) => {
  const selected = props.access.scope === "selected-accounts"
  return (
    <Choices id={`${props.idPrefix}accounts`} legend="Accounts" error={props.error}>
      <label class="choice">
        <input type="radio" name="accounts" value="all" id={`${props.idPrefix}accounts-all`} checked={!selected} />
        <span>All accounts, including those made later</span>
      </label>
      <label class="choice">
        <input
          type="radio"
          name="accounts"
          value="selected"
          id={`${props.idPrefix}accounts-selected`}
          checked={selected}
        />
        <span>Only the accounts ticked below</span>
      </label>
      {props.accounts.length === 0 ? (
        <p class="hint">You reach no account to pick.</p>
      ) : (
        <ul class="picks">
          {props.accounts.map((account) => (
            <li key={account.id}>
              <label class="choice">
                <input
                  type="checkbox"
                  name="accountIds"
                  value={account.id}
                  id={`${props.idPrefix}account-${account.id}`}
                  checked={selected && props.access.ids.includes(account.id)}
                />
                <span>
                  {account.name} <Badge>{environmentNames[account.environment]}</Badge>
                </span>
              </label>
            </li>
          ))}
        </ul>
      )}
    </Choices>
  )
}

export interface MembersState {
  readonly members: ReadonlyArray<Member>
  readonly invitations: ReadonlyArray<Invitation>
  /** The accounts the signed-in member reaches (what it may give). */
  readonly accounts: ReadonlyArray<AccountChoice>
  /** The roles the signed-in member may give. */
  readonly roles: ReadonlyArray<Role>
  readonly invite?: FormState
  readonly status?: number
  /** A message replacing the request's flash (a refusal). */
  readonly flash?: FlashMessage
}

/** The members, the pending invitations and the invitation form. */
export const membersPage = (current: CurrentMember, state: MembersState) => {
  const invite = state.invite ?? {}
  const errors = invite.errors ?? {}
  const inviterName = (userId: string) => {
    const inviter = state.members.find((m) => m.userId === userId)
    return inviter === undefined ? "A former member" : nameOf(inviter)
  }
  return dashboardPage(
    "Members",
    current,
    <>
      <h1>Members</h1>
      <Table
        caption={`The people of ${current.company.name}`}
        columns={[
          {
            header: "Name",
            cell: (member: Member) => (
              <>
                <a href={memberPath(member.userId)}>{nameOf(member)}</a>
                {member.userId === current.member.userId ? " (you)" : null}
              </>
            )
          },
          { header: "E-mail", cell: (member: Member) => member.email },
          { header: "Role", cell: (member: Member) => <Badge>{member.role}</Badge> },
          {
            header: "Accounts",
            cell: (member: Member) => <AccountsText access={member.accountsAccess} accounts={state.accounts} />
          }
        ]}
        rows={state.members}
        rowKey={(member) => member.userId}
        links={noPages}
        empty={<EmptyState title="No members." />}
      />
      <h2>Pending invitations</h2>
      <Table
        caption="Invitations not yet accepted"
        columns={[
          { header: "E-mail", cell: (invitation: Invitation) => invitation.email },
          { header: "Role", cell: (invitation: Invitation) => <Badge>{invitation.role}</Badge> },
          {
            header: "Accounts",
            cell: (invitation: Invitation) => (
              <AccountsText access={invitation.accountsAccess} accounts={state.accounts} />
            )
          },
          { header: "Invited by", cell: (invitation: Invitation) => inviterName(invitation.invitedBy) },
          { header: "Valid until", cell: (invitation: Invitation) => formatMoment(invitation.expiresAt) },
          {
            header: "Action",
            cell: (invitation: Invitation) => (
              <form method="post" action={`${membersPath}/invitations/${invitation.id}/revoke`} class="inline">
                <CsrfField token={current.csrf} />
                <button type="submit" class="secondary" aria-label={`Withdraw the invitation to ${invitation.email}`}>
                  Withdraw
                </button>
              </form>
            )
          }
        ]}
        rows={state.invitations}
        rowKey={(invitation) => invitation.id}
        links={noPages}
        empty={<EmptyState title="No pending invitations." />}
      />
      <h2 id="invite-heading">Invite a member</h2>
      <p>
        The person gets an e-mail with a link valid 7 days; accepting it signs them in, or lets them create their
        password. Inviting the same e-mail again replaces the invitation.
      </p>
      {errors.form === undefined ? null : <FormError>{errors.form}</FormError>}
      <form method="post" action={`${membersPath}/invitations`} noValidate aria-labelledby="invite-heading">
        <CsrfField token={current.csrf} />
        <Field
          name="email"
          label="E-mail"
          type="email"
          autocomplete="off"
          value={invite.email}
          error={errors.email}
          maxLength={254}
        />
        <RoleSelect idPrefix="invite-" roles={state.roles} selected={invite.role ?? "viewer"} error={errors.role} />
        <AccountsChoices
          idPrefix="invite-"
          accounts={state.accounts}
          access={invite.accountsAccess ?? current.member.accountsAccess}
          error={errors.accounts}
        />
        <button type="submit">Send invitation</button>
      </form>
      <p>
        <a href={`${membersPath}/leave`}>Leave {current.company.name}</a>
      </p>
    </>,
    {
      section: membersPath,
      ...(state.status === undefined ? {} : { status: state.status }),
      ...(state.flash === undefined ? {} : { flash: state.flash })
    }
  )
}

export interface MemberState {
  readonly member: Member
  readonly accounts: ReadonlyArray<AccountChoice>
  readonly roles: ReadonlyArray<Role>
  /** Why the signed-in member may not change this one (the Policy's words), if it may not. */
  readonly refusal?: string | undefined
  readonly role?: FormState
  readonly limit?: FormState
  readonly status?: number
  readonly flash?: FlashMessage
}

/** One member: its role and accounts, the forms that change them, and the links to remove it or make it owner. */
export const memberPage = (current: CurrentMember, state: MemberState) => {
  const { member } = state
  const self = member.userId === current.member.userId
  const roleErrors = state.role?.errors ?? {}
  const limitErrors = state.limit?.errors ?? {}
  return dashboardPage(
    nameOf(member),
    current,
    <>
      <p>
        <a href={membersPath}>All members</a>
      </p>
      <h1>{nameOf(member)}</h1>
      <dl class="facts">
        <dt>E-mail</dt>
        <dd>{member.email}</dd>
        <dt>Role</dt>
        <dd>
          {member.role}: {roleDescriptions[member.role]}
        </dd>
        <dt>Accounts</dt>
        <dd>
          <AccountsText access={member.accountsAccess} accounts={state.accounts} />
        </dd>
        <dt>Member since</dt>
        <dd>{formatMoment(member.createdAt)}</dd>
      </dl>
      {self ? <p>This is you.</p> : null}
      {state.refusal === undefined ? (
        <>
          <h2 id="role-heading">Change the role</h2>
          {roleErrors.form === undefined ? null : <FormError>{roleErrors.form}</FormError>}
          <form method="post" action={`${memberPath(member.userId)}/role`} aria-labelledby="role-heading">
            <CsrfField token={current.csrf} />
            <RoleSelect
              idPrefix="change-"
              roles={state.roles.includes(member.role) ? state.roles : [member.role, ...state.roles]}
              selected={state.role?.role ?? member.role}
              error={roleErrors.role}
            />
            <button type="submit">Change role</button>
          </form>
          <h2 id="accounts-heading">Accounts reached</h2>
          {member.role === "owner" ? (
            <p>An owner reaches every account.</p>
          ) : (
            <>
              {limitErrors.form === undefined ? null : <FormError>{limitErrors.form}</FormError>}
              <form method="post" action={`${memberPath(member.userId)}/accounts`} aria-labelledby="accounts-heading">
                <CsrfField token={current.csrf} />
                <AccountsChoices
                  idPrefix="limit-"
                  accounts={state.accounts}
                  access={state.limit?.accountsAccess ?? member.accountsAccess}
                  error={limitErrors.accounts}
                />
                <button type="submit">Save accounts</button>
              </form>
            </>
          )}
        </>
      ) : (
        <p>{state.refusal}</p>
      )}
      <h2>Membership</h2>
      <ul>
        {self ? (
          <li>
            <a href={`${membersPath}/leave`}>Leave {current.company.name}</a>
          </li>
        ) : (
          <>
            {state.refusal === undefined ? (
              <li>
                <a href={`${memberPath(member.userId)}/remove`}>Remove {nameOf(member)} from the company</a>
              </li>
            ) : null}
            {current.grant.rights.includes("company:manage") && member.role !== "owner" ? (
              <li>
                <a href={`${memberPath(member.userId)}/transfer`}>Transfer ownership to {nameOf(member)}</a>
              </li>
            ) : null}
          </>
        )}
      </ul>
    </>,
    {
      section: membersPath,
      ...(state.status === undefined ? {} : { status: state.status }),
      ...(state.flash === undefined ? {} : { flash: state.flash })
    }
  )
}

/** A confirm step's page, with the refusal of a first attempt when there was one. */
const confirmPage = (
  title: string,
  current: CurrentMember,
  body: ComponentChildren,
  options: { readonly error?: { readonly message: string; readonly status: number } | undefined }
) =>
  dashboardPage(title, current, body, {
    section: membersPath,
    narrow: true,
    ...(options.error === undefined
      ? {}
      : { status: options.error.status, flash: { kind: "error", text: options.error.message } })
  })

export const removePage = (
  current: CurrentMember,
  member: Member,
  error?: { readonly message: string; readonly status: number }
) =>
  confirmPage(
    `Remove ${nameOf(member)}`,
    current,
    <ConfirmStep
      title={`Remove ${nameOf(member)} from ${current.company.name}?`}
      action={`${memberPath(member.userId)}/remove`}
      csrf={current.csrf}
      confirmLabel={`Remove ${nameOf(member)}`}
      cancelHref={memberPath(member.userId)}
    >
      <p>
        {nameOf(member)} ({member.email}) loses access to {current.company.name} at once: their dashboard sessions in it
        end. They can be invited again later.
      </p>
    </ConfirmStep>,
    { error }
  )

export const transferPage = (
  current: CurrentMember,
  member: Member,
  error?: { readonly message: string; readonly status: number }
) =>
  confirmPage(
    "Transfer ownership",
    current,
    <ConfirmStep
      title={`Make ${nameOf(member)} the owner of ${current.company.name}?`}
      action={`${memberPath(member.userId)}/transfer`}
      csrf={current.csrf}
      confirmLabel="Transfer ownership"
      cancelHref={memberPath(member.userId)}
    >
      <p>
        {nameOf(member)} becomes an owner, reaching every account. You become an admin: you can no longer manage owners,
        transfer ownership or change the company's security settings.
      </p>
    </ConfirmStep>,
    { error }
  )

export const leavePage = (current: CurrentMember, error?: { readonly message: string; readonly status: number }) =>
  confirmPage(
    `Leave ${current.company.name}`,
    current,
    <ConfirmStep
      title={`Leave ${current.company.name}?`}
      action={`${membersPath}/leave`}
      csrf={current.csrf}
      confirmLabel={`Leave ${current.company.name}`}
      cancelHref="/dashboard"
    >
      <p>
        You lose access to {current.company.name} at once and are signed out of it. To come back you need a new
        invitation. The company's last owner cannot leave: make another member owner first.
      </p>
    </ConfirmStep>,
    { error }
  )

/** What an invitation offers: the company, who invites, the role, the accounts, until when. */
const InvitationFacts = ({ invitation }: { readonly invitation: InvitationDetails }) => (
  <dl class="facts">
    <dt>Company</dt>
    <dd>{invitation.companyName}</dd>
    <dt>Invited by</dt>
    <dd>{invitation.inviterName}</dd>
    <dt>Role</dt>
    <dd>
      {invitation.role}: {roleDescriptions[invitation.role]}
    </dd>
    <dt>Accounts</dt>
    <dd>
      {invitation.accountsAccess.scope === "all-accounts"
        ? "All of the company's accounts"
        : `${invitation.accountsAccess.ids.length} of the company's accounts`}
    </dd>
    <dt>For</dt>
    <dd>{invitation.email}</dd>
    <dt>Valid until</dt>
    <dd>{formatMoment(invitation.expiresAt)}</dd>
  </dl>
)

const invitationPath = (token: string) => `/dashboard/invitations/${encodeURIComponent(token)}`

/** The invitation for the person signed in: accept it. */
export const acceptInvitationPage = (current: CurrentMember, token: string, invitation: InvitationDetails) =>
  dashboardPage(
    "Invitation",
    current,
    <>
      <h1>Join {invitation.companyName}</h1>
      <InvitationFacts invitation={invitation} />
      <form method="post" action={`${invitationPath(token)}/accept`}>
        <CsrfField token={current.csrf} />
        <button type="submit">Accept and join {invitation.companyName}</button>
      </form>
    </>,
    { narrow: true }
  )

/** Signed in as someone the invitation was not sent to. */
export const wrongPersonPage = (current: CurrentMember, invitation: InvitationDetails) =>
  dashboardPage(
    "Invitation for someone else",
    current,
    <>
      <h1>This invitation is for someone else</h1>
      <p>
        It was sent to {invitation.email}, and you are signed in as {current.user.email}. Sign out, then open the
        invitation's link again to accept it as {invitation.email}.
      </p>
      <form method="post" action="/dashboard/sign-out">
        <CsrfField token={current.csrf} />
        <button type="submit">Sign out</button>
      </form>
    </>,
    { narrow: true, status: 403 }
  )

export interface SignedOutInvitationState {
  readonly csrf: string
  readonly token: string
  readonly invitation: InvitationDetails
  readonly displayName?: string
  /** Problems by field: `password` (sign-in), `displayName`, `newPassword` (a new account), `join` (the whole form). */
  readonly errors?: Readonly<Record<string, string>>
  readonly status?: number
}

/** The invitation for someone not signed in: sign in to accept, or create a password and join. */
export const signedOutInvitationPage = (state: SignedOutInvitationState) => {
  const errors = state.errors ?? {}
  return publicPage(
    `Join ${state.invitation.companyName}`,
    <>
      <h1>Join {state.invitation.companyName}</h1>
      <InvitationFacts invitation={state.invitation} />
      <h2 id="existing">Already have a Ribbon account?</h2>
      <form method="post" action={`${invitationPath(state.token)}/sign-in`} noValidate aria-labelledby="existing">
        <CsrfField token={state.csrf} />
        <p>Sign in as {state.invitation.email} to accept.</p>
        <Field
          name="password"
          label="Password"
          type="password"
          autocomplete="current-password"
          error={errors.password}
        />
        <button type="submit">Sign in and accept</button>
      </form>
      <h2 id="new">New to Ribbon?</h2>
      {errors.join === undefined ? null : <FormError>{errors.join}</FormError>}
      <form method="post" action={`${invitationPath(state.token)}/join`} noValidate aria-labelledby="new">
        <CsrfField token={state.csrf} />
        <p>Create your account for {state.invitation.email}.</p>
        <Field
          name="displayName"
          label="Your name"
          required={false}
          autocomplete="name"
          value={state.displayName}
          error={errors.displayName}
          maxLength={80}
        />
        <Field
          name="newPassword"
          label="Choose a password"
          type="password"
          autocomplete="new-password"
          hint="At least 8 characters; not a common password."
          error={errors.newPassword}
        />
        <button type="submit">Create account and join</button>
      </form>
    </>,
    { status: state.status ?? 200 }
  )
}

/** An invitation that cannot be used (unknown, expired, withdrawn, already accepted), and why. */
export const unusableInvitationPage = (message: string, status: number) =>
  publicPage(
    "Invitation not valid",
    <>
      <h1>This invitation cannot be used</h1>
      <p>{message}</p>
      <p>
        <a href="/dashboard">Go to the dashboard</a>
      </p>
    </>,
    { status }
  )
