import { type HttpApiEndpoint, type HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import type { AnyDomainError, DomainErrorClass, ErrorCode, FieldIssue } from "../domain/platform/Errors.js"
import {
  codeOf,
  InternalError,
  InvalidRequest,
  PayloadTooLarge,
  ServiceUnavailable,
  UnsupportedMediaType
} from "../domain/platform/Errors.js"

/**
 * The API lines and how each renders a domain error (docs/decisions/0031-errors-per-api-line.md). One function
 * renders a body; the same function is the encoder of the schemas endpoints declare, so `/openapi.json` shows exactly
 * the bodies clients receive. `acp` is the Agentic Commerce Protocol's flat error object
 * (docs/decisions/0078-agentic-commerce-protocol.md).
 */
export type Line = "v1" | "oauth" | "v2" | "v3" | "acp" | "ucp"

/** The line a request path belongs to; paths outside every line (health, docs, pages) answer like `/v1`. */
export const lineOf = (path: string): Line => {
  if (path.startsWith("/acp/") || path === "/acp" || path.startsWith("/agentic_commerce/")) return "acp"
  if (path.startsWith("/ucp/") || path === "/ucp") return "ucp"
  if (path.startsWith("/public-api/v2")) return "v2"
  if (path.startsWith("/public-api/v3")) return "v3"
  if (path.startsWith("/oauth")) return "oauth"
  return "v1"
}

export interface RenderedError {
  readonly status: number
  readonly contentType: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: Record<string, unknown>
}

/** Extra fields an error carries beyond its message (e.g. `consentText`), shown as problem extensions on `/v1`. */
const extensionsOf = (error: AnyDomainError): Record<string, unknown> => {
  const { _tag, message, ...rest } = error as unknown as Record<string, unknown>
  return JSON.parse(JSON.stringify(rest))
}

const issuesOf = (error: AnyDomainError): ReadonlyArray<FieldIssue> =>
  (error as { readonly errors?: ReadonlyArray<FieldIssue> }).errors ?? []

/**
 * The headers an error carries: `Retry-After` (429, 503), the bearer challenge of a 401/403 on a protected
 * resource (a getter of the error class, not a field) and `Allow` (405).
 */
const headersOf = (error: AnyDomainError): Record<string, string> => {
  const { retryAfterSeconds, wwwAuthenticate, allowedMethods } = error as {
    readonly retryAfterSeconds?: number
    readonly wwwAuthenticate?: string
    readonly allowedMethods?: ReadonlyArray<string>
  }
  const headers: Record<string, string> = {}
  if (retryAfterSeconds !== undefined) headers["retry-after"] = String(retryAfterSeconds)
  if (wwwAuthenticate !== undefined) headers["www-authenticate"] = wwwAuthenticate
  if (allowedMethods !== undefined) headers.allow = allowedMethods.join(", ")
  return headers
}

/** ACP's `type`: the protocol knows three, by who must act. */
const acpType = (status: number) =>
  status < 500 ? "invalid_request" : status === 503 ? "service_unavailable" : "processing_error"

/** ACP's `code`: the `/v1` code, except where the protocol names the same error otherwise. */
const acpCodes: Readonly<Record<string, string>> = {
  invalid_request: "invalid",
  idempotency_key_reused: "idempotency_conflict"
}
const acpCode = (code: ErrorCode) => acpCodes[code.v1] ?? code.v1

/** A field path as written in Ribbon's issues (`line_items[0].id`) as the RFC 9535 JSONPath ACP's `param` takes. */
const jsonPath = (path: string) => (path.startsWith("[") ? `$${path}` : `$.${path}`)

/** ACP's error object: `param` from the first failing field, `supported_versions` from a version error. */
const acpBody = (error: AnyDomainError, code: ErrorCode): Record<string, unknown> => {
  const param = issuesOf(error)[0]?.path
  const { supportedVersions } = error as { readonly supportedVersions?: ReadonlyArray<string> }
  return {
    type: acpType(code.status),
    code: acpCode(code),
    message: error.message,
    ...(param === undefined || param === "" ? {} : { param: jsonPath(param) }),
    ...(supportedVersions === undefined ? {} : { supported_versions: supportedVersions })
  }
}

const bodies: Record<Line, (error: AnyDomainError, code: ErrorCode) => Record<string, unknown>> = {
  v1: (error, code) => ({
    type: `urn:ribbon:error:${code.v1}`,
    title: code.title,
    status: code.status,
    detail: error.message,
    code: code.v1,
    ...extensionsOf(error)
  }),
  oauth: (error, code) => ({ error: code.oauth, error_description: error.message }),
  v2: (error, code) => {
    if (code.status === 429) return { status: 429, message: error.message }
    if (code.status === 400) return { path: issuesOf(error)[0]?.path ?? "", errorCode: code.v2, message: error.message }
    return { status: code.status, errorCode: code.v2, message: error.message }
  },
  v3: (error, code) => {
    if (code.status === 429) return { status: 429, message: error.message }
    if (code.status === 400) {
      return {
        message: error.message,
        errorCode: code.v3,
        errors: issuesOf(error).map((issue) => ({ path: issue.path, errorCode: code.v3, message: issue.message }))
      }
    }
    return { status: code.status, errorCode: code.v3, message: error.message }
  },
  acp: acpBody,
  // UCP's protocol error: `code` and `content` (docs/decisions/0080-universal-commerce-protocol.md).
  ucp: (error, code) => {
    const path = issuesOf(error)[0]?.path
    return { code: acpCode(code), content: error.message, ...(path ? { path: jsonPath(path) } : {}) }
  }
}

/** Renders a domain error in a line's format. */
export const render = (line: Line, error: AnyDomainError): RenderedError => {
  const code = codeOf(error)!
  return {
    status: code.status,
    contentType: line === "v1" ? "application/problem+json" : "application/json",
    headers: {
      ...headersOf(error),
      ...(line === "oauth" ? { "cache-control": "no-store" } : {})
    },
    body: bodies[line](error, code)
  }
}

// Schemas of the bodies, per line, for the OpenAPI document and the derived client.

const V1Problem = (code: ErrorCode, extensions: Schema.Struct.Fields) =>
  Schema.Struct({
    type: Schema.String,
    title: Schema.String,
    status: Schema.Literal(code.status),
    detail: Schema.String,
    code: Schema.Literal(code.v1),
    ...extensions
  })

const OAuthBody = (code: ErrorCode) =>
  Schema.Struct({ error: Schema.Literal(code.oauth), error_description: Schema.String })

const V2Body = (code: ErrorCode) => {
  if (code.status === 429) return Schema.Struct({ status: Schema.Literal(429), message: Schema.String })
  if (code.status === 400) {
    return Schema.Struct({ path: Schema.String, errorCode: Schema.Literal(code.v2), message: Schema.String })
  }
  return Schema.Struct({
    status: Schema.Literal(code.status),
    errorCode: Schema.Literal(code.v2),
    message: Schema.String
  })
}

const V3Body = (code: ErrorCode) => {
  if (code.status === 429) return Schema.Struct({ status: Schema.Literal(429), message: Schema.String })
  if (code.status === 400) {
    return Schema.Struct({
      message: Schema.String,
      errorCode: Schema.Literal(code.v3),
      errors: Schema.Array(Schema.Struct({ path: Schema.String, errorCode: Schema.String, message: Schema.String }))
    })
  }
  return Schema.Struct({
    status: Schema.Literal(code.status),
    errorCode: Schema.Literal(code.v3),
    message: Schema.String
  })
}

const AcpBody = (code: ErrorCode, fields: Schema.Struct.Fields) =>
  Schema.Struct({
    type: Schema.Literal(acpType(code.status)),
    code: Schema.Literal(acpCode(code)),
    message: Schema.String,
    param: Schema.optional(Schema.String),
    ...("supportedVersions" in fields ? { supported_versions: Schema.Array(Schema.String) } : {})
  })

/** Rebuilds the domain error from a body, so the derived client fails with the same typed errors. */
const fromBody = (line: Line, body: Record<string, any>): Record<string, unknown> => {
  switch (line) {
    case "v1": {
      const { type, title, status, detail, code, ...extensions } = body
      return { ...extensions, message: detail }
    }
    case "oauth":
      return { message: body.error_description }
    case "v2":
      return body.path === undefined
        ? { message: body.message }
        : { message: body.message, errors: [{ path: body.path, message: body.message }] }
    case "v3":
      return body.errors === undefined ? { message: body.message } : { message: body.message, errors: body.errors }
    case "acp": {
      const path = typeof body.param === "string" ? body.param.replace(/^\$\.?/, "") : undefined
      return {
        message: body.message,
        ...(path === undefined ? {} : { errors: [{ path, message: body.message }] }),
        ...(body.supported_versions === undefined ? {} : { supportedVersions: body.supported_versions })
      }
    }
    case "ucp": {
      const path = typeof body.path === "string" ? body.path.replace(/^\$\.?/, "") : undefined
      return { message: body.content, ...(path === undefined ? {} : { errors: [{ path, message: body.content }] }) }
    }
  }
}

const bodySchema = (line: Line, code: ErrorCode, fields: Schema.Struct.Fields) => {
  switch (line) {
    case "v1": {
      const { _tag, message, ...extensions } = fields
      return V1Problem(code, extensions)
    }
    case "oauth":
      return OAuthBody(code)
    case "v2":
      return V2Body(code)
    case "v3":
      return V3Body(code)
    case "acp":
      return AcpBody(code, fields)
    case "ucp":
      return Schema.Struct({
        code: Schema.Literal(acpCode(code)),
        content: Schema.String,
        path: Schema.optional(Schema.String)
      })
  }
}

const lineTitle: Record<Line, string> = { v1: "V1", oauth: "OAuth", v2: "V2", v3: "V3", acp: "Acp", ucp: "Ucp" }

/**
 * The schema an endpoint declares for a domain error on a line: the domain error on the type side, the
 * line's body on the encoded side, with the error's status.
 */
export const lineError = <Self, Tag extends string, Fields extends Schema.Struct.Fields>(
  line: Line,
  ErrorClass: DomainErrorClass<Self, Tag, Fields>
): Schema.Schema<Self, any> => {
  const code = ErrorClass.code
  const body = bodySchema(line, code, ErrorClass.fields as Schema.Struct.Fields) as Schema.Schema<any, any>
  const schema = Schema.transform(body, Schema.typeSchema(ErrorClass as unknown as Schema.Schema<Self>), {
    strict: false,
    decode: (b) => new (ErrorClass as any)(fromBody(line, b)),
    encode: (error) => bodies[line](error as AnyDomainError, code)
  }).annotations(HttpApiSchema.annotations({ status: code.status }))
  const encoded =
    line === "v1"
      ? HttpApiSchema.withEncoding(schema, { kind: "Json", contentType: "application/problem+json" })
      : schema
  // Last: the HttpApiSchema annotation helpers drop an identifier set before them.
  return encoded.annotations({ identifier: `${lineTitle[line]}${ErrorClass._tag}` })
}

/** The errors any operation can meet outside its handler: request screening, the body limit, an outage, a defect. */
export type RequestErrors = InvalidRequest | PayloadTooLarge | UnsupportedMediaType | InternalError | ServiceUnavailable

/**
 * Declares `RequestErrors` in a line's format on every operation of a group, so the document and the
 * derived client know every body the middleware may send (the 413 and 415 only where a body is taken).
 */
export const withRequestErrors =
  (line: Line) =>
  <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R, TopLevel extends boolean>(
    group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R, TopLevel>
  ): HttpApiGroup.HttpApiGroup<Id, Endpoints, E | RequestErrors, R, TopLevel> =>
    group
      .addError(lineError(line, InvalidRequest))
      .addError(lineError(line, PayloadTooLarge))
      .addError(lineError(line, UnsupportedMediaType))
      .addError(lineError(line, InternalError))
      .addError(lineError(line, ServiceUnavailable))
