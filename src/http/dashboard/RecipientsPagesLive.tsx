import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { Environment } from "../../domain/company/Company.js"
import type { RecipientRecord } from "../../domain/company/Recipients.js"
import { readMode } from "../../services/company/Masking.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { type RecipientSearch, Recipients } from "../../services/company/Recipients.js"
import { Api } from "../Api.js"
import { recipientV2 } from "../company/v2.js"
import { ConfirmStep, EmptyState, FilterForm, FormError, type PageLinks, Table, When } from "./components.js"
import { dashboardPage } from "./layout.js"
import { environmentNames, forbiddenPage, notFoundPage } from "./pages.js"
import { environmentParam, pageNumber } from "./params.js"
import { type CurrentMember, holds, makeDashboardAuth } from "./session.js"

/** Recipients per page. */
const recipientsPerPage = 20
/** The longest search taken. */
const searchMaxLength = 200

/** A recipient as the member's role may read it: the v2 read's presentation, masked or not by the same rule. */
type ShownRecipient = ReturnType<typeof recipientV2>

type Mode = "masked" | "unmasked"

const recipientHref = (recipient: { readonly id: string }) =>
  `/dashboard/recipients/${encodeURIComponent(recipient.id)}`

const nameOf = (recipient: ShownRecipient) => `${recipient.firstName} ${recipient.lastName}`.trim() || "(no name)"

const orDash = (value: string | null) => value ?? "—"

const MaskedNote = ({ mode }: { readonly mode: Mode }) =>
  mode === "masked" ? (
    <p class="hint">
      Your role reads recipients' personal data masked (as the API shows it to a key without
      <code> recipients:read:unmasked</code>): names, e-mails and phones keep only their shape.
    </p>
  ) : null

interface ListState {
  readonly mode: Mode
  readonly live: boolean
  readonly filters: { readonly search: string; readonly environment: Environment }
  readonly problem: string | undefined
  readonly recipients: ReadonlyArray<ShownRecipient>
  readonly links: PageLinks
}

const ListBody = ({ state }: { readonly state: ListState }) => {
  const { filters } = state
  return (
    <>
      <h1>Recipients</h1>
      <p>
        The people the company sends gifts to, newest first, in the accounts you reach. Search by name or e-mail
        {state.mode === "masked"
          ? ": as your role reads them masked, a search matches a whole name or e-mail only"
          : ""}
        .
      </p>
      <MaskedNote mode={state.mode} />
      {state.problem === undefined ? null : <FormError>{state.problem}</FormError>}
      <FilterForm
        path="/dashboard/recipients"
        fields={[
          { name: "search", label: "Name or e-mail", value: filters.search },
          ...(state.live
            ? [
                {
                  name: "environment",
                  label: "Environment",
                  value: filters.environment,
                  options: [
                    ["test", environmentNames.test],
                    ["live", environmentNames.live]
                  ] as const
                }
              ]
            : [])
        ]}
      />
      <Table
        caption={`${environmentNames[filters.environment]} recipients`}
        columns={[
          {
            header: "Name",
            cell: (recipient: ShownRecipient) => <a href={recipientHref(recipient)}>{nameOf(recipient)}</a>
          },
          { header: "E-mail", cell: (recipient: ShownRecipient) => orDash(recipient.email) },
          { header: "Phone", cell: (recipient: ShownRecipient) => orDash(recipient.mobilePhone) },
          { header: "Country", cell: (recipient: ShownRecipient) => orDash(recipient.country) },
          {
            header: "External id",
            cell: (recipient: ShownRecipient) =>
              recipient.externalId === null ? "—" : <code>{recipient.externalId}</code>
          },
          { header: "Created", cell: (recipient: ShownRecipient) => <When at={new Date(recipient.createdAt)} /> }
        ]}
        rows={state.recipients}
        rowKey={(recipient) => recipient.id}
        links={state.links}
        empty={
          <EmptyState
            title={filters.search === "" ? "No recipients yet." : `No recipient matches “${filters.search}”.`}
          >
            {filters.search === "" ? <p>Recipients are made when gifts are sent to them, or through the API.</p> : null}
          </EmptyState>
        }
      />
    </>
  )
}

const Facts = ({
  recipient,
  environment
}: {
  readonly recipient: ShownRecipient
  readonly environment: Environment
}) => (
  <dl class="facts">
    <dt>E-mail</dt>
    <dd>{orDash(recipient.email)}</dd>
    <dt>Phone</dt>
    <dd>{orDash(recipient.mobilePhone)}</dd>
    <dt>Country</dt>
    <dd>{orDash(recipient.country)}</dd>
    <dt>External id</dt>
    <dd>{recipient.externalId === null ? "—" : <code>{recipient.externalId}</code>}</dd>
    <dt>Accounts</dt>
    <dd>
      <code>{recipient.accounts.join(", ")}</code>
    </dd>
    <dt>Environment</dt>
    <dd>{environmentNames[environment]}</dd>
    <dt>Made by</dt>
    <dd>{orDash(recipient.source)}</dd>
    <dt>Created</dt>
    <dd>
      <When at={new Date(recipient.createdAt)} />
    </dd>
    <dt>Updated</dt>
    <dd>
      <When at={new Date(recipient.updatedAt)} />
    </dd>
    <dt>Id</dt>
    <dd>
      <code>{recipient.id}</code>
    </dd>
  </dl>
)

const RecipientBody = (props: {
  readonly recipient: ShownRecipient
  readonly environment: Environment
  readonly mode: Mode
  readonly mayErase: boolean
}) => (
  <>
    <p>
      <a href="/dashboard/recipients">All recipients</a>
    </p>
    <h1>{nameOf(props.recipient)}</h1>
    <MaskedNote mode={props.mode} />
    <Facts recipient={props.recipient} environment={props.environment} />
    {props.mayErase ? (
      <div class="actions">
        <a class="button" href={`${recipientHref(props.recipient)}/erase`}>
          Erase recipient
        </a>
      </div>
    ) : null}
  </>
)

const EraseBody = (props: { readonly recipient: ShownRecipient; readonly csrf: string }) => (
  <>
    <p>
      <a href={recipientHref(props.recipient)}>Back to the recipient</a>
    </p>
    <h1>Erase {nameOf(props.recipient)}</h1>
    <ConfirmStep
      title="Erase this recipient's personal data?"
      action={`${recipientHref(props.recipient)}/erase`}
      csrf={props.csrf}
      confirmLabel="Erase recipient"
      cancelHref={recipientHref(props.recipient)}
    >
      <p>
        Their names, e-mail, phone and external id are erased at once, and they leave the list; this cannot be undone.
        The gifts and orders sent to them keep working, and an order keeps the delivery details it was placed with. The
        erasure is recorded in the audit log.
      </p>
    </ConfirmStep>
  </>
)

/**
 * The dashboard's recipients (docs/dashboard.md "Recipients"): the v2 recipient operations (`Recipients.page`, `get`,
 * `remove`) under the member's scope and the same permissions: reading with `recipients:read:masked` or
 * `recipients:read:unmasked`, masked unless the role holds the latter (`recipientV2`, as the API shows a key's
 * reads), erasing with `recipients:delete` (audited by the service, as the API's DELETE is).
 */
export const RecipientsPagesLive = HttpApiBuilder.group(Api, "dashboardRecipients", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const recipients = yield* Recipients
    const policy = yield* CompanyPolicy

    const environmentsOf = (current: CurrentMember): ReadonlyArray<Environment> =>
      current.company.live ? ["test", "live"] : ["test"]

    const scopeOf = (current: CurrentMember, environment: Environment) =>
      Effect.orDie(policy.scopeForMember(current.member, environment))

    /** How the member's role reads recipients, as a key's permissions would; none: the page is refused. */
    const modeOf = (current: CurrentMember) => readMode(current.grant.permissions, "recipients")

    /** A recipient the member reaches in one of the company's environments (not erased), with that environment. */
    const findRecipient = (current: CurrentMember, recipientId: string) =>
      Effect.firstSuccessOf(
        environmentsOf(current).map((environment) =>
          Effect.flatMap(scopeOf(current, environment), (scope) =>
            Effect.map(recipients.get(scope, recipientId), (record) => ({ record, environment, scope }))
          )
        )
      ).pipe(Effect.option)

    /** A recipient's page (or its erase step), read as the member's role reads it; 403 or 404 otherwise. */
    const withRecipient = (
      current: CurrentMember,
      recipientId: string,
      show: (found: {
        readonly record: RecipientRecord
        readonly environment: Environment
        readonly mode: Mode
      }) => HttpServerResponse.HttpServerResponse
    ) =>
      Effect.gen(function* () {
        const mode = modeOf(current)
        if (mode === "none") return forbiddenPage(current)
        const found = yield* findRecipient(current, recipientId)
        if (found._tag === "None") return notFoundPage(current)
        return show({ record: found.value.record, environment: found.value.environment, mode })
      })

    return handlers
      .handle("list", ({ request, urlParams }) =>
        auth.page(request, {}, (current) =>
          Effect.gen(function* () {
            const mode = modeOf(current)
            if (mode === "none") return forbiddenPage(current)
            const search = urlParams.search.trim()
            // A sandbox company has only its test environment.
            const environment = current.company.live ? environmentParam(urlParams.environment, current) : "test"
            const filters = { search, environment }
            const page = pageNumber(urlParams.page)
            const links = { path: "/dashboard/recipients", params: { ...filters }, page, hasNext: false }
            const problem =
              search.length > searchMaxLength ? `Name or e-mail: at most ${searchMaxLength} characters.` : undefined
            const rows =
              problem === undefined
                ? yield* recipients.page(yield* scopeOf(current, environment), {
                    skip: (page - 1) * recipientsPerPage,
                    limit: recipientsPerPage + 1,
                    search:
                      search === ""
                        ? undefined
                        : ({ text: search, match: mode === "unmasked" ? "part" : "whole" } satisfies RecipientSearch)
                  })
                : []
            const state: ListState = {
              mode,
              live: current.company.live,
              filters,
              problem,
              recipients: rows.slice(0, recipientsPerPage).map((row) => recipientV2(row, mode)),
              links: { ...links, hasNext: rows.length > recipientsPerPage }
            }
            return dashboardPage("Recipients", current, <ListBody state={state} />, {
              section: "/dashboard/recipients",
              status: problem === undefined ? 200 : 400
            })
          })
        )
      )
      .handle("recipient", ({ request, path }) =>
        auth.page(request, {}, (current) =>
          withRecipient(current, path.recipientId, ({ record, environment, mode }) => {
            const recipient = recipientV2(record, mode)
            return dashboardPage(
              `Recipient ${nameOf(recipient)}`,
              current,
              <RecipientBody
                recipient={recipient}
                environment={environment}
                mode={mode}
                mayErase={holds(current.grant, "recipients:delete")}
              />,
              { section: "/dashboard/recipients" }
            )
          })
        )
      )
      .handle("confirmErase", ({ request, path }) =>
        auth.page(request, { require: "recipients:delete" }, (current) =>
          withRecipient(current, path.recipientId, ({ record, mode }) => {
            const recipient = recipientV2(record, mode)
            return dashboardPage(
              `Erase ${nameOf(recipient)}`,
              current,
              <EraseBody recipient={recipient} csrf={current.csrf} />,
              { section: "/dashboard/recipients" }
            )
          })
        )
      )
      .handle("erase", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, { require: "recipients:delete" }, (current) =>
          Effect.gen(function* () {
            const found = yield* findRecipient(current, path.recipientId)
            if (found._tag === "None") return notFoundPage(current)
            const { scope, record } = found.value
            // Erased meanwhile by another request: gone all the same.
            const erased = yield* recipients.remove(scope, record.id).pipe(
              Effect.as(true),
              Effect.catchTag("RecipientNotFound", () => Effect.succeed(false))
            )
            if (!erased) return notFoundPage(current)
            return auth.withFlash(HttpServerResponse.redirect("/dashboard/recipients", { status: 303 }), {
              kind: "success",
              text: "The recipient's personal data is erased."
            })
          })
        )
      )
  })
)
