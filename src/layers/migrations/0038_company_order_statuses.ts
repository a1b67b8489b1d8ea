import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * When each company order reached each status of its shipment (docs/decisions/0066-dashboard-orders.md), for the
 * dashboard's order timeline, and the indexes of the dashboard's order list.
 *
 * - `company_order_statuses`: one row per status an order reached (`orderReceived` when placed, each move of the
 *   shipment, `cancelled` or `failed` when it ended), written in the transaction of the change. A shipment reaches a
 *   status at most once, so the status is part of the key.
 * - Orders placed before: their known times are filled in: `orderReceived` at `created_at`, `inTransit` at
 *   `shipped_at`, `delivered` at `delivered_at`, `cancelled`/`failed` at `cancelled_at`, and their present status,
 *   if none of those, at `updated_at`. Steps whose time was not kept (`processing`, `outForDelivery` passed
 *   earlier) stay unknown.
 * - The list filters by the order's status and by its shipment's, newest first, and searches the recipient's
 *   name and e-mail as one lower-cased text by trigram.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE company_order_statuses (
      order_id text NOT NULL REFERENCES company_orders (id),
      shipment_status text NOT NULL CHECK (shipment_status IN
        ('orderReceived', 'processing', 'inTransit', 'outForDelivery', 'delivered', 'failed', 'cancelled')),
      reached_at timestamptz NOT NULL,
      PRIMARY KEY (order_id, shipment_status)
    )`
  yield* sql`INSERT INTO company_order_statuses (order_id, shipment_status, reached_at)
    SELECT id, 'orderReceived', created_at FROM company_orders
    UNION ALL SELECT id, 'inTransit', shipped_at FROM company_orders WHERE shipped_at IS NOT NULL
    UNION ALL SELECT id, 'delivered', delivered_at FROM company_orders WHERE delivered_at IS NOT NULL
    UNION ALL SELECT id, shipment_status, cancelled_at FROM company_orders
      WHERE cancelled_at IS NOT NULL AND shipment_status IN ('cancelled', 'failed')`
  yield* sql`INSERT INTO company_order_statuses (order_id, shipment_status, reached_at)
    SELECT id, shipment_status, updated_at FROM company_orders ON CONFLICT DO NOTHING`
  yield* sql`CREATE INDEX company_orders_status
    ON company_orders (company_id, environment, status, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX company_orders_shipment_status
    ON company_orders (company_id, environment, shipment_status, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX company_orders_recipient_trgm ON company_orders
    USING gin (lower(recipient_first_name || ' ' || recipient_last_name || ' ' || recipient_email) gin_trgm_ops)`
})
