import { Schema } from "effect"

/** One message of the notifications outbox. */
export const NotificationRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  checkoutId: Schema.String,
  kind: Schema.String,
  channel: Schema.Literal("email", "sms"),
  recipient: Schema.String,
  subject: Schema.String,
  body: Schema.String,
  createdAt: Schema.DateFromSelf
})
export type NotificationRow = typeof NotificationRow.Type
