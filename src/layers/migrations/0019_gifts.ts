import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Gifts, version 2 (docs/decisions/0047-v2-gifts.md, docs/company-api.md "Gifts").
 *
 * - A gift is one recipient's gift from one campaign: made `unopened`, then `opened` (the link visited),
 *   `unwrapped` (the choices viewed), `claimed` (an order placed); `expired` and `cancelled` end an
 *   unclaimed one. `(campaign_id, key)` is unique: the key is the company's, and a repeat finds the gift.
 * - `token` is the secret of the gift's link (`/g/{token}`); it is shown in every read, as the link is.
 * - The budget (`budget_min`/`budget_max`, minor units of `currency`) is copied from the campaign, and
 *   `reserved` is what the gift holds on the billing method's ledger: the budget's maximum from creation
 *   until it is claimed, expires or is cancelled, then 0.
 * - The notifications outbox takes gift messages too: a row names a checkout or a gift.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE gifts (
      id text PRIMARY KEY,
      company_id text NOT NULL REFERENCES companies (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      campaign_id text NOT NULL REFERENCES campaigns (id),
      account_id text NOT NULL REFERENCES accounts (id),
      billing_method_id text NOT NULL REFERENCES billing_methods (id),
      recipient_id text NOT NULL REFERENCES recipients (id),
      key text NOT NULL CHECK (length(key) BETWEEN 1 AND 120),
      status text NOT NULL CHECK (status IN ('unopened', 'opened', 'unwrapped', 'claimed', 'expired', 'cancelled')),
      token text NOT NULL UNIQUE,
      budget_min integer NOT NULL CHECK (budget_min > 0),
      budget_max integer NOT NULL CHECK (budget_max >= budget_min),
      currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      reserved integer NOT NULL CHECK (reserved >= 0),
      sending_method text NOT NULL CHECK (sending_method IN ('email', 'sms', 'link')),
      metadata jsonb,
      order_id text REFERENCES company_orders (id),
      source text,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      opened_at timestamptz,
      unwrapped_at timestamptz,
      claimed_at timestamptz,
      closed_at timestamptz,
      UNIQUE (campaign_id, key),
      CHECK ((status = 'claimed') = (order_id IS NOT NULL)),
      CHECK (status IN ('unopened', 'opened', 'unwrapped') OR reserved = 0)
    )`
  yield* sql`CREATE INDEX gifts_newest ON gifts (company_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX gifts_recipient ON gifts (recipient_id)`
  yield* sql`
    ALTER TABLE notifications
      ALTER COLUMN user_id DROP NOT NULL,
      ALTER COLUMN checkout_id DROP NOT NULL,
      ADD COLUMN gift_id text REFERENCES gifts (id),
      ADD CONSTRAINT notifications_subject CHECK ((checkout_id IS NULL) <> (gift_id IS NULL)),
      ADD CONSTRAINT notifications_gift_once UNIQUE (gift_id, kind, channel)`
})
