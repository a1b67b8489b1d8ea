import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { StockAvailability } from "../../services/catalog/StockAvailability.js"
import { CompanyWebhooks } from "../../services/company/CompanyWebhooks.js"
import { Api } from "../Api.js"
import { CurrentCaller } from "./ApiKeyAuth.js"
import { createdWebhookV3, numberedList, webhookDeliveryDetailV3, webhookDeliveryV3, webhookV3 } from "./v3.js"
import { webhookDeliveriesV3Query, webhooksV3Query } from "./WebhooksApi.js"

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
      .handle("update", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return { data: webhookV3(yield* webhooks.setStatus(caller.scope, path.webhookId, payload.status)) }
        })
      )
      .handle("test", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return { data: webhookDeliveryV3(yield* webhooks.sendTest(caller.scope, path.webhookId)) }
        })
      )
      .handle("delivery", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const found = yield* webhooks.delivery(caller.scope, path.webhookId, path.deliveryId)
          return { data: webhookDeliveryDetailV3(found.delivery, found.attempts) }
        })
      )
      .handle("resend", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return { data: webhookDeliveryV3(yield* webhooks.resend(caller.scope, path.webhookId, path.deliveryId)) }
        })
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
          // For test keys only: the middleware answers a live key (the operation's `testKeysOnly`).
          const caller = yield* CurrentCaller
          return { data: { changes: yield* stock.simulate(caller.scope, path.variantId, payload.stock) } }
        })
      )
  })
)
