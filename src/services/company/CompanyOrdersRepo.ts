import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { AccountScope } from "../../domain/company/Company.js"
import { CompanyOrderRecord } from "../../domain/company/Orders.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { rowsOf } from "../platform/Rows.js"
import { compileV3Query, type V3Columns, v3Page } from "../platform/V3QuerySql.js"
import { accountsIn } from "./Scope.js"

/**
 * The `company_orders` table: the company's side of its orders (the supplier's booking is the fulfillment
 * context's `orders` row its `supplier_order_id` names). Only the CompanyOrders service uses it. Every method
 * runs on the ambient connection, so it joins the caller's transaction. Unexpected database errors are
 * defects.
 */
export class CompanyOrdersRepo extends Effect.Service<CompanyOrdersRepo>()("CompanyOrdersRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const orderRows = rowsOf(CompanyOrderRecord)

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
        "createdAt][lte": (value) => sql`created_at <= ${new Date(value)}`
      },
      sort: { createdAt: "created_at" },
      defaultOrder: [{ column: "created_at", descending: true }],
      id: "id"
    }

    /** The order the key made, when it is on an account the scope reaches. */
    const findByKey = Effect.fn("CompanyOrdersRepo.findByKey")((scope: AccountScope, idempotencyKey: string) =>
      Effect.map(
        orderRows(sql`SELECT * FROM company_orders WHERE company_id = ${scope.companyId}
          AND environment = ${scope.environment} AND idempotency_key = ${idempotencyKey}
          AND ${accountsIn(sql, scope, "account_id")}`).pipe(Effect.orDie),
        (rows) => Option.fromNullable(rows[0])
      )
    )

    /** Writes a new order unless its company already has one with its key: the row, or none. */
    const insert = Effect.fn("CompanyOrdersRepo.insert")((row: Record<string, unknown>) =>
      Effect.map(
        orderRows(
          sql`INSERT INTO company_orders ${sql.insert(row)} ON CONFLICT (company_id, environment, idempotency_key) DO NOTHING RETURNING *`
        ).pipe(Effect.orDie),
        (rows) => Option.fromNullable(rows[0])
      )
    )

    /** An order on an account the scope reaches. */
    const findInScope = Effect.fn("CompanyOrdersRepo.findInScope")((scope: AccountScope, orderId: string) =>
      Effect.map(
        orderRows(sql`SELECT * FROM company_orders WHERE id = ${orderId.toLowerCase()}
        AND company_id = ${scope.companyId} AND environment = ${scope.environment}
        AND ${accountsIn(sql, scope, "account_id")}`).pipe(Effect.orDie),
        (rows) => Option.fromNullable(rows[0])
      )
    )

    /** The orders of the accounts the scope reaches, filtered, sorted and paged in SQL. */
    const page = Effect.fn("CompanyOrdersRepo.page")(function* (scope: AccountScope, query: V3Query) {
      const { where, orderBy, limit } = compileV3Query(sql, query, listColumns)
      const rows = yield* orderRows(sql`SELECT * FROM company_orders
        WHERE company_id = ${scope.companyId} AND environment = ${scope.environment}
          AND ${accountsIn(sql, scope, "account_id")} AND ${where}
        ORDER BY ${orderBy} LIMIT ${limit}`).pipe(Effect.orDie)
      return v3Page(rows, query, listColumns)
    })

    /** The order's row, locked until the transaction ends; a missing row is a defect. */
    const lock = Effect.fn("CompanyOrdersRepo.lock")((orderId: string) =>
      Effect.flatMap(
        orderRows(sql`SELECT * FROM company_orders WHERE id = ${orderId} FOR UPDATE`).pipe(Effect.orDie),
        (rows) =>
          rows[0] === undefined ? Effect.dieMessage(`company order ${orderId} vanished`) : Effect.succeed(rows[0])
      )
    )

    /** Sets `set` (and `updated_at`) on the order; the row as it now is. */
    const update = Effect.fn("CompanyOrdersRepo.update")((orderId: string, set: Record<string, unknown>, at: Date) =>
      Effect.map(
        orderRows(sql`UPDATE company_orders SET ${sql.update({ ...set, updatedAt: at })}
            WHERE id = ${orderId} RETURNING *`).pipe(Effect.orDie),
        (rows) => rows[0]!
      )
    )

    return { findByKey, insert, findInScope, page, lock, update } as const
  })
}) {}
