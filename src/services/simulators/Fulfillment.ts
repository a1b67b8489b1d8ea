import { createHash } from "node:crypto"
import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Context, Data, Duration, Effect, Layer, Option, Random, Ref, Schema } from "effect"
import { OrderStatus } from "../../domain/checkout/Checkout.js"
import { OrderAlreadyCancelled, OrderInTransit, OrderNotFound } from "../../domain/checkout/Errors.js"
import { FieldIssue, InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { Catalog, decodeCursor, encodeCursor } from "../catalog/Catalog.js"
import { KeyTaken } from "../platform/Idempotency.js"
import { isUniqueViolation } from "../platform/Rows.js"
import { nowDate } from "../platform/Time.js"

/**
 * The Fulfillment simulator: the supplier Ribbon places orders with (docs/decisions/0027-placement-and-orders.md,
 * docs/checkout.md). It owns the SQL of the `orders` table.
 *
 * - Every method runs on the ambient SqlClient, so a caller can run it inside its own `sql.withTransaction`
 *   (the simulator's own transactions then become savepoints). Times come from `Clock`, randomness from
 *   `Random`, simulated latency from `Effect.sleep`: tests drive them with TestClock and a seeded Random.
 * - `place` is idempotent by `idempotencyKey`: an order with that key is returned unchanged, whatever has
 *   happened since (no second stock decrement, no error when stock has run out since). Otherwise one
 *   statement takes the stock by a conditional `UPDATE` and inserts the order from what it took, so
 *   concurrent calls with one key give one order and one decrement (the loser fails on the key's unique
 *   index, which undoes its decrement, and returns the winner's order), and concurrent calls for the last
 *   units never oversell. `bookNew` books a company order under a key made for it with the same statement,
 *   and no lookup.
 * - Failures: `FulfillmentUnavailable` is transient (forced, or drawn with `failureRate`): retry it with
 *   a Schedule. `FulfillmentRejected` is permanent (`out_of_stock`, `not_shippable`).
 * - Orders move `placed → processing → shipped → delivered` (`advance`), one conditional update per
 *   step; `shipped` sets the carrier, tracking number and URL (deterministic from the order id and the
 *   checkout's country). `cancel` is allowed while `placed` or `processing` and restocks tracked stock.
 */

// ---------------------------------------------------------------------------------------------------------
// Settings

export interface FulfillmentSettingsShape {
  /** Simulated supplier latency of every `place` call (Effect.sleep, so TestClock drives it). */
  readonly latency: Duration.Duration
  /** Probability (0..1) that a `place` call fails transiently, drawn from Effect's `Random`. */
  readonly failureRate: number
  /** How long an order stays in each of placed, processing and shipped before the next step. */
  readonly progressEvery: Duration.Duration
}

export interface FulfillmentSettingsInput {
  readonly latency?: Duration.DurationInput
  readonly failureRate?: number
  readonly progressEvery?: Duration.DurationInput
}

/** Settings with defaults: no latency, no random failures, one step a minute. Dies on an out-of-range rate. */
export const makeFulfillmentSettings = (input: FulfillmentSettingsInput = {}): FulfillmentSettingsShape => {
  const failureRate = input.failureRate ?? 0
  if (!(failureRate >= 0 && failureRate <= 1)) {
    throw new RangeError(`FulfillmentSettings: failureRate must be within 0..1, got ${failureRate}`)
  }
  return {
    latency: Duration.decode(input.latency ?? Duration.zero),
    failureRate,
    progressEvery: Duration.decode(input.progressEvery ?? Duration.minutes(1))
  }
}

export class FulfillmentSettings extends Context.Tag("FulfillmentSettings")<
  FulfillmentSettings,
  FulfillmentSettingsShape
>() {
  /** These settings (the rest default). */
  static readonly layer = (input: FulfillmentSettingsInput = {}): Layer.Layer<FulfillmentSettings> =>
    Layer.sync(FulfillmentSettings, () => makeFulfillmentSettings(input))

  /** latency 0, failureRate 0, progressEvery 1 minute. */
  static readonly Default: Layer.Layer<FulfillmentSettings> = Layer.sync(FulfillmentSettings, () =>
    makeFulfillmentSettings()
  )
}

// ---------------------------------------------------------------------------------------------------------
// Errors (internal to the simulator's callers: they never reach HTTP directly)

/** The supplier could not take the order just now: retry later (with a Schedule). */
export class FulfillmentUnavailable extends Data.TaggedError("FulfillmentUnavailable")<{
  readonly variantId: string
  readonly message: string
}> {}

export type FulfillmentRejectionReason = "out_of_stock" | "not_shippable"

/** The supplier refuses the order for good. */
export class FulfillmentRejected extends Data.TaggedError("FulfillmentRejected")<{
  readonly reason: FulfillmentRejectionReason
  readonly variantId: string
  readonly message: string
}> {}

// ---------------------------------------------------------------------------------------------------------
// Rows

/** A row of `orders`, camelCase. */
export const OrderRow = Schema.Struct({
  id: Schema.String,
  idempotencyKey: Schema.String,
  userId: Schema.String,
  checkoutId: Schema.String,
  itemIndex: Schema.Int,
  variantId: Schema.String,
  productId: Schema.String,
  productTitle: Schema.String,
  variantTitle: Schema.String,
  quantity: Schema.Int,
  amount: Schema.Int,
  currency: Schema.String,
  /** Where it ships; null only on orders older than the column whose checkout was gone. */
  countryCode: Schema.NullOr(Schema.String),
  status: OrderStatus,
  carrier: Schema.NullOr(Schema.String),
  trackingNumber: Schema.NullOr(Schema.String),
  trackingUrl: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf,
  shippedAt: Schema.NullOr(Schema.DateFromSelf),
  deliveredAt: Schema.NullOr(Schema.DateFromSelf),
  cancelledAt: Schema.NullOr(Schema.DateFromSelf)
})
export interface OrderRow extends Schema.Schema.Type<typeof OrderRow> {}

/**
 * An order booked for a company (v3 orders, v2 gifts): an `orders` row without a buyer or checkout
 * (`user_id`, `checkout_id` and `item_index` are null). The company context keeps the rest of it.
 */
export const BookingRow = OrderRow.pipe(Schema.omit("userId", "checkoutId", "itemIndex"))
export interface BookingRow extends Schema.Schema.Type<typeof BookingRow> {}

/** A booking for a company: what the supplier needs, without a buyer or checkout. */
export interface BookInput {
  /** The same key always names the same order. */
  readonly idempotencyKey: string
  readonly variantId: string
  readonly productId: string
  readonly productTitle: string
  readonly variantTitle: string
  /** A positive integer. */
  readonly quantity: number
  /** Minor units of `currency`. */
  readonly amount: number
  readonly currency: string
  /** Where the order ships: the variant must ship there. */
  readonly countryCode: string
}

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

export interface OrderPageRows {
  readonly rows: ReadonlyArray<OrderRow>
  readonly nextCursor: string | null
}

export type ForcedFailureKind = "transient" | "out_of_stock"

/** The step after each status; delivered and cancelled have none. */
export const nextOrderStatus: Readonly<Partial<Record<OrderStatus, OrderStatus>>> = {
  placed: "processing",
  processing: "shipped",
  shipped: "delivered"
}

// ---------------------------------------------------------------------------------------------------------
// Carriers and tracking (pure, deterministic)

export interface Tracking {
  readonly carrier: string
  readonly trackingNumber: string
  readonly trackingUrl: string
}

interface Carrier {
  readonly name: string
  readonly number: (bytes: Uint8Array) => string
  readonly url: (trackingNumber: string) => string
}

const digits = (bytes: Uint8Array, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => String(bytes[(from + i) % bytes.length]! % 10)).join("")
const letters = (bytes: Uint8Array, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => String.fromCharCode(65 + (bytes[(from + i) % bytes.length]! % 26))).join("")
const alphanumerics = (bytes: Uint8Array, from: number, count: number) =>
  Array.from(
    { length: count },
    (_, i) => "0123456789ABCDEFGHJKLMNPRSTVWXYZ"[bytes[(from + i) % bytes.length]! % 32]
  ).join("")

const UPS: Carrier = {
  name: "UPS",
  number: (b) => `1Z${alphanumerics(b, 1, 6)}03${digits(b, 7, 8)}`,
  url: (n) => `https://www.ups.com/track?tracknum=${n}`
}
const FEDEX: Carrier = {
  name: "FedEx",
  number: (b) => `7${digits(b, 1, 11)}`,
  url: (n) => `https://www.fedex.com/fedextrack/?trknbr=${n}`
}
const USPS: Carrier = {
  name: "USPS",
  number: (b) => `9400${digits(b, 1, 18)}`,
  url: (n) => `https://tools.usps.com/go/TrackConfirmAction?tLabels=${n}`
}
const DHL: Carrier = {
  name: "DHL",
  number: (b) => `${1 + (b[1]! % 9)}${digits(b, 2, 9)}`,
  url: (n) => `https://www.dhl.com/global-en/home/tracking/tracking-express.html?submit=1&tracking-id=${n}`
}
const ROYAL_MAIL: Carrier = {
  name: "Royal Mail",
  number: (b) => `${letters(b, 1, 2)}${digits(b, 3, 9)}GB`,
  url: (n) => `https://www.royalmail.com/track-your-item#/tracking-results/${n}`
}
const JAPAN_POST: Carrier = {
  name: "Japan Post",
  number: (b) => `E${letters(b, 1, 1)}${digits(b, 2, 9)}JP`,
  url: (n) => `https://trackings.post.japanpost.jp/services/srv/search/direct?reqCodeNo1=${n}&locale=en`
}
const CANADA_POST: Carrier = {
  name: "Canada Post",
  number: (b) => digits(b, 1, 16),
  url: (n) => `https://www.canadapost-postescanada.ca/track-reperer/en#/search?searchFor=${n}`
}

/** Carriers per destination country; elsewhere one of the international express carriers. */
const carriersByCountry: Readonly<Record<string, ReadonlyArray<Carrier>>> = {
  US: [UPS, FEDEX, USPS],
  CA: [CANADA_POST, UPS],
  GB: [ROYAL_MAIL, DHL],
  JP: [JAPAN_POST],
  DE: [DHL]
}
const internationalCarriers: ReadonlyArray<Carrier> = [DHL, UPS, FEDEX]

/** The carrier, tracking number and tracking URL of an order: the same for the same order id, always. */
export const trackingFor = (orderId: string, countryCode: string | null): Tracking => {
  const bytes = createHash("sha256").update(`ribbon-tracking:${orderId}`).digest()
  const carriers = carriersByCountry[countryCode ?? ""] ?? internationalCarriers
  const carrier = carriers[bytes[0]! % carriers.length]!
  const trackingNumber = carrier.number(bytes)
  return { carrier: carrier.name, trackingNumber, trackingUrl: carrier.url(encodeURIComponent(trackingNumber)) }
}

// ---------------------------------------------------------------------------------------------------------
// Cursors (the Catalog's opaque base64url keys; a malformed one is an InvalidRequest naming `cursor`)

const CURSOR_ORDERING = "orders"
const badCursor = () =>
  new InvalidRequest({
    message: "cursor: Malformed cursor.",
    errors: [FieldIssue.make({ path: "cursor", message: "Malformed cursor." })]
  })

// ---------------------------------------------------------------------------------------------------------
// Service

interface ForcedFailure {
  readonly kind: ForcedFailureKind
  /** null: until cleared. */
  readonly remaining: number | null
}

export class Fulfillment extends Effect.Service<Fulfillment>()("Fulfillment", {
  dependencies: [Catalog.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const catalog = yield* Catalog
    const settings = yield* FulfillmentSettings
    /** Test controls: variant id → forced failure. */
    const forced = yield* Ref.make<ReadonlyMap<string, ForcedFailure>>(new Map())

    /** The one row a statement returns (none when it returns none), decoded; SQL errors are defects. */
    const findOneAs =
      <A, I>(row: Schema.Schema<A, I>) =>
      (statement: Statement.Statement<unknown>) =>
        Effect.orDie(SqlSchema.findOne({ Request: Schema.Void, Result: row, execute: () => statement })(undefined))
    const findOne = findOneAs(OrderRow)
    const findAll = (statement: Statement.Statement<unknown>) =>
      Effect.orDie(SqlSchema.findAll({ Request: Schema.Void, Result: OrderRow, execute: () => statement })(undefined))

    /** An agent's order (with its buyer and checkout) or a company's booking (without): each read as itself. */
    const agentOrders = { read: findOne, owned: sql`user_id IS NOT NULL` }
    const bookings = { read: findOneAs(BookingRow), owned: sql`user_id IS NULL` }
    type Kind<A> = {
      readonly read: (statement: Statement.Statement<unknown>) => Effect.Effect<Option.Option<A>>
      readonly owned: Statement.Fragment
    }

    /** Takes one use of the variant's forced failure, if any. */
    const takeForced = (variantId: string) =>
      Ref.modify(forced, (all): [Option.Option<ForcedFailureKind>, ReadonlyMap<string, ForcedFailure>] => {
        const failure = all.get(variantId)
        if (failure === undefined) return [Option.none(), all]
        const next = new Map(all)
        if (failure.remaining === null) return [Option.some(failure.kind), all]
        if (failure.remaining <= 1) next.delete(variantId)
        else next.set(variantId, { kind: failure.kind, remaining: failure.remaining - 1 })
        return [Option.some(failure.kind), next]
      })

    const outOfStock = (variantId: string, quantity: number) =>
      new FulfillmentRejected({
        reason: "out_of_stock",
        variantId,
        message: `Variant ${variantId} does not have ${quantity} unit${quantity === 1 ? "" : "s"} in stock.`
      })

    /** Why the supplier cannot take the variant: it does not ship to the country, or lacks the stock. */
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

    /**
     * What every placing call does before it writes: checks the quantity, waits the simulated latency, and
     * fails as a forced failure or the failure rate says (`FulfillmentUnavailable`, or `out_of_stock`).
     */
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
        if (Duration.toMillis(settings.latency) > 0) yield* Effect.sleep(settings.latency)
      })

    const failIfForced = (input: BookInput) =>
      Effect.gen(function* () {
        const forcedKind = yield* takeForced(input.variantId)
        if (Option.isSome(forcedKind)) {
          if (forcedKind.value === "transient") {
            return yield* new FulfillmentUnavailable({
              variantId: input.variantId,
              message: "The supplier is temporarily unavailable (forced failure); try again shortly."
            })
          }
          return yield* outOfStock(input.variantId, input.quantity)
        }
        if (settings.failureRate > 0 && (yield* Random.next) < settings.failureRate) {
          return yield* new FulfillmentUnavailable({
            variantId: input.variantId,
            message: "The supplier is temporarily unavailable; try again shortly."
          })
        }
      })

    /**
     * The one statement that books an order: it takes the stock (the conditional update of
     * `Catalog.takeStock`) and writes the row from what it took, so a refusal writes nothing. A key some
     * order already has fails it on the unique index, which undoes its stock decrement too.
     */
    const booking = (
      id: string,
      now: Date,
      input: BookInput,
      owner: { readonly userId: string; readonly checkoutId: string; readonly itemIndex: number } | null
    ) => sql`
      WITH taken AS (
        UPDATE variant_locations SET stock = stock - ${input.quantity}
        WHERE variant_id = ${input.variantId} AND ${input.countryCode} = ANY (ships_to)
          AND (stock IS NULL OR stock >= ${input.quantity})
        RETURNING variant_id)
      INSERT INTO orders (id, idempotency_key, user_id, checkout_id, item_index, variant_id, product_id,
        product_title, variant_title, quantity, amount, currency, country_code, status, created_at, updated_at)
      SELECT ${id}, ${input.idempotencyKey}, ${owner?.userId ?? null}, ${owner?.checkoutId ?? null},
        ${owner?.itemIndex ?? null}::int, taken.variant_id, ${input.productId}, ${input.productTitle},
        ${input.variantTitle}, ${input.quantity}::int, ${input.amount}::int, ${input.currency}, ${input.countryCode},
        'placed', ${now}::timestamptz, ${now}::timestamptz
      FROM taken
      RETURNING *`

    /**
     * A single statement is atomic on its own; inside a caller's transaction it runs in a savepoint, so that
     * its failure (a key taken meanwhile) leaves that transaction usable.
     */
    const atomically = <A, E, R>(statement: Effect.Effect<A, E, R>) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
        Option.isSome(transaction) ? sql.withTransaction(statement) : statement
      )

    /**
     * Places one order of a checkout item, or returns the order already placed with its idempotency key.
     * The booking statement runs first (no transaction of its own): a new key, the common case, costs no
     * lookup. When the call fails or is refused (a forced or simulated failure, no stock, or the key taken on
     * the unique index, which undoes the statement's stock decrement), an order the key already has wins: a
     * retried placement gets its order back whatever the supplier would answer now, and two calls racing with
     * one key give one order. Fails with `FulfillmentUnavailable` (transient) or `FulfillmentRejected`.
     */
    const place = Effect.fn("Fulfillment.place")(function* (input: PlaceInput) {
      yield* admit(input)
      const book = Effect.gen(function* () {
        yield* failIfForced(input)
        const id = yield* makeId
        const statement = booking(id, yield* nowDate, input, input)
        const booked = yield* atomically(
          SqlSchema.findOne({ Request: Schema.Void, Result: OrderRow, execute: () => statement })(undefined)
        ).pipe(
          Effect.catchAll((error) =>
            error._tag === "SqlError" && isUniqueViolation(error) ? Effect.fail(new KeyTaken()) : Effect.die(error)
          )
        )
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
          const existing = yield* findOne(sql`SELECT * FROM orders WHERE idempotency_key = ${input.idempotencyKey}`)
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
     * savepoint, one `booking` statement, so a refusal (`FulfillmentRejected`) has written nothing. A key
     * that does exist is a defect.
     */
    const bookNew = Effect.fn("Fulfillment.bookNew")(function* (input: BookInput) {
      yield* admit(input)
      yield* failIfForced(input)
      const id = yield* makeId
      const inserted = yield* bookings.read(booking(id, yield* nowDate, input, null))
      if (Option.isNone(inserted)) return yield* refusal(input)
      yield* Effect.logInfo("order placed").pipe(Effect.annotateLogs({ orderId: id }))
      return inserted.value
    })

    /**
     * Moves an order of `kind` one step: placed → processing → shipped (carrier and tracking set) → delivered.
     * None when there is nothing to do: delivered, cancelled, unknown, (with `from`) no longer in `from`,
     * or changed meanwhile by a cancel or another step. `from` makes a retried step idempotent.
     */
    const advanceAs = <A extends BookingRow>(
      kind: Kind<A>,
      orderId: string,
      options: { readonly from?: OrderStatus | undefined } = {}
    ) =>
      Effect.gen(function* () {
        yield* Effect.annotateCurrentSpan({ "fulfillment.order_id": orderId })
        const found = yield* kind.read(sql`SELECT * FROM orders WHERE id = ${orderId} AND ${kind.owned}`)
        if (Option.isNone(found)) return Option.none<A>()
        const current = found.value
        if (options.from !== undefined && current.status !== options.from) return Option.none<A>()
        const next = nextOrderStatus[current.status]
        if (next === undefined) return Option.none<A>()
        const now = yield* nowDate
        let extra = sql``
        if (next === "shipped") {
          const tracking = trackingFor(orderId, current.countryCode)
          extra = sql`, carrier = ${tracking.carrier}, tracking_number = ${tracking.trackingNumber},
          tracking_url = ${tracking.trackingUrl}, shipped_at = ${now}`
        } else if (next === "delivered") {
          extra = sql`, delivered_at = ${now}`
        }
        // Conditional: a concurrent change (a cancel, another advance) wins, and this step does nothing.
        const updated = yield* kind.read(sql`
        UPDATE orders SET status = ${next}, updated_at = ${now} ${extra}
        WHERE id = ${orderId} AND status = ${current.status}
        RETURNING *`)
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
      return yield* findOne(sql`SELECT * FROM orders WHERE id = ${orderId} AND user_id = ${userId}`)
    })

    /** An order, whoever placed it (the progress job's). */
    const find = Effect.fn("Fulfillment.find")(function* (orderId: string) {
      return yield* findOne(sql`SELECT * FROM orders WHERE id = ${orderId}`)
    })

    /**
     * Cancels an order (of its `owned` owner) while it is placed or processing, and puts its quantity back in
     * stock (when stock is tracked). Shipped or delivered: OrderInTransit; cancelled: OrderAlreadyCancelled;
     * unknown or another owner's: OrderNotFound.
     */
    const cancelAs = <A extends BookingRow>(kind: Kind<A>, orderId: string, owned: Statement.Fragment) =>
      Effect.gen(function* () {
        yield* Effect.annotateCurrentSpan({ "fulfillment.order_id": orderId })
        const now = yield* nowDate
        return yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const cancelled = yield* kind.read(sql`
              UPDATE orders SET status = 'cancelled', cancelled_at = ${now}, updated_at = ${now}
              WHERE id = ${orderId} AND ${owned} AND status IN ('placed', 'processing')
              RETURNING *`)
              if (Option.isSome(cancelled)) {
                const order = cancelled.value
                yield* catalog.returnStock(order.variantId, order.quantity)
                yield* Effect.logInfo("order cancelled").pipe(Effect.annotateLogs({ orderId }))
                return order
              }
              const current = yield* kind.read(sql`SELECT * FROM orders WHERE id = ${orderId} AND ${owned}`)
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

    /** Cancels the user's order (see `cancelAs`). */
    const cancel = Effect.fn("Fulfillment.cancel")((orderId: string, userId: string) =>
      cancelAs(agentOrders, orderId, sql`user_id = ${userId}`)
    )

    /** Cancels a company's booking (see `cancelAs`). */
    const cancelBooking = Effect.fn("Fulfillment.cancelBooking")((orderId: string) =>
      cancelAs(bookings, orderId, bookings.owned)
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
      const page = yield* findAll(sql`
        SELECT * FROM orders
        WHERE user_id = ${userId}
          ${after === undefined ? sql`` : sql`AND (created_at, id) < (${after.createdAt}::timestamptz, ${after.id})`}
        ORDER BY created_at DESC, id DESC
        LIMIT ${limit + 1}`)
      const rows = page.slice(0, limit)
      const last = rows[rows.length - 1]
      const nextCursor =
        page.length > limit && last !== undefined
          ? encodeCursor({ s: CURSOR_ORDERING, k: [last.createdAt.getTime(), last.id] })
          : null
      return { rows, nextCursor } satisfies OrderPageRows as OrderPageRows
    })

    /** The orders of a checkout, by item index. */
    const forCheckout = Effect.fn("Fulfillment.forCheckout")(function* (checkoutId: string) {
      return yield* findAll(sql`SELECT * FROM orders WHERE checkout_id = ${checkoutId} ORDER BY item_index, id`)
    })

    /**
     * TEST-ONLY control (tests and the e2e flow): the next `times` place calls for the variant (every call
     * until cleared when `times` is omitted) fail: `transient` → FulfillmentUnavailable, `out_of_stock` →
     * FulfillmentRejected. A call that finds its idempotency key already placed is not affected.
     */
    const forceFailure = Effect.fn("Fulfillment.forceFailure")(function* (
      variantId: string,
      kind: ForcedFailureKind,
      times?: number
    ) {
      if (times !== undefined && !(Number.isSafeInteger(times) && times > 0)) {
        return yield* Effect.dieMessage(`Fulfillment.forceFailure: times must be a positive integer, got ${times}`)
      }
      yield* Ref.update(forced, (all) => new Map(all).set(variantId, { kind, remaining: times ?? null }))
    })

    /** TEST-ONLY control: removes every forced failure. */
    const clearForcedFailures = Effect.fn("Fulfillment.clearForcedFailures")(function* () {
      yield* Ref.set(forced, new Map())
    })

    return {
      settings,
      place,
      bookNew,
      advance,
      advanceBooking,
      cancel,
      cancelBooking,
      get,
      find,
      list,
      forCheckout,
      forceFailure,
      clearForcedFailures
    } as const
  })
}) {}
