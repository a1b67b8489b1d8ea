import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { type AuditEvent, auditActions } from "../../domain/company/Audit.js"
import type { Environment } from "../../domain/company/Company.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { Audit } from "../../services/company/Audit.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Api } from "../Api.js"
import { Badge, EmptyState, FilterForm, FormError, type PageLinks, Table } from "./components.js"
import { csvOf } from "./csv.js"
import { dashboardPage } from "./layout.js"
import { dayOf, environmentParam, pageNumber } from "./params.js"
import { type CurrentMember, makeDashboardAuth } from "./session.js"

/** Events per page. */
const eventsPerPage = 50
/** The most rows one download holds: the newest, as the page orders them. */
export const downloadRowLimit = 10_000

interface FilterParams {
  readonly environment: string
  readonly actor: string
  readonly action: string
  readonly from: string
  readonly to: string
}

/** The filters as the member gave them (trimmed), for the form and the links. */
interface Filters {
  readonly environment: Environment
  readonly actor: string
  readonly action: string
  readonly from: string
  readonly to: string
}

/**
 * The filters, read from the URL, and what is wrong with them; the list query's filters when nothing is. Dates
 * are whole days in UTC, `to` included.
 */
const readFilters = (params: FilterParams, current: CurrentMember) => {
  const filters: Filters = {
    // A sandbox company has only its test environment (and the company-wide events, which both show).
    environment: current.company.live ? environmentParam(params.environment, current) : "test",
    actor: params.actor.trim().slice(0, 200),
    action: params.action.trim(),
    from: params.from.trim(),
    to: params.to.trim()
  }
  const problems: Array<string> = []
  if (filters.action !== "" && !(auditActions as ReadonlyArray<string>).includes(filters.action)) {
    problems.push("Action: choose one from the list.")
  }
  for (const [label, value] of [
    ["From", filters.from],
    ["To", filters.to]
  ] as const) {
    if (value !== "" && dayOf(value) === undefined) problems.push(`${label}: expected a date as YYYY-MM-DD.`)
  }
  if (problems.length === 0 && filters.from !== "" && filters.to !== "" && filters.from > filters.to) {
    problems.push("From: must not be after To.")
  }
  const query: Record<string, string> = {}
  if (filters.actor !== "") query.actor = filters.actor
  if (filters.action !== "") query.action = filters.action
  if (filters.from !== "") query["occurredAt][gte"] = `${filters.from}T00:00:00.000Z`
  if (filters.to !== "") query["occurredAt][lte"] = `${filters.to}T23:59:59.999Z`
  return { filters, problems, query }
}

/** The filters as URL parameters (the empty ones left out by the links). */
const paramsOf = (filters: Filters): Record<string, string> => ({ ...filters })

const listQuery = (filters: Record<string, string>, number: number, size: number): V3Query => ({
  filters,
  include: [],
  fields: [],
  sort: [],
  page: { number, size, cursor: undefined }
})

const environmentNames: Readonly<Record<Environment, string>> = { test: "Test (sandbox)", live: "Live" }

/** The day, then the time in UTC, on two lines: a narrow column. */
const UtcTime = ({ at }: { readonly at: Date }) => {
  const iso = at.toISOString()
  return (
    <time dateTime={iso}>
      {iso.slice(0, 10)}
      <br />
      {iso.slice(11, 19)} UTC
    </time>
  )
}

const Missing = () => <span class="hint">none</span>

const AuditLogBody = (props: {
  readonly current: CurrentMember
  readonly filters: Filters
  readonly problems: ReadonlyArray<string>
  readonly events: ReadonlyArray<AuditEvent>
  readonly links: PageLinks
}) => {
  const { filters } = props
  const download = new URLSearchParams(Object.entries(paramsOf(filters)).filter(([, value]) => value !== ""))
  const filtered = filters.actor !== "" || filters.action !== "" || filters.from !== "" || filters.to !== ""
  return (
    <>
      <h1>Audit log</h1>
      <p>
        Every change made by the company's API keys, its members in this dashboard and the operator, newest first.
        Changes to the company as a whole (members, ownership, settings) show in every environment.
      </p>
      {props.problems.length === 0 ? null : (
        <FormError>
          <p>These filters cannot be used:</p>
          <ul>
            {props.problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        </FormError>
      )}
      <FilterForm
        path="/dashboard/audit-log"
        fields={[
          { name: "actor", label: "Actor (name or id)", value: filters.actor },
          {
            name: "action",
            label: "Action",
            value: filters.action,
            options: [["", "Any action"], ...auditActions.map((action) => [action, action] as const)]
          },
          { name: "from", label: "From (UTC)", value: filters.from, type: "date" },
          { name: "to", label: "To (UTC)", value: filters.to, type: "date" },
          ...(props.current.company.live
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
      {props.problems.length > 0 ? null : (
        <>
          <p>
            <a href={`/dashboard/audit-log.csv${download.size === 0 ? "" : `?${download}`}`} download="">
              Download these events as CSV
            </a>{" "}
            <span class="hint">
              (the {downloadRowLimit.toLocaleString("en")} newest at most; narrow the dates for older ones)
            </span>
          </p>
          <Table
            caption={`${environmentNames[filters.environment]} audit events`}
            columns={[
              {
                header: "Time",
                cell: (event: AuditEvent) => <UtcTime at={event.occurredAt} />
              },
              {
                header: "Actor",
                cell: (event: AuditEvent) => (
                  <>
                    {event.actorName} <Badge>{event.actorType}</Badge>
                  </>
                )
              },
              { header: "Action", cell: (event: AuditEvent) => <code>{event.action}</code> },
              {
                header: "Target",
                cell: (event: AuditEvent) => (
                  <>
                    {event.targetType} <code>{event.targetId}</code>
                  </>
                )
              },
              {
                header: "Account",
                cell: (event: AuditEvent) => (event.accountId === null ? <Missing /> : <code>{event.accountId}</code>)
              },
              {
                header: "Environment",
                cell: (event: AuditEvent) =>
                  event.environment === null ? "Company-wide" : environmentNames[event.environment]
              },
              {
                header: "Source",
                cell: (event: AuditEvent) =>
                  event.sourceAddress === null ? <Missing /> : <code>{event.sourceAddress}</code>
              },
              {
                header: "Request id",
                cell: (event: AuditEvent) => (event.requestId === null ? <Missing /> : <code>{event.requestId}</code>)
              }
            ]}
            rows={props.events}
            rowKey={(event) => event.id}
            links={props.links}
            empty={<EmptyState title={filtered ? "No events match these filters." : "No events yet."} />}
          />
        </>
      )}
    </>
  )
}

const csvHeader = [
  "occurred_at",
  "actor_type",
  "actor_id",
  "actor_name",
  "action",
  "target_type",
  "target_id",
  "account_id",
  "environment",
  "source_address",
  "request_id"
]

const csvRow = (event: AuditEvent) => [
  event.occurredAt.toISOString(),
  event.actorType,
  event.actorId,
  event.actorName,
  event.action,
  event.targetType,
  event.targetId,
  event.accountId,
  event.environment,
  event.sourceAddress,
  event.requestId
]

/**
 * The dashboard's audit log (docs/dashboard.md "Audit log"): the same operation as `GET /public-api/v3/audit-events`
 * (`Audit.page`), under the same permission (`audit:read`), with the member's scope: filtered and paged in SQL.
 */
export const AuditLogPagesLive = HttpApiBuilder.group(Api, "dashboardAuditLog", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const audit = yield* Audit
    const policy = yield* CompanyPolicy

    /** The member's scope in the environment: no account named, so none to refuse. */
    const scopeOf = (current: CurrentMember, environment: Environment) =>
      Effect.orDie(policy.scopeForMember(current.member, environment))

    const pageOf = (
      current: CurrentMember,
      read: ReturnType<typeof readFilters>,
      events: ReadonlyArray<AuditEvent>,
      links: PageLinks
    ) =>
      dashboardPage(
        "Audit log",
        current,
        <AuditLogBody
          current={current}
          filters={read.filters}
          problems={read.problems}
          events={events}
          links={links}
        />,
        { section: "/dashboard/audit-log", status: read.problems.length === 0 ? 200 : 400 }
      )

    return handlers
      .handle("page", ({ request, urlParams }) =>
        auth.page(request, { require: "audit:read" }, (current) =>
          Effect.gen(function* () {
            const read = readFilters(urlParams, current)
            const page = pageNumber(urlParams.page)
            const links = { path: "/dashboard/audit-log", params: paramsOf(read.filters), page, hasNext: false }
            if (read.problems.length > 0) return pageOf(current, read, [], links)
            const scope = yield* scopeOf(current, read.filters.environment)
            const found = yield* audit.page(scope, listQuery(read.query, page, eventsPerPage))
            return pageOf(current, read, found.rows, { ...links, hasNext: found.hasNext })
          })
        )
      )
      .handle("download", ({ request, urlParams }) =>
        auth.page(request, { require: "audit:read" }, (current) =>
          Effect.gen(function* () {
            const read = readFilters(urlParams, current)
            if (read.problems.length > 0) {
              const links = { path: "/dashboard/audit-log", params: paramsOf(read.filters), page: 1, hasNext: false }
              return pageOf(current, read, [], links)
            }
            const scope = yield* scopeOf(current, read.filters.environment)
            const found = yield* audit.page(scope, listQuery(read.query, 1, downloadRowLimit))
            return HttpServerResponse.text(csvOf(csvHeader, found.rows.map(csvRow)), {
              contentType: "text/csv; charset=utf-8",
              headers: {
                "content-disposition": `attachment; filename="audit-log-${read.filters.environment}.csv"`,
                // More rows matched than a download holds: these are the newest.
                ...(found.hasNext ? { "ribbon-rows-truncated": String(downloadRowLimit) } : {})
              }
            })
          })
        )
      )
  })
)
