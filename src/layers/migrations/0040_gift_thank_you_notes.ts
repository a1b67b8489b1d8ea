import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Thank-you notes (docs/decisions/0070-gift-thank-you-notes.md): the note a recipient writes to the sender once the gift
 * is claimed, on the gift itself, one per gift.
 *
 * - `thank_you_message`: the note as stored (trimmed, line breaks as `\n`), 1 to 500 characters; null until written.
 * - `thank_you_created_at`: when it was first written; the 24 hours in which it may be changed start there.
 * - `thank_you_updated_at`: when it was last written (the first time, or the last change).
 *   The three are null together or set together.
 * - `company_webhook_endpoints.event_types` may now list all 8 event types (`gift-thank-you-note-added` is the eighth).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE gifts
      ADD COLUMN thank_you_message text CHECK (char_length(thank_you_message) BETWEEN 1 AND 500),
      ADD COLUMN thank_you_created_at timestamptz,
      ADD COLUMN thank_you_updated_at timestamptz,
      ADD CONSTRAINT gifts_thank_you_whole CHECK (
        (thank_you_message IS NULL) = (thank_you_created_at IS NULL)
        AND (thank_you_message IS NULL) = (thank_you_updated_at IS NULL))`
  yield* sql`
    ALTER TABLE company_webhook_endpoints
      DROP CONSTRAINT company_webhook_endpoints_event_types_check,
      ADD CONSTRAINT company_webhook_endpoints_event_types_check CHECK (
        jsonb_typeof(event_types) = 'array' AND jsonb_array_length(event_types) BETWEEN 1 AND 8)`
})
