import type { HttpApiEndpoint } from "@effect/platform"
import { OpenApi } from "@effect/platform"
import { Context, JSONSchema, Option, Schema } from "effect"
import type { Scope, ToolClass } from "../domain/identity/OAuth.js"
import { Api } from "./Api.js"
import { argumentDescriptions } from "./ArgumentDescriptions.js"
import { Bearer, OperationClass, RequiredScope } from "./identity/Agent.js"
import { endpointsOf } from "./Reflection.js"

/**
 * The agent operations, read off the HttpApi definition (src/http/Reflection.ts): every endpoint behind `Bearer`, with the scope
 * and tool class annotated on it (or on its group). The bearer middleware and the connector manifest both
 * use this one list, so what is enforced is what is published.
 */
export interface AgentOperation {
  readonly name: string
  readonly method: string
  /** The route template as the router knows it (`/v1/products/:productId`). */
  readonly route: string
  /** The path as documented (`/v1/products/{productId}`). */
  readonly path: string
  readonly scope: Scope
  readonly toolClass: ToolClass
  readonly description: string
  /** Path, query and body fields side by side, as one JSON Schema object (with the `$defs` they use). */
  readonly inputSchema: Record<string, unknown>
  /** Where each input of `inputSchema` goes. */
  readonly places: ReadonlyMap<string, ArgumentPlace>
}

type Json = Record<string, unknown>

/** Where an input goes in the request. */
export type ArgumentPlace = "path" | "query" | "body"

/**
 * A generated JSON Schema made fit for MCP clients: no `$schema` (clients validate with draft-07 validators,
 * which reject an unknown meta-schema) and no `$id` (the same id twice, as every `unknown` gets, is refused).
 */
const sanitize = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sanitize)
  if (value === null || typeof value !== "object") return value
  const out: Json = {}
  for (const [key, inner] of Object.entries(value)) {
    if (key === "$schema" || key === "$id") continue
    out[key] = sanitize(inner)
  }
  return out
}

/** The JSON Schema of `schema` with its root object in place (a root `$ref` followed into `$defs`). */
export const objectSchemaOf = (schema: Schema.Schema.Any): { readonly root: Json; readonly defs: Json } => {
  const made = sanitize(JSONSchema.make(schema, { target: "jsonSchema2020-12" })) as Json
  const { $defs, ...root } = made as Json & { readonly $defs?: Json }
  const defs = $defs ?? {}
  const ref = typeof root.$ref === "string" ? root.$ref.split("/").at(-1) : undefined
  return { root: ref !== undefined && defs[ref] !== undefined ? (defs[ref] as Json) : root, defs }
}

/**
 * Effect's own title and description of a refinement (`maxLength(64)`, "a string at most 64 character(s)
 * long"; `int`, "an integer"): they repeat the constraints beside them, and read as noise to a model.
 */
const generatedTitle = /^[a-z][A-Za-z]*(\(.*\))?$/
const generatedDescription =
  /^an? (string|number|integer|array|non-empty|positive|negative|non-negative|non-positive|finite|valid)\b/

/** `schema` without Effect's generated titles and descriptions, at every level. */
export const withoutGeneratedNotes = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(withoutGeneratedNotes)
  if (schema === null || typeof schema !== "object") return schema
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === "title" && typeof value === "string" && generatedTitle.test(value)) continue
    if (key === "description" && typeof value === "string" && generatedDescription.test(value)) continue
    // `properties` and `$defs` map names to schemas: their keys are names, not keywords.
    out[key] =
      (key === "properties" || key === "$defs") && value !== null && typeof value === "object"
        ? Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, withoutGeneratedNotes(inner)]))
        : withoutGeneratedNotes(value)
  }
  return out
}

/** The description of a property, or of the one branch of `anyOf` that has one (a nullable field's). */
const descriptionIn = (property: Json): string | undefined =>
  typeof property.description === "string"
    ? property.description
    : ((property.anyOf as Array<Json> | undefined)
        ?.map((branch) => branch.description)
        .find((description): description is string => typeof description === "string") ?? undefined)

/**
 * Gives every property of `object` (and of the objects inside, through arrays and nullable branches) a
 * description: its own, `authored` (what the decoded side says, for the top level), or the plain one of
 * `argumentDescriptions`.
 */
export const describeProperties = (operation: string, object: Json, prefix = "", authored: Json = {}): void => {
  for (const [name, value] of Object.entries((object.properties ?? {}) as Json)) {
    const property = value as Json
    const path = prefix === "" ? name : `${prefix}.${name}`
    const own = descriptionIn(property) ?? ((authored[name] as Json | undefined)?.description as string | undefined)
    const description =
      own ?? argumentDescriptions[`${operation}.${path}`] ?? argumentDescriptions[path] ?? argumentDescriptions[name]
    if (description !== undefined) property.description = description
    // The objects inside: the property itself, its items, a nullable branch or that branch's items.
    const branches = (property.anyOf ?? []) as Array<Json>
    const shapes = [property, property.items, ...branches, ...branches.map((branch) => branch.items)] as Array<Json>
    for (const shape of shapes) {
      if (shape?.type === "object") describeProperties(operation, shape, path)
    }
  }
}

/** One input object of an operation's path, query and body fields, and where each goes. */
const inputOf = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps) => {
  const properties: Json = {}
  const required: Array<string> = []
  let $defs: Json = {}
  const places = new Map<string, ArgumentPlace>()
  // Descriptions annotated on a transformation (a comma-separated list, a query integer) are on its decoded
  // side only, which the encoded schema leaves out.
  const authored: Json = {}
  const merge = (schema: Option.Option<Schema.Schema.Any>, place: ArgumentPlace) => {
    if (Option.isNone(schema)) return
    const { root, defs } = objectSchemaOf(Schema.encodedBoundSchema(schema.value))
    $defs = { ...$defs, ...(withoutGeneratedNotes(defs) as Json) }
    const decoded = withoutGeneratedNotes(objectSchemaOf(schema.value).root.properties ?? {}) as Json
    for (const [name, property] of Object.entries((root.properties ?? {}) as Json)) {
      properties[name] = withoutGeneratedNotes(property)
      authored[name] = decoded[name]
      places.set(name, place)
    }
    required.push(...((root.required ?? []) as Array<string>))
  }
  merge(endpoint.pathSchema, "path")
  merge(endpoint.urlParamsSchema, "query")
  merge(endpoint.payloadSchema, "body")
  const inputSchema: Json = { type: "object", properties, required, additionalProperties: false }
  describeProperties(endpoint.name, inputSchema, "", authored)
  if (Object.keys($defs).length > 0) inputSchema.$defs = $defs
  return { inputSchema, places }
}

const describe = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps) =>
  Context.getOption(endpoint.annotations, OpenApi.Summary).pipe(
    Option.orElse(() => Context.getOption(endpoint.annotations, OpenApi.Description)),
    Option.getOrElse(() => endpoint.name)
  )

const collect = (): ReadonlyArray<AgentOperation> =>
  endpointsOf(Api).flatMap(({ endpoint, annotations, middleware }) => {
    if (!middleware.has(Bearer)) return []
    const scope = Context.getOption(annotations, RequiredScope)
    const toolClass = Context.getOption(annotations, OperationClass)
    // A protected endpoint without its declaration is a programming error: fail at startup, not per request.
    if (Option.isNone(scope) || Option.isNone(toolClass)) {
      throw new Error(`${endpoint.method} ${endpoint.path} is behind Bearer but declares no scope or tool class`)
    }
    return [
      {
        name: endpoint.name,
        method: endpoint.method,
        route: endpoint.path,
        path: endpoint.path.replace(/:(\w+)/g, "{$1}"),
        scope: scope.value,
        toolClass: toolClass.value,
        description: describe(endpoint),
        ...inputOf(endpoint)
      }
    ]
  })

export const agentOperations: ReadonlyArray<AgentOperation> = collect()

/** The operation a route serves, by method and route template. */
export const operationByRoute: ReadonlyMap<string, AgentOperation> = new Map(
  agentOperations.map((operation) => [`${operation.method} ${operation.route}`, operation])
)
