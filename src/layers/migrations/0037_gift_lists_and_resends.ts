import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The dashboard's gift list and a gift's message sent again (docs/decisions/0065-dashboard-gifts-and-campaigns.md):
 * - a campaign's gifts, the gifts of one status, and a campaign's gifts of one status, newest first, each walk an
 *   index of their own instead of the whole company's gifts;
 * - recipients are found by part of their name or e-mail through a trigram index (`ILIKE '%…%'`);
 * - a gift's link sent again (`gift.resent`) may be written any number of times: only its first message and its
 *   reminder stay once per gift and channel.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX gifts_campaign_newest ON gifts (campaign_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX gifts_status_newest ON gifts (company_id, environment, status, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX gifts_campaign_status_newest ON gifts (campaign_id, status, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX recipients_search ON recipients USING gin (
    (lower(coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(email, ''))) gin_trgm_ops)`
  yield* sql`ALTER TABLE notifications DROP CONSTRAINT notifications_gift_once`
  yield* sql`CREATE UNIQUE INDEX notifications_gift_once ON notifications (gift_id, kind, channel)
    WHERE kind <> 'gift.resent'`
  yield* sql`CREATE INDEX notifications_gift ON notifications (gift_id, created_at) WHERE gift_id IS NOT NULL`
})
