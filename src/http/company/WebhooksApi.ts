import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { VariantNotFound } from "../../domain/catalog/Errors.js"
import { HexId, Timestamp } from "../../domain/company/Company.js"
import {
  WebhookDeliveryNotFound,
  WebhookEndpointDisabled,
  WebhookEndpointLimitReached,
  WebhookEndpointNotFound
} from "../../domain/company/Errors.js"
import {
  CompanyDeliveryEventType,
  CompanyEventType,
  companyEventTypes,
  WebhookDisabledReason,
  WebhookEndpointStatus
} from "../../domain/company/Webhooks.js"
import { NotFound } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { Links, strictBody, type V3QuerySpec, v3UrlParams } from "../V3Requests.js"
import { ApiKeyAuthV3, Operation } from "./ApiKeyAuth.js"

/**
 * Company webhooks, version 3 (docs/decisions/0050-company-webhooks.md, docs/decisions/0030-callbacks-and-delivery.md;
 * docs/company-api.md "Webhooks"): endpoints that receive the company's order and gift events, signed with Standard
 * Webhooks `v1` (HMAC-SHA256) by a `whsec_` secret shown once, and the log of what was delivered to each.
 */

export const maxWebhookUrlLength = 2048

const Url = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(maxWebhookUrlLength)).annotations({
  description:
    "An https URL whose host resolves to public addresses only (docs/webhooks.md); redirects are not followed"
})

/** 1 to all of the event types, each at most once. */
const EventTypes = Schema.Array(CompanyEventType).pipe(
  Schema.minItems(1),
  Schema.maxItems(companyEventTypes.length),
  Schema.filter((types) => {
    const repeated = types.find((type, index) => types.indexOf(type) !== index)
    return repeated === undefined || `${repeated} is listed twice`
  })
)

export const CreateWebhookV3 = strictBody(Schema.Struct({ url: Url, eventTypes: EventTypes }))

export class WebhookV3 extends Schema.Class<WebhookV3>("WebhookV3")({
  id: Schema.String,
  url: Schema.String,
  eventTypes: Schema.Array(CompanyEventType),
  status: WebhookEndpointStatus.annotations({
    description:
      "`disabled` by the company (`PATCH`) or once the receiver answered 410 Gone: later events are recorded, not sent, until it is `active` again"
  }),
  disabledReason: Schema.NullOr(WebhookDisabledReason).annotations({
    description:
      "Why it is disabled: `requested` (by the company) or `gone` (its receiver answered 410 Gone); null while active"
  }),
  createdAt: Timestamp
}) {}

export const UpdateWebhookV3 = strictBody(
  Schema.Struct({
    status: WebhookEndpointStatus.annotations({
      description:
        "`disabled` pauses the endpoint (its pending deliveries are disabled); `active` sends later events again"
    })
  })
)

export class WebhookResponseV3 extends Schema.Class<WebhookResponseV3>("WebhookResponseV3")({ data: WebhookV3 }) {}

export class WebhookListV3 extends Schema.Class<WebhookListV3>("WebhookListV3")({
  data: Schema.Array(WebhookV3),
  links: Links
}) {}

/** The creation answer: the only place the secret is ever shown. */
export class WebhookCreatedV3 extends Schema.Class<WebhookCreatedV3>("WebhookCreatedV3")({
  data: Schema.Struct({
    id: Schema.String,
    url: Schema.String,
    eventTypes: Schema.Array(CompanyEventType),
    secret: Schema.String.annotations({
      description:
        "`whsec_` and 32 random bytes in base64: verifies the `webhook-signature` of every delivery. Shown only here"
    }),
    createdAt: Timestamp
  })
}) {}

const webhookDeliveryFields = {
  id: Schema.String.annotations({ description: "Also the `webhook-id` header and `webhookData.id` of the body" }),
  eventType: CompanyDeliveryEventType.annotations({
    description: "A subscribed event type, or `webhook-test` for a test sent on request"
  }),
  status: Schema.Literal("pending", "delivered", "failed", "disabled"),
  attempts: Schema.Int,
  resends: Schema.Int.annotations({ description: "How many times it was sent again on request" }),
  lastResponseStatus: Schema.NullOr(Schema.Int),
  lastError: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  deliveredAt: Schema.NullOr(Timestamp)
}

export class WebhookDeliveryV3 extends Schema.Class<WebhookDeliveryV3>("WebhookDeliveryV3")(webhookDeliveryFields) {}

export class WebhookDeliveryResponseV3 extends Schema.Class<WebhookDeliveryResponseV3>("WebhookDeliveryResponseV3")({
  data: WebhookDeliveryV3
}) {}

export class WebhookAttemptV3 extends Schema.Class<WebhookAttemptV3>("WebhookAttemptV3")({
  attempt: Schema.Int.annotations({ description: "1 for the first; resends go on counting" }),
  startedAt: Timestamp,
  durationMs: Schema.Int.annotations({ description: "The attempt's latency, DNS and TLS included" }),
  requestHeaders: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })).annotations({
    description: "The headers it was sent with, `webhook-timestamp` and `webhook-signature` included"
  }),
  responseStatus: Schema.NullOr(Schema.Int).annotations({
    description: "Null when no response came (refused, DNS, connection, TLS, time limit) or while in flight"
  }),
  responseBody: Schema.NullOr(Schema.String).annotations({
    description: "At most the first 1 KB of the response body"
  }),
  responseBodyTruncated: Schema.NullOr(Schema.Boolean).annotations({
    description: "Whether the response body went on past `responseBody`"
  }),
  error: Schema.NullOr(Schema.String).annotations({
    description: "Why it did not deliver; null when it did, and (with `responseStatus`) while it is in flight"
  })
}) {}

export class WebhookDeliveryDetailV3 extends Schema.Class<WebhookDeliveryDetailV3>("WebhookDeliveryDetailV3")({
  data: Schema.Struct({
    ...webhookDeliveryFields,
    request: Schema.Struct({
      url: Schema.String,
      body: Schema.String.annotations({ description: "The exact body every attempt sends (the signature covers it)" })
    }),
    attemptLog: Schema.Array(WebhookAttemptV3).annotations({ description: "Every attempt, oldest first" })
  })
}) {}

export class WebhookDeliveryListV3 extends Schema.Class<WebhookDeliveryListV3>("WebhookDeliveryListV3")({
  data: Schema.Array(WebhookDeliveryV3),
  links: Links
}) {}

export const webhooksV3Query = {
  filters: [],
  sort: ["createdAt"],
  paging: "number",
  maxPageSize: 100,
  defaultPageSize: 20
} satisfies V3QuerySpec

export const webhookDeliveriesV3Query = {
  filters: [],
  paging: "number",
  maxPageSize: 100,
  defaultPageSize: 20
} satisfies V3QuerySpec

const WebhookPath = Schema.Struct({ webhookId: HexId })
const DeliveryPath = Schema.Struct({
  webhookId: HexId,
  deliveryId: HexId.annotations({ description: "The delivery's id: its `webhook-id`" })
})

export const SimulateStockV3 = strictBody(
  Schema.Struct({
    stock: Schema.Int.pipe(Schema.between(0, 1_000_000)).annotations({
      description: "The stock level to simulate; 0 makes an available variant unavailable everywhere it ships"
    })
  })
)

const StockChange = Schema.Struct({
  variantId: Schema.String,
  productId: Schema.String,
  countryCode: Schema.String,
  available: Schema.Boolean
})

export class StockChangesV3 extends Schema.Class<StockChangesV3>("StockChangesV3")({
  data: Schema.Struct({
    changes: Schema.Array(StockChange).annotations({
      description: "The changes sent to the test endpoints subscribed; empty when availability would not change"
    })
  })
}) {}

// No permission of their own (the spec names none): the events carry ids and statuses, never personal
// data, so any key of the company may manage them (docs/company-api.md "Webhooks").
const read = { permission: null, rateClass: "administration:read" } as const
const write = { permission: null, rateClass: "administration:write" } as const

export class WebhooksV3Api extends HttpApiGroup.make("webhooksV3")
  .add(
    HttpApiEndpoint.post("create", "/webhooks")
      .setPayload(CreateWebhookV3)
      .addSuccess(WebhookCreatedV3, { status: 201 })
      .addError(lineError("v3", WebhookEndpointLimitReached))
      .annotate(Operation, write)
      .annotate(OpenApi.Summary, "Register a webhook endpoint; its signing secret is shown only in this response")
  )
  .add(
    HttpApiEndpoint.get("list", "/webhooks")
      .setUrlParams(v3UrlParams(webhooksV3Query, {}))
      .addSuccess(WebhookListV3)
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "List the company's webhook endpoints in the key's environment")
  )
  .add(
    HttpApiEndpoint.get("get", "/webhooks/:webhookId")
      .setPath(WebhookPath)
      .addSuccess(WebhookResponseV3)
      .addError(lineError("v3", WebhookEndpointNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "Retrieve a webhook endpoint (never its secret)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/webhooks/:webhookId")
      .setPath(WebhookPath)
      .addError(lineError("v3", WebhookEndpointNotFound))
      .annotate(Operation, write)
      .annotate(OpenApi.Summary, "Delete a webhook endpoint; nothing more is sent to it")
  )
  .add(
    HttpApiEndpoint.patch("update", "/webhooks/:webhookId")
      .setPath(WebhookPath)
      .setPayload(UpdateWebhookV3)
      .addSuccess(WebhookResponseV3)
      .addError(lineError("v3", WebhookEndpointNotFound))
      .annotate(Operation, write)
      .annotate(OpenApi.Summary, "Disable a webhook endpoint (nothing is sent to it) or enable it again")
  )
  .add(
    HttpApiEndpoint.post("test", "/webhooks/:webhookId/test")
      .setPath(WebhookPath)
      .addSuccess(WebhookDeliveryResponseV3, { status: 202 })
      .addError(lineError("v3", WebhookEndpointNotFound))
      .addError(lineError("v3", WebhookEndpointDisabled))
      .annotate(Operation, write)
      .annotate(OpenApi.Summary, "Send the endpoint a `webhook-test` event, delivered as any other event")
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhooks/:webhookId/deliveries")
      .setPath(WebhookPath)
      .setUrlParams(v3UrlParams(webhookDeliveriesV3Query, {}))
      .addSuccess(WebhookDeliveryListV3)
      .addError(lineError("v3", WebhookEndpointNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "List an endpoint's deliveries, newest first, with their attempts and outcome")
  )
  .add(
    HttpApiEndpoint.get("delivery", "/webhooks/:webhookId/deliveries/:deliveryId")
      .setPath(DeliveryPath)
      .addSuccess(WebhookDeliveryDetailV3)
      .addError(lineError("v3", WebhookEndpointNotFound))
      .addError(lineError("v3", WebhookDeliveryNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "Retrieve a delivery: its request, and each attempt with its latency and response")
  )
  .add(
    HttpApiEndpoint.post("resend", "/webhooks/:webhookId/deliveries/:deliveryId/resend")
      .setPath(DeliveryPath)
      .addSuccess(WebhookDeliveryResponseV3, { status: 202 })
      .addError(lineError("v3", WebhookEndpointNotFound))
      .addError(lineError("v3", WebhookDeliveryNotFound))
      .addError(lineError("v3", WebhookEndpointDisabled))
      .annotate(Operation, write)
      .annotate(OpenApi.Summary, "Send a delivery again, with the same `webhook-id`, whatever its outcome was")
  )
  .add(
    HttpApiEndpoint.post("simulateStock", "/variants/:variantId/simulate-stock")
      .setPath(Schema.Struct({ variantId: HexId }))
      .setPayload(SimulateStockV3)
      .addSuccess(StockChangesV3, { status: 202 })
      .addError(lineError("v3", VariantNotFound))
      .addError(lineError("v3", NotFound))
      .annotate(Operation, { ...write, testKeysOnly: true })
      .annotate(
        OpenApi.Summary,
        "Sandbox (test keys): send the test endpoints the stock-availability-updates a stock level would cause"
      )
  )
  .prefix("/public-api/v3")
  .middleware(ApiKeyAuthV3)
  .annotate(OpenApi.Title, "Webhooks (v3)")
  .annotate(
    OpenApi.Description,
    "Endpoints that receive the company's order and gift events, signed with Standard Webhooks `v1`. Authenticated with `X-Api-Key`."
  ) {}
