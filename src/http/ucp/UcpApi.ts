import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  CheckoutSessionClosed,
  CheckoutSessionNotFound,
  CheckoutSessionNotPaid,
  OrderNotFound,
  PaymentTokenDeclined,
  PaymentTokenExceeded,
  PaymentTokenExpired,
  PaymentTokenUsed,
  UcpAgentMissing,
  UcpAlgorithmUnsupported,
  UcpDigestMismatch,
  UcpIdempotencyConflict,
  UcpKeyNotFound,
  UcpProfileMalformed,
  UcpProfileUnreachable,
  UcpSignatureInvalid,
  UcpSignatureMissing
} from "../../domain/checkout/Errors.js"
import {
  UcpCheckout,
  UcpCheckoutRequest,
  UcpCompleteRequest,
  UcpOrder,
  UcpProfile,
  UcpWriteHeaders
} from "../../domain/checkout/Ucp.js"
import { InsufficientScope, InvalidToken } from "../../domain/identity/Errors.js"
import { IdempotencyInFlight, InvalidRequest } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { CurrentUser } from "../identity/Agent.js"
import { mayReplay } from "../OpenApiDocument.js"

/**
 * The Universal Commerce Protocol (release 2026-04-08; docs/decisions/0080-universal-commerce-protocol.md,
 * docs/agent-protocols.md): the business profile, and the checkout capability's REST binding under `/ucp` over the
 * same sessions as `/acp`. Errors are the protocol's `code` and `content` (the `ucp` line of src/http/ErrorLines.ts).
 */

/** `UCP-Agent` on every `/ucp` request: the platform's profile, `profile="https://…"` (RFC 8941 dictionary). */
export class UcpAgent extends HttpApiMiddleware.Tag<UcpAgent>()("ribbon/UcpAgent", {
  failure: lineError("ucp", UcpAgentMissing)
}) {}

/**
 * RFC 9421 request signatures (docs/decisions/0087-ucp-message-signatures.md): a request carrying `Signature-Input`
 * and `Signature` must verify with a key of its `UCP-Agent` profile, fetched for it; an unsigned request passes.
 */
export class UcpSignature extends HttpApiMiddleware.Tag<UcpSignature>()("ribbon/UcpSignature", {
  failure: Schema.Union(
    lineError("ucp", UcpSignatureMissing),
    lineError("ucp", UcpSignatureInvalid),
    lineError("ucp", UcpKeyNotFound),
    lineError("ucp", UcpDigestMismatch),
    lineError("ucp", UcpAlgorithmUnsupported),
    lineError("ucp", UcpAgentMissing),
    lineError("ucp", UcpProfileUnreachable),
    lineError("ucp", UcpProfileMalformed)
  )
}) {}

/** The `/ucp` bearer: as on `/acp`, a token of Ribbon's OAuth server for the signed-in person, with `orders:write`. */
export class UcpBearer extends HttpApiMiddleware.Tag<UcpBearer>()("ribbon/UcpBearer", {
  provides: CurrentUser,
  security: { bearer: HttpApiSecurity.bearer },
  failure: Schema.Union(lineError("ucp", InvalidToken), lineError("ucp", InsufficientScope))
}) {}

const SessionPath = Schema.Struct({ id: Schema.String.pipe(Schema.maxLength(64)) })

export class UcpProfileApi extends HttpApiGroup.make("ucpProfile")
  .add(
    HttpApiEndpoint.get("ucpProfile", "/.well-known/ucp")
      .addSuccess(UcpProfile)
      .annotate(OpenApi.Summary, "Universal Commerce Protocol business profile: services, capabilities, signing keys")
  )
  .annotate(OpenApi.Title, "Universal Commerce Protocol")
  .annotate(OpenApi.Description, "The Universal Commerce Protocol (UCP) business profile.") {}

export class UcpCheckoutSessionsApi extends HttpApiGroup.make("ucpCheckoutSessions")
  .add(
    HttpApiEndpoint.post("ucpCreateCheckout", "/checkout-sessions")
      .setPayload(UcpCheckoutRequest)
      .setHeaders(UcpWriteHeaders)
      .annotate(OpenApi.Transform, mayReplay)
      .addSuccess(UcpCheckout, { status: 201 })
      .addError(lineError("ucp", CheckoutSessionClosed))
      .annotate(OpenApi.Summary, "Create a checkout: its line items priced by Ribbon quotes for the delivery country")
  )
  .add(
    HttpApiEndpoint.get("ucpGetCheckout", "/checkout-sessions/:id")
      .setPath(SessionPath)
      .addSuccess(UcpCheckout)
      .addError(lineError("ucp", CheckoutSessionNotFound))
      .annotate(OpenApi.Summary, "A checkout as it now is")
  )
  .add(
    HttpApiEndpoint.put("ucpUpdateCheckout", "/checkout-sessions/:id")
      .setPath(SessionPath)
      .setPayload(UcpCheckoutRequest)
      .setHeaders(UcpWriteHeaders)
      .annotate(OpenApi.Transform, mayReplay)
      .addSuccess(UcpCheckout)
      .addError(lineError("ucp", CheckoutSessionNotFound))
      .addError(lineError("ucp", CheckoutSessionClosed))
      .annotate(OpenApi.Summary, "Replace a checkout's items, buyer and fulfillment")
  )
  .add(
    HttpApiEndpoint.post("ucpCompleteCheckout", "/checkout-sessions/:id/complete")
      .setPath(SessionPath)
      .setPayload(UcpCompleteRequest)
      .setHeaders(UcpWriteHeaders)
      .annotate(OpenApi.Transform, mayReplay)
      .addSuccess(UcpCheckout)
      .addError(lineError("ucp", CheckoutSessionNotFound))
      .addError(lineError("ucp", CheckoutSessionClosed))
      .addError(lineError("ucp", CheckoutSessionNotPaid))
      // A token of the payment handler that cannot pay the checkout: nothing is charged.
      .addError(lineError("ucp", PaymentTokenDeclined))
      .addError(lineError("ucp", PaymentTokenExpired))
      .addError(lineError("ucp", PaymentTokenExceeded))
      .addError(lineError("ucp", PaymentTokenUsed))
      .annotate(
        OpenApi.Summary,
        "Complete a checkout: pays it with a token of the ribbon_card handler, or succeeds once the person has paid at continue_url"
      )
  )
  .add(
    HttpApiEndpoint.post("ucpCancelCheckout", "/checkout-sessions/:id/cancel")
      .setPath(SessionPath)
      .setHeaders(UcpWriteHeaders)
      .annotate(OpenApi.Transform, mayReplay)
      .addSuccess(UcpCheckout)
      .addError(lineError("ucp", CheckoutSessionNotFound))
      .addError(lineError("ucp", CheckoutSessionClosed))
      .annotate(OpenApi.Summary, "Cancel a checkout that has not been paid")
  )
  .addError(lineError("ucp", InvalidRequest))
  // A write with an Idempotency-Key: another body under the key, or the first request still running.
  .addError(lineError("ucp", UcpIdempotencyConflict))
  .addError(lineError("ucp", IdempotencyInFlight))
  .prefix("/ucp")
  .middleware(UcpBearer)
  .middleware(UcpAgent)
  .middleware(UcpSignature)
  .annotate(OpenApi.Title, "Universal Commerce Protocol checkout")
  .annotate(
    OpenApi.Description,
    "UCP 2026-04-08 checkout sessions for the signed-in person: priced by quotes, paid with a token of Ribbon's payment handler or on its hosted page."
  ) {}

/** The order capability's REST binding: a paid checkout's order, by the id its checkout's `order.id` gives. */
export class UcpOrdersApi extends HttpApiGroup.make("ucpOrders")
  .add(
    HttpApiEndpoint.get("ucpGetOrder", "/orders/:id")
      .setPath(SessionPath)
      .addSuccess(UcpOrder)
      .addError(lineError("ucp", OrderNotFound))
      .annotate(OpenApi.Summary, "An order: what the paid checkout bought, where it ships, what has shipped")
  )
  .addError(lineError("ucp", InvalidRequest))
  .prefix("/ucp")
  .middleware(UcpBearer)
  .middleware(UcpAgent)
  .middleware(UcpSignature)
  .annotate(OpenApi.Title, "Universal Commerce Protocol orders")
  .annotate(
    OpenApi.Description,
    "UCP 2026-04-08 order capability: the orders of the signed-in person's paid checkouts."
  ) {}
