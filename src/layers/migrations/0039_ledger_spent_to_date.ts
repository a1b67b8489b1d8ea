import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Each ledger entry keeps the method's `spent` as its own statement left it (`spent_to_date`), so a page of the
 * ledger reads its running balances off its own rows instead of summing the method's whole ledger each time
 * (docs/decisions/0069-ledger-balances-kept.md).
 *
 * - Entries written before: their balance is the sum of the method's entries up to each one, in the order the
 *   ledger lists them (time, then id), which is what the page showed until now.
 * - The ledger is read by method, newest first: one index in that order replaces the method's plain index.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE billing_entries ADD COLUMN spent_to_date bigint`
  yield* sql`UPDATE billing_entries e SET spent_to_date = so_far.spent
    FROM (
      SELECT id, SUM(CASE kind WHEN 'debit' THEN amount ELSE -amount END)
        OVER (PARTITION BY billing_method_id ORDER BY created_at, id) AS spent
      FROM billing_entries
    ) AS so_far
    WHERE so_far.id = e.id`
  yield* sql`ALTER TABLE billing_entries ALTER COLUMN spent_to_date SET NOT NULL`
  yield* sql`CREATE INDEX billing_entries_method_time ON billing_entries (billing_method_id, created_at DESC, id DESC)`
  yield* sql`DROP INDEX billing_entries_method`
})
