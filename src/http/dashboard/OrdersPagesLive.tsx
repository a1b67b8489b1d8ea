import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import type { Environment } from "../../domain/company/Company.js"
import {
  type CompanyOrderRecord,
  type CompanyOrderStatus,
  cancellable,
  nextShipmentStatus,
  type ShipmentStatus
} from "../../domain/company/Orders.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { Accounts } from "../../services/company/Accounts.js"
import { Billing } from "../../services/company/Billing.js"
import { CompanyOrders } from "../../services/company/CompanyOrders.js"
import { readMode } from "../../services/company/Masking.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Api } from "../Api.js"
import { SimulateOrderV3 } from "../company/OrdersApi.js"
import { orderV3 } from "../company/v3.js"
import { money } from "./format.js"
import { dashboardPage } from "./layout.js"
import {
  CancelBody,
  OrderBody,
  type OrderFilterValues,
  OrdersListBody,
  orderHref,
  orderStatuses,
  shipmentLabels,
  shipmentStatuses
} from "./ordersViews.js"
import { forbiddenPage, notFoundPage } from "./pages.js"
import { dateRangeOf, pageNumber } from "./params.js"
import { type CurrentMember, holds, makeDashboardAuth } from "./session.js"

/** Orders per page. */
const ordersPerPage = 20
/** The most accounts the account filter offers (by name). */
const accountsOffered = 100
/** The longest search the list takes. */
const searchMaxLength = 200

const section = { section: "/dashboard/orders" } as const

/** Where the sandbox may move a test order's shipment: the API's simulate operation's statuses. */
const simulatedStatuses = SimulateOrderV3.fields.fulfillmentStatus.literals

const redirect = (to: string) => HttpServerResponse.redirect(to, { status: 303 })

const queryOf = (filters: Record<string, string>, page: number, size: number): V3Query => ({
  filters,
  include: [],
  fields: [],
  sort: [],
  page: { number: page, size, cursor: undefined }
})

/** The member's read mode of orders, as the API's middleware works out a key's: none is no access. */
const readModeOf = (current: CurrentMember) => readMode(current.grant.permissions, "orders")

/** The environments an order may be in for this company: test, and live once the company is live. */
const environmentsOf = (current: CurrentMember): ReadonlyArray<Environment> =>
  current.company.live ? ["live", "test"] : ["test"]

/**
 * The dashboard's orders (docs/dashboard.md "Orders"), for every role (each reads orders, masked or not): the same
 * operations as `/public-api/v3/orders` (`CompanyOrders.page`, `timeline`, `cancel`, `simulate`) under the member's
 * scope, the recipient shown as the API shows it to a key of the member's permissions (`orderV3`).
 */
export const OrdersPagesLive = HttpApiBuilder.group(Api, "dashboardOrders", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const orders = yield* CompanyOrders
    const accounts = yield* Accounts
    const billing = yield* Billing
    const policy = yield* CompanyPolicy

    // No account named, so none to refuse: the scope cannot fail.
    const scopeOf = (current: CurrentMember, environment: Environment) =>
      Effect.orDie(policy.scopeForMember(current.member, environment))

    /** The order with its timeline in whichever of the company's environments the member reaches it; none: 404. */
    const timelineOf = (current: CurrentMember, orderId: string) =>
      Effect.firstSuccessOf(
        environmentsOf(current).map((environment) =>
          Effect.flatMap(scopeOf(current, environment), (scope) =>
            Effect.map(orders.timeline(scope, orderId), (found) => ({ ...found, scope }))
          )
        )
      ).pipe(Effect.option)

    /** The accounts of `environment` the member reaches, the first `accountsOffered` by name. */
    const accountsIn = (current: CurrentMember, environment: Environment) =>
      Effect.flatMap(scopeOf(current, environment), (scope) =>
        Effect.map(
          accounts.page(scope, queryOf({}, 1, accountsOffered)),
          (found) => found.rows as ReadonlyArray<{ readonly id: string; readonly name: string }>
        )
      )

    /** A page of a reader of orders: the 403 page for a role reading none (no role today). */
    const readerPage = <E, R>(
      request: HttpServerRequest.HttpServerRequest,
      body: (
        current: CurrentMember,
        mode: "masked" | "unmasked"
      ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) =>
      auth.page(request, {}, (current) => {
        const mode = readModeOf(current)
        return mode === "none" ? Effect.succeed(forbiddenPage(current)) : body(current, mode)
      })

    const orderPage = (current: CurrentMember, orderId: string, mode: "masked" | "unmasked") =>
      Effect.gen(function* () {
        const found = yield* timelineOf(current, orderId)
        if (Option.isNone(found)) return notFoundPage(current)
        const { order, statuses } = found.value
        const names = yield* accountsIn(current, order.environment)
        return dashboardPage(
          `Order ${order.id}`,
          current,
          <OrderBody
            csrf={current.csrf}
            order={order}
            shown={orderV3(order, mode)}
            statuses={statuses}
            accountName={names.find((account) => account.id === order.accountId)?.name}
            mayCancel={
              holds(current.grant, "orders:cancel") && order.status === "active" && cancellable(order.shipmentStatus)
            }
            maySimulate={
              order.environment === "test" &&
              order.status === "active" &&
              holds(current.grant, "orders:create") &&
              nextShipmentStatus(order.shipmentStatus) !== undefined
            }
          />,
          section
        )
      })

    /** Why an order can no longer be cancelled, in the confirm step's words; none while it can. */
    const refusalOf = (order: CompanyOrderRecord) =>
      order.status !== "active"
        ? `This order is already ${order.status}.`
        : cancellable(order.shipmentStatus)
          ? undefined
          : `This order is ${shipmentLabels[order.shipmentStatus].toLowerCase()}: it can no longer be cancelled.`

    return handlers
      .handle("list", ({ request, urlParams }) =>
        readerPage(request, (current, mode) =>
          Effect.gen(function* () {
            const environment: Environment = current.company.live && urlParams.environment !== "test" ? "live" : "test"
            const dates = dateRangeOf(urlParams)
            const filters: OrderFilterValues = {
              environment: current.company.live ? environment : "",
              status: urlParams.status.trim(),
              fulfillment: urlParams.fulfillment.trim(),
              account: urlParams.account.trim(),
              q: urlParams.q.trim(),
              ...dates.filters
            }
            const offered = yield* accountsIn(current, environment)
            const problems = [...dates.problems]
            if (filters.status !== "" && !orderStatuses.includes(filters.status as CompanyOrderStatus)) {
              problems.push(`Status: expected one of ${orderStatuses.join(", ")}.`)
            }
            if (filters.fulfillment !== "" && !shipmentStatuses.includes(filters.fulfillment as ShipmentStatus)) {
              problems.push(`Fulfillment status: expected one of ${shipmentStatuses.join(", ")}.`)
            }
            if (filters.account !== "" && !offered.some((account) => account.id === filters.account)) {
              problems.push("Account: not one of the accounts you reach here.")
            }
            if (filters.q.length > searchMaxLength) {
              problems.push(`Search: at most ${searchMaxLength} characters.`)
            }
            const page = pageNumber(urlParams.page)
            const links = { path: "/dashboard/orders", params: { ...filters }, page, hasNext: false }
            const body = (shown: ReadonlyArray<ReturnType<typeof orderV3>>, hasNext: boolean, status: number) =>
              dashboardPage(
                "Orders",
                current,
                <OrdersListBody
                  live={current.company.live}
                  environment={environment}
                  filters={filters}
                  problems={problems}
                  accounts={offered}
                  searchesRecipients={mode === "unmasked"}
                  orders={shown}
                  links={{ ...links, hasNext }}
                />,
                { ...section, status }
              )
            if (problems.length > 0) return body([], false, 400)
            const sqlFilters: Record<string, string> = {}
            if (filters.status !== "") sqlFilters.status = filters.status
            if (filters.fulfillment !== "") sqlFilters.shipmentStatus = filters.fulfillment
            if (filters.account !== "") sqlFilters.accountId = filters.account
            if (dates.from !== null) sqlFilters["createdAt][gte"] = dates.from.toISOString()
            if (dates.until !== null) sqlFilters["createdAt][lt"] = dates.until.toISOString()
            // A member reading recipients masked may not find an order by them: the id alone.
            if (filters.q !== "") sqlFilters[mode === "unmasked" ? "search" : "orderId"] = filters.q
            const scope = yield* scopeOf(current, environment)
            const found = yield* orders.page(scope, queryOf(sqlFilters, page, ordersPerPage))
            return body(
              found.rows.map((order) => orderV3(order, mode)),
              found.hasNext,
              200
            )
          })
        )
      )
      .handle("order", ({ request, path }) =>
        readerPage(request, (current, mode) => orderPage(current, path.orderId, mode))
      )
      .handle("confirmCancel", ({ request, path }) =>
        auth.page(request, { require: "orders:cancel" }, (current) =>
          Effect.gen(function* () {
            const found = yield* timelineOf(current, path.orderId)
            if (Option.isNone(found)) return notFoundPage(current)
            const { order, scope } = found.value
            const method = yield* billing.find(scope, order.billingMethodId).pipe(Effect.option)
            return dashboardPage(
              `Cancel order ${order.id}`,
              current,
              <CancelBody
                csrf={current.csrf}
                order={order}
                method={Option.getOrUndefined(method)}
                refusal={refusalOf(order)}
              />,
              section
            )
          })
        )
      )
      .handle("cancel", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, { require: "orders:cancel" }, (current) =>
          Effect.gen(function* () {
            const found = yield* timelineOf(current, path.orderId)
            if (Option.isNone(found)) return notFoundPage(current)
            const { order, scope } = found.value
            const back = redirect(orderHref(order.id))
            const reason = payload.reason.trim()
            if (reason.length > 500) {
              return auth.withFlash(redirect(`${orderHref(order.id)}/cancel`), {
                kind: "error",
                text: "Reason: at most 500 characters. The order was not cancelled."
              })
            }
            const cancelled = yield* orders.cancel(scope, order.id, reason === "" ? undefined : reason).pipe(
              Effect.map((closed) => ({ closed })),
              Effect.catchTags({
                CompanyOrderNotFound: () => Effect.succeed(undefined),
                OrderNotCancellable: (e) => Effect.succeed({ refused: e.message }),
                OrderAlreadyClosed: (e) => Effect.succeed({ refused: e.message })
              })
            )
            if (cancelled === undefined) return notFoundPage(current)
            if ("refused" in cancelled) return auth.withFlash(back, { kind: "error", text: cancelled.refused })
            const method = yield* billing.find(scope, order.billingMethodId).pipe(Effect.option)
            const credited = money(
              cancelled.closed.charged,
              Option.match(method, { onNone: () => "USD", onSome: (m) => m.currency })
            )
            return auth.withFlash(back, {
              kind: "success",
              text: `Order cancelled: ${credited} credited back to ${Option.match(method, {
                onNone: () => "its billing method",
                onSome: (m) => m.name
              })}.`
            })
          })
        )
      )
      .handle("simulate", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, { require: "orders:create" }, (current) =>
          Effect.gen(function* () {
            // Test orders only, as the API's simulate is for test keys only: a live order is not found here.
            const scope = yield* scopeOf(current, "test")
            const found = yield* orders.get(scope, path.orderId).pipe(Effect.option)
            if (Option.isNone(found)) return notFoundPage(current)
            const back = redirect(orderHref(found.value.id))
            const to = simulatedStatuses.find((status) => status === payload.to)
            if (to === undefined) {
              return auth.withFlash(back, {
                kind: "error",
                text: `Expected a status to move the shipment to: ${simulatedStatuses.join(", ")}.`
              })
            }
            // "Move to Delivered" takes each step in turn, as a client of the API would; any other move is one step,
            // and a move the order cannot make is the API's refusal.
            let at: ShipmentStatus = found.value.shipmentStatus
            const steps: Array<ShipmentStatus> = []
            if (to === "delivered") {
              for (let next = nextShipmentStatus(at); next !== undefined; next = nextShipmentStatus(next)) {
                steps.push(next)
              }
            }
            if (steps.length === 0) steps.push(to)
            for (const step of steps) {
              const moved = yield* orders.simulate(scope, found.value.id, step).pipe(
                Effect.map((order) => order.shipmentStatus),
                Effect.catchTags({
                  CompanyOrderNotFound: () => Effect.succeed(undefined),
                  SimulationRefused: (e) => Effect.succeed({ refused: e.message })
                })
              )
              if (moved === undefined) return notFoundPage(current)
              if (typeof moved !== "string") return auth.withFlash(back, { kind: "error", text: moved.refused })
              at = moved
            }
            return auth.withFlash(back, { kind: "success", text: `The shipment is now ${shipmentLabels[at]}.` })
          })
        )
      )
  })
)
