import { HttpServerRequest } from "@effect/platform"
import { DateTime, Effect } from "effect"
import type { AddressSuggestion } from "../../domain/catalog/Address.js"
import { shownAddress } from "../../domain/company/Addresses.js"
import type { AuditEvent } from "../../domain/company/Audit.js"
import type { BillingMethodRecord } from "../../domain/company/Billing.js"
import { type Account, type ApiKeyRecord, formatTimestamp } from "../../domain/company/Company.js"
import { type CompanyOrderRecord, fulfillmentStatusOf } from "../../domain/company/Orders.js"
import type { CompanyDeliveryEventType, WebhookEndpointRecord } from "../../domain/company/Webhooks.js"
import { requestBody, type WebhookAttempt, type WebhookDelivery } from "../../services/checkout/WebhookDeliveries.js"
import type { WebhookEndpoint } from "../../services/company/CompanyWebhooks.js"
import { maskEmail, maskName, maskPhone } from "../../services/company/Masking.js"
import type { V3Page } from "../../services/platform/V3QuerySql.js"
import { numberedLinks, parseV3Query, type RawParams, type V3QuerySpec } from "../V3Requests.js"

/**
 * The company API's version 3 presentation of the company context's records (docs/decisions/0036-company-resources.md):
 * camelCase fields, `{data}` envelopes and `{data, links}` lists.
 */

/** The request's query as the v3 parser reads it: a repeated key keeps every value. */
export const searchParams = (url: string): RawParams => {
  const params: Record<string, string | Array<string>> = {}
  for (const [key, value] of new URL(url, "http://ribbon").searchParams) {
    const seen = params[key]
    params[key] = seen === undefined ? value : [...(typeof seen === "string" ? [seen] : seen), value]
  }
  return params
}

/**
 * A page-numbered v3 list: parses the request's query against `spec` (400 on anything it does not accept),
 * reads the page with it, and presents it as `{data, links}`.
 */
export const numberedList = <Row, E, R, Item>(
  spec: V3QuerySpec,
  read: (query: Parameters<typeof numberedLinks>[2]) => Effect.Effect<V3Page<Row>, E, R>,
  present: (row: Row) => Item
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = searchParams(request.url)
    const query = yield* parseV3Query(params, spec)
    const page = yield* read(query)
    const path = new URL(request.url, "http://ribbon").pathname
    return { data: page.rows.map(present), links: numberedLinks(path, params, query, page.hasNext) }
  })

/** Accounts show only `id` and `name` since 3.1. */
export const accountV3 = (account: Account) => ({ id: account.id, name: account.name })

export const billingMethodV3 = (method: BillingMethodRecord) => ({
  id: method.id,
  accountId: method.accountId,
  name: method.name,
  type: method.type,
  status: method.status,
  isDefault: method.isDefault,
  spendingLimit:
    method.spendingLimit === null
      ? null
      : { amount: method.spendingLimit, currency: method.currency, remaining: method.remaining ?? 0 },
  createdAt: formatTimestamp(method.createdAt)
})

/**
 * What a swapped gift's order was swapped from (docs/decisions/0072-swapping-a-gift-within-budget.md): the campaign's
 * product and its title, as v2 gift reads show it too; null for any other order.
 */
export const swappedFromOf = (order: CompanyOrderRecord) =>
  order.swappedFromProductId === null
    ? null
    : { productId: order.swappedFromProductId, title: order.swappedFromTitle ?? order.swappedFromProductId }

/**
 * A company order as v3 shows it; the recipient and street lines masked unless the key reads them unmasked, and the
 * address only as its campaign's privacy allows (`shownAddress`).
 */
export const orderV3 = (order: CompanyOrderRecord, mode: "masked" | "unmasked") => {
  const mask = mode === "masked"
  const price = { amount: order.unitPrice, currency: order.currency }
  return {
    id: order.id,
    accountId: order.accountId,
    billingMethodId: order.billingMethodId,
    status: order.status,
    fulfillmentStatus: fulfillmentStatusOf(order.shipmentStatus),
    idempotencyKey: order.idempotencyKey,
    tags: order.tags,
    metadata: order.metadata,
    lineItems: [
      { variantId: order.variantId, productId: order.productId, title: order.title, quantity: order.quantity, price }
    ],
    total: { amount: order.total, currency: order.currency },
    recipient: {
      firstName: mask ? maskName(order.recipientFirstName) : order.recipientFirstName,
      lastName: mask ? maskName(order.recipientLastName) : order.recipientLastName,
      email: mask ? maskEmail(order.recipientEmail) : order.recipientEmail,
      phone: order.recipientPhone === null ? null : mask ? maskPhone(order.recipientPhone) : order.recipientPhone
    },
    shippingAddress: shownAddress(order, mode),
    recipientAddressHidden: order.addressHidden,
    fulfillments: [
      {
        id: order.supplierOrderId,
        status: order.shipmentStatus,
        carrier: order.carrier,
        trackingNumber: order.trackingNumber,
        trackingUrl: order.trackingUrl,
        shippedAt: order.shippedAt === null ? null : formatTimestamp(order.shippedAt),
        deliveredAt: order.deliveredAt === null ? null : formatTimestamp(order.deliveredAt)
      }
    ],
    trackingLink: order.trackingUrl,
    source: order.source,
    giftId: order.giftId,
    swappedFrom: swappedFromOf(order),
    cancellationDetails:
      order.cancelledAt === null
        ? null
        : { cancelledAt: formatTimestamp(order.cancelledAt), reason: order.cancellationReason ?? "" },
    createdAt: formatTimestamp(order.createdAt),
    updatedAt: formatTimestamp(order.updatedAt)
  }
}

/** An API key with its company, permissions and accounts (never its secret). */
export const apiKeyV3 = (key: ApiKeyRecord) => ({
  id: key.id,
  expirationDate: formatTimestamp(key.expiresAt),
  createdAt: formatTimestamp(key.createdAt),
  enforceMtls: key.enforceMtls,
  name: key.name,
  companyId: key.companyId,
  permissions: key.permissions,
  accountsAccess: key.accountsAccess
})

/** The key a rotation retires, and until when it still works; none without a rotation. */
export const rotatedApiKeyV3 = (rotated: ApiKeyRecord | undefined) =>
  rotated === undefined ? null : { id: rotated.id, expirationDate: formatTimestamp(rotated.expiresAt) }

/** An endpoint as v3 shows it: never its secret. */
export const webhookV3 = (endpoint: WebhookEndpoint) => ({
  id: endpoint.id,
  url: endpoint.url,
  eventTypes: endpoint.eventTypes,
  status: endpoint.status,
  disabledReason: endpoint.disabledReason,
  createdAt: formatTimestamp(endpoint.createdAt)
})

/**
 * The creation answer, with the secret: `{id, url, eventTypes, secret, createdAt}`
 * (docs/decisions/0050-company-webhooks.md).
 */
export const createdWebhookV3 = (endpoint: WebhookEndpointRecord, secret: string) => ({
  id: endpoint.id,
  url: endpoint.url,
  eventTypes: endpoint.eventTypes,
  secret,
  createdAt: formatTimestamp(endpoint.createdAt)
})

const timestampOrNull = (dateTime: DateTime.Utc | null) => (dateTime === null ? null : DateTime.formatIso(dateTime))

export const webhookDeliveryV3 = (delivery: WebhookDelivery) => ({
  id: delivery.eventId,
  // An endpoint's deliveries are made by `CompanyWebhooks` (`emit`, `sendTest`), with a company event type.
  eventType: delivery.eventType as CompanyDeliveryEventType,
  status: delivery.status,
  attempts: delivery.attempts,
  resends: delivery.resends,
  lastResponseStatus: delivery.lastStatusCode,
  lastError: delivery.lastError,
  nextAttemptAt: timestampOrNull(delivery.nextAttemptAt),
  createdAt: DateTime.formatIso(delivery.createdAt),
  deliveredAt: timestampOrNull(delivery.deliveredAt)
})

/** A delivery with the request it sends and its attempts, oldest first. */
export const webhookDeliveryDetailV3 = (delivery: WebhookDelivery, attempts: ReadonlyArray<WebhookAttempt>) => ({
  ...webhookDeliveryV3(delivery),
  request: { url: delivery.url, body: requestBody(delivery) },
  attemptLog: attempts.map((attempt) => ({
    attempt: attempt.attempt,
    startedAt: DateTime.formatIso(attempt.startedAt),
    durationMs: attempt.durationMs,
    requestHeaders: attempt.requestHeaders,
    responseStatus: attempt.statusCode,
    responseBody: attempt.responseBody,
    responseBodyTruncated: attempt.responseTruncated,
    error: attempt.error
  }))
})

/** An audit log event: who, what, where and from which request. */
export const auditEventV3 = (event: AuditEvent) => ({
  id: event.id,
  occurredAt: formatTimestamp(event.occurredAt),
  actor: { type: event.actorType, id: event.actorId, name: event.actorName },
  action: event.action,
  target: { type: event.targetType, id: event.targetId },
  accountId: event.accountId,
  environment: event.environment,
  sourceAddress: event.sourceAddress,
  requestId: event.requestId
})

/** A suggestion in the create-order address shape: what the suggestion does not know is null. */
export const addressSuggestionV3 = (suggestion: AddressSuggestion) => ({
  address1: suggestion.address1 ?? null,
  address2: null,
  city: suggestion.city,
  provinceCode: suggestion.provinceCode ?? null,
  postalCode: suggestion.postalCode ?? null,
  countryCode: suggestion.countryCode
})
