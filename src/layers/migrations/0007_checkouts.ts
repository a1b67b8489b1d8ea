import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Quotes, checkouts, orders, events and notifications (docs/checkout.md).
 *
 * - A quote prices one unit and backs at most one checkout (`checkout_id`, set when it is used).
 * - A checkout's lines are copied from their quotes (`checkout_items`), so a quote can expire afterwards.
 * - `orders` is the Fulfillment simulator's book: one order per placed item, unique by its deterministic
 *   `idempotency_key`, so a retried or resumed placement never places an item twice.
 * - `events` is the source of truth for status updates (SSE replay, callbacks): a global sequence, written
 *   in the same transaction as the change it records.
 * - `notifications` is the outbox of receipts and confirmations.
 * - Amounts are integers in the minor units of `currency`; every time is written from the Clock.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE quotes (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id),
      variant_id text NOT NULL REFERENCES variants (id),
      product_id text NOT NULL,
      product_title text NOT NULL,
      variant_title text NOT NULL,
      image_url text,
      country_code text NOT NULL,
      currency text NOT NULL,
      item_amount integer NOT NULL,
      shipping_amount integer NOT NULL,
      duties_amount integer NOT NULL,
      service_fee_amount integer NOT NULL,
      total_amount integer NOT NULL,
      total_display text NOT NULL,
      shipping_required boolean NOT NULL,
      checkout_id text,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX quotes_user ON quotes (user_id)`
  yield* sql`
    CREATE TABLE checkouts (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id),
      status text NOT NULL CHECK (status IN ('pending_payment', 'paid', 'placing', 'confirmed',
        'partially_confirmed', 'failed', 'refunded', 'expired', 'cancelled')),
      country_code text NOT NULL,
      currency text NOT NULL,
      locale text NOT NULL,
      total_amount integer NOT NULL,
      refunded_amount integer NOT NULL DEFAULT 0,
      shipping_required boolean NOT NULL,
      recipient jsonb NOT NULL,
      shipping_address jsonb NOT NULL,
      notify_email text,
      notify_sms text,
      sms_consent boolean NOT NULL,
      callback_url text,
      idempotency_key text,
      request_hash text,
      payment_token text NOT NULL,
      charge_id text,
      failure_reason text,
      expires_at timestamptz NOT NULL,
      paid_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (user_id, idempotency_key)
    )`
  yield* sql`CREATE INDEX checkouts_pending_expiry ON checkouts (expires_at) WHERE status = 'pending_payment'`
  yield* sql`
    CREATE TABLE checkout_items (
      checkout_id text NOT NULL REFERENCES checkouts (id),
      index integer NOT NULL,
      quote_id text NOT NULL REFERENCES quotes (id),
      variant_id text NOT NULL,
      product_id text NOT NULL,
      product_title text NOT NULL,
      variant_title text NOT NULL,
      image_url text,
      quantity integer NOT NULL CHECK (quantity BETWEEN 1 AND 10),
      unit_amount integer NOT NULL,
      amount integer NOT NULL,
      item_amount integer NOT NULL,
      shipping_amount integer NOT NULL,
      duties_amount integer NOT NULL,
      service_fee_amount integer NOT NULL,
      shipping_required boolean NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'placed', 'failed', 'refunded')),
      order_id text,
      failure_reason text,
      PRIMARY KEY (checkout_id, index)
    )`
  yield* sql`CREATE UNIQUE INDEX checkout_items_quote ON checkout_items (quote_id)`
  yield* sql`
    CREATE TABLE orders (
      id text PRIMARY KEY,
      idempotency_key text NOT NULL UNIQUE,
      user_id text NOT NULL REFERENCES users (id),
      checkout_id text NOT NULL REFERENCES checkouts (id),
      item_index integer NOT NULL,
      variant_id text NOT NULL,
      product_id text NOT NULL,
      product_title text NOT NULL,
      variant_title text NOT NULL,
      quantity integer NOT NULL,
      amount integer NOT NULL,
      currency text NOT NULL,
      status text NOT NULL CHECK (status IN ('placed', 'processing', 'shipped', 'delivered', 'cancelled')),
      carrier text,
      tracking_number text,
      tracking_url text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      shipped_at timestamptz,
      delivered_at timestamptz,
      cancelled_at timestamptz
    )`
  yield* sql`CREATE INDEX orders_user_newest ON orders (user_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE events (
      id bigserial PRIMARY KEY,
      type text NOT NULL,
      checkout_id text NOT NULL REFERENCES checkouts (id),
      user_id text NOT NULL,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX events_checkout ON events (checkout_id, id)`
  yield* sql`
    CREATE TABLE notifications (
      id text PRIMARY KEY,
      user_id text NOT NULL,
      checkout_id text NOT NULL REFERENCES checkouts (id),
      kind text NOT NULL,
      channel text NOT NULL CHECK (channel IN ('email', 'sms')),
      recipient text NOT NULL,
      subject text NOT NULL,
      body text NOT NULL,
      created_at timestamptz NOT NULL,
      UNIQUE (checkout_id, kind, channel)
    )`
})
