import {
  type BillingMethodRecord,
  billingCurrency,
  type DailySpend,
  spendChartDays
} from "../../domain/company/Billing.js"
import type { Account, Environment } from "../../domain/company/Company.js"
import type { GiftFunnel, GiftRecord } from "../../domain/company/Gifts.js"
import { roleDescriptions } from "../../domain/company/Members.js"
import type { CompanyOrderRecord } from "../../domain/company/Orders.js"
import { BarChart, ChartFigure, type ChartPoint, ColumnChart } from "./charts.js"
import { Badge, EmptyState, FilterForm, type PageLinks, Table, When } from "./components.js"
import { money } from "./format.js"
import { dashboardPage } from "./layout.js"
import { environmentNames } from "./pages.js"
import type { CurrentMember } from "./session.js"

/**
 * The dashboard's home (docs/dashboard.md "Home"): the company, its accounts with what each billing method has
 * left, spend per day over the last 30 days and the gift funnel as charts with their data as tables, and the
 * latest orders and gifts. Each part shows only when the member's role reads what it is made of
 * (docs/decisions/0063-dashboard-home-charts.md); the handler leaves out what is not read.
 */

export interface HomeState {
  readonly environment: Environment
  readonly name: string
  readonly accounts: ReadonlyArray<Account>
  readonly links: PageLinks
  /** The billing methods of the accounts shown, when the role reads billing methods (`accounts:read`). */
  readonly methods: ReadonlyArray<BillingMethodRecord> | undefined
  /** Whether a method links to its ledger (the `billing:manage` right). */
  readonly ledgerLinks: boolean
  readonly spend: DailySpend | undefined
  /** When the role reads gifts. */
  readonly funnel: GiftFunnel | undefined
  readonly gifts: ReadonlyArray<GiftRecord> | undefined
  /** When the role reads orders. */
  readonly orders: ReadonlyArray<CompanyOrderRecord> | undefined
}

const Funds = (props: { readonly methods: ReadonlyArray<BillingMethodRecord>; readonly ledgerLinks: boolean }) =>
  props.methods.length === 0 ? (
    <>None</>
  ) : (
    <ul class="plain">
      {props.methods.map((method) => (
        <li key={method.id}>
          {method.remaining === null ? "No limit" : `${money(method.remaining, method.currency)} left`} on{" "}
          {props.ledgerLinks ? (
            <a href={`/dashboard/billing/${encodeURIComponent(method.id)}`}>{method.name}</a>
          ) : (
            method.name
          )}
        </li>
      ))}
    </ul>
  )

/** A day as the chart's axis shows it (`11-29`). */
const shortDay = (day: string) => day.slice(5)

const SpendSection = ({ spend, environment }: { readonly spend: DailySpend; readonly environment: Environment }) => {
  const series =
    spend.byCurrency.length === 0
      ? [{ currency: billingCurrency as string, amounts: spend.days.map(() => 0) }]
      : spend.byCurrency
  const first = spend.days[0] ?? ""
  const last = spend.days[spend.days.length - 1] ?? ""
  return (
    <section aria-labelledby="spend-heading">
      <h2 id="spend-heading">Spend per day</h2>
      <p>
        The last {spend.days.length} days ({first} to {last}, UTC) on the {environmentNames[environment].toLowerCase()}{" "}
        accounts you reach: each day's debits (orders placed, gift budgets held) less its credits (cancellations,
        refunds, budgets released). A day whose credits outweigh its debits is below the line.
      </p>
      {series.map(({ currency, amounts }) => {
        const id = `spend-${currency.toLowerCase()}`
        const points: ReadonlyArray<ChartPoint> = spend.days.map((day, n) => ({
          label: shortDay(day),
          value: amounts[n] ?? 0,
          text: money(amounts[n] ?? 0, currency)
        }))
        const total = amounts.reduce((sum, amount) => sum + amount, 0)
        const busiest = spend.days.reduce(
          (best, day, n) => ((amounts[n] ?? 0) > best.amount ? { day, amount: amounts[n] ?? 0 } : best),
          { day: "", amount: 0 }
        )
        const summary = amounts.every((amount) => amount === 0)
          ? `No spend in ${currency} from ${first} to ${last}.`
          : `${money(total, currency)} spent from ${first} to ${last}` +
            (busiest.amount > 0 ? `; the most on ${busiest.day}: ${money(busiest.amount, currency)}.` : ".")
        return (
          <ChartFigure
            key={currency}
            id={id}
            summary={summary}
            chart={
              <ColumnChart
                id={id}
                title={`Spend per day, ${currency}, last ${spend.days.length} days`}
                points={points}
              />
            }
            tableSummary={`Spend per day in ${currency} as a table`}
            caption={`Spend per day, ${currency}`}
            columns={[
              { header: "Day (UTC)", cell: (row: { day: string; amount: number }) => row.day },
              { header: "Spend", cell: (row: { day: string; amount: number }) => money(row.amount, currency) }
            ]}
            rows={[...spend.days.map((day, n) => ({ day, amount: amounts[n] ?? 0 }))].reverse()}
            rowKey={(row) => row.day}
          />
        )
      })}
    </section>
  )
}

const funnelStages = [
  ["sent", "Sent", "made and sent (or handed over as a link)"],
  ["opened", "Opened", "its page was shown, or it was claimed"],
  ["claimed", "Claimed", "a gift was chosen and its order placed"],
  ["delivered", "Delivered", "its order's shipment was delivered"],
  ["expired", "Expired", "unclaimed when its time ran out"],
  ["cancelled", "Cancelled", "cancelled by the company before a claim"]
] as const

const FunnelSection = ({ funnel, days }: { readonly funnel: GiftFunnel; readonly days: number }) => {
  const points: ReadonlyArray<ChartPoint> = funnelStages.map(([key, label], n) => ({
    label,
    value: funnel[key],
    text: String(funnel[key]),
    tone: n >= 4 ? "muted" : "primary"
  }))
  const summary =
    funnel.sent === 0
      ? `No gifts sent in the last ${days} days.`
      : `Of ${funnel.sent} gifts sent in the last ${days} days, ${funnel.opened} opened, ${funnel.claimed} claimed and ` +
        `${funnel.delivered} delivered; ${funnel.expired} expired and ${funnel.cancelled} cancelled.`
  return (
    <section aria-labelledby="funnel-heading">
      <h2 id="funnel-heading">Gift funnel</h2>
      <p>
        The gifts sent in the last {days} days (UTC) on the accounts you reach, and how far each went. Each stage counts
        the gifts that reached it or went past it: a claimed gift counts as opened too.
      </p>
      <ChartFigure
        id="funnel"
        summary={summary}
        chart={<BarChart id="funnel" title={`Gift funnel, last ${days} days`} points={points} />}
        tableSummary="The gift funnel as a table"
        caption="Gift funnel"
        columns={[
          { header: "Stage", cell: (row: (typeof funnelStages)[number]) => row[1] },
          { header: "Gifts", cell: (row: (typeof funnelStages)[number]) => String(funnel[row[0]]) },
          { header: "Counts a gift that", cell: (row: (typeof funnelStages)[number]) => row[2] }
        ]}
        rows={funnelStages}
        rowKey={(row) => row[0]}
      />
    </section>
  )
}

const noPages = (path: string): PageLinks => ({ path, params: {}, page: 1, hasNext: false })

const LatestOrders = ({ orders }: { readonly orders: ReadonlyArray<CompanyOrderRecord> }) => (
  <section aria-labelledby="orders-heading">
    <h2 id="orders-heading">Latest orders</h2>
    <Table
      caption="The 5 latest orders"
      columns={[
        {
          header: "Order",
          cell: (order: CompanyOrderRecord) => (
            <a href={`/dashboard/orders/${encodeURIComponent(order.id)}`}>
              <code>{order.id}</code>
            </a>
          )
        },
        { header: "Product", cell: (order: CompanyOrderRecord) => order.title },
        { header: "Status", cell: (order: CompanyOrderRecord) => order.status },
        { header: "Shipment", cell: (order: CompanyOrderRecord) => order.shipmentStatus },
        { header: "Charged", cell: (order: CompanyOrderRecord) => money(order.charged, billingCurrency) },
        { header: "Placed", cell: (order: CompanyOrderRecord) => <When at={order.createdAt} /> }
      ]}
      rows={orders}
      rowKey={(order) => order.id}
      links={noPages("/dashboard")}
      empty={<EmptyState title="No orders yet." />}
    />
  </section>
)

const LatestGifts = ({ gifts }: { readonly gifts: ReadonlyArray<GiftRecord> }) => (
  <section aria-labelledby="gifts-heading">
    <h2 id="gifts-heading">Latest gifts</h2>
    <Table
      caption="The 5 latest gifts"
      columns={[
        {
          header: "Gift",
          cell: (gift: GiftRecord) => (
            <a href={`/dashboard/gifts/${encodeURIComponent(gift.id)}`}>
              <code>{gift.id}</code>
            </a>
          )
        },
        { header: "Status", cell: (gift: GiftRecord) => gift.status },
        {
          header: "Budget",
          cell: (gift: GiftRecord) =>
            `${money(gift.budgetMin, gift.currency)} to ${money(gift.budgetMax, gift.currency)}`
        },
        { header: "Sent by", cell: (gift: GiftRecord) => gift.sendingMethod },
        { header: "Sent", cell: (gift: GiftRecord) => <When at={gift.createdAt} /> },
        { header: "Expires", cell: (gift: GiftRecord) => <When at={gift.expiresAt} /> }
      ]}
      rows={gifts}
      rowKey={(gift) => gift.id}
      links={noPages("/dashboard")}
      empty={<EmptyState title="No gifts yet." />}
    />
  </section>
)

export const homePage = (current: CurrentMember, state: HomeState) =>
  dashboardPage(
    "Home",
    current,
    <>
      <h1>{current.company.name}</h1>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          {current.company.live ? (
            "Live"
          ) : (
            <>
              <Badge tone="warning">Sandbox</Badge> Test accounts only, with test money. Going live is arranged with
              Ribbon's operators.
            </>
          )}
        </dd>
        <dt>Your role</dt>
        <dd>
          {current.member.role}: {roleDescriptions[current.member.role]}
        </dd>
        <dt>Company id</dt>
        <dd>
          <code>{current.company.id}</code>
        </dd>
      </dl>
      <h2>Accounts</h2>
      <FilterForm
        path="/dashboard"
        fields={[
          { name: "name", label: "Name contains", value: state.name },
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
      <Table
        caption={`${environmentNames[state.environment]} accounts`}
        columns={[
          { header: "Name", cell: (account: Account) => account.name },
          { header: "Environment", cell: (account: Account) => environmentNames[account.environment] },
          { header: "Default", cell: (account: Account) => (account.isDefault ? "Yes" : "No") },
          ...(state.methods === undefined
            ? []
            : [
                {
                  header: "Remaining funds",
                  cell: (account: Account) => (
                    <Funds
                      methods={(state.methods ?? []).filter((method) => method.accountId === account.id)}
                      ledgerLinks={state.ledgerLinks}
                    />
                  )
                }
              ]),
          { header: "Id", cell: (account: Account) => <code>{account.id}</code> }
        ]}
        rows={state.accounts}
        rowKey={(account) => account.id}
        links={state.links}
        empty={
          <EmptyState title={`No ${state.environment} accounts${state.name === "" ? "" : " match this name"}.`}>
            {state.environment === "live" && !current.company.live ? (
              <p>The company is still a sandbox: it has no live accounts yet.</p>
            ) : null}
          </EmptyState>
        }
      />
      {state.spend === undefined ? null : <SpendSection spend={state.spend} environment={state.environment} />}
      {state.funnel === undefined ? null : <FunnelSection funnel={state.funnel} days={spendChartDays} />}
      {state.orders === undefined ? null : <LatestOrders orders={state.orders} />}
      {state.gifts === undefined ? null : <LatestGifts gifts={state.gifts} />}
    </>,
    { section: "/dashboard" }
  )
