import { JSONSchema, type Schema } from "effect"
import { RequestSource } from "../domain/company/Company.js"
import { type Line, lineOf } from "./ErrorLines.js"

/**
 * The last pass over the generated OpenAPI document, for what the generator cannot say from the
 * definition: the headers every API line sends and takes, the media type of `/v1` errors, and the tidying
 * that validators and client generators ask for. Each rule follows the API line of the path, as the error
 * rendering does (`lineOf`).
 */
export const finishDocument = (spec: Record<string, any>): Record<string, any> => {
  spec.components ??= {}
  spec.components.headers = { ...spec.components.headers, ...responseHeaders }
  spec.components.parameters = { ...spec.components.parameters, ...companyParameters }
  for (const [path, operations] of Object.entries<Record<string, any>>(spec.paths ?? {})) {
    const line = lineOf(path)
    for (const operation of Object.values(operations)) {
      finishOperation(operation, line)
      markOptionalBody(operation, spec.components.schemas ?? {})
    }
  }
  forgetGeneratedIds(spec)
  return pruneUnreferencedSchemas(spec)
}

/** A response header; `required` when every response that declares it sends it. */
const header = (description: string, schema: Record<string, unknown>, required = true) => ({
  description,
  required,
  schema
})

const responseHeaders = {
  "X-Request-Id": header("The request's id, echoed when the client sent a valid one; quote it to support.", {
    type: "string"
  }),
  // A 503 from a server shutting down has none.
  "Retry-After": header("Seconds to wait before trying again.", { type: "integer", minimum: 0 }, false),
  "WWW-Authenticate": header("The bearer challenge (RFC 6750), with `resource_metadata` (RFC 9728).", {
    type: "string"
  }),
  RateLimit: header("The state of the binding rate-limit bucket (draft-ietf-httpapi-ratelimit-headers).", {
    type: "string"
  }),
  "RateLimit-Policy": header("Every rate-limit bucket the request is subject to.", { type: "string" }),
  "Idempotent-Replayed": header(
    "`true` when the response is the stored result of an earlier request.",
    { type: "string", enum: ["true"] },
    false
  )
}

/** A header's JSON Schema, from the same schema the middleware checks it with. */
function schemaOf(schema: Schema.Schema<any, any>) {
  const { $schema, ...rest } = JSONSchema.make(schema) as unknown as Record<string, unknown>
  return rest
}

const companyParameters = {
  RibbonAccountId: {
    name: "Ribbon-Account-Id",
    in: "header",
    required: false,
    description: "The account the request acts in, within the key's `accountsAccess`.",
    schema: { type: "string" }
  },
  RequestSource: {
    name: "Request-Source",
    in: "header",
    required: false,
    description: "What sent the request, recorded on what it creates.",
    schema: schemaOf(RequestSource)
  }
}

const headerRef = (name: keyof typeof responseHeaders) => ({ $ref: `#/components/headers/${name}` })

/**
 * An operation's transform declaring the statuses a browser page answers with an HTML page (a request it
 * cannot send back to the client, an unknown or spent payment link): `.annotate(OpenApi.Transform,
 * showsErrorPages([400]))`.
 */
export const showsErrorPages =
  (statuses: ReadonlyArray<number>) =>
  (operation: Record<string, any>): Record<string, any> => {
    for (const status of statuses) {
      operation.responses[String(status)] ??= { description: "An HTML page explaining the error" }
      const response = operation.responses[String(status)]
      response.content = { ...response.content, "text/html": { schema: { type: "string" } } }
    }
    return operation
  }

/**
 * An operation's transform declaring that its successes may carry `Idempotent-Replayed` (an operation
 * that takes an idempotency key): `.annotate(OpenApi.Transform, mayReplay)`.
 */
export const mayReplay = (operation: Record<string, any>): Record<string, any> => {
  for (const [status, response] of Object.entries<Record<string, any>>(operation.responses ?? {})) {
    if (status.startsWith("2"))
      response.headers = { ...response.headers, "Idempotent-Replayed": headerRef("Idempotent-Replayed") }
  }
  return operation
}

const finishOperation = (operation: Record<string, any>, line: Line) => {
  const company = line === "v2" || line === "v3"
  const bearer = (operation.security ?? []).some((requirement: object) => "bearer" in requirement)
  if (company) {
    operation.parameters = [
      ...(operation.parameters ?? []),
      { $ref: "#/components/parameters/RibbonAccountId" },
      { $ref: "#/components/parameters/RequestSource" }
    ]
  }
  for (const [status, response] of Object.entries<Record<string, any>>(operation.responses ?? {})) {
    // A body limit and a media type only concern operations that take a body.
    if ((status === "413" || status === "415") && operation.requestBody === undefined) {
      delete operation.responses[status]
      continue
    }
    const failure = status.startsWith("4") || status.startsWith("5")
    for (const [mediaType, content] of Object.entries<Record<string, any>>(response.content ?? {})) {
      dedupeAlternatives(content.schema)
      // Several errors of one status are merged as JSON; `/v1` sends every error as problem+json.
      if (line === "v1" && failure && mediaType === "application/json") {
        delete response.content[mediaType]
        response.content["application/problem+json"] = content
      }
    }
    response.headers = { ...response.headers, "X-Request-Id": headerRef("X-Request-Id") }
    if (status === "429" || status === "503") response.headers["Retry-After"] = headerRef("Retry-After")
    if (bearer && (status === "401" || status === "403")) {
      response.headers["WWW-Authenticate"] = headerRef("WWW-Authenticate")
    }
    if (company && status !== "401") {
      response.headers.RateLimit = headerRef("RateLimit")
      response.headers["RateLimit-Policy"] = headerRef("RateLimit-Policy")
    }
  }
}

/**
 * A body with no required field, in each media type it is taken in, may be left out: the request screening
 * takes an empty JSON body as `{}` (`screenRequest`), and an empty form is one with no fields; so the
 * document says `required: false` (the generator marks every body required).
 */
const markOptionalBody = (operation: Record<string, any>, schemas: Record<string, any>) => {
  const content: Record<string, { readonly schema?: Record<string, any> }> | undefined = operation.requestBody?.content
  if (content === undefined || Object.keys(content).length === 0) return
  const optional = Object.values(content).every(({ schema }) => {
    const resolved =
      typeof schema?.$ref === "string" ? schemas[schema.$ref.replace("#/components/schemas/", "")] : schema
    return resolved?.type === "object" && (resolved.required ?? []).length === 0
  })
  if (optional) operation.requestBody.required = false
}

/** An error declared by a group and again by a middleware appears twice among a status's alternatives. */
const dedupeAlternatives = (schema: Record<string, any> | undefined) => {
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const alternatives: Array<unknown> | undefined = schema?.[keyword]
    if (alternatives === undefined) continue
    const byKey = new Map(alternatives.map((alternative) => [JSON.stringify(alternative), alternative]))
    const unique = [...byKey.values()]
    if (unique.length === 1) {
      delete schema![keyword]
      Object.assign(schema!, unique[0])
    } else schema![keyword] = unique
  }
}

/** The generator marks `unknown` values with `$id: "/schemas/unknown"`, the same id twice, which Ajv refuses. */
const forgetGeneratedIds = (value: unknown): void => {
  if (Array.isArray(value)) for (const item of value) forgetGeneratedIds(item)
  else if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>
    if (typeof record.$id === "string" && record.$id.startsWith("/schemas/")) delete record.$id
    for (const item of Object.values(record)) forgetGeneratedIds(item)
  }
}

/** Drops component schemas that nothing in `paths` reaches. */
const pruneUnreferencedSchemas = (spec: Record<string, any>): Record<string, any> => {
  const schemas: Record<string, unknown> = spec.components?.schemas ?? {}
  const reached = new Set<string>()
  const visit = (value: unknown) => {
    for (const [, name] of JSON.stringify(value ?? null).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (!reached.has(name)) {
        reached.add(name)
        visit(schemas[name])
      }
    }
  }
  visit(spec.paths)
  for (const name of Object.keys(schemas)) if (!reached.has(name)) delete schemas[name]
  return spec
}
