import {
  type Account,
  type ApiKeyRecord,
  type Environment,
  expirationChoices,
  type Permission,
  permissionDescriptions,
  permissions
} from "../../domain/company/Company.js"
import { maxActiveKeys } from "../../services/company/KeyStore.js"
import {
  Badge,
  ConfirmStep,
  CsrfField,
  copySecretScript,
  EmptyState,
  Field,
  FilterForm,
  FormError,
  type PageLinks,
  Table
} from "./components.js"
import { dashboardPage } from "./layout.js"
import { environmentNames } from "./pages.js"
import type { CurrentMember } from "./session.js"

/**
 * The API keys section's pages (docs/dashboard.md, "API keys"): the list, the creation form, the page showing a
 * new key once, and revocation's confirm step. The handlers are in ApiKeysPagesLive.ts.
 */

const section = "/dashboard/api-keys"

/** A moment as the pages show it: to the minute, in UTC. */
const Moment = ({ date }: { readonly date: Date }) => (
  <time dateTime={date.toISOString()}>{`${date.toISOString().slice(0, 16).replace("T", " ")} UTC`}</time>
)

/** A day as the pages show it (UTC). */
const Day = ({ date }: { readonly date: Date }) => (
  <time dateTime={date.toISOString()}>{date.toISOString().slice(0, 10)}</time>
)

/** What the list and the pages show of a key's value: its first characters, never more. */
const Prefix = ({ keyRecord }: { readonly keyRecord: ApiKeyRecord }) =>
  keyRecord.prefix === null ? <span class="hint">not kept</span> : <code>{keyRecord.prefix}…</code>

/** A key's accounts: all of them, or the selected ones by name where the member reaches them (else by id). */
const AccountsOf = (props: { readonly keyRecord: ApiKeyRecord; readonly names: ReadonlyMap<string, string> }) =>
  props.keyRecord.accountsAccess.scope === "all-accounts" ? (
    <>All accounts</>
  ) : props.keyRecord.accountsAccess.ids.length === 0 ? (
    <>None</>
  ) : (
    <ul class="plain">
      {props.keyRecord.accountsAccess.ids.map((id) => (
        <li key={id}>{props.names.get(id) ?? <code>{id}</code>}</li>
      ))}
    </ul>
  )

/** A key's permissions, folded (a key may hold all 22), each with what it allows. */
const PermissionsOf = ({ keyRecord }: { readonly keyRecord: ApiKeyRecord }) =>
  keyRecord.permissions.length === 0 ? (
    <>None (manages keys and webhooks only)</>
  ) : (
    <details>
      <summary>
        {keyRecord.permissions.length} permission{keyRecord.permissions.length === 1 ? "" : "s"}
      </summary>
      <ul class="plain">
        {keyRecord.permissions.map((permission) => (
          <li key={permission}>
            <code>{permission}</code>
          </li>
        ))}
      </ul>
    </details>
  )

export interface KeyListState {
  readonly environment: Environment
  readonly keys: ReadonlyArray<ApiKeyRecord>
  readonly accountNames: ReadonlyMap<string, string>
  readonly links: PageLinks
  readonly now: number
}

export const keyListPage = (current: CurrentMember, state: KeyListState) =>
  dashboardPage(
    "API keys",
    current,
    <>
      <h1>API keys</h1>
      <p>
        Programs call the company API with a key in the <code>X-Api-Key</code> header. A key works in one environment,
        with the permissions and accounts it was given. A company has at most {maxActiveKeys} active keys.
      </p>
      {current.company.live ? (
        <FilterForm
          path={section}
          fields={[
            {
              name: "environment",
              label: "Environment",
              value: state.environment,
              options: [
                ["test", environmentNames.test],
                ["live", environmentNames.live]
              ]
            }
          ]}
        />
      ) : null}
      <p>
        <a class="button" href={`${section}/new?environment=${state.environment}`}>
          Create a {state.environment} key
        </a>
      </p>
      <Table
        caption={`${environmentNames[state.environment]} keys`}
        columns={[
          { header: "Name", cell: (key: ApiKeyRecord) => key.name },
          { header: "Key", cell: (key: ApiKeyRecord) => <Prefix keyRecord={key} /> },
          { header: "Permissions", cell: (key: ApiKeyRecord) => <PermissionsOf keyRecord={key} /> },
          {
            header: "Accounts",
            cell: (key: ApiKeyRecord) => <AccountsOf keyRecord={key} names={state.accountNames} />
          },
          { header: "Created", cell: (key: ApiKeyRecord) => <Day date={key.createdAt} /> },
          {
            header: "Expires",
            cell: (key: ApiKeyRecord) =>
              key.expiresAt.getTime() <= state.now ? (
                <Badge tone="warning">
                  Expired <Day date={key.expiresAt} />
                </Badge>
              ) : (
                <Day date={key.expiresAt} />
              )
          },
          {
            header: "Last used",
            cell: (key: ApiKeyRecord) => (key.lastUsedAt === null ? "Never" : <Moment date={key.lastUsedAt} />)
          },
          {
            header: "Actions",
            cell: (key: ApiKeyRecord) => (
              <a href={`${section}/${key.id}/revoke`} aria-label={`Revoke ${key.name}`}>
                Revoke
              </a>
            )
          }
        ]}
        rows={state.keys}
        rowKey={(key) => key.id}
        links={state.links}
        empty={
          <EmptyState title={`No ${state.environment} keys yet.`}>
            <p>Create one to call the company API from a program.</p>
          </EmptyState>
        }
      />
    </>,
    { section }
  )

/** The creation form's values, as sent (so a refused form comes back as it was filled). */
export interface KeyFormValues {
  readonly environment: Environment
  readonly name: string
  readonly expirationInDays: string
  readonly permissions: ReadonlyArray<string>
  readonly accounts: "all" | "selected"
  readonly accountIds: ReadonlyArray<string>
  readonly enforceMtls: boolean
}

export const emptyKeyForm = (environment: Environment): KeyFormValues => ({
  environment,
  name: "",
  expirationInDays: "90",
  permissions: [],
  accounts: "all",
  accountIds: [],
  enforceMtls: false
})

/** The creation form's problems by field; `form` for the whole form. */
export type KeyFormErrors = Readonly<
  Partial<Record<"name" | "expirationInDays" | "permissions" | "accounts" | "form", string>>
>

export interface KeyFormState {
  readonly values: KeyFormValues
  readonly errors: KeyFormErrors
  /** The accounts of the environment the member reaches, to pick from (the first page of them, by name). */
  readonly accounts: ReadonlyArray<Account>
  readonly moreAccounts: boolean
}

const idOf = (prefix: string, value: string) => `${prefix}-${value.replace(/[^a-zA-Z0-9]+/g, "-")}`

/** A fieldset's problem, under its legend, tied to the group for screen readers. */
const GroupError = ({ id, error }: { readonly id: string; readonly error: string | undefined }) =>
  error === undefined ? null : (
    <p class="field-error" id={id}>
      {error}
    </p>
  )

export const keyFormPage = (current: CurrentMember, state: KeyFormState, status = 200) => {
  const { values, errors } = state
  const held = current.grant.permissions
  const reachesAll = current.grant.accountsAccess.scope === "all-accounts"
  // A member limited to some accounts gives keys only some of them.
  const accountsChoice = reachesAll ? values.accounts : "selected"
  const hasErrors = Object.keys(errors).length > 0
  return dashboardPage(
    "Create an API key",
    current,
    <>
      <h1>Create a {values.environment} API key</h1>
      {hasErrors ? (
        <FormError>{errors.form ?? "The key was not created: please correct the fields marked below."}</FormError>
      ) : null}
      <form method="post" action={section} noValidate>
        <CsrfField token={current.csrf} />
        <input type="hidden" name="environment" value={values.environment} />
        <dl class="facts">
          <dt>Environment</dt>
          <dd>{environmentNames[values.environment]}</dd>
        </dl>
        <Field
          name="name"
          label="Name"
          hint="Unique among the company's keys, at most 100 characters: say what uses it."
          value={values.name}
          error={errors.name}
          maxLength={100}
          autocomplete="off"
        />
        <div class={errors.expirationInDays === undefined ? "field" : "field invalid"}>
          <label htmlFor="expirationInDays">Expires after</label>
          <select
            id="expirationInDays"
            name="expirationInDays"
            aria-invalid={errors.expirationInDays === undefined ? undefined : "true"}
            aria-describedby={errors.expirationInDays === undefined ? undefined : "expirationInDays-error"}
          >
            {expirationChoices.map((days) => (
              <option value={String(days)} selected={String(days) === values.expirationInDays} key={days}>
                {days} days
              </option>
            ))}
          </select>
          <GroupError id="expirationInDays-error" error={errors.expirationInDays} />
        </div>
        <fieldset aria-describedby={errors.permissions === undefined ? "permissions-hint" : "permissions-error"}>
          <legend>Permissions</legend>
          <p class="hint" id="permissions-hint">
            A key can be given only the permissions your role ({current.member.role}) holds. A key without any still
            manages keys and webhooks.
          </p>
          <GroupError id="permissions-error" error={errors.permissions} />
          {permissions.map((permission: Permission) => {
            const id = idOf("permission", permission)
            const allowed = held.includes(permission)
            return (
              <div class="choice" key={permission}>
                <input
                  type="checkbox"
                  id={id}
                  name="permissions"
                  value={permission}
                  checked={values.permissions.includes(permission)}
                  disabled={!allowed}
                />
                <label htmlFor={id}>
                  <code>{permission}</code>: {permissionDescriptions[permission]}
                  {allowed ? null : <span class="hint"> (not in your role)</span>}
                </label>
              </div>
            )
          })}
        </fieldset>
        <fieldset aria-describedby={errors.accounts === undefined ? undefined : "accounts-error"}>
          <legend>Accounts</legend>
          <GroupError id="accounts-error" error={errors.accounts} />
          <div class="choice">
            <input
              type="radio"
              id="accounts-all"
              name="accounts"
              value="all"
              checked={accountsChoice === "all"}
              disabled={!reachesAll}
            />
            <label htmlFor="accounts-all">
              All accounts, including those made later
              {reachesAll ? null : <span class="hint"> (you reach only some accounts)</span>}
            </label>
          </div>
          <div class="choice">
            <input
              type="radio"
              id="accounts-selected"
              name="accounts"
              value="selected"
              checked={accountsChoice === "selected"}
            />
            <label htmlFor="accounts-selected">Only the accounts ticked below</label>
          </div>
          {state.accounts.length === 0 ? (
            <p class="hint">You reach no {values.environment} accounts.</p>
          ) : (
            <ul class="plain indented">
              {state.accounts.map((account) => {
                const id = idOf("account", account.id)
                return (
                  <li class="choice" key={account.id}>
                    <input
                      type="checkbox"
                      id={id}
                      name="accountIds"
                      value={account.id}
                      checked={values.accountIds.includes(account.id)}
                    />
                    <label htmlFor={id}>{account.name}</label>
                  </li>
                )
              })}
            </ul>
          )}
          {state.moreAccounts ? (
            <p class="hint">Only the first {state.accounts.length} accounts by name are shown here.</p>
          ) : null}
        </fieldset>
        <fieldset>
          <legend>Client certificate</legend>
          <div class="choice">
            <input type="checkbox" id="enforceMtls" name="enforceMtls" value="on" checked={values.enforceMtls} />
            <label htmlFor="enforceMtls">Require mutual TLS: accept the key only with a client certificate</label>
          </div>
        </fieldset>
        <button type="submit">Create key</button>
      </form>
      <p>
        <a href={`${section}?environment=${values.environment}`}>Back to API keys</a>
      </p>
    </>,
    { section, status }
  )
}

export interface CreatedKeyState {
  readonly keyRecord: ApiKeyRecord
  /** The key's value: on this page only, never stored. */
  readonly apiKey: string
  readonly accountNames: ReadonlyMap<string, string>
  /** Where the company API is, for the example. */
  readonly publicUrl: string
}

/** The new key, shown once (the page is not cached), with a copy button. */
export const createdKeyPage = (current: CurrentMember, state: CreatedKeyState) => {
  const key = state.keyRecord
  return dashboardPage(
    "API key created",
    current,
    <>
      <h1>API key created</h1>
      <p>
        <strong>Copy the key now.</strong> Ribbon keeps only a hash of it: this is the only time it is shown. From now
        on the list shows only its first characters, <code>{key.prefix}…</code>
      </p>
      <div class="field secret">
        <label htmlFor="api-key">API key “{key.name}”</label>
        <input
          id="api-key"
          type="text"
          readOnly
          value={state.apiKey}
          data-select=""
          autocomplete="off"
          spellcheck={false}
        />
        <button type="button" class="secondary" data-copy="api-key" data-status="copy-status" hidden>
          Copy key
        </button>
        <p id="copy-status" role="status" />
      </div>
      <h2>The key</h2>
      <dl class="facts">
        <dt>Name</dt>
        <dd>{key.name}</dd>
        <dt>Environment</dt>
        <dd>{environmentNames[key.environment]}</dd>
        <dt>Expires</dt>
        <dd>
          <Moment date={key.expiresAt} />
        </dd>
        <dt>Permissions</dt>
        <dd>
          {key.permissions.length === 0 ? (
            "None"
          ) : (
            <ul class="plain">
              {key.permissions.map((permission) => (
                <li key={permission}>
                  <code>{permission}</code>
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>Accounts</dt>
        <dd>
          <AccountsOf keyRecord={key} names={state.accountNames} />
        </dd>
        <dt>Client certificate</dt>
        <dd>{key.enforceMtls ? "Required (mutual TLS)" : "Not required"}</dd>
      </dl>
      <h2>Try it</h2>
      <p>With the key in the environment variable RIBBON_API_KEY:</p>
      <pre>
        <code>{`curl -H "X-Api-Key: $RIBBON_API_KEY" ${state.publicUrl}/public-api/v3/accounts`}</code>
      </pre>
      <p>
        <a href={`${section}?environment=${key.environment}`}>Back to API keys</a>
      </p>
    </>,
    { section, status: 201, script: copySecretScript }
  )
}

export interface RevokeState {
  readonly keyRecord: ApiKeyRecord
  /** Why the member may not revoke it (the company Policy's words), if it may not. */
  readonly refusal?: string | undefined
}

/** Revocation's second step: what stops working, and the button that does it. */
export const confirmRevokePage = (current: CurrentMember, state: RevokeState, status = 200) => {
  const key = state.keyRecord
  const back = `${section}?environment=${key.environment}`
  return dashboardPage(
    "Revoke an API key",
    current,
    <>
      <h1>Revoke “{key.name}”</h1>
      <dl class="facts">
        <dt>Key</dt>
        <dd>
          <Prefix keyRecord={key} />
        </dd>
        <dt>Environment</dt>
        <dd>{environmentNames[key.environment]}</dd>
        <dt>Last used</dt>
        <dd>{key.lastUsedAt === null ? "Never" : <Moment date={key.lastUsedAt} />}</dd>
      </dl>
      {state.refusal === undefined ? (
        <ConfirmStep
          title="Revoke this key?"
          action={`${section}/${key.id}/revoke`}
          csrf={current.csrf}
          confirmLabel="Revoke key"
          cancelHref={back}
        >
          <p>
            The key stops working at once: every request with it is refused (401). This cannot be undone; a program
            using it needs a new key.
          </p>
        </ConfirmStep>
      ) : (
        <>
          <FormError>{state.refusal}</FormError>
          <p>
            <a href={back}>Back to API keys</a>
          </p>
        </>
      )}
    </>,
    { section, status }
  )
}
