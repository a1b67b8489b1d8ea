import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { AccountScope } from "../../domain/company/Company.js"
import { CompanyOrderRecord, ShipmentStatus, ShipmentStatusReached } from "../../domain/company/Orders.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { compileV3Query, likeEscape, type V3Columns, v3Page } from "../platform/V3QuerySql.js"
import { accountsIn, QueryParam, ScopeParam } from "./Scope.js"

/** A change of an order's columns, as `sql.update` takes it (`updated_at` is always set). */
const OrderChange = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * The `company_orders` table: the company's side of its orders (the booking is the fulfillment context's
 * `orders` row its `supplier_order_id` names). Only the CompanyOrders service uses it. Its statements run in
 * the caller's transaction. Unexpected database errors are defects.
 */
export class CompanyOrdersRepo extends Effect.Service<CompanyOrdersRepo>()("CompanyOrdersRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The recipient's name and e-mail as one lower-cased text: the expression of `company_orders_recipient_trgm`. */
    const recipientText = sql.literal(
      "lower(recipient_first_name || ' ' || recipient_last_name || ' ' || recipient_email)"
    )

    /**
     * An order's columns, with whether its address is hidden from the company (`address_hidden`): when its
     * recipient gave it under a campaign that hid it, or its gift's campaign hides addresses now.
     */
    const orderColumns = sql.literal(`company_orders.*, (company_orders.address_hidden_at_claim OR EXISTS (
      SELECT 1 FROM gifts JOIN campaigns ON campaigns.id = gifts.campaign_id
      WHERE gifts.id = company_orders.gift_id AND campaigns.hide_recipient_address)) AS address_hidden`)

    const listColumns: V3Columns<CompanyOrderRecord> = {
      paging: "number",
      filters: {
        status: (value) => sql`status = ${value}`,
        fulfillmentStatus: (value) =>
          value === "fulfilled"
            ? sql`shipment_status = 'delivered'`
            : value === "cancelled"
              ? sql`shipment_status IN ('cancelled', 'failed')`
              : sql`shipment_status NOT IN ('delivered', 'cancelled', 'failed')`,
        idempotencyKey: (value) => sql`idempotency_key = ${value}`,
        tag: (value) => sql`tags ? ${value}`,
        "createdAt][gte": (value) => sql`created_at >= ${new Date(value)}`,
        "createdAt][lte": (value) => sql`created_at <= ${new Date(value)}`,
        // The dashboard's filters (docs/dashboard.md "Orders"); the API's query accepts none of them.
        "createdAt][lt": (value) => sql`created_at < ${new Date(value)}`,
        shipmentStatus: (value) => sql`shipment_status = ${value}`,
        accountId: (value) => sql`account_id = ${value}`,
        orderId: (value) => sql`id = ${value.trim().toLowerCase()}`,
        // An order's id, or part of its recipient's name or e-mail (case-insensitive; by trigram index).
        search: (value) => {
          const term = value.trim().toLowerCase()
          return sql`(id = ${term} OR ${recipientText} LIKE ${`%${likeEscape(term)}%`})`
        }
      },
      sort: { createdAt: "created_at" },
      defaultOrder: [{ column: "created_at", descending: true }],
      id: "id"
    }

    const findByKey = SqlSchema.findOne({
      Request: Schema.Struct({ scope: ScopeParam, key: Schema.String }),
      Result: CompanyOrderRecord,
      execute: ({ scope, key }) => sql`SELECT ${orderColumns} FROM company_orders WHERE company_id = ${scope.companyId}
          AND environment = ${scope.environment} AND idempotency_key = ${key}
          AND ${accountsIn(sql, scope, "account_id")}`
    })

    const insertOrder = SqlSchema.findOne({
      Request: OrderChange,
      Result: CompanyOrderRecord,
      execute: (row) =>
        sql`INSERT INTO company_orders ${sql.insert(row as never)} ON CONFLICT (company_id, environment, idempotency_key) DO NOTHING RETURNING ${orderColumns}`
    })

    const findInScope = SqlSchema.findOne({
      Request: Schema.Struct({ scope: ScopeParam, id: Schema.String }),
      Result: CompanyOrderRecord,
      execute: ({ scope, id }) => sql`SELECT ${orderColumns} FROM company_orders WHERE id = ${id.toLowerCase()}
        AND company_id = ${scope.companyId} AND environment = ${scope.environment}
        AND ${accountsIn(sql, scope, "account_id")}`
    })

    const findPage = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, query: QueryParam }),
      Result: CompanyOrderRecord,
      execute: ({ scope, query }) => {
        const { where, orderBy, limit } = compileV3Query(sql, query, listColumns)
        return sql`SELECT ${orderColumns} FROM company_orders
        WHERE company_id = ${scope.companyId} AND environment = ${scope.environment}
          AND ${accountsIn(sql, scope, "account_id")} AND ${where}
        ORDER BY ${orderBy} LIMIT ${limit}`
      }
    })

    const lockById = SqlSchema.findOne({
      Request: Schema.String,
      Result: CompanyOrderRecord,
      execute: (id) => sql`SELECT ${orderColumns} FROM company_orders WHERE id = ${id} FOR UPDATE`
    })

    const updateById = SqlSchema.single({
      Request: Schema.Struct({ id: Schema.String, set: OrderChange, at: Schema.DateFromSelf }),
      Result: CompanyOrderRecord,
      execute: ({ id, set, at }) => sql`UPDATE company_orders SET ${sql.update({ ...set, updatedAt: at } as never)}
            WHERE id = ${id} RETURNING ${orderColumns}`
    })

    const insertStatus = SqlSchema.void({
      Request: Schema.Struct({ orderId: Schema.String, status: ShipmentStatus, at: Schema.DateFromSelf }),
      execute: ({
        orderId,
        status,
        at
      }) => sql`INSERT INTO company_order_statuses (order_id, shipment_status, reached_at)
        VALUES (${orderId}, ${status}, ${at}) ON CONFLICT DO NOTHING`
    })

    const findStatuses = SqlSchema.findAll({
      Request: Schema.String,
      Result: ShipmentStatusReached,
      execute: (orderId) => sql`SELECT shipment_status, reached_at FROM company_order_statuses
        WHERE order_id = ${orderId} ORDER BY reached_at, array_position(ARRAY['orderReceived', 'processing',
          'inTransit', 'outForDelivery', 'delivered', 'failed', 'cancelled'], shipment_status)`
    })

    /** Records that the order's shipment reached `status` at `at` (once: a later record of it is ignored). */
    const recordStatus = Effect.fn("CompanyOrdersRepo.recordStatus")(
      (orderId: string, status: ShipmentStatus, at: Date) => Effect.orDie(insertStatus({ orderId, status, at }))
    )

    /** The statuses the order's shipment reached, oldest first. */
    const statuses = Effect.fn("CompanyOrdersRepo.statuses")((orderId: string) => Effect.orDie(findStatuses(orderId)))

    /** The order the key made, when it is on an account the scope reaches. */
    const findByKeyIn = Effect.fn("CompanyOrdersRepo.findByKey")((scope: AccountScope, idempotencyKey: string) =>
      Effect.orDie(findByKey({ scope, key: idempotencyKey }))
    )

    /** Writes a new order unless its company already has one with its key: the row, or none. */
    const insert = Effect.fn("CompanyOrdersRepo.insert")((row: Record<string, unknown>) =>
      Effect.orDie(insertOrder(row))
    )

    /** An order on an account the scope reaches. */
    const find = Effect.fn("CompanyOrdersRepo.find")((scope: AccountScope, orderId: string) =>
      Effect.orDie(findInScope({ scope, id: orderId }))
    )

    /** The orders of the accounts the scope reaches, filtered, sorted and paged in SQL. */
    const page = Effect.fn("CompanyOrdersRepo.page")(function* (scope: AccountScope, query: V3Query) {
      const rows = yield* Effect.orDie(findPage({ scope, query }))
      return v3Page(rows, query, listColumns)
    })

    /** The order's row, locked until the transaction ends; a missing row is a defect. */
    const lock = Effect.fn("CompanyOrdersRepo.lock")(function* (orderId: string) {
      const found = yield* Effect.orDie(lockById(orderId))
      if (found._tag === "None") return yield* Effect.dieMessage(`company order ${orderId} vanished`)
      return found.value
    })

    /** Sets `set` (and `updated_at`) on the order; the row as it now is. */
    const update = Effect.fn("CompanyOrdersRepo.update")((orderId: string, set: Record<string, unknown>, at: Date) =>
      Effect.orDie(updateById({ id: orderId, set, at }))
    )

    return { findByKey: findByKeyIn, insert, find, page, lock, update, recordStatus, statuses } as const
  })
}) {}
