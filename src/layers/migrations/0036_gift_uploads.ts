import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Gift uploads (docs/dashboard.md "Send gifts"): a CSV of recipients a member uploaded in the dashboard to send a
 * campaign's gift to, each of its rows judged when it arrived, and each valid row's outcome once sent.
 *
 * - An upload is `validated` (its preview shows), `sending` once the member confirmed (a `gift_upload.send` job
 *   sends its rows), then `sent`. It belongs to the campaign's company, environment and account, and keeps who
 *   confirmed it, so the gifts it makes are that member's doing in the audit log.
 * - A row is its line in the file (from 1, the header being line 1) and either a `problem` (invalid: never sent)
 *   or the recipient to send to, with its `key`. Once sent, its `outcome` is `created` (a new gift), `existing`
 *   (the campaign already had a gift of that key) or `failed` (with the reason), with the gift's id and link.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE gift_uploads (
      id text PRIMARY KEY,
      company_id text NOT NULL REFERENCES companies (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      account_id text NOT NULL REFERENCES accounts (id),
      campaign_id text NOT NULL REFERENCES campaigns (id),
      uploaded_by text NOT NULL REFERENCES users (id),
      file_name text NOT NULL,
      sending_method text NOT NULL CHECK (sending_method IN ('email', 'sms', 'link')),
      status text NOT NULL CHECK (status IN ('validated', 'sending', 'sent')),
      row_count integer NOT NULL CHECK (row_count >= 0),
      invalid_count integer NOT NULL CHECK (invalid_count >= 0 AND invalid_count <= row_count),
      actor jsonb,
      created_at timestamptz NOT NULL,
      confirmed_at timestamptz,
      finished_at timestamptz,
      CHECK ((status = 'validated') = (confirmed_at IS NULL))
    )`
  yield* sql`CREATE INDEX gift_uploads_newest ON gift_uploads (company_id, environment, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE gift_upload_rows (
      upload_id text NOT NULL REFERENCES gift_uploads (id) ON DELETE CASCADE,
      line integer NOT NULL CHECK (line >= 2),
      key text,
      problem text,
      first_name text,
      last_name text,
      email text,
      phone text,
      external_id text,
      country text,
      outcome text CHECK (outcome IN ('created', 'existing', 'failed')),
      gift_id text REFERENCES gifts (id),
      gift_link text,
      message text,
      PRIMARY KEY (upload_id, line),
      CHECK (problem IS NOT NULL OR key IS NOT NULL),
      CHECK (problem IS NULL OR outcome IS NULL)
    )`
  // The rows still to send, in order: what the sending job reads, batch by batch.
  yield* sql`CREATE INDEX gift_upload_rows_pending ON gift_upload_rows (upload_id, line)
    WHERE problem IS NULL AND outcome IS NULL`
})
