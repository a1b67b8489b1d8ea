import { Effect, Option, Schema } from "effect"
import { OrderStatus } from "../../domain/checkout/Checkout.js"
import { OrderNotFound } from "../../domain/checkout/Errors.js"
import type { OrderRecord } from "../../domain/fulfillment/Orders.js"
import { Fulfillment } from "../fulfillment/Fulfillment.js"
import { JobKind, Jobs } from "../platform/Jobs.js"
import { CheckoutPresenter, Checkouts } from "./Checkouts.js"
import { Notifications } from "./Notifications.js"

/**
 * The agent's orders (docs/decisions/0027-placement-and-orders.md; docs/checkout.md): one per placed checkout item,
 * kept by the Fulfillment service (the fulfillment context's) and shown here with their checkout's locale. Their
 * progress (`placed → processing → shipped → delivered`) is the
 * `order.advance` job, one step per `progressEvery`; a cancelled order refunds its item, and a checkout
 * whose placed orders are all cancelled becomes `refunded`. Each change appends its `order.*` event.
 */

/** One step of an order's progress. */
export const AdvanceOrder = JobKind.make("order.advance", Schema.Struct({ orderId: Schema.String, from: OrderStatus }))

/** A booked order and the locale its amounts are shown in (its checkout's). */
export interface LocalizedOrder {
  readonly row: OrderRecord
  readonly locale: string
}

export class AgentOrders extends Effect.Service<AgentOrders>()("AgentOrders", {
  dependencies: [Checkouts.Default, Fulfillment.Default, Notifications.Default, Jobs.Default],
  effect: Effect.gen(function* () {
    const presenter = yield* CheckoutPresenter
    const checkouts = yield* Checkouts
    const fulfillment = yield* Fulfillment
    const notifications = yield* Notifications
    const jobs = yield* Jobs

    /** A booked order with the locale its amounts are shown in (its checkout's). */
    const withLocale = Effect.fn("AgentOrders.withLocale")(function* (row: OrderRecord) {
      const locales = yield* checkouts.localesOf([row.checkoutId])
      return { row, locale: locales.get(row.checkoutId) ?? "en-US" } satisfies LocalizedOrder
    })

    /** The order as events show it. */
    const toOrder = (row: OrderRecord) => Effect.map(withLocale(row), ({ locale }) => presenter.order(row, locale))

    /** The user's orders, newest first. */
    const list = Effect.fn("AgentOrders.list")(function* (userId: string, options: { limit: number; cursor?: string }) {
      const page = yield* fulfillment.list(userId, options)
      const locales = yield* checkouts.localesOf([...new Set(page.rows.map((row) => row.checkoutId))])
      return {
        orders: page.rows.map((row): LocalizedOrder => ({ row, locale: locales.get(row.checkoutId) ?? "en-US" })),
        nextCursor: page.nextCursor
      }
    })

    const get = Effect.fn("AgentOrders.get")(function* (userId: string, orderId: string) {
      const row = yield* fulfillment.get(orderId, userId)
      if (Option.isNone(row)) return yield* new OrderNotFound({ message: `No order ${orderId}.`, orderId })
      return yield* withLocale(row.value)
    })

    /**
     * Cancels an order that has not shipped: its item is refunded, and the checkout becomes `refunded` once
     * every placed order is. Only once placement has settled (`confirmed` or `partially_confirmed`): while
     * the checkout is still placing, its item may not be marked placed yet.
     */
    const cancel = Effect.fn("AgentOrders.cancel")(function* (userId: string, orderId: string) {
      const existing = yield* get(userId, orderId)
      const row = yield* checkouts.refundOrder(existing.row.checkoutId, fulfillment.cancel(orderId, userId))
      return { row, locale: existing.locale } satisfies LocalizedOrder
    })

    /**
     * One step of an order's progress (the `order.advance` job), if it is still `from` (so a job run twice
     * steps once); schedules the next one.
     */
    const advance = Effect.fn("AgentOrders.advance")(function* (orderId: string, from?: OrderStatus) {
      const found = yield* fulfillment.find(orderId)
      if (Option.isNone(found)) return Option.none()
      return yield* checkouts.commit(found.value.checkoutId, (checkout) =>
        Effect.gen(function* () {
          const next = yield* fulfillment.advance(orderId, from === undefined ? {} : { from })
          if (Option.isNone(next)) return Option.none()
          const order = yield* toOrder(next.value)
          const { row } = yield* checkouts.record(checkout, `order.${order.status}` as "order.shipped", { order })
          if (order.status === "shipped") yield* notifications.shipped(row, order)
          if (order.status !== "delivered") {
            yield* jobs.enqueue(
              AdvanceOrder,
              { orderId, from: order.status },
              { key: `${orderId}:${order.status}`, delay: fulfillment.progressEvery }
            )
          }
          return Option.some(order)
        })
      )
    })

    const handler = AdvanceOrder.handle(({ from, orderId }) => advance(orderId, from))

    return { list, get, cancel, advance, handler } as const
  })
}) {}
