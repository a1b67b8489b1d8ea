import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Company orders, version 3 (docs/decisions/0039-v3-orders.md, docs/company-api.md "Orders").
 *
 * - The supplier's `orders` also hold bookings made for a company: those have no buyer, checkout or item
 *   (`user_id`, `checkout_id`, `item_index` null); the company's side of the order is `company_orders`.
 * - `idempotency_key` is unique per company and environment; `fingerprint` is the SHA-256 of the request
 *   that made the order, so a replay with another body is told apart.
 * - `total` is the landed price in the destination `currency`; `charged` is what the billing method was
 *   debited, in the billing currency's minor units (the ledger has the entries).
 * - `shipment_status` follows the shipment (`orderReceived` → … → `delivered`, or `failed`, or
 *   `cancelled`); `status` the order (`active`, `completed`, `cancelled`, `refunded`).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orders ALTER COLUMN user_id DROP NOT NULL, ALTER COLUMN checkout_id DROP NOT NULL,
    ALTER COLUMN item_index DROP NOT NULL`
  yield* sql`ALTER TABLE orders ADD CONSTRAINT orders_agent_or_booking CHECK (
    (user_id IS NULL) = (checkout_id IS NULL) AND (user_id IS NULL) = (item_index IS NULL))`
  yield* sql`
    CREATE TABLE company_orders (
      id text PRIMARY KEY,
      company_id text NOT NULL REFERENCES companies (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      account_id text NOT NULL REFERENCES accounts (id),
      billing_method_id text NOT NULL REFERENCES billing_methods (id),
      idempotency_key text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 120),
      fingerprint text NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'completed', 'cancelled', 'refunded')),
      shipment_status text NOT NULL CHECK (shipment_status IN
        ('orderReceived', 'processing', 'inTransit', 'outForDelivery', 'delivered', 'failed', 'cancelled')),
      supplier_order_id text NOT NULL UNIQUE REFERENCES orders (id),
      variant_id text NOT NULL,
      product_id text NOT NULL,
      title text NOT NULL,
      quantity integer NOT NULL CHECK (quantity > 0),
      unit_price bigint NOT NULL CHECK (unit_price >= 0),
      total bigint NOT NULL CHECK (total >= 0),
      currency text NOT NULL,
      charged bigint NOT NULL CHECK (charged >= 0),
      recipient_first_name text NOT NULL,
      recipient_last_name text NOT NULL,
      recipient_email text NOT NULL,
      recipient_phone text,
      address1 text NOT NULL,
      address2 text,
      city text NOT NULL,
      province_code text,
      postal_code text,
      country_code text NOT NULL,
      tags jsonb NOT NULL DEFAULT '[]',
      metadata jsonb,
      source text,
      gift_id text,
      carrier text,
      tracking_number text,
      tracking_url text,
      shipped_at timestamptz,
      delivered_at timestamptz,
      cancelled_at timestamptz,
      cancellation_reason text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE UNIQUE INDEX company_orders_key ON company_orders (company_id, environment, idempotency_key)`
  yield* sql`CREATE INDEX company_orders_newest ON company_orders (company_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX company_orders_account ON company_orders (account_id, created_at DESC)`
})
