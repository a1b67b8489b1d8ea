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
) {
  /** One failing field: `InvalidRequest.field("items[0].quantity", "must be at least 1")`. */
  static field(path: string, message: string): InvalidRequest {
    return new InvalidRequest({ message: `${path}: ${message}`, errors: [FieldIssue.make({ path, message })] })
  }
}

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

// Idempotent requests (DESIGN.md §4.8), on every line that takes an idempotency key. The codes are the ones
// first shipped with checkouts.

/** The idempotency key was used with a different request body. */
export class IdempotencyKeyReused extends DomainError<IdempotencyKeyReused>()(
  "IdempotencyKeyReused",
  {},
  {
    status: 422,
    title: "Idempotency key reused",
    v1: "idempotency_key_reused",
    oauth: "invalid_request",
    v2: "UNPROCESSABLE_ENTITY",
    v3: "422_ORDS_055"
  }
) {}

/** A request with the same idempotency key is still being processed: retry after `retryAfterSeconds`. */
export class IdempotencyInFlight extends DomainError<IdempotencyInFlight>()(
  "IdempotencyInFlight",
  { retryAfterSeconds: Schema.Int },
  {
    status: 409,
    title: "Idempotent request in flight",
    v1: "idempotency_in_flight",
    oauth: "invalid_request",
    v2: "CONFLICT",
    v3: "409_ORDS_056"
  }
) {}
