import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Campaigns and recipients, version 2 (docs/decisions/0045-v2-campaigns.md, docs/decisions/0046-v2-recipients.md,
 * docs/company-api.md "Campaigns", "Recipients").
 *
 * - A campaign belongs to an account (hence a company and environment, both kept on the row for lists) and
 *   a billing method of it. Its gift is one product or any product of one collection (`gift_type` says
 *   which id is set); the catalog is checked when the campaign is written, with no foreign key, so catalog
 *   loads stay free. Budgets are in minor units of `currency` (100–2,000,000 cents: the API's 1–20000 USD).
 *   Exactly one of `expiration_days` (after a gift is sent) and `expiration_date` is set.
 * - A recipient belongs to a company and environment and lists, in `account_ids`, the accounts that may
 *   reach it. Its `external_id` and its e-mail (lower-cased) are unique among the company's recipients in
 *   the environment: partial unique indexes, so two creates racing with the same value cannot both pass.
 * - Deleting a recipient erases its personal data (names, e-mail, phone, external id) and sets `deleted_at`;
 *   the row stays, so gifts and orders naming it keep working, and what was erased no longer holds a value
 *   in the unique indexes.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE campaigns (
      id text PRIMARY KEY,
      company_id text NOT NULL REFERENCES companies (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      account_id text NOT NULL REFERENCES accounts (id),
      billing_method_id text NOT NULL REFERENCES billing_methods (id),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
      status text NOT NULL CHECK (status IN ('draft', 'active', 'paused', 'completed', 'archived')),
      type text NOT NULL DEFAULT 'oneOffs' CHECK (type = 'oneOffs'),
      gift_type text NOT NULL CHECK (gift_type IN ('product', 'collection')),
      product_id text,
      collection_id text,
      budget_min integer NOT NULL CHECK (budget_min BETWEEN 100 AND 2000000),
      budget_max integer NOT NULL CHECK (budget_max BETWEEN 100 AND 2000000),
      currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      expiration_days integer CHECK (expiration_days BETWEEN 1 AND 365),
      expiration_date timestamptz,
      sending_channels text[] NOT NULL CHECK (cardinality(sending_channels) BETWEEN 1 AND 3
        AND sending_channels <@ ARRAY['email', 'sms', 'link']),
      disable_reminders boolean NOT NULL DEFAULT false,
      message text CHECK (length(message) <= 1000),
      source text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CHECK (budget_min <= budget_max),
      CHECK ((gift_type = 'product') = (product_id IS NOT NULL)
        AND (gift_type = 'collection') = (collection_id IS NOT NULL)),
      CHECK ((expiration_days IS NULL) <> (expiration_date IS NULL))
    )`
  yield* sql`CREATE INDEX campaigns_newest ON campaigns (company_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX campaigns_account ON campaigns (account_id, created_at DESC)`
  yield* sql`
    CREATE TABLE recipients (
      id text PRIMARY KEY,
      company_id text NOT NULL REFERENCES companies (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      account_ids text[] NOT NULL CHECK (cardinality(account_ids) >= 1),
      first_name text CHECK (length(first_name) BETWEEN 1 AND 100),
      last_name text CHECK (length(last_name) BETWEEN 1 AND 100),
      email text CHECK (length(email) <= 254),
      mobile_phone text CHECK (mobile_phone ~ '^\\+[1-9][0-9]{6,14}$'),
      country text CHECK (country ~ '^[A-Z]{2}$'),
      external_id text CHECK (length(external_id) BETWEEN 1 AND 120),
      source text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz,
      CHECK ((deleted_at IS NULL) = (first_name IS NOT NULL AND last_name IS NOT NULL)),
      CHECK (deleted_at IS NULL OR (email IS NULL AND mobile_phone IS NULL AND external_id IS NULL))
    )`
  yield* sql`CREATE UNIQUE INDEX recipients_external_id ON recipients (company_id, environment, external_id)
    WHERE external_id IS NOT NULL`
  yield* sql`CREATE UNIQUE INDEX recipients_email ON recipients (company_id, environment, lower(email))
    WHERE email IS NOT NULL`
  yield* sql`CREATE INDEX recipients_newest ON recipients (company_id, environment, created_at DESC, id DESC)
    WHERE deleted_at IS NULL`
  yield* sql`CREATE INDEX recipients_accounts ON recipients USING gin (account_ids)`
})
