import { Schema } from "effect"
import { Environment } from "./Company.js"

/**
 * Company webhooks (docs/decisions/0050-company-webhooks.md, docs/company-api.md "Webhooks"): endpoints a company
 * registers for the event types it wants, and the events its orders and gifts emit to them, signed with the endpoint's
 * `whsec_` secret (Standard Webhooks `v1`).
 */

export const companyEventTypes = [
  "order-created",
  "order-status-changed",
  "order-fulfillment-status-changed",
  "order-cancelled",
  "gift-status-changed",
  "gift-undeliverable",
  "gift-delivery-status-changed",
  "gift-thank-you-note-added",
  "stock-availability-updates"
] as const

export const CompanyEventType = Schema.Literal(...companyEventTypes)
export type CompanyEventType = typeof CompanyEventType.Type

/** What each event type tells, in a sentence (the dashboard's choice of types shows them). */
export const companyEventTypeDescriptions: Readonly<Record<CompanyEventType, string>> = {
  "order-created": "An order was placed.",
  "order-status-changed": "An order's status changed (for example, to completed).",
  "order-fulfillment-status-changed": "An order's shipment moved (processing, shipped, delivered).",
  "order-cancelled": "An order was cancelled.",
  "gift-status-changed": "A gift's status changed (opened, claimed, expired, cancelled).",
  "gift-undeliverable":
    "Nothing a gift offers, not even a digital gift within its budget, can reach the country its recipient chose " +
    "(once per gift and country).",
  "gift-delivery-status-changed": "The shipment of a claimed gift moved.",
  "gift-thank-you-note-added":
    "A gift's recipient wrote a thank-you note to the sender, or changed it within the 24 hours it may be changed.",
  "stock-availability-updates": "A variant became available, or stopped being available, in a country."
}

/**
 * The event an endpoint gets when its company asks for a test (`POST /public-api/v3/webhooks/{id}/test`), whatever
 * types it subscribes to; it cannot be subscribed to (docs/decisions/0058-webhook-resend-and-test-events.md).
 */
export const webhookTestEventType = "webhook-test"

/** What a delivery to a company endpoint carries: an event type it subscribes to, or a test. */
export const CompanyDeliveryEventType = Schema.Literal(...companyEventTypes, webhookTestEventType)
export type CompanyDeliveryEventType = typeof CompanyDeliveryEventType.Type

/** Endpoints a company may hold in one environment. */
export const maxWebhookEndpoints = 10

/** Whether the endpoint receives its events, or is switched off (by its company, or by a 410 Gone). */
export const WebhookEndpointStatus = Schema.Literal("active", "disabled")
export type WebhookEndpointStatus = typeof WebhookEndpointStatus.Type

/** Why an endpoint is disabled: its company asked (`requested`), or its receiver answered 410 Gone (`gone`). */
export const WebhookDisabledReason = Schema.Literal("requested", "gone")
export type WebhookDisabledReason = typeof WebhookDisabledReason.Type

/** A stored endpoint as the services see it (never its secret). */
export const WebhookEndpointRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  environment: Environment,
  url: Schema.String,
  eventTypes: Schema.Array(CompanyEventType),
  /** When its company disabled it (null: not disabled by request; a 410 Gone is the delivery engine's to tell). */
  disabledAt: Schema.NullOr(Schema.DateFromSelf),
  createdAt: Schema.DateFromSelf
})
export type WebhookEndpointRecord = typeof WebhookEndpointRecord.Type

export type Json = string | number | boolean | null | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** What an event is about: its id goes into `eventData` beside the company and account. */
export type CompanyEventSubject = { readonly orderId: string } | { readonly giftId: string }

/** The rest of `eventData`: the subject's new status and whatever else the event tells; never the ids above. */
export type CompanyEventData = { readonly [key: string]: Json } & {
  readonly companyId?: never
  readonly accountId?: never
  readonly orderId?: never
  readonly giftId?: never
}

/**
 * One event of a company's environment, for every endpoint subscribed to its type. `accountId` and
 * `subject` are null only for company-wide events (`stock-availability-updates`).
 */
export interface CompanyEvent {
  readonly companyId: string
  readonly environment: Environment
  readonly accountId: string | null
  readonly eventType: CompanyEventType
  readonly subject: CompanyEventSubject | null
  readonly eventData: CompanyEventData
}

/** One entry of a `stock-availability-updates` event: a variant became available, or stopped being, in a country. */
export interface StockAvailabilityChange {
  readonly variantId: string
  readonly productId: string
  readonly countryCode: string
  readonly available: boolean
}
