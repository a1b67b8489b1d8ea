import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { VariantNotFound } from "../../domain/catalog/Errors.js"
import {
  Checkout,
  CheckoutRequest,
  LastEventId,
  Order,
  OrderPage,
  PathId,
  Quote,
  QuoteRequest
} from "../../domain/checkout/Checkout.js"
import {
  AddressUnverified,
  AllowanceExceeded,
  AllowanceUnavailable,
  CheckoutNotFound,
  CheckoutStateConflict,
  CountryMismatch,
  OrderAlreadyCancelled,
  OrderInTransit,
  OrderNotFound,
  QuoteAlreadyUsed,
  QuoteExpired,
  QuoteNotFound,
  SmsConsentRequired,
  VariantNotShippable,
  VariantOutOfStock
} from "../../domain/checkout/Errors.js"
import { InsufficientScope } from "../../domain/identity/Errors.js"
import { IdempotencyInFlight, IdempotencyKeyReused, InvalidRequest } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { agentOperation, Bearer } from "../identity/Agent.js"
import { mayReplay } from "../OpenApiDocument.js"
import { queryInt } from "../QueryParams.js"

/**
 * Quotes, checkouts and orders of the agent API (spec "Quotes", "Checkout";
 * docs/decisions/0025-quotes-and-checkouts.md, docs/decisions/0029-events-and-sse.md; docs/checkout.md). Each operation
 * declares its scope and tool class; the bearer middleware enforces them and the connector manifest publishes them.
 */

export class QuotesApi extends HttpApiGroup.make("quotes")
  .add(
    HttpApiEndpoint.post("createQuote", "/quotes")
      .setPayload(QuoteRequest)
      .addSuccess(Quote, { status: 201 })
      .addError(lineError("v1", VariantNotFound))
      .addError(lineError("v1", VariantOutOfStock))
      .addError(lineError("v1", VariantNotShippable))
      .annotate(
        OpenApi.Summary,
        "Quote one unit of a variant for a country: the exact all-in amount, locked for 15 minutes. One per cart line"
      )
      .annotateContext(agentOperation("orders:write", "write"))
  )
  .add(
    HttpApiEndpoint.get("getQuote", "/quotes/:quoteId")
      .setPath(Schema.Struct({ quoteId: PathId }))
      .addSuccess(Quote)
      .addError(lineError("v1", QuoteNotFound))
      .annotate(OpenApi.Summary, "A quote and its price lock")
      .annotateContext(agentOperation("orders:read", "read"))
  )
  .addError(lineError("v1", InvalidRequest))
  .prefix("/v1")
  .middleware(Bearer)
  .annotate(OpenApi.Title, "Quotes")
  .annotate(OpenApi.Description, "All-in prices locked for 15 minutes, one quote per cart line.") {}

export class CheckoutsApi extends HttpApiGroup.make("checkouts")
  .add(
    HttpApiEndpoint.post("createCheckout", "/checkouts")
      .setPayload(CheckoutRequest)
      .addSuccess(Checkout, { status: 201 })
      .addError(lineError("v1", QuoteNotFound))
      .addError(lineError("v1", QuoteExpired))
      .addError(lineError("v1", QuoteAlreadyUsed))
      .addError(lineError("v1", CountryMismatch))
      .addError(lineError("v1", AddressUnverified))
      .addError(lineError("v1", SmsConsentRequired))
      .addError(lineError("v1", IdempotencyKeyReused))
      .addError(lineError("v1", IdempotencyInFlight))
      .addError(lineError("v1", AllowanceExceeded))
      .addError(lineError("v1", AllowanceUnavailable))
      .addError(lineError("v1", InsufficientScope))
      .annotate(OpenApi.Transform, mayReplay)
      .annotate(
        OpenApi.Summary,
        "Create one checkout for the cart's quotes; the user pays at paymentUrl, or with payWith allowance it is paid at once from the user's allowance. Confirm items, total, recipient and address with the user first"
      )
      .annotateContext(agentOperation("orders:write", "sensitive-write"))
  )
  .add(
    HttpApiEndpoint.get("getCheckout", "/checkouts/:checkoutId")
      .setPath(Schema.Struct({ checkoutId: PathId }))
      .addSuccess(Checkout)
      .addError(lineError("v1", CheckoutNotFound))
      .annotate(OpenApi.Summary, "A checkout's status (statusUrl): poll until confirmed or partially_confirmed")
      .annotateContext(agentOperation("orders:read", "read"))
  )
  .add(
    HttpApiEndpoint.get("checkoutEvents", "/checkouts/:checkoutId/events")
      .setPath(Schema.Struct({ checkoutId: PathId }))
      .setHeaders(LastEventId)
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .addError(lineError("v1", CheckoutNotFound))
      .annotate(
        OpenApi.Summary,
        "A checkout's events (eventsUrl) as server-sent events: replays after Last-Event-ID, then follows; ends after a final status"
      )
      .annotateContext(agentOperation("orders:read", "read"))
  )
  .add(
    HttpApiEndpoint.post("cancelCheckout", "/checkouts/:checkoutId/cancel")
      .setPath(Schema.Struct({ checkoutId: PathId }))
      .addSuccess(Checkout)
      .addError(lineError("v1", CheckoutNotFound))
      .addError(lineError("v1", CheckoutStateConflict))
      .annotate(OpenApi.Summary, "Cancel a checkout that has not been paid")
      .annotateContext(agentOperation("orders:write", "write"))
  )
  .addError(lineError("v1", InvalidRequest))
  .prefix("/v1")
  .middleware(Bearer)
  .annotate(OpenApi.Title, "Checkouts")
  .annotate(
    OpenApi.Description,
    "One checkout per cart, paid by the user on the hosted page, then one order per item."
  ) {}

const Limit = queryInt({ min: 1, max: 100, description: "Integer from 1 to 100 (default 20)" })

export class AgentOrdersApi extends HttpApiGroup.make("orders")
  .add(
    HttpApiEndpoint.get("listOrders", "/orders")
      .setUrlParams(
        Schema.Struct({
          limit: Schema.optional(Limit),
          cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(512)))
        })
      )
      .addSuccess(OrderPage)
      .annotate(OpenApi.Summary, "The user's orders, newest first, with tracking once shipped")
      .annotateContext(agentOperation("orders:read", "read"))
  )
  .add(
    HttpApiEndpoint.get("getOrder", "/orders/:orderId")
      .setPath(Schema.Struct({ orderId: PathId }))
      .addSuccess(Order)
      .addError(lineError("v1", OrderNotFound))
      .annotate(OpenApi.Summary, "One order: status, carrier, tracking number and URL")
      .annotateContext(agentOperation("orders:read", "read"))
  )
  .add(
    HttpApiEndpoint.post("cancelOrder", "/orders/:orderId/cancel")
      .setPath(Schema.Struct({ orderId: PathId }))
      .addSuccess(Order)
      .addError(lineError("v1", OrderNotFound))
      .addError(lineError("v1", OrderInTransit))
      .addError(lineError("v1", OrderAlreadyCancelled))
      .addError(lineError("v1", CheckoutStateConflict))
      .annotate(
        OpenApi.Summary,
        "Cancel an order that has not shipped and refund its item. Confirm with the user first"
      )
      .annotateContext(agentOperation("orders:write", "sensitive-write"))
  )
  .addError(lineError("v1", InvalidRequest))
  .prefix("/v1")
  .middleware(Bearer)
  .annotate(OpenApi.Title, "Orders")
  .annotate(OpenApi.Description, "One order per placed checkout item, with its progress and tracking.") {}
