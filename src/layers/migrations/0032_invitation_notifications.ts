import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Invitations by e-mail (docs/decisions/0054-company-members-and-roles.md):
 * - the notifications outbox takes invitation messages too: a row names exactly one checkout, gift or invitation;
 * - at most one open invitation per company and e-mail (case-insensitively): inviting again replaces it.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE notifications
      ADD COLUMN invitation_id text REFERENCES member_invitations (id),
      DROP CONSTRAINT notifications_subject,
      ADD CONSTRAINT notifications_subject CHECK (num_nonnulls(checkout_id, gift_id, invitation_id) = 1),
      ADD CONSTRAINT notifications_invitation_once UNIQUE (invitation_id, kind, channel)`
  yield* sql`
    CREATE UNIQUE INDEX member_invitations_open ON member_invitations (company_id, lower(email))
      WHERE accepted_at IS NULL AND revoked_at IS NULL`
})
