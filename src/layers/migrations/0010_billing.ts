import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Billing methods and their ledger (docs/decisions/0037-billing-ledger.md,
 * docs/decisions/0041-v3-accounts-and-billing.md, docs/company-api.md "Accounts and billing").
 *
 * - An account's name is unique within its company and environment.
 * - A billing method belongs to one account; at most one per account is its default. `spending_limit` is in
 *   minor units of `currency`; null means uncapped.
 * - Money moves only through `billing_entries`: a debit or a credit of a positive amount, for the subject
 *   (an order or a gift) that caused it. `spent` is the sum of a method's entries (debits less credits),
 *   moved by the statement that writes each entry, so a balance is one row read; what remains is the limit
 *   less `spent`.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNIQUE INDEX accounts_name ON accounts (company_id, environment, name)`
  yield* sql`
    CREATE TABLE billing_methods (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
      type text NOT NULL CHECK (type IN ('prepaid', 'invoice')),
      status text NOT NULL CHECK (status IN ('active', 'archived')),
      is_default boolean NOT NULL DEFAULT false,
      currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      spending_limit bigint CHECK (spending_limit >= 0),
      spent bigint NOT NULL DEFAULT 0 CHECK (spent >= 0),
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX billing_methods_account ON billing_methods (account_id)`
  yield* sql`CREATE UNIQUE INDEX billing_methods_default ON billing_methods (account_id) WHERE is_default`
  yield* sql`
    CREATE TABLE billing_entries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      billing_method_id text NOT NULL REFERENCES billing_methods (id),
      kind text NOT NULL CHECK (kind IN ('debit', 'credit')),
      amount bigint NOT NULL CHECK (amount > 0),
      subject_type text NOT NULL CHECK (subject_type IN ('order', 'gift')),
      subject_id text NOT NULL,
      reason text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX billing_entries_method ON billing_entries (billing_method_id)`
  yield* sql`CREATE INDEX billing_entries_subject ON billing_entries (subject_type, subject_id)`
})
