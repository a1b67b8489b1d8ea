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

/** A message of the outbox that concerns a company: an invitation to it, or a message of one of its gifts. */
export const CompanyOutboxMessage = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  channel: Schema.Literal("email", "sms"),
  recipient: Schema.String,
  subject: Schema.String,
  body: Schema.String,
  giftId: Schema.NullOr(Schema.String),
  invitationId: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf
})
export type CompanyOutboxMessage = typeof CompanyOutboxMessage.Type
