import { Schema } from "effect"

/**
 * How one domain error is known on each API line. Codes never change once shipped (docs/errors.md).
 * - `v1`: the `code` of the `/v1` problem+json body;
 * - `oauth`: the RFC 6749 `error` on `/oauth`;
 * - `v2`: the symbolic `errorCode` on `/public-api/v2`;
 * - `v3`: the structured `{STATUS}_{DOMAIN}_{SEQ}` `errorCode` on `/public-api/v3`.
 */
export interface ErrorCode {
  readonly status: number
  readonly title: string
  readonly v1: string
  readonly oauth: string
  readonly v2: string
  readonly v3: string
}

/** A domain error class: a tagged error with a `message` and its codes on every line. */
export interface DomainErrorClass<Self, Tag extends string, Fields extends Schema.Struct.Fields>
  extends Schema.TaggedErrorClass<
    Self,
    Tag,
    { readonly _tag: Schema.tag<Tag>; readonly message: typeof Schema.String } & Fields
  > {
  readonly code: ErrorCode
}

/** Defines a domain error: `class NotFound extends DomainError<NotFound>()("NotFound", {}, {...codes}) {}`. */
export const DomainError =
  <Self = never>() =>
  <Tag extends string, Fields extends Schema.Struct.Fields>(
    tag: Tag,
    fields: Fields,
    code: ErrorCode
  ): DomainErrorClass<Self, Tag, Fields> => {
    const Base = Schema.TaggedError<Self>()(tag, { message: Schema.String, ...fields })
    return class extends (Base as any) {
      static readonly code = code
    } as any
  }

/** Any instance of a domain error class. */
export interface AnyDomainError {
  readonly _tag: string
  readonly message: string
}

/** The codes of a domain error instance. */
export const codeOf = (error: AnyDomainError): ErrorCode | undefined =>
  (error.constructor as { readonly code?: ErrorCode }).code

export const isDomainError = (u: unknown): u is AnyDomainError =>
  typeof u === "object" && u !== null && codeOf(u as AnyDomainError) !== undefined

/** One failing field of a request: `path` like `items[0].quantity`. */
export class FieldIssue extends Schema.Class<FieldIssue>("FieldIssue")({
  path: Schema.String,
  message: Schema.String
}) {}

// The generic catalogue. Later areas add their own errors beside their services' domain modules.

export class InvalidRequest extends DomainError<InvalidRequest>()(
  "InvalidRequest",
  { errors: Schema.Array(FieldIssue) },
  {
    status: 400,
    title: "Invalid request",
    v1: "invalid_request",
    oauth: "invalid_request",
    v2: "INVALID_REQUEST",
    v3: "400_PBLC_001"
  }
) {}

export class Unauthorized extends DomainError<Unauthorized>()(
  "Unauthorized",
  {},
  {
    status: 401,
    title: "Unauthorized",
    v1: "unauthorized",
    oauth: "invalid_client",
    v2: "UNAUTHORIZED",
    v3: "401_PBLC_001"
  }
) {}

export class Forbidden extends DomainError<Forbidden>()(
  "Forbidden",
  {},
  {
    status: 403,
    title: "Forbidden",
    v1: "forbidden",
    oauth: "access_denied",
    v2: "FORBIDDEN",
    v3: "403_PBLC_001"
  }
) {}

export class NotFound extends DomainError<NotFound>()(
  "NotFound",
  {},
  {
    status: 404,
    title: "Not found",
    v1: "not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_PBLC_001"
  }
) {}

export class MethodNotAllowed extends DomainError<MethodNotAllowed>()(
  "MethodNotAllowed",
  {},
  {
    status: 405,
    title: "Method not allowed",
    v1: "method_not_allowed",
    oauth: "invalid_request",
    v2: "METHOD_NOT_ALLOWED",
    v3: "405_PBLC_001"
  }
) {}

export class PayloadTooLarge extends DomainError<PayloadTooLarge>()(
  "PayloadTooLarge",
  { limitBytes: Schema.Int },
  {
    status: 413,
    title: "Payload too large",
    v1: "payload_too_large",
    oauth: "invalid_request",
    v2: "PAYLOAD_TOO_LARGE",
    v3: "413_PBLC_001"
  }
) {}

export class RateLimited extends DomainError<RateLimited>()(
  "RateLimited",
  { retryAfterSeconds: Schema.Int },
  {
    status: 429,
    title: "Too many requests",
    v1: "rate_limited",
    oauth: "temporarily_unavailable",
    v2: "RATE_LIMITED",
    v3: "429_PBLC_001"
  }
) {}

export class InternalError extends DomainError<InternalError>()(
  "InternalError",
  { requestId: Schema.String },
  {
    status: 500,
    title: "Internal error",
    v1: "internal_error",
    oauth: "server_error",
    v2: "INTERNAL_ERROR",
    v3: "500_PBLC_001"
  }
) {}

export class ServiceUnavailable extends DomainError<ServiceUnavailable>()(
  "ServiceUnavailable",
  {},
  {
    status: 503,
    title: "Service unavailable",
    v1: "service_unavailable",
    oauth: "temporarily_unavailable",
    v2: "SERVICE_UNAVAILABLE",
    v3: "503_PBLC_001"
  }
) {}

// Catalog (agent API `/v1` catalog endpoints; the company API's product and collection routes reuse them).

/** No product with that id (or it is not visible). */
export class ProductNotFound extends DomainError<ProductNotFound>()(
  "ProductNotFound",
  { productId: Schema.String },
  {
    status: 404,
    title: "Product not found",
    v1: "product_not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_PROD_001"
  }
) {}

/** No variant with that id. */
export class VariantNotFound extends DomainError<VariantNotFound>()(
  "VariantNotFound",
  { variantId: Schema.String },
  {
    status: 404,
    title: "Variant not found",
    v1: "variant_not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_PROD_002"
  }
) {}

/** No collection with that id. */
export class CollectionNotFound extends DomainError<CollectionNotFound>()(
  "CollectionNotFound",
  { collectionId: Schema.String },
  {
    status: 404,
    title: "Collection not found",
    v1: "collection_not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_COLL_001"
  }
) {}

// OAuth, bearer tokens and users (agent API `/oauth` and `/v1/me`; docs/oauth.md). v3 sequences start at 050
// so that they never meet the company API's own PBLC/ACCT errors.

const oauthError = (status: number, title: string, code: string, v2: string, v3: string): ErrorCode => ({
  status,
  title,
  v1: code,
  oauth: code,
  v2,
  v3
})

/** A `/v1` request without a valid access token (missing, unknown, expired, revoked, other audience). */
export class InvalidToken extends DomainError<InvalidToken>()(
  "InvalidToken",
  { resourceMetadata: Schema.String },
  oauthError(401, "Invalid access token", "invalid_token", "UNAUTHORIZED", "401_PBLC_050")
) {
  /** RFC 6750 / RFC 9728: where the client finds how to get a token. */
  get wwwAuthenticate(): string {
    return `Bearer resource_metadata="${this.resourceMetadata}"`
  }
}

/** A valid access token without the scope an operation requires. */
export class InsufficientScope extends DomainError<InsufficientScope>()(
  "InsufficientScope",
  { scope: Schema.String, resourceMetadata: Schema.String },
  oauthError(403, "Insufficient scope", "insufficient_scope", "FORBIDDEN", "403_PBLC_050")
) {
  get wwwAuthenticate(): string {
    return `Bearer error="insufficient_scope", scope="${this.scope}", resource_metadata="${this.resourceMetadata}"`
  }
}

/** Client authentication failed: unknown client, wrong secret, or the wrong authentication method. */
export class InvalidClient extends DomainError<InvalidClient>()(
  "InvalidClient",
  {},
  oauthError(401, "Invalid client", "invalid_client", "UNAUTHORIZED", "401_PBLC_051")
) {}

/** A code or refresh token that is unknown, expired, used, revoked, or issued to another client. */
export class InvalidGrant extends DomainError<InvalidGrant>()(
  "InvalidGrant",
  {},
  oauthError(400, "Invalid grant", "invalid_grant", "INVALID_GRANT", "400_PBLC_050")
) {}

export class UnsupportedGrantType extends DomainError<UnsupportedGrantType>()(
  "UnsupportedGrantType",
  {},
  oauthError(400, "Unsupported grant type", "unsupported_grant_type", "UNSUPPORTED_GRANT_TYPE", "400_PBLC_051")
) {}

/** A scope that is unknown, not registered for the client, or wider than the grant. */
export class InvalidScope extends DomainError<InvalidScope>()(
  "InvalidScope",
  {},
  oauthError(400, "Invalid scope", "invalid_scope", "INVALID_SCOPE", "400_PBLC_052")
) {}

/** RFC 8707: a `resource` other than this service. */
export class InvalidTarget extends DomainError<InvalidTarget>()(
  "InvalidTarget",
  {},
  oauthError(400, "Invalid target", "invalid_target", "INVALID_TARGET", "400_PBLC_053")
) {}

/** The client is not registered for the grant type it used. */
export class UnauthorizedClient extends DomainError<UnauthorizedClient>()(
  "UnauthorizedClient",
  {},
  oauthError(400, "Unauthorized client", "unauthorized_client", "UNAUTHORIZED_CLIENT", "400_PBLC_054")
) {}

/** RFC 7591: a redirect URI that is not https (or http on a loopback host), or not a URI. */
export class InvalidRedirectUri extends DomainError<InvalidRedirectUri>()(
  "InvalidRedirectUri",
  {},
  oauthError(400, "Invalid redirect URI", "invalid_redirect_uri", "INVALID_REDIRECT_URI", "400_PBLC_055")
) {}

/** RFC 7591: any other registration field out of bounds. */
export class InvalidClientMetadata extends DomainError<InvalidClientMetadata>()(
  "InvalidClientMetadata",
  {},
  oauthError(400, "Invalid client metadata", "invalid_client_metadata", "INVALID_CLIENT_METADATA", "400_PBLC_056")
) {}

/** Sign-up with an e-mail address that already has an account (compared case-insensitively). */
export class EmailTaken extends DomainError<EmailTaken>()(
  "EmailTaken",
  {},
  {
    status: 409,
    title: "E-mail taken",
    v1: "email_taken",
    oauth: "invalid_request",
    v2: "CONFLICT",
    v3: "409_ACCT_050"
  }
) {}

/** Sign-in with an unknown e-mail or a wrong password (never says which). */
export class InvalidCredentials extends DomainError<InvalidCredentials>()(
  "InvalidCredentials",
  {},
  {
    status: 401,
    title: "Invalid credentials",
    v1: "invalid_credentials",
    oauth: "access_denied",
    v2: "UNAUTHORIZED",
    v3: "401_ACCT_050"
  }
) {}

/** No saved address with that id for the signed-in user (another user's address included). */
export class AddressNotFound extends DomainError<AddressNotFound>()(
  "AddressNotFound",
  { addressId: Schema.String },
  {
    status: 404,
    title: "Address not found",
    v1: "address_not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_ACCT_050"
  }
) {}

// Company API platform: API keys, permissions, environments, accounts (docs/company-api.md).

/** No `X-Api-Key` header. */
export class ApiKeyMissing extends DomainError<ApiKeyMissing>()(
  "ApiKeyMissing",
  {},
  {
    status: 401,
    title: "API key missing",
    v1: "api_key_missing",
    oauth: "invalid_client",
    v2: "UNAUTHORIZED",
    v3: "401_KEYS_001"
  }
) {}

/** A malformed, unknown or deleted key: one answer for all three, so nothing is learnt by guessing. */
export class ApiKeyInvalid extends DomainError<ApiKeyInvalid>()(
  "ApiKeyInvalid",
  {},
  {
    status: 401,
    title: "API key invalid",
    v1: "api_key_invalid",
    oauth: "invalid_client",
    v2: "UNAUTHORIZED",
    v3: "401_KEYS_002"
  }
) {}

export class ApiKeyExpired extends DomainError<ApiKeyExpired>()(
  "ApiKeyExpired",
  {},
  {
    status: 401,
    title: "API key expired",
    v1: "api_key_expired",
    oauth: "invalid_client",
    v2: "UNAUTHORIZED",
    v3: "401_KEYS_003"
  }
) {}

/** The key lacks the operation's permission (or tries to grant one it does not hold). */
export class PermissionDenied extends DomainError<PermissionDenied>()(
  "PermissionDenied",
  { permission: Schema.String },
  {
    status: 403,
    title: "Permission denied",
    v1: "permission_denied",
    oauth: "access_denied",
    v2: "FORBIDDEN",
    v3: "403_KEYS_001"
  }
) {}

/** A key of one environment used on a resource of the other. */
export class EnvironmentMismatch extends DomainError<EnvironmentMismatch>()(
  "EnvironmentMismatch",
  {},
  {
    status: 403,
    title: "Environment mismatch",
    v1: "environment_mismatch",
    oauth: "access_denied",
    v2: "FORBIDDEN",
    v3: "403_KEYS_002"
  }
) {}

/** An `enforceMtls` key on the plain listener: call the mutual-TLS root instead. */
export class MtlsRequired extends DomainError<MtlsRequired>()(
  "MtlsRequired",
  {},
  {
    status: 403,
    title: "Mutual TLS required",
    v1: "mtls_required",
    oauth: "access_denied",
    v2: "MTLS_REQUIRED",
    v3: "403_KEYS_003"
  }
) {}

/** `companyId` names a company other than the key's. */
export class CompanyMismatch extends DomainError<CompanyMismatch>()(
  "CompanyMismatch",
  {},
  {
    status: 403,
    title: "Company mismatch",
    v1: "company_mismatch",
    oauth: "access_denied",
    v2: "FORBIDDEN",
    v3: "403_KEYS_004"
  }
) {}

/** `Ribbon-Account-Id` names no account the key can reach. */
export class AccountNotFound extends DomainError<AccountNotFound>()(
  "AccountNotFound",
  { accountId: Schema.String },
  {
    status: 404,
    title: "Account not found",
    v1: "account_not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_ACCT_001"
  }
) {}

export class ApiKeyNotFound extends DomainError<ApiKeyNotFound>()(
  "ApiKeyNotFound",
  { apiKeyId: Schema.String },
  {
    status: 404,
    title: "API key not found",
    v1: "api_key_not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_KEYS_001"
  }
) {}

/** The company already has 3 active keys. */
export class ApiKeyLimitReached extends DomainError<ApiKeyLimitReached>()(
  "ApiKeyLimitReached",
  { limit: Schema.Int },
  {
    status: 422,
    title: "API key limit reached",
    v1: "api_key_limit_reached",
    oauth: "invalid_request",
    v2: "UNPROCESSABLE_ENTITY",
    v3: "422_KEYS_001"
  }
) {}

// Quotes, checkouts and orders (agent API; docs/checkout.md). v3 domain ORDS, sequences from 050.

const orderError = (status: number, title: string, v1: string, v2: string, v3: string): ErrorCode => ({
  status,
  title,
  v1,
  oauth: "invalid_request",
  v2,
  v3
})

/** No quote with that id for this user (another user's quote is not found either). */
export class QuoteNotFound extends DomainError<QuoteNotFound>()(
  "QuoteNotFound",
  { quoteId: Schema.String },
  orderError(404, "Quote not found", "quote_not_found", "NOT_FOUND", "404_ORDS_050")
) {}

/** The quote's 15-minute price lock has passed: ask for a new quote. */
export class QuoteExpired extends DomainError<QuoteExpired>()(
  "QuoteExpired",
  { quoteId: Schema.String },
  orderError(409, "Quote expired", "quote_expired", "CONFLICT", "409_ORDS_050")
) {}

/** The quote already backs another checkout. */
export class QuoteAlreadyUsed extends DomainError<QuoteAlreadyUsed>()(
  "QuoteAlreadyUsed",
  { quoteId: Schema.String },
  orderError(409, "Quote already used", "quote_already_used", "CONFLICT", "409_ORDS_051")
) {}

/** The variant has no stock left. */
export class VariantOutOfStock extends DomainError<VariantOutOfStock>()(
  "VariantOutOfStock",
  { variantId: Schema.String },
  orderError(422, "Variant out of stock", "variant_out_of_stock", "UNPROCESSABLE_ENTITY", "422_ORDS_050")
) {}

/** The variant does not ship to the country (or is not for sale). */
export class VariantNotShippable extends DomainError<VariantNotShippable>()(
  "VariantNotShippable",
  { variantId: Schema.String, countryCode: Schema.String },
  orderError(422, "Variant not shippable", "variant_not_shippable", "UNPROCESSABLE_ENTITY", "422_ORDS_051")
) {}

/** The quotes of one checkout are for different countries, or not for the shipping address's country. */
export class CountryMismatch extends DomainError<CountryMismatch>()(
  "CountryMismatch",
  {},
  orderError(422, "Country mismatch", "country_mismatch", "UNPROCESSABLE_ENTITY", "422_ORDS_052")
) {}

/** The shipping address did not pass validation; `message` says what is wrong. */
export class AddressUnverified extends DomainError<AddressUnverified>()(
  "AddressUnverified",
  { issues: Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String })) },
  orderError(422, "Address not verified", "address_unverified", "UNPROCESSABLE_ENTITY", "422_ORDS_053")
) {}

/** An SMS number without `smsConsent: true`; `consentText` is what the user must agree to. */
export class SmsConsentRequired extends DomainError<SmsConsentRequired>()(
  "SmsConsentRequired",
  { consentText: Schema.String },
  orderError(422, "SMS consent required", "sms_consent_required", "UNPROCESSABLE_ENTITY", "422_ORDS_054")
) {}

/** The idempotency key was used with a different request body. */
export class IdempotencyKeyReused extends DomainError<IdempotencyKeyReused>()(
  "IdempotencyKeyReused",
  {},
  orderError(422, "Idempotency key reused", "idempotency_key_reused", "UNPROCESSABLE_ENTITY", "422_ORDS_055")
) {}

/** A request with the same idempotency key is still being processed: retry after `retryAfterSeconds`. */
export class IdempotencyInFlight extends DomainError<IdempotencyInFlight>()(
  "IdempotencyInFlight",
  { retryAfterSeconds: Schema.Int },
  orderError(409, "Idempotent request in flight", "idempotency_in_flight", "CONFLICT", "409_ORDS_056")
) {}

/** No checkout with that id for this user. */
export class CheckoutNotFound extends DomainError<CheckoutNotFound>()(
  "CheckoutNotFound",
  { checkoutId: Schema.String },
  orderError(404, "Checkout not found", "checkout_not_found", "NOT_FOUND", "404_ORDS_051")
) {}

/** The checkout's status does not allow the operation (e.g. cancelling after payment). */
export class CheckoutStateConflict extends DomainError<CheckoutStateConflict>()(
  "CheckoutStateConflict",
  { checkoutStatus: Schema.String },
  orderError(409, "Checkout state conflict", "checkout_state_conflict", "CONFLICT", "409_ORDS_053")
) {}

/** No order with that id for this user. */
export class OrderNotFound extends DomainError<OrderNotFound>()(
  "OrderNotFound",
  { orderId: Schema.String },
  orderError(404, "Order not found", "order_not_found", "NOT_FOUND", "404_ORDS_052")
) {}

/** The order has shipped (or was delivered): it can no longer be cancelled. */
export class OrderInTransit extends DomainError<OrderInTransit>()(
  "OrderInTransit",
  { orderId: Schema.String, orderStatus: Schema.String },
  orderError(409, "Order in transit", "order_in_transit", "CONFLICT", "409_ORDS_054")
) {}

/** The order was already cancelled. */
export class OrderAlreadyCancelled extends DomainError<OrderAlreadyCancelled>()(
  "OrderAlreadyCancelled",
  { orderId: Schema.String },
  orderError(409, "Order already cancelled", "order_already_cancelled", "CONFLICT", "409_ORDS_055")
) {}

/** The catalogue of every domain error class, for docs/errors.md and the catalogue test. */
export const catalogue = [
  InvalidRequest,
  Unauthorized,
  Forbidden,
  NotFound,
  MethodNotAllowed,
  PayloadTooLarge,
  RateLimited,
  InternalError,
  ServiceUnavailable,
  ProductNotFound,
  VariantNotFound,
  CollectionNotFound,
  InvalidToken,
  InsufficientScope,
  InvalidClient,
  InvalidGrant,
  UnsupportedGrantType,
  InvalidScope,
  InvalidTarget,
  UnauthorizedClient,
  InvalidRedirectUri,
  InvalidClientMetadata,
  EmailTaken,
  InvalidCredentials,
  AddressNotFound,
  ApiKeyMissing,
  ApiKeyInvalid,
  ApiKeyExpired,
  PermissionDenied,
  EnvironmentMismatch,
  MtlsRequired,
  CompanyMismatch,
  AccountNotFound,
  ApiKeyNotFound,
  ApiKeyLimitReached,
  QuoteNotFound,
  QuoteExpired,
  QuoteAlreadyUsed,
  VariantOutOfStock,
  VariantNotShippable,
  CountryMismatch,
  AddressUnverified,
  SmsConsentRequired,
  IdempotencyKeyReused,
  IdempotencyInFlight,
  CheckoutNotFound,
  CheckoutStateConflict,
  OrderNotFound,
  OrderInTransit,
  OrderAlreadyCancelled
] as const
