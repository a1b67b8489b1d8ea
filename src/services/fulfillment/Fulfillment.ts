import { SqlClient } from "@effect/sql"
import { Effect, Option, Schedule } from "effect"
import type { OrderStatus } from "../../domain/checkout/Checkout.js"
import { OrderAlreadyCancelled, OrderInTransit, OrderNotFound } from "../../domain/checkout/Errors.js"
import { type BookingRecord, nextOrderStatus, type OrderRecord } from "../../domain/fulfillment/Orders.js"
import { FieldIssue, InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { Catalog, decodeCursor, encodeCursor } from "../catalog/Catalog.js"
import { KeyTaken } from "../platform/Idempotency.js"
import { nowDate } from "../platform/Time.js"
import { FulfillmentPartner, FulfillmentRejected, type PartnerOrder } from "./FulfillmentPartner.js"
import { agentOrders, bookings, type OrderBuyer, type OrderKind, type OrderOwner, OrdersRepo } from "./OrdersRepo.js"

/**
 * The orders Ribbon places with its fulfillment partner (docs/checkout.md, docs/operations.md "Payment and
 * fulfillment providers"): the one system of record of them, in `orders` (OrdersRepo). The checkout context
 * places, shows and cancels an agent's orders through it; the company context books, moves and cancels its
 * orders' bookings through it. The partner (`FulfillmentPartner`, a port) takes each order first; the stock
 * is the catalog's (`Catalog.takeStock`, `Catalog.returnStock`).
 *
 * - Every method runs on the ambient SqlClient, so a caller can run it inside its own `sql.withTransaction`
 *   (this service's transactions then become savepoints).
 * - `place` is idempotent by `idempotencyKey`: an order with that key is returned unchanged, whatever has
 *   happened since (no second stock decrement, no error when stock has run out since). Otherwise it takes the
 *   stock and writes the order in one transaction, so concurrent calls with one key give one order and one
 *   decrement (the loser fails on the key's unique index, which rolls back its decrement, and returns the
 *   winner's order), and concurrent calls for the last units never oversell (the stock is taken by a
 *   conditional update). `bookNew` books a company order under a key made for it, with no lookup.
 * - Failures: `FulfillmentUnavailable` is transient: retry it with a Schedule. `FulfillmentRejected` is
 *   permanent (`out_of_stock`, `not_shippable`).
 * - Orders move `placed → processing → shipped → delivered` as the partner reports (`advance`), one
 *   conditional update per step; `shipped` sets the carrier, tracking number and URL. `cancel` is allowed
 *   while `placed` or `processing`, restocks tracked stock and cancels at the partner.
 */

/** A booking for a company: what the partner needs, without a buyer or checkout. */
export interface BookInput extends PartnerOrder {}

export interface PlaceInput extends BookInput {
  /** Deterministic per checkout item: the same key always names the same order. */
  readonly idempotencyKey: string
  readonly userId: string
  readonly checkoutId: string
  readonly itemIndex: number
}

export interface OrderListOptions {
  /** Clamped to 1..100. */
  readonly limit: number
  /** `nextCursor` of the previous page. */
  readonly cursor?: string | undefined
}

export interface OrderPage {
  readonly rows: ReadonlyArray<OrderRecord>
  readonly nextCursor: string | null
}

/** A cancel the partner could not answer is retried in place: exponential from 100 ms, jittered, 3 retries. */
const partnerCancelRetry = Schedule.exponential("100 millis").pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(3))
)

/** Where each status stands in an order's progress; a partner's report counts only when it is further on. */
const progressRank: Readonly<Record<OrderStatus, number>> = {
  placed: 0,
  processing: 1,
  shipped: 2,
  delivered: 3,
  cancelled: -1
}

// Cursors (the Catalog's opaque base64url keys; a malformed one is an InvalidRequest naming `cursor`)
const CURSOR_ORDERING = "orders"
const badCursor = () =>
  new InvalidRequest({
    message: "cursor: Malformed cursor.",
    errors: [FieldIssue.make({ path: "cursor", message: "Malformed cursor." })]
  })

export class Fulfillment extends Effect.Service<Fulfillment>()("Fulfillment", {
  dependencies: [Catalog.Default, OrdersRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const catalog = yield* Catalog
    const repo = yield* OrdersRepo
    const partner = yield* FulfillmentPartner

    const outOfStock = (variantId: string, quantity: number) =>
      new FulfillmentRejected({
        reason: "out_of_stock",
        variantId,
        message: `Variant ${variantId} does not have ${quantity} unit${quantity === 1 ? "" : "s"} in stock.`
      })

    /** Why the order cannot be taken: the variant does not ship to the country, or lacks the stock. */
    const refusal = (input: BookInput) =>
      Effect.gen(function* () {
        const shipsTo = yield* catalog.shipsTo(input.variantId)
        if (Option.isNone(shipsTo) || !shipsTo.value.includes(input.countryCode)) {
          return yield* new FulfillmentRejected({
            reason: "not_shippable",
            variantId: input.variantId,
            message: `Variant ${input.variantId} does not ship to ${input.countryCode}.`
          })
        }
        return yield* outOfStock(input.variantId, input.quantity)
      })

    /** What every placing call checks first: a positive quantity. */
    const admit = (input: BookInput) =>
      Effect.gen(function* () {
        yield* Effect.annotateCurrentSpan({
          "fulfillment.idempotency_key": input.idempotencyKey,
          "fulfillment.variant_id": input.variantId,
          "fulfillment.quantity": input.quantity
        })
        if (!Number.isSafeInteger(input.quantity) || input.quantity < 1) {
          return yield* Effect.dieMessage(
            `Fulfillment.place: quantity must be a positive integer, got ${input.quantity}`
          )
        }
      })

    /** The partner's part of a placing call: it takes the order, or fails. */
    const submit = (input: BookInput) =>
      partner.submit({
        idempotencyKey: input.idempotencyKey,
        variantId: input.variantId,
        productId: input.productId,
        productTitle: input.productTitle,
        variantTitle: input.variantTitle,
        quantity: input.quantity,
        amount: input.amount,
        currency: input.currency,
        countryCode: input.countryCode
      })

    /** The stock taken from the catalog, then the order written (`write`); none when the stock was not there. */
    const booking = <A, E>(input: BookInput, write: Effect.Effect<A, E>) =>
      Effect.flatMap(catalog.takeStock(input.variantId, input.countryCode, input.quantity), (taken) =>
        taken ? Effect.map(write, Option.some) : Effect.succeed(Option.none<A>())
      )

    /** In the caller's transaction when there is one (no savepoint), else in a transaction of its own. */
    const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
        Option.isSome(transaction) ? effect : sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
      )

    const newOrder = (id: string, at: Date, input: BookInput) => ({
      id,
      idempotencyKey: input.idempotencyKey,
      variantId: input.variantId,
      productId: input.productId,
      productTitle: input.productTitle,
      variantTitle: input.variantTitle,
      quantity: input.quantity,
      amount: input.amount,
      currency: input.currency,
      countryCode: input.countryCode,
      at
    })

    /**
     * Places one order of a checkout item, or returns the order already placed with its idempotency key. The
     * partner takes it, then the stock is taken and the order written in one transaction (a savepoint inside
     * the caller's): a new key, the common case, costs no lookup. When the call fails or is refused (by the
     * partner, for want of stock, or the key taken on the unique index, which rolls back the decrement), an
     * order the key already has wins: a retried placement gets its order back whatever the partner would
     * answer now, and two calls racing with one key give one order. Fails with `FulfillmentUnavailable`
     * (transient) or `FulfillmentRejected`.
     */
    const place = Effect.fn("Fulfillment.place")(function* (input: PlaceInput) {
      yield* admit(input)
      const book = Effect.gen(function* () {
        yield* submit(input)
        const id = yield* makeId
        const order = newOrder(id, yield* nowDate, input)
        const buyer: OrderBuyer = { userId: input.userId, checkoutId: input.checkoutId, itemIndex: input.itemIndex }
        const booked = yield* sql
          .withTransaction(booking(input, repo.insertOrder(order, buyer)))
          .pipe(Effect.catchTag("SqlError", Effect.die))
        if (Option.isNone(booked)) return yield* refusal(input)
        yield* Effect.logInfo("order placed").pipe(
          Effect.annotateLogs({
            orderId: id,
            userId: input.userId,
            checkoutId: input.checkoutId,
            itemIndex: input.itemIndex
          })
        )
        return booked.value
      })
      return yield* Effect.catchAll(book, (failure) =>
        Effect.gen(function* () {
          const existing = yield* repo.findByKey(input.idempotencyKey)
          if (Option.isSome(existing)) return existing.value
          if (failure instanceof KeyTaken) {
            return yield* Effect.dieMessage(`order ${input.idempotencyKey} conflicted but cannot be read`)
          }
          return yield* Effect.fail(failure)
        })
      )
    })

    /**
     * Books one order for a company under a key no order can have yet (one made for this booking, such as
     * the id of the company order being placed), in the caller's transaction: no lookup by key and no
     * savepoint, so a refusal (`FulfillmentRejected`) has written nothing. A key that does exist is a defect.
     */
    const bookNew = Effect.fn("Fulfillment.bookNew")(function* (input: BookInput) {
      yield* admit(input)
      yield* submit(input)
      const id = yield* makeId
      const inserted = yield* inTransaction(booking(input, repo.insertBooking(newOrder(id, yield* nowDate, input))))
      if (Option.isNone(inserted)) return yield* refusal(input)
      yield* Effect.logInfo("order placed").pipe(Effect.annotateLogs({ orderId: id }))
      return inserted.value
    })

    /**
     * Moves an order of `kind` one step on, as far as the partner reports: placed → processing → shipped
     * (carrier and tracking set) → delivered. None when there is nothing to do: delivered, cancelled, unknown,
     * (with `from`) no longer in `from`, no news from the partner, or changed meanwhile by a cancel or another
     * step. `from` makes a retried step idempotent.
     */
    const advanceAs = <A extends BookingRecord>(
      kind: OrderKind<A>,
      orderId: string,
      options: { readonly from?: OrderStatus | undefined } = {}
    ) =>
      Effect.gen(function* () {
        yield* Effect.annotateCurrentSpan({ "fulfillment.order_id": orderId })
        const found = yield* repo.findOwned(kind, orderId)
        if (Option.isNone(found)) return Option.none<A>()
        const current = found.value
        if (options.from !== undefined && current.status !== options.from) return Option.none<A>()
        if (nextOrderStatus[current.status] === undefined) return Option.none<A>()
        const progress = yield* partner.progress(current)
        if (Option.isNone(progress) || progressRank[progress.value.status] <= progressRank[current.status]) {
          return Option.none<A>()
        }
        const next = progress.value.status
        const at = yield* nowDate
        // Conditional: a concurrent change (a cancel, another advance) wins, and this step does nothing.
        const updated = yield* repo.step(kind, {
          id: orderId,
          from: current.status,
          to: next,
          at,
          tracking: progress.value.tracking
        })
        if (Option.isSome(updated)) yield* Effect.logInfo(`order ${next}`).pipe(Effect.annotateLogs({ orderId }))
        return updated
      })

    /** An agent's order one step on (see `advanceAs`). */
    const advance = Effect.fn("Fulfillment.advance")(
      (orderId: string, options: { readonly from?: OrderStatus | undefined } = {}) =>
        advanceAs(agentOrders, orderId, options)
    )

    /** A company's booking one step on (see `advanceAs`). */
    const advanceBooking = Effect.fn("Fulfillment.advanceBooking")(
      (orderId: string, options: { readonly from?: OrderStatus | undefined } = {}) =>
        advanceAs(bookings, orderId, options)
    )

    /** The user's order. */
    const get = Effect.fn("Fulfillment.get")(function* (orderId: string, userId: string) {
      return yield* repo.findOwned(agentOrders, orderId, { userId })
    })

    /** An order, whoever placed it (the progress job's). */
    const find = Effect.fn("Fulfillment.find")(function* (orderId: string) {
      return yield* repo.findById(orderId)
    })

    /**
     * Cancels an order (of `owner`) while it is placed or processing, puts its quantity back in stock (when
     * stock is tracked) and cancels it at the partner, in one transaction: a partner that has shipped it
     * (`FulfillmentRejected`) leaves it as it was, OrderInTransit. Shipped or delivered: OrderInTransit;
     * cancelled: OrderAlreadyCancelled; unknown or another owner's: OrderNotFound. A partner still
     * unavailable after the retries fails it with `FulfillmentUnavailable`, the order unchanged.
     */
    const cancelAs = <A extends BookingRecord>(kind: OrderKind<A>, orderId: string, owner: OrderOwner) =>
      Effect.gen(function* () {
        yield* Effect.annotateCurrentSpan({ "fulfillment.order_id": orderId })
        const now = yield* nowDate
        return yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const cancelled = yield* repo.cancel(kind, orderId, owner, now)
              if (Option.isSome(cancelled)) {
                const order = cancelled.value
                yield* catalog.returnStock(order.variantId, order.quantity)
                yield* partner.cancel(order).pipe(
                  Effect.retry({ schedule: partnerCancelRetry, while: (e) => e._tag === "FulfillmentUnavailable" }),
                  Effect.catchTag("FulfillmentRejected", () =>
                    Effect.fail(
                      new OrderInTransit({
                        message: `Order ${orderId} has shipped; it can no longer be cancelled.`,
                        orderId,
                        orderStatus: "shipped"
                      })
                    )
                  )
                )
                yield* Effect.logInfo("order cancelled").pipe(Effect.annotateLogs({ orderId }))
                return order
              }
              const current = yield* repo.findOwned(kind, orderId, owner)
              if (Option.isNone(current)) {
                return yield* new OrderNotFound({ message: `No order ${orderId}.`, orderId })
              }
              const status = current.value.status
              if (status === "cancelled") {
                return yield* new OrderAlreadyCancelled({ message: `Order ${orderId} is already cancelled.`, orderId })
              }
              if (status === "shipped" || status === "delivered") {
                return yield* new OrderInTransit({
                  message: `Order ${orderId} has ${status === "shipped" ? "shipped" : "been delivered"}; it can no longer be cancelled.`,
                  orderId,
                  orderStatus: status
                })
              }
              // Statuses only move forward, so a missed update cannot see placed or processing again.
              return yield* Effect.dieMessage(`order ${orderId} could not be cancelled from ${status}`)
            })
          )
          .pipe(Effect.catchTag("SqlError", Effect.die))
      })

    /** Cancels the user's order (see `cancelAs`); a partner still unavailable is a defect (500). */
    const cancel = Effect.fn("Fulfillment.cancel")((orderId: string, userId: string) =>
      cancelAs(agentOrders, orderId, { userId }).pipe(Effect.catchTag("FulfillmentUnavailable", Effect.die))
    )

    /** Cancels a company's booking (see `cancelAs`). */
    const cancelBooking = Effect.fn("Fulfillment.cancelBooking")((orderId: string) =>
      cancelAs(bookings, orderId, bookings.owner)
    )

    /**
     * The user's orders, newest first (created_at, then id, descending), `limit` (1..100) at a time.
     * A malformed cursor fails with InvalidRequest naming `cursor`.
     */
    const list = Effect.fn("Fulfillment.list")(function* (userId: string, options: OrderListOptions) {
      const limit = Math.min(100, Math.max(1, Math.trunc(options.limit) || 1))
      let after: { readonly createdAt: Date; readonly id: string } | undefined
      if (options.cursor !== undefined) {
        const [millis, id] = yield* decodeCursor(options.cursor, CURSOR_ORDERING, 2)
        if (!(Number.isSafeInteger(millis) && typeof id === "string" && /^[0-9a-f]{24}$/.test(id))) {
          return yield* badCursor()
        }
        after = { createdAt: new Date(millis as number), id }
      }
      const page = yield* repo.pageForUser(userId, after, limit + 1)
      const rows = page.slice(0, limit)
      const last = rows[rows.length - 1]
      const nextCursor =
        page.length > limit && last !== undefined
          ? encodeCursor({ s: CURSOR_ORDERING, k: [last.createdAt.getTime(), last.id] })
          : null
      return { rows, nextCursor } satisfies OrderPage as OrderPage
    })

    /** The orders of a checkout, by item index. */
    const forCheckout = Effect.fn("Fulfillment.forCheckout")(function* (checkoutId: string) {
      return yield* repo.forCheckout(checkoutId)
    })

    return {
      /** How often an order's progress is asked for (the partner's). */
      progressEvery: partner.progressEvery,
      place,
      bookNew,
      advance,
      advanceBooking,
      cancel,
      cancelBooking,
      get,
      find,
      list,
      forCheckout
    } as const
  })
}) {}
