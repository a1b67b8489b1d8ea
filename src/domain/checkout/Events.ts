import { Schema } from "effect"
import { EventType } from "./Checkout.js"

/** A stored event; `data` is its jsonb payload as node-postgres parsed it. */
export const EventRow = Schema.Struct({
  id: Schema.String,
  type: EventType,
  checkoutId: Schema.String,
  userId: Schema.String,
  data: Schema.Unknown,
  createdAt: Schema.DateFromSelf
})
export type EventRow = typeof EventRow.Type

/** An event to append: the change it announces and its payload. */
export interface NewEvent {
  readonly type: EventType
  readonly checkoutId: string
  readonly userId: string
  readonly data: unknown
}
