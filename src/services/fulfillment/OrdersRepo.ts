import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { OrderStatus } from "../../domain/checkout/Checkout.js"
import { BookingRecord, OrderRecord, type Tracking } from "../../domain/fulfillment/Orders.js"
import { KeyTaken } from "../platform/Idempotency.js"
import { isUniqueViolation } from "../platform/Rows.js"
import type { PartnerOrder } from "./FulfillmentPartner.js"

/**
 * Whose orders a statement reaches: one user's, every agent's (rows with a buyer), or the companies' bookings
 * (rows without one).
 */
export type OrderOwner = { readonly userId: string } | "agents" | "companies"

/** How a kind of order is read: an agent's with its buyer and checkout, a company's booking without. */
export interface OrderKind<A> {
  readonly record: Schema.Schema<A, any>
  readonly owner: "agents" | "companies"
}
export const agentOrders: OrderKind<OrderRecord> = { record: OrderRecord, owner: "agents" }
export const bookings: OrderKind<BookingRecord> = { record: BookingRecord, owner: "companies" }

/** A new order's row: what the partner took, who it is for (none: a company's booking), when. */
export interface NewOrder extends PartnerOrder {
  readonly id: string
  readonly at: Date
}

export interface OrderBuyer {
  readonly userId: string
  readonly checkoutId: string
  readonly itemIndex: number
}

/** One step of an order: from `from` to `to` at `at`, with the tracking once shipped. */
export interface OrderStep {
  readonly id: string
  readonly from: OrderStatus
  readonly to: OrderStatus
  readonly at: Date
  readonly tracking: Option.Option<Tracking>
}

/**
 * The `orders` table: the one record of what Ribbon ordered from its fulfillment partner. Only the
 * Fulfillment service uses it; checkout and company reach orders through that service. Every method runs on
 * the ambient connection, so it joins the caller's transaction. Unexpected database errors are defects.
 */
export class OrdersRepo extends Effect.Service<OrdersRepo>()("OrdersRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The one row a statement returns (none when it returns none), decoded as `record`. */
    const one =
      <A, I>(record: Schema.Schema<A, I>) =>
      (statement: Statement.Statement<unknown>) =>
        SqlSchema.findOne({ Request: Schema.Void, Result: record, execute: () => statement })(undefined)
    const all = (statement: Statement.Statement<unknown>) =>
      Effect.orDie(
        SqlSchema.findAll({ Request: Schema.Void, Result: OrderRecord, execute: () => statement })(undefined)
      )

    const owned = (owner: OrderOwner) =>
      owner === "agents"
        ? sql`user_id IS NOT NULL`
        : owner === "companies"
          ? sql`user_id IS NULL`
          : sql`user_id = ${owner.userId}`

    const insertStatement = (order: NewOrder, buyer: OrderBuyer | null) => sql`
      INSERT INTO orders (id, idempotency_key, user_id, checkout_id, item_index, variant_id, product_id,
        product_title, variant_title, quantity, amount, currency, country_code, status, created_at, updated_at)
      VALUES (${order.id}, ${order.idempotencyKey}, ${buyer?.userId ?? null}, ${buyer?.checkoutId ?? null},
        ${buyer?.itemIndex ?? null}::int, ${order.variantId}, ${order.productId}, ${order.productTitle},
        ${order.variantTitle}, ${order.quantity}::int, ${order.amount}::int, ${order.currency}, ${order.countryCode},
        'placed', ${order.at}::timestamptz, ${order.at}::timestamptz)
      RETURNING *`

    /** Writes an agent's order; `KeyTaken` when an order already has its key (the unique index). */
    const insertOrder = Effect.fn("OrdersRepo.insertOrder")((order: NewOrder, buyer: OrderBuyer) =>
      one(OrderRecord)(insertStatement(order, buyer)).pipe(
        Effect.flatMap((row) =>
          Option.isSome(row) ? Effect.succeed(row.value) : Effect.dieMessage(`order ${order.id} was not written`)
        ),
        Effect.catchAll((error) =>
          error._tag === "SqlError" && isUniqueViolation(error) ? Effect.fail(new KeyTaken()) : Effect.die(error)
        )
      )
    )

    /** Writes a company's booking under a key no order has yet (one that has is a defect). */
    const insertBooking = Effect.fn("OrdersRepo.insertBooking")((order: NewOrder) =>
      one(BookingRecord)(insertStatement(order, null)).pipe(
        Effect.orDie,
        Effect.flatMap((row) =>
          Option.isSome(row) ? Effect.succeed(row.value) : Effect.dieMessage(`booking ${order.id} was not written`)
        )
      )
    )

    /** The order with this idempotency key. */
    const findByKey = Effect.fn("OrdersRepo.findByKey")((idempotencyKey: string) =>
      Effect.orDie(one(OrderRecord)(sql`SELECT * FROM orders WHERE idempotency_key = ${idempotencyKey}`))
    )

    /** An order, whoever placed it. */
    const findById = Effect.fn("OrdersRepo.findById")((id: string) =>
      Effect.orDie(one(OrderRecord)(sql`SELECT * FROM orders WHERE id = ${id}`))
    )

    /** An order of `owner`, read as `kind`. */
    const findOwned = <A>(kind: OrderKind<A>, id: string, owner: OrderOwner = kind.owner) =>
      Effect.orDie(one(kind.record)(sql`SELECT * FROM orders WHERE id = ${id} AND ${owned(owner)}`)).pipe(
        Effect.withSpan("OrdersRepo.findOwned")
      )

    /** The step, if the order is still `from` (a concurrent change wins); the row as it now is. */
    const step = <A>(kind: OrderKind<A>, change: OrderStep) => {
      const { at } = change
      let extra = sql``
      if (change.to === "shipped") {
        extra = Option.match(change.tracking, {
          onNone: () => sql`, shipped_at = ${at}`,
          onSome: (tracking) => sql`, carrier = ${tracking.carrier}, tracking_number = ${tracking.trackingNumber},
          tracking_url = ${tracking.trackingUrl}, shipped_at = ${at}`
        })
      } else if (change.to === "delivered") {
        extra = sql`, delivered_at = ${at}`
      }
      return Effect.orDie(
        one(kind.record)(sql`
        UPDATE orders SET status = ${change.to}, updated_at = ${at} ${extra}
        WHERE id = ${change.id} AND status = ${change.from}
        RETURNING *`)
      ).pipe(Effect.withSpan("OrdersRepo.step"))
    }

    /** Cancels the order of `owner` if it is placed or processing; the cancelled row, or none. */
    const cancel = <A>(kind: OrderKind<A>, id: string, owner: OrderOwner, at: Date) =>
      Effect.orDie(
        one(kind.record)(sql`
              UPDATE orders SET status = 'cancelled', cancelled_at = ${at}, updated_at = ${at}
              WHERE id = ${id} AND ${owned(owner)} AND status IN ('placed', 'processing')
              RETURNING *`)
      ).pipe(Effect.withSpan("OrdersRepo.cancel"))

    /** The user's orders after `after` (created_at, then id, descending), `limit` of them. */
    const pageForUser = Effect.fn("OrdersRepo.pageForUser")(
      (userId: string, after: { readonly createdAt: Date; readonly id: string } | undefined, limit: number) =>
        all(sql`
        SELECT * FROM orders
        WHERE user_id = ${userId}
          ${after === undefined ? sql`` : sql`AND (created_at, id) < (${after.createdAt}::timestamptz, ${after.id})`}
        ORDER BY created_at DESC, id DESC
        LIMIT ${limit}`)
    )

    /** The orders of a checkout, by item index. */
    const forCheckout = Effect.fn("OrdersRepo.forCheckout")((checkoutId: string) =>
      all(sql`SELECT * FROM orders WHERE checkout_id = ${checkoutId} ORDER BY item_index, id`)
    )

    return {
      insertOrder,
      insertBooking,
      findByKey,
      findById,
      findOwned,
      step,
      cancel,
      pageForUser,
      forCheckout
    } as const
  })
}) {}
