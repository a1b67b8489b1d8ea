import type { HttpApiEndpoint } from "@effect/platform"
import { OpenApi } from "@effect/platform"
import { Context, JSONSchema, Option, Schema } from "effect"
import type { Scope, ToolClass } from "../domain/identity/OAuth.js"
import { Api } from "./Api.js"
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
  readonly inputSchema: Record<string, unknown>
}

/** The object a generated JSON Schema describes, following its `$ref` into `$defs`. */
const objectOf = (json: JSONSchema.JsonSchema7Root): JSONSchema.JsonSchema7 => {
  if (!("$ref" in json) || json.$defs === undefined) return json
  return json.$defs[json.$ref.split("/").at(-1)!] ?? json
}

/** One JSON Schema object of an operation's inputs: path, query and body fields side by side. */
const inputSchemaOf = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps): Record<string, unknown> => {
  const properties: Record<string, unknown> = {}
  const required: Array<string> = []
  const merge = (schema: Option.Option<Schema.Schema.Any>) => {
    if (Option.isNone(schema)) return
    const root = objectOf(JSONSchema.make(Schema.encodedBoundSchema(schema.value), { target: "jsonSchema2020-12" }))
    if (!("properties" in root)) return
    Object.assign(properties, root.properties)
    required.push(...root.required)
  }
  merge(endpoint.pathSchema)
  merge(endpoint.urlParamsSchema)
  merge(endpoint.payloadSchema)
  return { type: "object", properties, required, additionalProperties: false }
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
        inputSchema: inputSchemaOf(endpoint)
      }
    ]
  })

export const agentOperations: ReadonlyArray<AgentOperation> = collect()

/** The operation a route serves, by method and route template. */
export const operationByRoute: ReadonlyMap<string, AgentOperation> = new Map(
  agentOperations.map((operation) => [`${operation.method} ${operation.route}`, operation])
)
