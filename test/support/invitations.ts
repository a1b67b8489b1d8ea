import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The invitation e-mails of the notifications outbox, as the invited person would read them: the newest one
 * sent to an e-mail, and the path of the link it carries (`/dashboard/invitations/<token>`).
 */
export const invitationPathFor = (email: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ body: string }>`SELECT n.body FROM notifications n
      JOIN member_invitations i ON i.id = n.invitation_id
      WHERE lower(n.recipient) = lower(${email}) ORDER BY n.created_at DESC, i.created_at DESC LIMIT 1`
    const path = /\/dashboard\/invitations\/[A-Za-z0-9_-]{43}\b/.exec(rows[0]?.body ?? "")?.[0]
    if (path === undefined) return yield* Effect.dieMessage(`No invitation e-mail to ${email} in the outbox`)
    return path
  }).pipe(Effect.orDie)
