import {
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSecurity,
  type HttpMethod,
  OpenApi
} from "@effect/platform"
import { Schema } from "effect"
import {
  AcpCancelRequest,
  AcpCheckoutSession,
  AcpCompleteRequest,
  AcpCreateRequest,
  AcpDiscovery,
  AcpHeaders,
  AcpReadHeaders,
  AcpUpdateRequest,
  GIFT_EXTENSION_NAME,
  GIFT_SCHEMA_PATH
} from "../../domain/checkout/Acp.js"
import {
  AcpWebhookEndpoint,
  AcpWebhookEndpointCreate,
  AcpWebhookEndpointList
} from "../../domain/checkout/AcpOrders.js"
import { DelegatePaymentResponse } from "../../domain/checkout/AcpPayments.js"
import {
  AcpApiVersionMissing,
  AcpApiVersionUnsupported,
  CheckoutSessionClosed,
  CheckoutSessionNotFound,
  CheckoutSessionNotPaid,
  IdempotencyKeyRequired,
  InvalidCard,
  PaymentTokenDeclined,
  PaymentTokenExceeded,
  PaymentTokenExpired,
  PaymentTokenUsed
} from "../../domain/checkout/Errors.js"
import { InsufficientScope, InvalidToken } from "../../domain/identity/Errors.js"
import { IdempotencyInFlight, IdempotencyKeyReused, InvalidRequest, NotFound } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { CurrentUser } from "../identity/Agent.js"
import { mayReplay } from "../OpenApiDocument.js"

/**
 * The Agentic Commerce Protocol (version 2026-04-17; docs/decisions/0078-agentic-commerce-protocol.md,
 * docs/agent-protocols.md): its discovery document, and its checkout sessions under `/acp` over the agent API's
 * quotes and checkouts. Errors are the protocol's flat error object (the `acp` line of src/http/ErrorLines.ts).
 */

/** `API-Version` on every `/acp` request: missing or unsupported is a 400 with `supported_versions`. */
export class AcpVersion extends HttpApiMiddleware.Tag<AcpVersion>()("ribbon/AcpVersion", {
  failure: Schema.Union(lineError("acp", AcpApiVersionMissing), lineError("acp", AcpApiVersionUnsupported))
}) {}

/**
 * The `/acp` bearer middleware: an access token of Ribbon's OAuth server, acting for the signed-in person, with
 * the `orders:write` scope (every session operation may lead to a purchase). Implemented in src/http/acp/AcpLive.ts.
 */
export class AcpBearer extends HttpApiMiddleware.Tag<AcpBearer>()("ribbon/AcpBearer", {
  provides: CurrentUser,
  security: { bearer: HttpApiSecurity.bearer },
  failure: Schema.Union(lineError("acp", InvalidToken), lineError("acp", InsufficientScope))
}) {}

/** The protocol's required headers, marked required in the document (the handlers enforce them with its codes). */
const requiredHeaders =
  (names: ReadonlyArray<string>) =>
  (operation: Record<string, any>): Record<string, any> => {
    for (const parameter of operation.parameters ?? []) {
      if (parameter.in === "header" && names.includes(parameter.name)) parameter.required = true
    }
    return operation
  }

/** A POST's document: `API-Version` and `Idempotency-Key` required, its 2xx possibly a replay. */
const keyedPost = (operation: Record<string, any>) =>
  mayReplay(requiredHeaders(["api-version", "idempotency-key"])(operation))

/** A POST under the protocol's idempotency: the key's three refusals, and its document as `keyedPost` says. */
const idempotent = <
  Name extends string,
  Method extends HttpMethod.HttpMethod,
  Path,
  UrlParams,
  Payload,
  Headers,
  Success,
  Error,
  R,
  RE
>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
) =>
  endpoint
    .addError(lineError("acp", IdempotencyKeyRequired))
    .addError(lineError("acp", IdempotencyKeyReused))
    .addError(lineError("acp", IdempotencyInFlight))
    .annotate(OpenApi.Transform, keyedPost)

const SessionPath = Schema.Struct({ checkout_session_id: Schema.String.pipe(Schema.maxLength(64)) })

export class AcpDiscoveryApi extends HttpApiGroup.make("acpDiscovery")
  .add(
    HttpApiEndpoint.get("acpDiscovery", "/.well-known/acp.json")
      .addSuccess(AcpDiscovery)
      .annotate(
        OpenApi.Summary,
        "Agentic Commerce Protocol discovery: versions, the API base URL, transports and capabilities"
      )
  )
  .annotate(OpenApi.Title, "Agentic Commerce Protocol")
  .annotate(
    OpenApi.Description,
    "Checkout sessions of the Agentic Commerce Protocol (ACP), over quotes and checkouts."
  ) {}

/** The JSON Schemas of Ribbon's own ACP extensions, public as the discovery document that names them. */
export class AcpExtensionsApi extends HttpApiGroup.make("acpExtensions")
  .add(
    HttpApiEndpoint.get("acpGiftExtensionSchema", GIFT_SCHEMA_PATH)
      .addSuccess(
        Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
          identifier: "AcpGiftExtensionSchema",
          description: "A JSON Schema (draft 2020-12)"
        })
      )
      .annotate(
        OpenApi.Summary,
        `The JSON Schema of Ribbon's gift extension (${GIFT_EXTENSION_NAME}): the gift field it adds to checkout sessions`
      )
  )
  .annotate(OpenApi.Title, "Agentic Commerce Protocol extensions")
  .annotate(OpenApi.Description, "The JSON Schemas of Ribbon's extensions of the Agentic Commerce Protocol.") {}

export class AcpCheckoutSessionsApi extends HttpApiGroup.make("acpCheckoutSessions")
  .add(
    HttpApiEndpoint.post("createCheckoutSession", "/checkout_sessions")
      .setHeaders(AcpHeaders)
      .setPayload(AcpCreateRequest)
      .addSuccess(AcpCheckoutSession, { status: 201 })
      .pipe(idempotent)
      .annotate(
        OpenApi.Summary,
        "Create a checkout session: its line items priced by Ribbon quotes for the delivery country"
      )
  )
  .add(
    HttpApiEndpoint.post("updateCheckoutSession", "/checkout_sessions/:checkout_session_id")
      .setPath(SessionPath)
      .setHeaders(AcpHeaders)
      .setPayload(AcpUpdateRequest)
      .addSuccess(AcpCheckoutSession)
      .addError(lineError("acp", CheckoutSessionNotFound))
      .addError(lineError("acp", CheckoutSessionClosed))
      .pipe(idempotent)
      .annotate(
        OpenApi.Summary,
        "Update a checkout session: items, buyer, fulfillment details (absent stays, null clears)"
      )
  )
  .add(
    HttpApiEndpoint.get("getCheckoutSession", "/checkout_sessions/:checkout_session_id")
      .setPath(SessionPath)
      .setHeaders(AcpReadHeaders)
      .addSuccess(AcpCheckoutSession)
      .addError(lineError("acp", CheckoutSessionNotFound))
      .annotate(OpenApi.Transform, requiredHeaders(["api-version"]))
      .annotate(OpenApi.Summary, "A checkout session as it now is")
  )
  .add(
    HttpApiEndpoint.post("completeCheckoutSession", "/checkout_sessions/:checkout_session_id/complete")
      .setPath(SessionPath)
      .setHeaders(AcpHeaders)
      .setPayload(AcpCompleteRequest)
      .addSuccess(AcpCheckoutSession)
      .addError(lineError("acp", CheckoutSessionNotFound))
      .addError(lineError("acp", CheckoutSessionClosed))
      .addError(lineError("acp", CheckoutSessionNotPaid))
      .addError(lineError("acp", PaymentTokenDeclined))
      .addError(lineError("acp", PaymentTokenExpired))
      .addError(lineError("acp", PaymentTokenExceeded))
      .addError(lineError("acp", PaymentTokenUsed))
      .pipe(idempotent)
      .annotate(
        OpenApi.Summary,
        "Complete a checkout session: pays it with a vault token, or succeeds once the person has paid at continue_url"
      )
  )
  .add(
    HttpApiEndpoint.post("cancelCheckoutSession", "/checkout_sessions/:checkout_session_id/cancel")
      .setPath(SessionPath)
      .setHeaders(AcpHeaders)
      .setPayload(AcpCancelRequest)
      .addSuccess(AcpCheckoutSession)
      .addError(lineError("acp", CheckoutSessionNotFound))
      .addError(lineError("acp", CheckoutSessionClosed))
      .pipe(idempotent)
      .annotate(OpenApi.Summary, "Cancel a checkout session that has not been paid")
  )
  .addError(lineError("acp", InvalidRequest))
  .prefix("/acp")
  .middleware(AcpBearer)
  .middleware(AcpVersion)
  .annotate(OpenApi.Title, "Agentic Commerce Protocol checkout sessions")
  .annotate(
    OpenApi.Description,
    "ACP 2026-04-17 checkout sessions for the signed-in person: priced by quotes, paid on Ribbon's hosted page."
  ) {}

/**
 * The protocol's delegated payment, Ribbon as the PSP (docs/decisions/0079-acp-delegated-payment.md): a card
 * tokenized into a vault token bound by its allowance. The body is decoded by the handler, so that a bad card or
 * field is the protocol's `invalid_card` with its `param` rather than a generic `invalid`.
 */
export class AcpDelegatePaymentApi extends HttpApiGroup.make("acpDelegatePayment")
  .add(
    HttpApiEndpoint.post("delegatePayment", "/agentic_commerce/delegate_payment")
      .setHeaders(AcpHeaders)
      .setPayload(
        Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
          identifier: "AcpDelegatePaymentRequest",
          description:
            "The protocol's DelegatePaymentRequest: payment_method (a card), allowance, billing_address, risk_signals, metadata"
        })
      )
      .addSuccess(DelegatePaymentResponse, { status: 201 })
      .addError(lineError("acp", InvalidCard))
      .pipe(idempotent)
      .annotate(
        OpenApi.Summary,
        "Delegate a card: a vault token for one checkout session, within its allowance (the PSP is the test-mode simulator)"
      )
  )
  .addError(lineError("acp", InvalidRequest))
  .middleware(AcpBearer)
  .middleware(AcpVersion)
  .annotate(OpenApi.Title, "Agentic Commerce Protocol delegated payment")
  .annotate(
    OpenApi.Description,
    "ACP 2026-04-17 delegate_payment: Ribbon tokenizes the card with its payment simulator; complete takes the token."
  ) {}

const EndpointPath = Schema.Struct({ webhook_endpoint_id: Schema.String.pipe(Schema.maxLength(64)) })

/**
 * Where the agent platform (the OAuth client of the bearer token) receives the protocol's order webhooks
 * (docs/decisions/0084-acp-order-webhooks.md): `order_create` and `order_update` for every session it created, signed
 * `Merchant-Signature` with the endpoint's secret. Every token of the client manages the same endpoints.
 */
export class AcpWebhookEndpointsApi extends HttpApiGroup.make("acpWebhookEndpoints")
  .add(
    HttpApiEndpoint.post("createAcpWebhookEndpoint", "/webhook_endpoints")
      .setHeaders(AcpHeaders)
      .setPayload(AcpWebhookEndpointCreate)
      .addSuccess(AcpWebhookEndpoint, { status: 201 })
      .pipe(idempotent)
      .annotate(
        OpenApi.Summary,
        "Register a URL for order webhooks (order_create, order_update); the answer shows its signing secret once"
      )
  )
  .add(
    HttpApiEndpoint.get("listAcpWebhookEndpoints", "/webhook_endpoints")
      .setHeaders(AcpReadHeaders)
      .addSuccess(AcpWebhookEndpointList)
      .annotate(OpenApi.Transform, requiredHeaders(["api-version"]))
      .annotate(OpenApi.Summary, "The platform's order webhook endpoints, oldest first (without their secrets)")
  )
  .add(
    HttpApiEndpoint.del("deleteAcpWebhookEndpoint", "/webhook_endpoints/:webhook_endpoint_id")
      .setPath(EndpointPath)
      .setHeaders(AcpReadHeaders)
      .addError(lineError("acp", NotFound))
      .annotate(OpenApi.Transform, requiredHeaders(["api-version"]))
      .annotate(
        OpenApi.Summary,
        "Delete an order webhook endpoint: nothing more is sent to it, pending deliveries included"
      )
  )
  .addError(lineError("acp", InvalidRequest))
  .prefix("/acp")
  .middleware(AcpBearer)
  .middleware(AcpVersion)
  .annotate(OpenApi.Title, "Agentic Commerce Protocol order webhooks")
  .annotate(
    OpenApi.Description,
    "Where the agent platform receives ACP 2026-04-17 order webhooks for the sessions it created, and their signing secrets."
  ) {}
