import { Schema } from "effect"
import { DomainError, errorCode, FieldIssue } from "../platform/Errors.js"

// Quotes, checkouts and orders (agent API; docs/checkout.md). v3 domain ORDS, sequences from 050.

/** No quote with that id for this user (another user's quote is not found either). */
export class QuoteNotFound extends DomainError<QuoteNotFound>()(
  "QuoteNotFound",
  { quoteId: Schema.String },
  errorCode(404, "Quote not found", "quote_not_found", "NOT_FOUND", "404_ORDS_050")
) {}

/** The quote's 15-minute price lock has passed: ask for a new quote. */
export class QuoteExpired extends DomainError<QuoteExpired>()(
  "QuoteExpired",
  { quoteId: Schema.String },
  errorCode(409, "Quote expired", "quote_expired", "CONFLICT", "409_ORDS_050")
) {}

/** The quote already backs another checkout. */
export class QuoteAlreadyUsed extends DomainError<QuoteAlreadyUsed>()(
  "QuoteAlreadyUsed",
  { quoteId: Schema.String },
  errorCode(409, "Quote already used", "quote_already_used", "CONFLICT", "409_ORDS_051")
) {}

/** The variant has no stock left. */
export class VariantOutOfStock extends DomainError<VariantOutOfStock>()(
  "VariantOutOfStock",
  { variantId: Schema.String },
  errorCode(422, "Variant out of stock", "variant_out_of_stock", "UNPROCESSABLE_ENTITY", "422_ORDS_050")
) {}

/** The variant does not ship to the country (or is not for sale). */
export class VariantNotShippable extends DomainError<VariantNotShippable>()(
  "VariantNotShippable",
  { variantId: Schema.String, countryCode: Schema.String },
  errorCode(422, "Variant not shippable", "variant_not_shippable", "UNPROCESSABLE_ENTITY", "422_ORDS_051")
) {}

/** The quotes of one checkout are for different countries, or not for the shipping address's country. */
export class CountryMismatch extends DomainError<CountryMismatch>()(
  "CountryMismatch",
  {},
  errorCode(422, "Country mismatch", "country_mismatch", "UNPROCESSABLE_ENTITY", "422_ORDS_052")
) {}

/** The shipping address did not pass validation; `message` says what is wrong. */
export class AddressUnverified extends DomainError<AddressUnverified>()(
  "AddressUnverified",
  { issues: Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String })) },
  errorCode(422, "Address not verified", "address_unverified", "UNPROCESSABLE_ENTITY", "422_ORDS_053")
) {}

/** An SMS number without `smsConsent: true`; `consentText` is what the user must agree to. */
export class SmsConsentRequired extends DomainError<SmsConsentRequired>()(
  "SmsConsentRequired",
  { consentText: Schema.String },
  errorCode(422, "SMS consent required", "sms_consent_required", "UNPROCESSABLE_ENTITY", "422_ORDS_054")
) {}

/** No checkout with that id for this user. */
export class CheckoutNotFound extends DomainError<CheckoutNotFound>()(
  "CheckoutNotFound",
  { checkoutId: Schema.String },
  errorCode(404, "Checkout not found", "checkout_not_found", "NOT_FOUND", "404_ORDS_051")
) {}

/** The checkout's status does not allow the operation (e.g. cancelling after payment). */
export class CheckoutStateConflict extends DomainError<CheckoutStateConflict>()(
  "CheckoutStateConflict",
  { checkoutStatus: Schema.String },
  errorCode(409, "Checkout state conflict", "checkout_state_conflict", "CONFLICT", "409_ORDS_053")
) {}

/** No order with that id for this user. */
export class OrderNotFound extends DomainError<OrderNotFound>()(
  "OrderNotFound",
  { orderId: Schema.String },
  errorCode(404, "Order not found", "order_not_found", "NOT_FOUND", "404_ORDS_052")
) {}

/** The order has shipped (or was delivered): it can no longer be cancelled. */
export class OrderInTransit extends DomainError<OrderInTransit>()(
  "OrderInTransit",
  { orderId: Schema.String, orderStatus: Schema.String },
  errorCode(409, "Order in transit", "order_in_transit", "CONFLICT", "409_ORDS_054")
) {}

/** The order was already cancelled. */
export class OrderAlreadyCancelled extends DomainError<OrderAlreadyCancelled>()(
  "OrderAlreadyCancelled",
  { orderId: Schema.String },
  errorCode(409, "Order already cancelled", "order_already_cancelled", "CONFLICT", "409_ORDS_055")
) {}

// The Agentic Commerce Protocol line (`/acp`; docs/decisions/0078-agentic-commerce-protocol.md). Their `/v1` codes
// are the protocol's own `code` values; v3 sequences from 070.

/** An `/acp` request without the `API-Version` header; `supportedVersions` lists the versions served. */
export class AcpApiVersionMissing extends DomainError<AcpApiVersionMissing>()(
  "AcpApiVersionMissing",
  { supportedVersions: Schema.Array(Schema.String) },
  errorCode(400, "API version missing", "missing_api_version", "INVALID_REQUEST", "400_ORDS_070")
) {}

/** An `/acp` request for a protocol version Ribbon does not serve; `supportedVersions` lists those it does. */
export class AcpApiVersionUnsupported extends DomainError<AcpApiVersionUnsupported>()(
  "AcpApiVersionUnsupported",
  { supportedVersions: Schema.Array(Schema.String) },
  errorCode(400, "API version unsupported", "unsupported_api_version", "INVALID_REQUEST", "400_ORDS_071")
) {}

/** An `/acp` POST without an `Idempotency-Key` header. */
export class IdempotencyKeyRequired extends DomainError<IdempotencyKeyRequired>()(
  "IdempotencyKeyRequired",
  {},
  errorCode(400, "Idempotency key required", "idempotency_key_required", "INVALID_REQUEST", "400_ORDS_072")
) {}

/** No checkout session with that id for this user (another user's is not found either). */
export class CheckoutSessionNotFound extends DomainError<CheckoutSessionNotFound>()(
  "CheckoutSessionNotFound",
  {},
  errorCode(404, "Checkout session not found", "checkout_session_not_found", "NOT_FOUND", "404_ORDS_070")
) {}

/** The session is completed, canceled or being completed: it can no longer be changed or canceled. */
export class CheckoutSessionClosed extends DomainError<CheckoutSessionClosed>()(
  "CheckoutSessionClosed",
  {},
  errorCode(405, "Checkout session closed", "checkout_session_closed", "METHOD_NOT_ALLOWED", "405_ORDS_070")
) {}

/** `complete` before the person paid on the hosted page (`continue_url`), or before the session is ready. */
export class CheckoutSessionNotPaid extends DomainError<CheckoutSessionNotPaid>()(
  "CheckoutSessionNotPaid",
  {},
  errorCode(409, "Checkout session not paid", "checkout_session_not_paid", "CONFLICT", "409_ORDS_070")
) {}

/**
 * A `/ucp` request without the platform's profile in `UCP-Agent`, or naming one that may not be fetched (not https,
 * or a private address): the protocol's `invalid_profile_url`.
 */
export class UcpAgentMissing extends DomainError<UcpAgentMissing>()(
  "UcpAgentMissing",
  {},
  errorCode(400, "UCP-Agent missing", "invalid_profile_url", "INVALID_REQUEST", "400_ORDS_073")
) {}

/**
 * A `/ucp` request whose `Idempotency-Key` was already used with another body: the protocol's 409 (where `/acp`
 * answers 422 `IdempotencyKeyReused`; docs/decisions/0086-ucp-idempotency-payment-and-mcp.md).
 */
export class UcpIdempotencyConflict extends DomainError<UcpIdempotencyConflict>()(
  "UcpIdempotencyConflict",
  {},
  errorCode(409, "Idempotency key conflict", "idempotency_conflict", "CONFLICT", "409_ORDS_071")
) {}

// The platform's UCP profile, fetched to check a request's signature (docs/decisions/0087-ucp-message-signatures.md).

/** The platform's profile could not be fetched: no answer, or an answer other than 200. */
export class UcpProfileUnreachable extends DomainError<UcpProfileUnreachable>()(
  "UcpProfileUnreachable",
  { profileUrl: Schema.String },
  errorCode(424, "UCP profile unreachable", "profile_unreachable", "FAILED_DEPENDENCY", "424_ORDS_090")
) {}

/** The platform's profile is not JSON, or not a UCP profile. */
export class UcpProfileMalformed extends DomainError<UcpProfileMalformed>()(
  "UcpProfileMalformed",
  { profileUrl: Schema.String },
  errorCode(422, "UCP profile malformed", "profile_malformed", "UNPROCESSABLE_ENTITY", "422_ORDS_090")
) {}

// RFC 9421 request signatures on `/ucp`: the protocol's codes and statuses.

/** `Signature-Input` without its `Signature`, or the reverse. */
export class UcpSignatureMissing extends DomainError<UcpSignatureMissing>()(
  "UcpSignatureMissing",
  {},
  errorCode(401, "Signature missing", "signature_missing", "UNAUTHORIZED", "401_ORDS_090")
) {}

/** The signature does not verify, cannot be read, or does not cover what the protocol requires. */
export class UcpSignatureInvalid extends DomainError<UcpSignatureInvalid>()(
  "UcpSignatureInvalid",
  {},
  errorCode(401, "Signature invalid", "signature_invalid", "UNAUTHORIZED", "401_ORDS_091")
) {}

/** The signature's `keyid` is not among the `signing_keys` of the signer's profile. */
export class UcpKeyNotFound extends DomainError<UcpKeyNotFound>()(
  "UcpKeyNotFound",
  { keyid: Schema.String },
  errorCode(401, "Signing key not found", "key_not_found", "UNAUTHORIZED", "401_ORDS_092")
) {}

/** The body is not what its `Content-Digest` (sha-256) says, or the signed request carries none. */
export class UcpDigestMismatch extends DomainError<UcpDigestMismatch>()(
  "UcpDigestMismatch",
  {},
  errorCode(400, "Digest mismatch", "digest_mismatch", "INVALID_REQUEST", "400_ORDS_090")
) {}

/** The signing key's curve, or the signature's `alg`, is not ES256 or ES384. */
export class UcpAlgorithmUnsupported extends DomainError<UcpAlgorithmUnsupported>()(
  "UcpAlgorithmUnsupported",
  {},
  errorCode(400, "Signature algorithm unsupported", "algorithm_unsupported", "INVALID_REQUEST", "400_ORDS_091")
) {}

// Spending allowances (docs/allowances.md). The checkout was made and still awaits payment: `paymentUrl` lets the
// person pay it by hand.

/** The checkout breaks one rule of the client's allowance, named by `limit`; nothing was charged. */
export class AllowanceExceeded extends DomainError<AllowanceExceeded>()(
  "AllowanceExceeded",
  {
    limit: Schema.Literal("perCheckout", "period", "total", "currency", "countries", "recipients", "categories"),
    checkoutId: Schema.String,
    paymentUrl: Schema.NullOr(Schema.String)
  },
  errorCode(402, "Allowance exceeded", "allowance_exceeded", "PAYMENT_REQUIRED", "402_ORDS_050")
) {}

/**
 * The client has no allowance to pay from (none was created, or it was revoked or has expired), or the saved card
 * was declined; nothing was charged.
 */
export class AllowanceUnavailable extends DomainError<AllowanceUnavailable>()(
  "AllowanceUnavailable",
  { checkoutId: Schema.String, paymentUrl: Schema.NullOr(Schema.String) },
  errorCode(402, "Allowance unavailable", "allowance_unavailable", "PAYMENT_REQUIRED", "402_ORDS_051")
) {}

/** No allowance with that id for this user and client. */
export class AllowanceNotFound extends DomainError<AllowanceNotFound>()(
  "AllowanceNotFound",
  { allowanceId: Schema.String },
  errorCode(404, "Allowance not found", "allowance_not_found", "NOT_FOUND", "404_ORDS_053")
) {}

// Delegated payment (docs/decisions/0079-acp-delegated-payment.md): the card given to tokenize, and the vault
// token given to `complete`. A refused token charges nothing and leaves the session as it was.

/** The card to tokenize is not one the processor takes (`param` names the field). */
export class InvalidCard extends DomainError<InvalidCard>()(
  "InvalidCard",
  { errors: Schema.Array(FieldIssue) },
  errorCode(400, "Invalid card", "invalid_card", "INVALID_REQUEST", "400_ORDS_080")
) {}

/** No such vault token for this person, or one for another checkout session, currency or handler. */
export class PaymentTokenDeclined extends DomainError<PaymentTokenDeclined>()(
  "PaymentTokenDeclined",
  { errors: Schema.Array(FieldIssue) },
  errorCode(402, "Payment declined", "payment_declined", "PAYMENT_REQUIRED", "402_ORDS_080")
) {}

/** The vault token's allowance expired (`expires_at`). */
export class PaymentTokenExpired extends DomainError<PaymentTokenExpired>()(
  "PaymentTokenExpired",
  { errors: Schema.Array(FieldIssue) },
  errorCode(402, "Payment token expired", "expired", "PAYMENT_REQUIRED", "402_ORDS_081")
) {}

/** The session's total is more than the vault token's allowance (`max_amount`). */
export class PaymentTokenExceeded extends DomainError<PaymentTokenExceeded>()(
  "PaymentTokenExceeded",
  { errors: Schema.Array(FieldIssue) },
  errorCode(402, "Payment token limit exceeded", "maximum_exceeded", "PAYMENT_REQUIRED", "402_ORDS_082")
) {}

/** The vault token (`reason: one_time`) was already used. */
export class PaymentTokenUsed extends DomainError<PaymentTokenUsed>()(
  "PaymentTokenUsed",
  { errors: Schema.Array(FieldIssue) },
  errorCode(409, "Payment token already used", "conflict", "CONFLICT", "409_ORDS_080")
) {}
