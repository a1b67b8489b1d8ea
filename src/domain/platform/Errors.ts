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

/** The codes of an error: `oauth` is `invalid_request` unless said otherwise. */
export const errorCode = (
  status: number,
  title: string,
  v1: string,
  v2: string,
  v3: string,
  oauth = "invalid_request"
): ErrorCode => ({ status, title, v1, oauth, v2, v3 })

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
  errorCode(400, "Invalid request", "invalid_request", "INVALID_REQUEST", "400_PBLC_001")
) {
  /** One failing field: `InvalidRequest.field("items[0].quantity", "must be at least 1")`; `""` for the whole request. */
  static field(path: string, message: string): InvalidRequest {
    return new InvalidRequest({
      message: path === "" ? message : `${path}: ${message}`,
      errors: [FieldIssue.make({ path, message })]
    })
  }
}

export class Unauthorized extends DomainError<Unauthorized>()(
  "Unauthorized",
  {},
  errorCode(401, "Unauthorized", "unauthorized", "UNAUTHORIZED", "401_PBLC_001", "invalid_client")
) {}

export class Forbidden extends DomainError<Forbidden>()(
  "Forbidden",
  {},
  errorCode(403, "Forbidden", "forbidden", "FORBIDDEN", "403_PBLC_001", "access_denied")
) {}

export class NotFound extends DomainError<NotFound>()(
  "NotFound",
  {},
  errorCode(404, "Not found", "not_found", "NOT_FOUND", "404_PBLC_001")
) {}

/** The path exists, with other methods: `allowedMethods` is sent as the `Allow` header. */
export class MethodNotAllowed extends DomainError<MethodNotAllowed>()(
  "MethodNotAllowed",
  { allowedMethods: Schema.Array(Schema.String) },
  errorCode(405, "Method not allowed", "method_not_allowed", "METHOD_NOT_ALLOWED", "405_PBLC_001")
) {}

export class PayloadTooLarge extends DomainError<PayloadTooLarge>()(
  "PayloadTooLarge",
  { limitBytes: Schema.Int },
  errorCode(413, "Payload too large", "payload_too_large", "PAYLOAD_TOO_LARGE", "413_PBLC_001")
) {}

/** The operation takes its body in other media types, listed in `acceptedMediaTypes`. */
export class UnsupportedMediaType extends DomainError<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  { acceptedMediaTypes: Schema.Array(Schema.String) },
  errorCode(415, "Unsupported media type", "unsupported_media_type", "UNSUPPORTED_MEDIA_TYPE", "415_PBLC_001")
) {}

export class RateLimited extends DomainError<RateLimited>()(
  "RateLimited",
  { retryAfterSeconds: Schema.Int },
  errorCode(429, "Too many requests", "rate_limited", "RATE_LIMITED", "429_PBLC_001", "temporarily_unavailable")
) {}

export class InternalError extends DomainError<InternalError>()(
  "InternalError",
  { requestId: Schema.String },
  errorCode(500, "Internal error", "internal_error", "INTERNAL_ERROR", "500_PBLC_001", "server_error")
) {}

/** A dependency is down or the server is stopping; `retryAfterSeconds`, when known, is sent as `Retry-After`. */
export class ServiceUnavailable extends DomainError<ServiceUnavailable>()(
  "ServiceUnavailable",
  { retryAfterSeconds: Schema.optional(Schema.Int) },
  errorCode(
    503,
    "Service unavailable",
    "service_unavailable",
    "SERVICE_UNAVAILABLE",
    "503_PBLC_001",
    "temporarily_unavailable"
  )
) {}

// Idempotent requests (docs/decisions/0035-idempotency.md), on every line that takes an idempotency key. The codes are
// the ones first shipped with checkouts.

/** The idempotency key was used with a different request body. */
export class IdempotencyKeyReused extends DomainError<IdempotencyKeyReused>()(
  "IdempotencyKeyReused",
  {},
  errorCode(422, "Idempotency key reused", "idempotency_key_reused", "UNPROCESSABLE_ENTITY", "422_ORDS_055")
) {}

/** A request with the same idempotency key is still being processed: retry after `retryAfterSeconds`. */
export class IdempotencyInFlight extends DomainError<IdempotencyInFlight>()(
  "IdempotencyInFlight",
  { retryAfterSeconds: Schema.Int },
  errorCode(409, "Idempotent request in flight", "idempotency_in_flight", "CONFLICT", "409_ORDS_056")
) {}
