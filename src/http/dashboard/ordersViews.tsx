import type { Environment } from "../../domain/company/Company.js"
import {
  type CompanyOrderRecord,
  type CompanyOrderStatus,
  type ShipmentStatus,
  type ShipmentStatusReached,
  shipmentSteps
} from "../../domain/company/Orders.js"
import type { orderV3 } from "../company/v3.js"
import {
  Badge,
  ConfirmStep,
  CsrfField,
  EmptyState,
  Field,
  FilterForm,
  FormError,
  type PageLinks,
  Table,
  When
} from "./components.js"
import { money } from "./format.js"
import { SwappedFrom } from "./giftsViews.js"

/**
 * The views of the dashboard's orders (docs/dashboard.md "Orders"): the list with its filters, an order with its
 * timeline, the cancel confirm step. Personal data comes as the API shows it (`orderV3`, masked or not).
 */

/** An order as the API shows it in the member's read mode: the recipient and street lines masked or not. */
export type OrderShown = ReturnType<typeof orderV3>

export const orderStatuses: ReadonlyArray<CompanyOrderStatus> = ["active", "completed", "cancelled", "refunded"]

export const shipmentStatuses: ReadonlyArray<ShipmentStatus> = [...shipmentSteps, "failed", "cancelled"]

export const shipmentLabels: Readonly<Record<ShipmentStatus, string>> = {
  orderReceived: "Order received",
  processing: "Processing",
  inTransit: "In transit",
  outForDelivery: "Out for delivery",
  delivered: "Delivered",
  failed: "Failed (refunded)",
  cancelled: "Cancelled"
}

const environmentNames: Readonly<Record<Environment, string>> = { test: "Test (sandbox)", live: "Live" }

export const orderHref = (orderId: string) => `/dashboard/orders/${encodeURIComponent(orderId)}`

/** The list's filters as the member wrote them (trimmed), for the form and the page links. */
export interface OrderFilterValues {
  readonly environment: string
  readonly status: string
  readonly fulfillment: string
  readonly account: string
  readonly from: string
  readonly to: string
  readonly q: string
}

export interface OrdersListProps {
  readonly live: boolean
  readonly environment: Environment
  readonly filters: OrderFilterValues
  readonly problems: ReadonlyArray<string>
  readonly accounts: ReadonlyArray<{ readonly id: string; readonly name: string }>
  /** Whether the member reads recipients unmasked, and so may search them. */
  readonly searchesRecipients: boolean
  readonly orders: ReadonlyArray<OrderShown>
  readonly links: PageLinks
}

const recipientName = (order: OrderShown) => `${order.recipient.firstName} ${order.recipient.lastName}`

export const OrdersListBody = (props: OrdersListProps) => {
  const { filters } = props
  const filtered = Object.entries(filters).some(([name, value]) => name !== "environment" && value !== "")
  const accountNames = new Map(props.accounts.map((account) => [account.id, account.name] as const))
  return (
    <>
      <h1>Orders</h1>
      <p>
        The orders of the accounts you reach, newest first. Open one for its timeline: when it was placed, each step of
        its shipment, its tracking and its cancellation.
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
        path="/dashboard/orders"
        fields={[
          ...(props.live
            ? [
                {
                  name: "environment",
                  label: "Environment",
                  value: props.environment,
                  options: [
                    ["live", "Live"],
                    ["test", "Test (sandbox)"]
                  ] as const
                }
              ]
            : []),
          {
            name: "q",
            label: props.searchesRecipients ? "Order id, recipient name or e-mail" : "Order id",
            value: filters.q
          },
          {
            name: "status",
            label: "Status",
            value: filters.status,
            options: [["", "Any"], ...orderStatuses.map((status) => [status, status] as const)]
          },
          {
            name: "fulfillment",
            label: "Fulfillment status",
            value: filters.fulfillment,
            options: [["", "Any"], ...shipmentStatuses.map((status) => [status, shipmentLabels[status]] as const)]
          },
          {
            name: "account",
            label: "Account",
            value: filters.account,
            options: [["", "All accounts"], ...props.accounts.map((account) => [account.id, account.name] as const)]
          },
          { name: "from", label: "Placed from (UTC)", value: filters.from, type: "date" },
          { name: "to", label: "Placed to (UTC)", value: filters.to, type: "date" }
        ]}
      />
      {props.problems.length > 0 ? null : (
        <Table
          caption={`${environmentNames[props.environment]} orders`}
          columns={[
            {
              header: "Order",
              cell: (order: OrderShown) => (
                <a href={orderHref(order.id)}>
                  <code>{order.id}</code>
                </a>
              )
            },
            { header: "Placed", cell: (order: OrderShown) => <When at={new Date(order.createdAt)} /> },
            {
              header: "Recipient",
              cell: (order: OrderShown) => (
                <>
                  {recipientName(order)}
                  <br />
                  {order.recipient.email}
                </>
              )
            },
            { header: "Product", cell: (order: OrderShown) => order.lineItems[0]?.title ?? "" },
            { header: "Total", cell: (order: OrderShown) => money(order.total.amount, order.total.currency) },
            { header: "Status", cell: (order: OrderShown) => order.status },
            {
              header: "Fulfillment",
              cell: (order: OrderShown) => shipmentLabels[order.fulfillments[0]?.status ?? "orderReceived"]
            },
            { header: "Account", cell: (order: OrderShown) => accountNames.get(order.accountId) ?? order.accountId }
          ]}
          rows={props.orders}
          rowKey={(order) => order.id}
          links={props.links}
          empty={
            <EmptyState title={filtered ? "No orders match these filters." : "No orders yet."}>
              {filtered ? (
                <p>
                  <a href={`/dashboard/orders${props.live ? `?environment=${props.environment}` : ""}`}>
                    Clear the filters
                  </a>
                </p>
              ) : (
                <p>Orders placed through the API or by claimed gifts show here.</p>
              )}
            </EmptyState>
          }
        />
      )}
    </>
  )
}

/** What each step of the timeline adds to its status: tracking when it shipped, the reason when it ended. */
const stepDetail = (order: CompanyOrderRecord, status: ShipmentStatus) => {
  if (status === "inTransit" && order.trackingNumber !== null) {
    return ` — ${order.carrier ?? "carrier"} tracking number ${order.trackingNumber}`
  }
  if ((status === "cancelled" || status === "failed") && order.cancellationReason !== null) {
    return ` — ${order.cancellationReason}`
  }
  return ""
}

/** Placement, then each status the shipment reached with its time, oldest first. */
export const Timeline = (props: {
  readonly order: CompanyOrderRecord
  readonly statuses: ReadonlyArray<ShipmentStatusReached>
}) => (
  <ol class="timeline" aria-label="Timeline">
    <li>
      <strong>Placed</strong> <When at={props.order.createdAt} />
    </li>
    {props.statuses
      .filter((step) => step.shipmentStatus !== "orderReceived")
      .map((step) => (
        <li key={step.shipmentStatus}>
          <strong>{shipmentLabels[step.shipmentStatus]}</strong> <When at={step.reachedAt} />
          {stepDetail(props.order, step.shipmentStatus)}
        </li>
      ))}
  </ol>
)

/** The sandbox's buttons moving a test order's shipment: to its next status, or all the way to delivered. */
const SimulateForms = (props: { readonly order: CompanyOrderRecord; readonly csrf: string }) => {
  const next = shipmentSteps[shipmentSteps.indexOf(props.order.shipmentStatus as (typeof shipmentSteps)[number]) + 1]
  if (next === undefined) return null
  const action = `${orderHref(props.order.id)}/simulate`
  return (
    <section aria-labelledby="simulate-title">
      <h2 id="simulate-title">Sandbox: move the shipment</h2>
      <p class="hint">A test order moves only when you say so, as the API's simulate operation moves it.</p>
      <div class="actions">
        <form method="post" action={action}>
          <CsrfField token={props.csrf} />
          <input type="hidden" name="to" value={next} />
          <button type="submit" class="secondary">
            Move to {shipmentLabels[next]}
          </button>
        </form>
        {next === "delivered" ? null : (
          <form method="post" action={action}>
            <CsrfField token={props.csrf} />
            <input type="hidden" name="to" value="delivered" />
            <button type="submit" class="secondary">
              Move to Delivered
            </button>
          </form>
        )}
      </div>
    </section>
  )
}

export interface OrderPageProps {
  readonly csrf: string
  readonly order: CompanyOrderRecord
  readonly shown: OrderShown
  readonly statuses: ReadonlyArray<ShipmentStatusReached>
  readonly accountName: string | undefined
  /** Whether the member may cancel it (its role), and whether it still can be (its shipment). */
  readonly mayCancel: boolean
  /** Whether the sandbox buttons show: a test order, active, and a role that may place orders. */
  readonly maySimulate: boolean
}

export const OrderBody = (props: OrderPageProps) => {
  const { order, shown } = props
  const address = shown.shippingAddress
  return (
    <>
      <p>
        <a href="/dashboard/orders">All orders</a>
      </p>
      <h1>
        Order <code>{order.id}</code>
      </h1>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <Badge>{order.status}</Badge> {shipmentLabels[order.shipmentStatus]}
        </dd>
        <dt>Product</dt>
        <dd>
          {order.title} × {order.quantity}
        </dd>
        <SwappedFrom order={order} />
        <dt>Total</dt>
        <dd>{money(order.total, order.currency)}</dd>
        <dt>Charged</dt>
        <dd>
          {money(order.charged, "USD")} to billing method <code>{order.billingMethodId}</code>
        </dd>
        <dt>Account</dt>
        <dd>
          {props.accountName ?? <code>{order.accountId}</code>} ({environmentNames[order.environment]})
        </dd>
        <dt>Recipient</dt>
        <dd>
          {shown.recipient.firstName} {shown.recipient.lastName}, {shown.recipient.email}
          {shown.recipient.phone === null ? null : `, ${shown.recipient.phone}`}
        </dd>
        <dt>Ships to</dt>
        <dd>
          {[
            address.address1,
            address.address2,
            address.city,
            address.provinceCode,
            address.postalCode,
            address.countryCode
          ]
            .filter((part) => part !== null && part !== "")
            .join(", ")}
          {shown.recipientAddressHidden ? (
            <span class="hint"> (street and postal code hidden by the campaign's address privacy)</span>
          ) : null}
        </dd>
        <dt>Carrier</dt>
        <dd>{order.carrier ?? "—"}</dd>
        <dt>Tracking number</dt>
        <dd>
          {order.trackingNumber === null ? (
            "—"
          ) : order.trackingUrl === null ? (
            order.trackingNumber
          ) : (
            <a href={order.trackingUrl}>{order.trackingNumber}</a>
          )}
        </dd>
        {order.cancelledAt === null ? null : (
          <>
            <dt>{order.status === "refunded" ? "Refunded" : "Cancelled"}</dt>
            <dd>
              <When at={order.cancelledAt} />
              {order.cancellationReason === null ? null : `: ${order.cancellationReason}`}
            </dd>
          </>
        )}
        <dt>Idempotency key</dt>
        <dd>
          <code>{order.idempotencyKey}</code>
        </dd>
        {order.tags.length === 0 ? null : (
          <>
            <dt>Tags</dt>
            <dd>{order.tags.join(", ")}</dd>
          </>
        )}
        {order.giftId === null ? null : (
          <>
            <dt>Gift</dt>
            <dd>
              <code>{order.giftId}</code>
            </dd>
          </>
        )}
      </dl>
      {props.mayCancel ? (
        <p>
          <a class="button" href={`${orderHref(order.id)}/cancel`}>
            Cancel order
          </a>
        </p>
      ) : null}
      <h2>Timeline</h2>
      <Timeline order={order} statuses={props.statuses} />
      {props.maySimulate ? <SimulateForms order={order} csrf={props.csrf} /> : null}
    </>
  )
}

/** The cancel's second step: the credit it gives back, a reason, then the button. */
export const CancelBody = (props: {
  readonly csrf: string
  readonly order: CompanyOrderRecord
  readonly method: { readonly name: string; readonly currency: string } | undefined
  /** Why it can no longer be cancelled, if it cannot. */
  readonly refusal: string | undefined
}) => {
  const { order } = props
  const credit = money(order.charged, props.method?.currency ?? "USD")
  return (
    <>
      <p>
        <a href={orderHref(order.id)}>Back to the order</a>
      </p>
      <h1>
        Cancel order <code>{order.id}</code>
      </h1>
      {props.refusal !== undefined ? (
        <FormError>
          <p>{props.refusal}</p>
        </FormError>
      ) : (
        <ConfirmStep
          title="Cancel this order?"
          action={`${orderHref(order.id)}/cancel`}
          csrf={props.csrf}
          confirmLabel="Cancel the order"
          cancelHref={orderHref(order.id)}
          cancelLabel="Keep the order"
          inputs={
            <Field
              name="reason"
              label="Reason"
              hint="Shown on the order and in its webhook events."
              required={false}
              maxLength={500}
            />
          }
        >
          <p>
            The shipment stops and <strong>{credit}</strong> is credited back to{" "}
            {props.method === undefined ? "its billing method" : <strong>{props.method.name}</strong>}. This cannot be
            undone.
          </p>
        </ConfirmStep>
      )}
    </>
  )
}
