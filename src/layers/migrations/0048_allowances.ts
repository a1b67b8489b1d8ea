import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Spending allowances (docs/decisions/0082-spending-allowances.md, docs/allowances.md): what a person lets one OAuth
 * client spend for them without asking each time, and the ledger of what it spent.
 *
 * - `allowances`: the limits (per checkout, per calendar period in UTC, in total, in minor units of `currency`),
 *   the optional lists (countries, recipients' e-mails, categories; null allows any), the expiry, and the card as
 *   the payment provider saved it (its token, brand and last four: never the number). `spent_total`,
 *   `period_start` and `period_spent` are the ledger's running sums, kept on the row so that one conditional
 *   UPDATE takes an amount only if every limit still holds (the row lock serializes concurrent takes, on every
 *   instance). `client_id` has no foreign key: a client may be known by its metadata document rather than
 *   registered. At most one allowance per person and client is unrevoked.
 * - `allowance_ledger`: one `charge` per checkout paid from an allowance (amount > 0), and a `credit` (amount < 0)
 *   for each refund of it: a failed item, a cancelled order. `period_start` is the period the charge counted in.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE allowances (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id),
      client_id text NOT NULL,
      currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      per_checkout_limit integer NOT NULL CHECK (per_checkout_limit > 0),
      period text NOT NULL CHECK (period IN ('day', 'week', 'month')),
      period_limit integer NOT NULL CHECK (period_limit > 0),
      total_limit integer NOT NULL CHECK (total_limit > 0),
      allowed_countries jsonb,
      allowed_recipients jsonb,
      allowed_categories jsonb,
      payment_method text NOT NULL,
      card_brand text NOT NULL,
      card_last4 text NOT NULL CHECK (card_last4 ~ '^[0-9]{4}$'),
      spent_total integer NOT NULL DEFAULT 0 CHECK (spent_total BETWEEN 0 AND total_limit),
      period_start timestamptz NOT NULL,
      period_spent integer NOT NULL DEFAULT 0 CHECK (period_spent >= 0),
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX allowances_user ON allowances (user_id, created_at DESC)`
  yield* sql`CREATE UNIQUE INDEX allowances_one_live ON allowances (user_id, client_id) WHERE revoked_at IS NULL`
  yield* sql`
    CREATE TABLE allowance_ledger (
      id text PRIMARY KEY,
      allowance_id text NOT NULL REFERENCES allowances (id),
      checkout_id text NOT NULL REFERENCES checkouts (id),
      kind text NOT NULL CHECK (kind IN ('charge', 'credit')),
      amount integer NOT NULL CHECK ((kind = 'charge' AND amount > 0) OR (kind = 'credit' AND amount < 0)),
      period_start timestamptz NOT NULL,
      reason text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX allowance_ledger_allowance ON allowance_ledger (allowance_id, created_at DESC, id DESC)`
  yield* sql`CREATE UNIQUE INDEX allowance_ledger_one_charge ON allowance_ledger (checkout_id) WHERE kind = 'charge'`
  yield* sql`CREATE INDEX allowance_ledger_checkout ON allowance_ledger (checkout_id)`
})
