import { Schema } from "effect"
import { Id } from "../platform/Ids.js"

/** Where a callback delivery stands. */
export const WebhookStatus = Schema.Literal("pending", "delivered", "failed", "disabled")
export type WebhookStatus = typeof WebhookStatus.Type

/**
 * How a delivery is signed and which headers carry it (src/services/checkout/WebhookSigning.ts): Standard Webhooks
 * `v1a` (Ed25519, agent callbacks), Standard Webhooks `v1` (HMAC, company endpoints), or the Agentic Commerce
 * Protocol's `Merchant-Signature` (HMAC, ACP order webhooks).
 */
export const SigningScheme = Schema.Literal("standard_v1a", "standard_v1", "acp_hmac", "ucp_rfc9421")
export type SigningScheme = typeof SigningScheme.Type

/** A row of `webhook_deliveries`, as read back. */
export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  id: Id,
  url: Schema.String,
  /** The company webhook endpoint it goes to (signed `v1`); null for an agent callback (signed `v1a`). */
  endpointId: Schema.NullOr(Schema.String),
  /** The ACP webhook endpoint it goes to (an agent platform's); null otherwise. */
  acpEndpointId: Schema.NullOr(Schema.String),
  signingScheme: SigningScheme,
  eventId: Schema.String,
  eventType: Schema.String,
  payload: Schema.parseJson(),
  status: WebhookStatus,
  attempts: Schema.Int,
  /** While pending: when the next attempt is due (the queue's jittered time once an attempt failed). */
  nextAttemptAt: Schema.NullOr(Schema.DateTimeUtcFromDate),
  lastStatusCode: Schema.NullOr(Schema.Int),
  lastError: Schema.NullOr(Schema.String),
  /** How many times it was sent again on request (each a new run of the retry schedule). */
  resends: Schema.Int,
  createdAt: Schema.DateTimeUtcFromDate,
  updatedAt: Schema.DateTimeUtcFromDate,
  deliveredAt: Schema.NullOr(Schema.DateTimeUtcFromDate)
}) {}

/** A row of `webhook_attempts`: one attempt to deliver. */
export class WebhookAttempt extends Schema.Class<WebhookAttempt>("WebhookAttempt")({
  deliveryId: Id,
  /** 1 for the first attempt. */
  attempt: Schema.Int,
  startedAt: Schema.DateTimeUtcFromDate,
  durationMs: Schema.Int,
  /** The headers it was sent with, signature included (never a secret); null for attempts logged before they were. */
  requestHeaders: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  /** The response's status, or null when no response came (refused, DNS, connection, TLS, time limit). */
  statusCode: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  /** At most 1 KB of the response body. */
  responseBody: Schema.NullOr(Schema.String),
  /** Whether the response body went on past `responseBody`; null when there was no response (or not known). */
  responseTruncated: Schema.NullOr(Schema.Boolean)
}) {}
