import { HttpApiBuilder } from "@effect/platform"
import { DateTime, Effect } from "effect"
import { formatTimestamp } from "../../domain/company/Company.js"
import type { CompanyEventType, WebhookEndpointRecord } from "../../domain/company/Webhooks.js"
import { NotFound } from "../../domain/platform/Errors.js"
import { StockAvailability } from "../../services/catalog/StockAvailability.js"
import type { WebhookDelivery } from "../../services/checkout/Webhooks.js"
import { CompanyWebhooks, type WebhookEndpoint } from "../../services/company/CompanyWebhooks.js"
import { Api } from "../Api.js"
import { CurrentCaller } from "./ApiKeyAuth.js"
import { numberedList } from "./v3.js"
import { webhookDeliveriesV3Query, webhooksV3Query } from "./WebhooksApi.js"

/** An endpoint as v3 shows it: never its secret. */
export const webhookV3 = (endpoint: WebhookEndpoint) => ({
  id: endpoint.id,
  url: endpoint.url,
  eventTypes: endpoint.eventTypes,
  status: endpoint.status,
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
  // An endpoint's deliveries are made by `CompanyWebhooks.emit`, with a company event type.
  eventType: delivery.eventType as CompanyEventType,
  status: delivery.status,
  attempts: delivery.attempts,
  lastResponseStatus: delivery.lastStatusCode,
  lastError: delivery.lastError,
  nextAttemptAt: timestampOrNull(delivery.nextAttemptAt),
  createdAt: DateTime.formatIso(delivery.createdAt),
  deliveredAt: timestampOrNull(delivery.deliveredAt)
})

export const WebhooksV3Live = HttpApiBuilder.group(Api, "webhooksV3", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* CompanyWebhooks
    const stock = yield* StockAvailability
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const { endpoint, secret } = yield* webhooks.create(caller.scope, payload)
          return { data: createdWebhookV3(endpoint, secret) }
        })
      )
      .handle("list", () =>
        Effect.flatMap(CurrentCaller, (caller) =>
          numberedList(webhooksV3Query, (query) => webhooks.page(caller.scope, query), webhookV3)
        )
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return { data: webhookV3(yield* webhooks.find(caller.scope, path.webhookId)) }
        })
      )
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => webhooks.remove(caller.scope, path.webhookId))
      )
      .handle("deliveries", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) =>
          numberedList(
            webhookDeliveriesV3Query,
            (query) => webhooks.deliveries(caller.scope, path.webhookId, query),
            webhookDeliveryV3
          )
        )
      )
      .handle("simulateStock", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          if (caller.key.environment !== "test") {
            return yield* new NotFound({ message: "The sandbox control is for test keys only." })
          }
          return { data: { changes: yield* stock.simulate(caller.scope, path.variantId, payload.stock) } }
        })
      )
  })
)
