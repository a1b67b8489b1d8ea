import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { expect, layer } from "@effect/vitest"
import { PGlite } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import {
  Chunk,
  Data,
  Effect,
  Either,
  Fiber,
  Layer,
  Logger,
  LogLevel,
  Option,
  Schedule,
  String as Str,
  TestClock
} from "effect"
import { OrderAlreadyCancelled, OrderInTransit, OrderNotFound } from "../../../src/domain/checkout/Errors.js"
import { InvalidRequest } from "../../../src/domain/platform/Errors.js"
import { makeId } from "../../../src/domain/platform/Ids.js"
import { MigrationsLive } from "../../../src/layers/Migrations.js"
import { PublicUrl } from "../../../src/services/catalog/Catalog.js"
import { Seed } from "../../../src/services/catalog/Seed.js"
import { Fulfillment, type PlaceInput } from "../../../src/services/fulfillment/Fulfillment.js"
import { FulfillmentRejected, FulfillmentUnavailable } from "../../../src/services/fulfillment/FulfillmentPartner.js"
import {
  FulfillmentSettings,
  FulfillmentSimulator,
  trackingFor
} from "../../../src/services/simulators/FulfillmentSimulator.js"
import { TestDatabase } from "../../support/database.js"
import { testPublicUrl } from "../../support/http.js"

/**
 * On PGlite, one pooled connection. pglite-socket 0.2.17 serialises protocol *messages*, not extended-query
 * batches, so two connections querying at once outside a transaction can interleave Parse/Bind and get
 * each other's rows (electric-sql/pglite#1046). One connection keeps the concurrent tests below honest:
 * their fibers still interleave between statements and transactions, which is what they exercise. On
 * Postgres (DATABASE_URL) the shared TestDatabase runs them on a real pool.
 */
const SingleConnectionPGlite = Layer.unwrapScoped(
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => PGlite.create({ extensions: { pg_trgm } })),
      (db) => Effect.promise(() => db.close())
    )
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 4 })
    yield* Effect.acquireRelease(
      Effect.promise(() => server.start()),
      () => Effect.promise(() => server.stop())
    )
    return PgClient.layer({
      host: "127.0.0.1",
      port: Number(server.getServerConn().split(":").at(-1)),
      username: "postgres",
      database: "postgres",
      maxConnections: 1,
      transformQueryNames: Str.camelToSnake,
      transformResultNames: Str.snakeToCamel
    })
  })
).pipe((db) => Layer.provideMerge(MigrationsLive, db))

const Database = process.env.DATABASE_URL === undefined ? SingleConnectionPGlite : TestDatabase

const SeededDatabase = Layer.effectDiscard(Effect.flatMap(Seed, (seed) => seed.ensureDemoCatalog())).pipe(
  Layer.provide(Seed.Default),
  Layer.provideMerge(Database)
)

/** The catalog the stock is taken from makes links under a public URL. */
const CatalogUrl = Layer.succeed(PublicUrl, testPublicUrl)

/** The Fulfillment service with the simulator as its partner (the simulator exposed for its controls). */
const fulfillmentOn = (settings: Layer.Layer<FulfillmentSettings>) =>
  Fulfillment.Default.pipe(Layer.provideMerge(FulfillmentSimulator.partner), Layer.provide([settings, CatalogUrl]))

const TestLayer = fulfillmentOn(FulfillmentSettings.Default).pipe(
  Layer.provideMerge(SeededDatabase),
  Layer.merge(Logger.minimumLogLevel(process.env.TEST_LOG === undefined ? LogLevel.None : LogLevel.Debug))
)

/** The service and the simulator with other settings, on the same database. */
const withSettings = (settings: Parameters<typeof FulfillmentSettings.layer>[0]) =>
  Effect.provide(fulfillmentOn(FulfillmentSettings.layer(settings)))

// ---------------------------------------------------------------------------------------------------------
// Fixtures: users and checkouts (the orders' foreign keys), and seeded variants.

interface VariantFacts {
  readonly id: string
  readonly productId: string
  readonly productTitle: string
  readonly variantTitle: string
}

const makeUser = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const id = yield* makeId
  yield* sql`
    INSERT INTO users (id, email, password_hash, default_country, receipt_preference, created_at)
    VALUES (${id}, ${`${id}@example.com`}, 'not-a-hash', 'US', 'email', ${new Date(0)})`
  return id
})

const makeCheckout = (userId: string, countryCode = "US") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = yield* makeId
    const now = new Date(0)
    yield* sql`
      INSERT INTO checkouts (id, user_id, status, country_code, currency, locale, total_amount, shipping_required,
        recipient, shipping_address, sms_consent, payment_token, expires_at, created_at, updated_at)
      VALUES (${id}, ${userId}, 'placing', ${countryCode}, 'USD', 'en-US', 0, true,
        ${JSON.stringify({ firstName: "Ada", lastName: "Lovelace" })}::jsonb,
        ${JSON.stringify({ countryCode })}::jsonb, false, ${`token-${id}`}, ${now}, ${now}, ${now})`
    return id
  })

/** A user with one checkout. */
const buyer = (countryCode = "US") =>
  Effect.gen(function* () {
    const userId = yield* makeUser
    const checkoutId = yield* makeCheckout(userId, countryCode)
    return { userId, checkoutId, countryCode }
  })

const variantFacts = (where: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<VariantFacts & { readonly country?: string }>`
      SELECT v.id, v.product_id, p.title AS product_title, v.title AS variant_title
      FROM variants v JOIN products p ON p.id = v.product_id JOIN variant_locations l ON l.variant_id = v.id
      WHERE ${sql.unsafe(where)} ORDER BY v.id`
  })

/** Distinct physical variants with tracked stock that ship to US, GB and JP; each test takes its own. */
let trackedPool: Array<VariantFacts> | undefined
const trackedVariant = Effect.gen(function* () {
  if (trackedPool === undefined) {
    trackedPool = [
      ...(yield* variantFacts(
        "l.stock IS NOT NULL AND NOT v.is_digital AND l.ships_to @> ARRAY['US', 'GB', 'JP', 'FR']::text[]"
      ))
    ]
  }
  const variant = trackedPool.shift()
  if (variant === undefined) return yield* Effect.dieMessage("no tracked variant left")
  return variant
})

const digitalVariant = Effect.map(
  variantFacts("l.stock IS NULL AND v.is_digital AND 'US' = ANY(l.ships_to)"),
  (rows) => rows[0]!
)

/** A stocked variant and a country in the catalog it does not ship to. */
const unshippable = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ readonly variantId: string; readonly code: string }>`
    SELECT l.variant_id, c.code FROM variant_locations l CROSS JOIN countries c
    WHERE l.stock > 10 AND NOT (c.code = ANY(l.ships_to)) ORDER BY l.variant_id, c.code LIMIT 1`
  const [facts] = yield* variantFacts(`v.id = '${row!.variantId}'`)
  return { variant: facts!, countryCode: row!.code }
})

const setStock = (variantId: string, stock: number | null) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE variant_locations SET stock = ${stock} WHERE variant_id = ${variantId}`
  )

const stockOf = (variantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ readonly stock: number | null }>`SELECT stock FROM variant_locations WHERE variant_id = ${variantId}`,
      (rows) => rows[0]!.stock
    )
  )

const orderCount = (where: { readonly key?: string; readonly variantId?: string }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ readonly n: number }>`
        SELECT count(*)::int AS n FROM orders
        WHERE ${where.key === undefined ? sql`true` : sql`idempotency_key = ${where.key}`}
          AND ${where.variantId === undefined ? sql`true` : sql`variant_id = ${where.variantId}`}`,
      (rows) => rows[0]!.n
    )
  )

let keys = 0
const placeInput = (
  who: { readonly userId: string; readonly checkoutId: string; readonly countryCode: string },
  variant: VariantFacts,
  overrides: Partial<PlaceInput> = {}
): PlaceInput => ({
  idempotencyKey: `test-${++keys}`,
  userId: who.userId,
  checkoutId: who.checkoutId,
  itemIndex: 0,
  variantId: variant.id,
  productId: variant.productId,
  productTitle: variant.productTitle,
  variantTitle: variant.variantTitle,
  quantity: 1,
  amount: 2500,
  currency: "USD",
  countryCode: who.countryCode,
  ...overrides
})

class Unexpected extends Data.TaggedError("Unexpected")<{ readonly value: unknown }> {}

/** The typed failure of an effect that must fail. */
const failure = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.either(self), (result) =>
    Either.isLeft(result) ? Effect.succeed(result.left) : Effect.die(new Unexpected({ value: result.right }))
  )

// ---------------------------------------------------------------------------------------------------------

layer(TestLayer, { timeout: 180_000 })("Fulfillment", (it) => {
  it.effect("place is idempotent by key: the same order, one decrement, even once stock has run out", () =>
    Effect.gen(function* () {
      const fulfillment = yield* Fulfillment
      const simulator = yield* FulfillmentSimulator
      const who = yield* buyer()
      const variant = yield* trackedVariant
      yield* setStock(variant.id, 5)
      const input = placeInput(who, variant, { quantity: 2, itemIndex: 3 })

      const order = yield* fulfillment.place(input)
      expect(order).toMatchObject({
        idempotencyKey: input.idempotencyKey,
        userId: who.userId,
        checkoutId: who.checkoutId,
        itemIndex: 3,
        variantId: variant.id,
        productId: variant.productId,
        quantity: 2,
        amount: 2500,
        currency: "USD",
        status: "placed",
        carrier: null,
        trackingNumber: null,
        trackingUrl: null,
        shippedAt: null,
        deliveredAt: null,
        cancelledAt: null
      })
      expect(order.id).toMatch(/^[0-9a-f]{24}$/)
      expect(order.createdAt).toBeInstanceOf(Date)
      expect(yield* stockOf(variant.id)).toBe(3)

      const again = yield* fulfillment.place(input)
      expect(again).toEqual(order)
      expect(yield* stockOf(variant.id)).toBe(3)

      yield* setStock(variant.id, 0)
      expect(yield* fulfillment.place(input)).toEqual(order)
      // Even a forced failure does not touch an order already placed.
      yield* simulator.forceFailure(variant.id, "transient")
      expect(yield* fulfillment.place(input)).toEqual(order)
      yield* simulator.clearForcedFailures()
      expect(yield* stockOf(variant.id)).toBe(0)
      expect(yield* orderCount({ key: input.idempotencyKey })).toBe(1)
    })
  )

  it.effect("10 concurrent calls with one key give one order and one decrement", () =>
    Effect.gen(function* () {
      const fulfillment = yield* Fulfillment
      const who = yield* buyer()
      const variant = yield* trackedVariant
      yield* setStock(variant.id, 20)
      const input = placeInput(who, variant, { quantity: 3 })
      const orders = yield* Effect.all(
        Array.from({ length: 10 }, () => fulfillment.place(input)),
        { concurrency: "unbounded" }
      )
      expect(new Set(orders.map((order) => order.id)).size).toBe(1)
      expect(yield* orderCount({ key: input.idempotencyKey })).toBe(1)
      expect(yield* stockOf(variant.id)).toBe(17)
    })
  )

  it.effect("concurrent calls for the last units never oversell", () =>
    Effect.gen(function* () {
      const fulfillment = yield* Fulfillment
      const who = yield* buyer()
      const variant = yield* trackedVariant
      yield* setStock(variant.id, 3)
      const results = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) =>
          Effect.either(fulfillment.place(placeInput(who, variant, { itemIndex: i })))
        ),
        { concurrency: "unbounded" }
      )
      const placed = results.filter(Either.isRight)
      const rejected = results.filter(Either.isLeft).map((result) => result.left)
      expect(placed).toHaveLength(3)
      expect(rejected).toHaveLength(5)
      for (const error of rejected) expect(error).toMatchObject({ _tag: "FulfillmentRejected", reason: "out_of_stock" })
      expect(yield* stockOf(variant.id)).toBe(0)
      expect(yield* orderCount({ variantId: variant.id })).toBe(3)
    })
  )

  it.effect("rejects out of stock and not shippable for good, placing nothing; untracked stock is always fine", () =>
    Effect.gen(function* () {
      const fulfillment = yield* Fulfillment
      const who = yield* buyer()

      const scarce = yield* trackedVariant
      yield* setStock(scarce.id, 1)
      const short = yield* failure(fulfillment.place(placeInput(who, scarce, { quantity: 2 })))
      expect(short).toBeInstanceOf(FulfillmentRejected)
      expect(short).toMatchObject({ reason: "out_of_stock", variantId: scarce.id })
      expect(short.message).toContain(scarce.id)
      expect(yield* stockOf(scarce.id)).toBe(1)
      expect(yield* orderCount({ variantId: scarce.id })).toBe(0)

      const { variant, countryCode } = yield* unshippable
      const stock = yield* stockOf(variant.id)
      const abroad = yield* buyer(countryCode)
      const nowhere = yield* failure(fulfillment.place(placeInput(abroad, variant)))
      expect(nowhere).toMatchObject({ _tag: "FulfillmentRejected", reason: "not_shippable", variantId: variant.id })
      expect(nowhere.message).toContain(countryCode)
      expect(yield* stockOf(variant.id)).toBe(stock)
      expect(yield* orderCount({ variantId: variant.id })).toBe(0)

      const digital = yield* digitalVariant
      const order = yield* fulfillment.place(placeInput(who, digital, { quantity: 10 }))
      expect(order.status).toBe("placed")
      expect(yield* stockOf(digital.id)).toBeNull()
    })
  )

  it.effect("forced failures: transient a number of times then success; out of stock; until cleared", () =>
    Effect.gen(function* () {
      const fulfillment = yield* Fulfillment
      const simulator = yield* FulfillmentSimulator
      const who = yield* buyer()
      const variant = yield* trackedVariant
      yield* setStock(variant.id, 10)

      yield* simulator.forceFailure(variant.id, "transient", 2)
      const input = placeInput(who, variant)
      const first = yield* failure(fulfillment.place(input))
      expect(first).toBeInstanceOf(FulfillmentUnavailable)
      expect(yield* stockOf(variant.id)).toBe(10)
      // The caller's retry: the second attempt fails too, the third places the order.
      const attempts = { n: 1 }
      const order = yield* Effect.suspend(() => {
        attempts.n++
        return fulfillment.place(input)
      }).pipe(
        Effect.retry({
          schedule: Schedule.recurs(5),
          while: (error) => error._tag === "FulfillmentUnavailable"
        })
      )
      expect(attempts.n).toBe(3)
      expect(order.status).toBe("placed")
      expect(yield* stockOf(variant.id)).toBe(9)

      yield* simulator.forceFailure(variant.id, "out_of_stock", 1)
      const rejected = yield* failure(fulfillment.place(placeInput(who, variant)))
      expect(rejected).toMatchObject({ _tag: "FulfillmentRejected", reason: "out_of_stock" })
      yield* fulfillment.place(placeInput(who, variant, { itemIndex: 1 }))
      expect(yield* stockOf(variant.id)).toBe(8)

      yield* simulator.forceFailure(variant.id, "transient")
      for (let i = 0; i < 4; i++) {
        expect(yield* failure(fulfillment.place(placeInput(who, variant)))).toBeInstanceOf(FulfillmentUnavailable)
      }
      yield* simulator.clearForcedFailures()
      yield* fulfillment.place(placeInput(who, variant, { itemIndex: 2 }))
      expect(yield* stockOf(variant.id)).toBe(7)
    })
  )

  it.effect("a failure rate of 1 always fails transiently, but an order already placed is still returned", () =>
    Effect.gen(function* () {
      const who = yield* buyer()
      const variant = yield* trackedVariant
      yield* setStock(variant.id, 10)
      const placed = yield* Effect.flatMap(Fulfillment, (f) => f.place(placeInput(who, variant, { itemIndex: 9 })))
      const flaky = yield* Effect.flatMap(Fulfillment, (f) =>
        Effect.gen(function* () {
          expect((yield* FulfillmentSimulator).settings.failureRate).toBe(1)
          const errors = []
          for (let i = 0; i < 20; i++) errors.push(yield* failure(f.place(placeInput(who, variant, { itemIndex: i }))))
          return {
            errors,
            again: yield* f.place({ ...placeInput(who, variant), idempotencyKey: placed.idempotencyKey })
          }
        })
      ).pipe(withSettings({ failureRate: 1 }))
      for (const error of flaky.errors) expect(error).toBeInstanceOf(FulfillmentUnavailable)
      expect(flaky.again).toEqual(placed)
      expect(yield* stockOf(variant.id)).toBe(9)
      expect(yield* orderCount({ variantId: variant.id })).toBe(1)
    })
  )

  it.effect("latency is slept on the Clock", () =>
    Effect.gen(function* () {
      const who = yield* buyer()
      const variant = yield* trackedVariant
      yield* setStock(variant.id, 10)
      yield* Effect.gen(function* () {
        const f = yield* Fulfillment
        const fiber = yield* Effect.fork(f.place(placeInput(who, variant)))
        while (Chunk.isEmpty(yield* TestClock.sleeps())) yield* Effect.yieldNow()
        yield* TestClock.adjust("9 seconds")
        expect(yield* orderCount({ variantId: variant.id })).toBe(0)
        yield* TestClock.adjust("1 second")
        const order = yield* Fiber.join(fiber)
        expect(order.status).toBe("placed")
      }).pipe(withSettings({ latency: "10 seconds" }))
    })
  )

  it.effect("advance: placed → processing → shipped (carrier and tracking) → delivered, then nothing", () =>
    Effect.gen(function* () {
      const fulfillment = yield* Fulfillment
      for (const country of ["US", "GB", "JP", "FR"]) {
        const who = yield* buyer(country)
        const variant = yield* trackedVariant
        yield* setStock(variant.id, 10)
        const order = yield* fulfillment.place(placeInput(who, variant))

        yield* TestClock.adjust("1 minute")
        const processing = Option.getOrThrow(yield* fulfillment.advance(order.id))
        expect(processing).toMatchObject({ id: order.id, status: "processing", carrier: null, trackingNumber: null })
        expect(processing.updatedAt.getTime()).toBeGreaterThan(order.updatedAt.getTime())

        // `from` makes a repeated step a no-op.
        expect(yield* fulfillment.advance(order.id, { from: "placed" })).toEqual(Option.none())

        yield* TestClock.adjust("1 minute")
        const shipped = Option.getOrThrow(yield* fulfillment.advance(order.id, { from: "processing" }))
        const tracking = trackingFor(order.id, country)
        expect(shipped).toMatchObject({ status: "shipped", ...tracking })
        expect(shipped.trackingUrl).toMatch(/^https:\/\//)
        expect(shipped.trackingUrl).toContain(shipped.trackingNumber)
        expect(shipped.shippedAt?.getTime()).toBe(shipped.updatedAt.getTime())
        if (country === "JP") expect(shipped.carrier).toBe("Japan Post")

        yield* TestClock.adjust("1 minute")
        const delivered = Option.getOrThrow(yield* fulfillment.advance(order.id))
        expect(delivered).toMatchObject({ status: "delivered", carrier: shipped.carrier })
        expect(delivered.deliveredAt).toBeInstanceOf(Date)
        expect(delivered.shippedAt).toEqual(shipped.shippedAt)

        expect(yield* fulfillment.advance(order.id)).toEqual(Option.none())
        expect(Option.getOrThrow(yield* fulfillment.get(order.id, who.userId))).toEqual(delivered)
      }
      expect(yield* fulfillment.advance("000000000000000000000000")).toEqual(Option.none())
    })
  )

  it.effect("cancel: placed or processing (restocked); then AlreadyCancelled; in transit; other users' not found", () =>
    Effect.gen(function* () {
      const fulfillment = yield* Fulfillment
      const who = yield* buyer()
      const stranger = yield* makeUser
      const variant = yield* trackedVariant
      yield* setStock(variant.id, 10)

      const placed = yield* fulfillment.place(placeInput(who, variant, { quantity: 3 }))
      expect(yield* stockOf(variant.id)).toBe(7)
      const notMine = yield* failure(fulfillment.cancel(placed.id, stranger))
      expect(notMine).toBeInstanceOf(OrderNotFound)
      expect(notMine).toMatchObject({ orderId: placed.id })
      expect(yield* fulfillment.get(placed.id, stranger)).toEqual(Option.none())

      yield* TestClock.adjust("1 second")
      const cancelled = yield* fulfillment.cancel(placed.id, who.userId)
      expect(cancelled).toMatchObject({ id: placed.id, status: "cancelled" })
      expect(cancelled.cancelledAt).toBeInstanceOf(Date)
      expect(yield* stockOf(variant.id)).toBe(10)
      expect(yield* failure(fulfillment.cancel(placed.id, who.userId))).toBeInstanceOf(OrderAlreadyCancelled)
      expect(yield* stockOf(variant.id)).toBe(10)
      expect(yield* fulfillment.advance(placed.id)).toEqual(Option.none())
      expect(Option.getOrThrow(yield* fulfillment.get(placed.id, who.userId)).status).toBe("cancelled")

      const processing = yield* fulfillment.place(placeInput(who, variant, { itemIndex: 1 }))
      yield* fulfillment.advance(processing.id)
      expect((yield* fulfillment.cancel(processing.id, who.userId)).status).toBe("cancelled")
      expect(yield* stockOf(variant.id)).toBe(10)

      const shipped = yield* fulfillment.place(placeInput(who, variant, { itemIndex: 2 }))
      yield* fulfillment.advance(shipped.id)
      yield* fulfillment.advance(shipped.id)
      const inTransit = yield* failure(fulfillment.cancel(shipped.id, who.userId))
      expect(inTransit).toBeInstanceOf(OrderInTransit)
      expect(inTransit).toMatchObject({ orderId: shipped.id, orderStatus: "shipped" })
      yield* fulfillment.advance(shipped.id)
      expect(yield* failure(fulfillment.cancel(shipped.id, who.userId))).toMatchObject({
        _tag: "OrderInTransit",
        orderStatus: "delivered"
      })
      expect(yield* stockOf(variant.id)).toBe(9)

      expect(yield* failure(fulfillment.cancel("nope", who.userId))).toBeInstanceOf(OrderNotFound)

      const digital = yield* digitalVariant
      const download = yield* fulfillment.place(placeInput(who, digital, { itemIndex: 3 }))
      expect((yield* fulfillment.cancel(download.id, who.userId)).status).toBe("cancelled")
      expect(yield* stockOf(digital.id)).toBeNull()
    })
  )

  it.effect("runs inside the caller's transaction: a rollback there undoes the order and the decrement", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const fulfillment = yield* Fulfillment
      const who = yield* buyer()
      const variant = yield* trackedVariant
      yield* setStock(variant.id, 4)
      const input = placeInput(who, variant, { quantity: 2 })
      const aborted = yield* failure(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* fulfillment.place(input)
            // A rejected place inside the transaction rolls back to its savepoint only.
            yield* Effect.either(fulfillment.place(placeInput(who, variant, { quantity: 5, itemIndex: 1 })))
            expect(yield* stockOf(variant.id)).toBe(2)
            return yield* Effect.fail("payment failed" as const)
          })
        )
      )
      expect(aborted).toBe("payment failed")
      expect(yield* stockOf(variant.id)).toBe(4)
      expect(yield* orderCount({ key: input.idempotencyKey })).toBe(0)

      yield* sql.withTransaction(fulfillment.place(input))
      expect(yield* stockOf(variant.id)).toBe(2)
    })
  )

  it.effect("list pages through every order exactly once, newest first; forCheckout is by item index", () =>
    Effect.gen(function* () {
      const fulfillment = yield* Fulfillment
      const who = yield* buyer()
      const other = yield* buyer()
      const variant = yield* digitalVariant
      const placed = []
      for (let i = 0; i < 11; i++) {
        // Several orders share a millisecond, so the id breaks the tie.
        if (i % 3 === 0) yield* TestClock.adjust("1 second")
        placed.push(yield* fulfillment.place(placeInput(who, variant, { itemIndex: (i * 7) % 11 })))
      }
      yield* fulfillment.place(placeInput(other, variant))

      const expected = [...placed]
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
        .map((order) => order.id)
      const seen: Array<string> = []
      const sizes: Array<number> = []
      let cursor: string | undefined
      do {
        const page = yield* fulfillment.list(who.userId, { limit: 4, cursor })
        seen.push(...page.rows.map((order) => order.id))
        sizes.push(page.rows.length)
        cursor = page.nextCursor ?? undefined
      } while (cursor !== undefined && sizes.length < 10)
      expect(sizes).toEqual([4, 4, 3])
      expect(seen).toEqual(expected)

      const all = yield* fulfillment.list(who.userId, { limit: 100 })
      expect(all.rows.map((order) => order.id)).toEqual(expected)
      expect(all.nextCursor).toBeNull()
      expect((yield* fulfillment.list(who.userId, { limit: 1000 })).rows).toHaveLength(11)
      expect((yield* fulfillment.list(other.userId, { limit: 10 })).rows).toHaveLength(1)

      for (const bad of [
        "not a cursor!",
        "eyJzIjoib3JkZXJzIn0",
        Buffer.from('{"s":"orders","k":[1,"x"]}').toString("base64url")
      ]) {
        const error = yield* failure(fulfillment.list(who.userId, { limit: 10, cursor: bad }))
        expect(error).toBeInstanceOf(InvalidRequest)
        expect(error.errors[0]?.path).toBe("cursor")
      }

      const byIndex = yield* fulfillment.forCheckout(who.checkoutId)
      expect(byIndex.map((order) => order.itemIndex)).toEqual(Array.from({ length: 11 }, (_, i) => i))
      expect(yield* fulfillment.forCheckout("unknown")).toEqual([])
    })
  )
})
