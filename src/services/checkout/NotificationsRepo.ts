import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { CompanyOutboxMessage, NotificationRow } from "../../domain/checkout/Notifications.js"

/** A gift's message to its recipient, written by the company context's gifts. */
export interface GiftMessage {
  readonly giftId: string
  readonly kind: string
  readonly channel: "email" | "sms"
  readonly recipient: string
  readonly subject: string
  readonly body: string
}

/** An invitation to join a company, written by the company context's members. */
export interface InvitationMessage {
  readonly invitationId: string
  readonly recipient: string
  readonly subject: string
  readonly body: string
}

/**
 * The `notifications` table (the outbox). Only the Notifications service uses it. Statements run on the
 * ambient SqlClient, so a message is written in the caller's transaction. Unexpected database errors are
 * defects.
 */
export class NotificationsRepo extends Effect.Service<NotificationsRepo>()("NotificationsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: NotificationRow,
      execute: (row) => sql`
          INSERT INTO notifications (id, user_id, checkout_id, kind, channel, recipient, subject, body, created_at)
          VALUES (${row.id}, ${row.userId}, ${row.checkoutId}, ${row.kind}, ${row.channel}, ${row.recipient}, ${row.subject},
            ${row.body}, ${row.createdAt})
          ON CONFLICT (checkout_id, kind, channel) DO NOTHING`
    })

    const insertGift = (message: GiftMessage, id: string, createdAt: Date) =>
      sql`INSERT INTO notifications (id, gift_id, kind, channel, recipient, subject, body, created_at)
          VALUES (${id}, ${message.giftId}, ${message.kind}, ${message.channel}, ${message.recipient}, ${message.subject},
            ${message.body}, ${createdAt})
          ON CONFLICT DO NOTHING`

    const insertInvitation = (message: InvitationMessage, id: string, createdAt: Date) =>
      sql`INSERT INTO notifications (id, invitation_id, kind, channel, recipient, subject, body, created_at)
          VALUES (${id}, ${message.invitationId}, 'invitation', 'email', ${message.recipient}, ${message.subject},
            ${message.body}, ${createdAt})`

    const findForCheckout = SqlSchema.findAll({
      Request: Schema.String,
      Result: NotificationRow,
      execute: (checkoutId) =>
        sql`SELECT * FROM notifications WHERE checkout_id = ${checkoutId} ORDER BY created_at, kind, channel`
    })

    // Checkout messages belong to a person, not a company: only gift and invitation messages are a company's.
    const findForCompany = SqlSchema.findAll({
      Request: Schema.Struct({ companyId: Schema.String, limit: Schema.Number, offset: Schema.Number }),
      Result: CompanyOutboxMessage,
      execute: ({ companyId, limit, offset }) =>
        sql`SELECT n.id, n.kind, n.channel, n.recipient, n.subject, n.body, n.gift_id, n.invitation_id, n.created_at
          FROM notifications n
            LEFT JOIN gifts g ON g.id = n.gift_id
            LEFT JOIN member_invitations i ON i.id = n.invitation_id
          WHERE g.company_id = ${companyId} OR i.company_id = ${companyId}
          ORDER BY n.created_at DESC, n.id DESC
          LIMIT ${limit} OFFSET ${offset}`
    })

    // Every message of the outbox, whoever it is for: the operator's view (`ribbon outbox`).
    const findNewest = SqlSchema.findAll({
      Request: Schema.Struct({ limit: Schema.Number }),
      Result: CompanyOutboxMessage,
      execute: ({ limit }) =>
        sql`SELECT id, kind, channel, recipient, subject, body, gift_id, invitation_id, created_at
          FROM notifications ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })

    const findForGift = SqlSchema.findAll({
      Request: Schema.String,
      Result: CompanyOutboxMessage,
      execute: (giftId) =>
        sql`SELECT id, kind, channel, recipient, subject, body, gift_id, invitation_id, created_at
          FROM notifications WHERE gift_id = ${giftId} ORDER BY created_at, id`
    })

    return {
      /** Writes a message, unless the checkout already has one of its kind on its channel. */
      insert: Effect.fn("NotificationsRepo.insert")((row: NotificationRow) => Effect.orDie(insert(row))),
      /** Writes a gift's message, unless the gift already has one of its kind (a `gift.resent` is always written). */
      insertGift: Effect.fn("NotificationsRepo.insertGift")((message: GiftMessage, id: string, createdAt: Date) =>
        Effect.orDie(insertGift(message, id, createdAt))
      ),
      /** Writes an invitation's e-mail (a new invitation each time: one message each). */
      insertInvitation: Effect.fn("NotificationsRepo.insertInvitation")(
        (message: InvitationMessage, id: string, createdAt: Date) =>
          Effect.orDie(insertInvitation(message, id, createdAt))
      ),
      /** The messages of a checkout, oldest first. */
      forCheckout: Effect.fn("NotificationsRepo.forCheckout")((checkoutId: string) =>
        Effect.orDie(findForCheckout(checkoutId))
      ),
      /** The messages of a gift, oldest first. */
      forGift: Effect.fn("NotificationsRepo.forGift")((giftId: string) => Effect.orDie(findForGift(giftId))),
      /** A page (from 1) of a company's gift and invitation messages, newest first, and whether more follow. */
      forCompany: Effect.fn("NotificationsRepo.forCompany")(function* (companyId: string, page: number, size: number) {
        const rows = yield* Effect.orDie(findForCompany({ companyId, limit: size + 1, offset: (page - 1) * size }))
        return { rows: rows.slice(0, size), hasNext: rows.length > size }
      }),
      /** The newest `limit` messages of the whole outbox (checkouts', gifts' and invitations'), newest first. */
      newest: Effect.fn("NotificationsRepo.newest")((limit: number) => Effect.orDie(findNewest({ limit })))
    } as const
  })
}) {}
