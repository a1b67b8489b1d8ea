import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { CheckoutItemStatus, CheckoutStatus } from "../../domain/checkout/Checkout.js"
import { CheckoutItemRecord, CheckoutRecord } from "../../domain/checkout/Records.js"

/** The columns a change of a checkout sets (`updated_at` is always set). */
export const CheckoutChange = Schema.Struct({
  status: Schema.optional(CheckoutStatus),
  refundedAmount: Schema.optional(Schema.Int),
  failureReason: Schema.optional(Schema.NullOr(Schema.String))
})
export type CheckoutChange = typeof CheckoutChange.Type

/**
 * The `checkouts` and `checkout_items` tables: the checkout aggregate's rows. Only the Checkouts service uses
 * it; every other service changes a checkout through that service. Unexpected database errors are defects.
 */
export class CheckoutsRepo extends Effect.Service<CheckoutsRepo>()("CheckoutsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const findById = SqlSchema.findOne({
      Request: Schema.String,
      Result: CheckoutRecord,
      execute: (id) => sql`SELECT * FROM checkouts WHERE id = ${id}`
    })

    /** The row, locked until the transaction ends. */
    const lockById = SqlSchema.findOne({
      Request: Schema.String,
      Result: CheckoutRecord,
      execute: (id) => sql`SELECT * FROM checkouts WHERE id = ${id} FOR UPDATE`
    })

    const findByKey = SqlSchema.findOne({
      Request: Schema.Struct({ userId: Schema.String, key: Schema.String }),
      Result: CheckoutRecord,
      execute: ({ userId, key }) => sql`SELECT * FROM checkouts WHERE user_id = ${userId} AND idempotency_key = ${key}`
    })

    const items = SqlSchema.findAll({
      Request: Schema.String,
      Result: CheckoutItemRecord,
      execute: (checkoutId) => sql`SELECT * FROM checkout_items WHERE checkout_id = ${checkoutId} ORDER BY index`
    })

    /** Inserts the checkout unless its user already has one with its idempotency key: whether it did. */
    const insert = SqlSchema.findAll({
      Request: CheckoutRecord,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (row) => sql`
        INSERT INTO checkouts ${sql.insert({
          ...row,
          recipient: JSON.stringify(row.recipient),
          shippingAddress: JSON.stringify(row.shippingAddress)
        })}
        ON CONFLICT (user_id, idempotency_key) DO NOTHING RETURNING id`
    })

    const insertItems = SqlSchema.void({
      Request: Schema.Array(CheckoutItemRecord),
      execute: (rows) => sql`INSERT INTO checkout_items ${sql.insert(rows)}`
    })

    /** A conditional update: sets `set` if the status is one of `from`; the row as it now is, or none. */
    const update = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        from: Schema.Array(CheckoutStatus),
        set: CheckoutChange,
        at: Schema.DateFromSelf
      }),
      Result: CheckoutRecord,
      execute: ({ id, from, set, at }) => sql`
        UPDATE checkouts SET ${sql.update({ ...set, updatedAt: at })}
        WHERE id = ${id} AND status IN ${sql.in(from)} RETURNING *`
    })

    /** Paid at `at`, if still in one of `from` and within its window then; the paid row, or none. */
    const markPaid = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        from: Schema.Array(CheckoutStatus),
        chargeId: Schema.String,
        at: Schema.DateFromSelf
      }),
      Result: CheckoutRecord,
      execute: ({ id, from, chargeId, at }) => sql`
        UPDATE checkouts SET status = 'paid', charge_id = ${chargeId}, paid_at = ${at}, updated_at = ${at}
        WHERE id = ${id} AND status IN ${sql.in(from)} AND expires_at > ${at}
        RETURNING *`
    })

    /** Moves one item from `from` to `to` (setting its order or failure); the item as it now is, or none when it was not `from`. */
    const moveItem = SqlSchema.findOne({
      Request: Schema.Struct({
        checkoutId: Schema.String,
        index: Schema.Int,
        from: CheckoutItemStatus,
        to: CheckoutItemStatus,
        set: Schema.Struct({ orderId: Schema.optional(Schema.String), failureReason: Schema.optional(Schema.String) })
      }),
      Result: CheckoutItemRecord,
      execute: ({ checkoutId, index, from, to, set }) => sql`
        UPDATE checkout_items SET ${sql.update({ ...set, status: to })}
        WHERE checkout_id = ${checkoutId} AND index = ${index} AND status = ${from} RETURNING *`
    })

    const locales = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ id: Schema.String, locale: Schema.String }),
      execute: (ids) => sql`SELECT id, locale FROM checkouts WHERE id IN ${sql.in(ids)}`
    })

    return {
      findById: (id: string) => Effect.orDie(findById(id)),
      lockById: (id: string) => Effect.orDie(lockById(id)),
      findByKey: (userId: string, key: string) => Effect.orDie(findByKey({ userId, key })),
      items: (checkoutId: string) => Effect.orDie(items(checkoutId)),
      insert: (row: CheckoutRecord) => Effect.map(Effect.orDie(insert(row)), (rows) => rows.length > 0),
      insertItems: (rows: ReadonlyArray<CheckoutItemRecord>) => Effect.orDie(insertItems(rows)),
      update: (id: string, from: ReadonlyArray<CheckoutStatus>, set: CheckoutChange, at: Date) =>
        Effect.orDie(update({ id, from, set, at })),
      markPaid: (id: string, from: ReadonlyArray<CheckoutStatus>, chargeId: string, at: Date) =>
        Effect.orDie(markPaid({ id, from, chargeId, at })),
      moveItem: (
        checkoutId: string,
        index: number,
        move: { readonly from: CheckoutItemStatus; readonly to: CheckoutItemStatus },
        set: { readonly orderId?: string; readonly failureReason?: string }
      ) => Effect.orDie(moveItem({ checkoutId, index, ...move, set })),
      localesOf: (ids: ReadonlyArray<string>) =>
        Effect.map(Effect.orDie(locales(ids)), (rows) => new Map(rows.map((row) => [row.id, row.locale])))
    } as const
  })
}) {}
