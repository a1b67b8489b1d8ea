import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import {
  type BillingMethodRecord,
  type LedgerEntry,
  testFundsMaximum,
  testLimitCeiling
} from "../../domain/company/Billing.js"
import type { Environment } from "../../domain/company/Company.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { Billing } from "../../services/company/Billing.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Api } from "../Api.js"
import {
  Badge,
  CsrfField,
  EmptyState,
  Field,
  FilterForm,
  FormError,
  type PageLinks,
  Table,
  When
} from "./components.js"
import { csvOf } from "./csv.js"
import { money } from "./format.js"
import { dashboardPage } from "./layout.js"
import { notFoundPage } from "./pages.js"
import { dateRangeOf, pageNumber } from "./params.js"
import { type CurrentMember, makeDashboardAuth } from "./session.js"

/** Ledger entries per page. */
const entriesPerPage = 50
/** The most entries one download holds: the newest, as the page orders them. */
const downloadRowLimit = 10_000
/** The most methods the overview shows per environment (an account has a few). */
const methodsShown = 100

const environmentNames: Readonly<Record<Environment, string>> = { test: "Test (sandbox)", live: "Live" }

/** An amount in major units with at most two decimals ("250", "12.5") as minor units, if within the bound. */
const testFundsOf = (text: string): number | undefined => {
  const match = /^(\d{1,7})(?:\.(\d{1,2}))?$/.exec(text.trim())
  if (match === null) return undefined
  const minor = Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"))
  return minor >= 1 && minor <= testFundsMaximum ? minor : undefined
}

const redirect = (to: string) => HttpServerResponse.redirect(to, { status: 303 })

const methodHref = (method: BillingMethodRecord) => `/dashboard/billing/${encodeURIComponent(method.id)}`

const allMethods: V3Query = {
  filters: {},
  include: [],
  fields: [],
  sort: [],
  page: { number: 1, size: methodsShown, cursor: undefined }
}

const MethodsTable = (props: {
  readonly environment: Environment
  readonly methods: ReadonlyArray<BillingMethodRecord>
}) => (
  <Table
    caption={`${environmentNames[props.environment]} billing methods`}
    columns={[
      { header: "Account", cell: (method: BillingMethodRecord) => <code>{method.accountId}</code> },
      {
        header: "Method",
        cell: (method: BillingMethodRecord) => (
          <>
            <a href={methodHref(method)}>{method.name}</a>{" "}
            {method.isDefault ? <Badge tone="neutral">default</Badge> : null}
          </>
        )
      },
      { header: "Type", cell: (method: BillingMethodRecord) => method.type },
      { header: "Status", cell: (method: BillingMethodRecord) => method.status },
      {
        header: "Spending limit",
        cell: (method: BillingMethodRecord) =>
          method.spendingLimit === null ? "Uncapped" : money(method.spendingLimit, method.currency)
      },
      {
        header: "Remaining",
        cell: (method: BillingMethodRecord) =>
          method.remaining === null ? "Uncapped" : money(method.remaining, method.currency)
      }
    ]}
    rows={props.methods}
    rowKey={(method) => method.id}
    links={{ path: "/dashboard/billing", params: {}, page: 1, hasNext: false }}
    empty={<EmptyState title="No billing methods on the accounts you reach." />}
  />
)

const MethodsBody = (props: {
  readonly byEnvironment: ReadonlyArray<readonly [Environment, ReadonlyArray<BillingMethodRecord>]>
}) => (
  <>
    <h1>Billing</h1>
    <p>
      The billing methods of the accounts you reach and what each has left. Open a method for its ledger: every debit
      and credit, with the order or gift it was for and the running total spent after it.
    </p>
    {props.byEnvironment.map(([environment, methods]) => (
      <section key={environment} aria-labelledby={`billing-${environment}`}>
        <h2 id={`billing-${environment}`}>{environmentNames[environment]}</h2>
        <MethodsTable environment={environment} methods={methods} />
      </section>
    ))}
  </>
)

/** The sandbox's form raising a capped test method's limit: test money only. */
const TestFundsForm = ({ method, csrf }: { readonly method: BillingMethodRecord; readonly csrf: string }) => (
  <form method="post" action={`${methodHref(method)}/test-funds`} aria-labelledby="test-funds">
    <h2 id="test-funds">Add test funds</h2>
    <CsrfField token={csrf} />
    <Field
      name="amount"
      label={`Amount (${method.currency})`}
      hint={`Test money, up to ${money(testFundsMaximum, method.currency)} at a time; a limit of at most ${money(testLimitCeiling, method.currency)}.`}
      inputMode="text"
      required
    />
    <button type="submit">Add test funds</button>
  </form>
)

const LedgerBody = (props: {
  readonly csrf: string
  readonly method: BillingMethodRecord
  readonly filters: { readonly from: string; readonly to: string }
  readonly problems: ReadonlyArray<string>
  readonly entries: ReadonlyArray<LedgerEntry>
  readonly links: PageLinks
}) => {
  const { method, filters } = props
  const download = new URLSearchParams(Object.entries(filters).filter(([, value]) => value !== ""))
  const filtered = filters.from !== "" || filters.to !== ""
  return (
    <>
      <p>
        <a href="/dashboard/billing">All billing methods</a>
      </p>
      <h1>{method.name}</h1>
      <dl>
        <dt>Account</dt>
        <dd>
          <code>{method.accountId}</code> ({environmentNames[method.environment]})
        </dd>
        <dt>Remaining</dt>
        <dd>{method.remaining === null ? "Uncapped" : money(method.remaining, method.currency)}</dd>
      </dl>
      {method.environment === "test" && method.spendingLimit !== null ? (
        <TestFundsForm method={method} csrf={props.csrf} />
      ) : null}
      <h2>Ledger</h2>
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
        path={methodHref(method)}
        fields={[
          { name: "from", label: "From (UTC)", value: filters.from, type: "date" },
          { name: "to", label: "To (UTC)", value: filters.to, type: "date" }
        ]}
      />
      {props.problems.length > 0 ? null : (
        <>
          <p>
            <a href={`${methodHref(method)}/ledger.csv${download.size === 0 ? "" : `?${download}`}`} download="">
              Download these entries as CSV
            </a>
          </p>
          <Table
            caption={`Ledger of ${method.name}`}
            columns={[
              {
                header: "Time",
                cell: (entry: LedgerEntry) => <When at={entry.createdAt} />
              },
              { header: "Kind", cell: (entry: LedgerEntry) => entry.kind },
              {
                header: "Amount",
                cell: (entry: LedgerEntry) =>
                  money(entry.kind === "debit" ? -entry.amount : entry.amount, method.currency)
              },
              {
                header: "For",
                cell: (entry: LedgerEntry) => (
                  <>
                    {entry.subjectType} <code>{entry.subjectId}</code>
                  </>
                )
              },
              { header: "Reason", cell: (entry: LedgerEntry) => entry.reason },
              { header: "Spent to date", cell: (entry: LedgerEntry) => money(entry.spentToDate, method.currency) }
            ]}
            rows={props.entries}
            rowKey={(entry) => entry.id}
            links={props.links}
            empty={<EmptyState title={filtered ? "No entries match these dates." : "No entries yet."} />}
          />
        </>
      )}
    </>
  )
}

const csvHeader = ["created_at", "kind", "amount", "currency", "subject_type", "subject_id", "reason", "spent_to_date"]

const csvRow = (currency: string) => (entry: LedgerEntry) => [
  entry.createdAt.toISOString(),
  entry.kind,
  String(entry.amount),
  currency,
  entry.subjectType,
  entry.subjectId,
  entry.reason,
  String(entry.spentToDate)
]

/**
 * The dashboard's billing (docs/dashboard.md "Billing"), for members with `billing:manage`: the same reads as
 * `GET /public-api/v3/billing-methods` (`Billing.page`, `Billing.find`) under the member's scope, and the ledger
 * paged and filtered in SQL (`Billing.ledger`).
 */
export const BillingPagesLive = HttpApiBuilder.group(Api, "dashboardBilling", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const billing = yield* Billing
    const policy = yield* CompanyPolicy

    const environmentsOf = (current: CurrentMember): ReadonlyArray<Environment> =>
      current.company.live ? ["test", "live"] : ["test"]

    /** A page of a method's ledger in whichever of the company's environments the member reaches it; none: 404. */
    const ledgerOf = (
      current: CurrentMember,
      billingMethodId: string,
      filter: { from: Date | null; to: Date | null; page: number; size: number }
    ) =>
      Effect.firstSuccessOf(
        environmentsOf(current).map((environment) =>
          Effect.flatMap(Effect.orDie(policy.scopeForMember(current.member, environment)), (scope) =>
            billing.ledger(scope, billingMethodId, filter)
          )
        )
      ).pipe(Effect.option)

    const ledgerPage = (
      current: CurrentMember,
      method: BillingMethodRecord,
      read: ReturnType<typeof dateRangeOf>,
      entries: ReadonlyArray<LedgerEntry>,
      links: PageLinks
    ) =>
      dashboardPage(
        `Billing: ${method.name}`,
        current,
        <LedgerBody
          csrf={current.csrf}
          method={method}
          filters={read.filters}
          problems={read.problems}
          entries={entries}
          links={links}
        />,
        { section: "/dashboard/billing", status: read.problems.length === 0 ? 200 : 400 }
      )

    return handlers
      .handle("methods", ({ request }) =>
        auth.page(request, { require: "billing:manage" }, (current) =>
          Effect.gen(function* () {
            const byEnvironment = yield* Effect.forEach(environmentsOf(current), (environment) =>
              Effect.gen(function* () {
                const scope = yield* Effect.orDie(policy.scopeForMember(current.member, environment))
                const found = yield* billing.page(scope, allMethods)
                return [environment, found.rows] as const
              })
            )
            return dashboardPage("Billing", current, <MethodsBody byEnvironment={byEnvironment} />, {
              section: "/dashboard/billing"
            })
          })
        )
      )
      .handle("ledger", ({ request, path, urlParams }) =>
        auth.page(request, { require: "billing:manage" }, (current) =>
          Effect.gen(function* () {
            const read = dateRangeOf(urlParams)
            const page = pageNumber(urlParams.page)
            const found = yield* ledgerOf(current, path.billingMethodId, {
              from: read.from,
              to: read.until,
              page: read.problems.length === 0 ? page : 1,
              size: read.problems.length === 0 ? entriesPerPage : 0
            })
            if (found._tag === "None") return notFoundPage(current)
            const { method, rows, hasNext } = found.value
            const links = { path: methodHref(method), params: { ...read.filters }, page, hasNext }
            return ledgerPage(current, method, read, read.problems.length === 0 ? rows : [], links)
          })
        )
      )
      .handle("download", ({ request, path, urlParams }) =>
        auth.page(request, { require: "billing:manage" }, (current) =>
          Effect.gen(function* () {
            const read = dateRangeOf(urlParams)
            const found = yield* ledgerOf(current, path.billingMethodId, {
              from: read.from,
              to: read.until,
              page: 1,
              size: read.problems.length === 0 ? downloadRowLimit : 0
            })
            if (found._tag === "None") return notFoundPage(current)
            const { method, rows, hasNext } = found.value
            if (read.problems.length > 0) {
              return ledgerPage(current, method, read, [], {
                path: methodHref(method),
                params: { ...read.filters },
                page: 1,
                hasNext: false
              })
            }
            return HttpServerResponse.text(csvOf(csvHeader, rows.map(csvRow(method.currency))), {
              contentType: "text/csv; charset=utf-8",
              headers: {
                "content-disposition": `attachment; filename="ledger-${method.id}.csv"`,
                ...(hasNext ? { "ribbon-rows-truncated": String(downloadRowLimit) } : {})
              }
            })
          })
        )
      )
      .handle("addTestFunds", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, { require: "billing:manage" }, (current) =>
          Effect.gen(function* () {
            // Only the test environment's scope: a live method is not found here.
            const scope = yield* Effect.orDie(policy.scopeForMember(current.member, "test"))
            const back = `/dashboard/billing/${encodeURIComponent(path.billingMethodId)}`
            const amount = testFundsOf(payload.amount)
            if (amount === undefined) {
              return auth.withFlash(redirect(back), {
                kind: "error",
                text: `Amount: expected a sum from 0.01 to ${money(testFundsMaximum, "USD")}, such as 250 or 12.50.`
              })
            }
            const added = yield* billing.addTestFunds(scope, path.billingMethodId, amount).pipe(
              Effect.catchTags({
                BillingMethodNotFound: () => Effect.succeed(undefined),
                // The scope is the test environment's.
                EnvironmentMismatch: Effect.die
              })
            )
            if (added === undefined) return notFoundPage(current)
            if (Option.isNone(added)) {
              return auth.withFlash(redirect(back), {
                kind: "error",
                text: `No funds were added: a test limit stays within ${money(testLimitCeiling, "USD")}.`
              })
            }
            const method = added
            return auth.withFlash(redirect(back), {
              kind: "success",
              text: `Added test funds: ${money(method.value.remaining ?? 0, method.value.currency)} remain.`
            })
          })
        )
      )
  })
)
