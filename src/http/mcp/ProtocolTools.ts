import { McpError } from "@modelcontextprotocol/sdk/types.js"
import type { ParseResult, Schema } from "effect"
import type { ToolClass } from "../../domain/identity/OAuth.js"
import { FieldIssue, InvalidRequest } from "../../domain/platform/Errors.js"
import { formatPath, plainIssues } from "../../domain/platform/IssueMessages.js"
import { objectSchemaOf, withoutGeneratedNotes } from "../Operations.js"

/**
 * What the agent protocols' MCP bindings share (ACP's, ./AcpTools.ts; UCP's, ./UcpTools.ts): each binds its REST
 * operations one tool apiece, its arguments `meta` (the REST headers), `id` (the path) and a body field, and runs the
 * same operation as its REST binding. A protocol error is a JSON-RPC error with the protocol's error object as data.
 */

type Json = Record<string, unknown>

/** A protocol tool as McpTools lists it. */
export interface ProtocolToolSpec<Name extends string = string> {
  readonly name: Name
  readonly title: string
  readonly summary: string
  readonly toolClass: ToolClass
  /** The REST operation it binds, for the tool table. */
  readonly operation: { readonly method: "GET" | "POST" | "PUT"; readonly path: string }
  readonly inputSchema: Json
  readonly outputSchema: Json
}

/**
 * The JSON Schema of `schema`, its `$defs` bundled beside it (the bindings ask for no external reference);
 * `describe` gives a protocol's notes to the properties its schemas leave plain, the root's and each definition's.
 */
export const bundledSchemaOf = (
  schema: Schema.Schema.Any,
  describe: (where: string, schema: Json) => void = () => {}
): Json => {
  const { root, defs } = objectSchemaOf(schema)
  const bundled = withoutGeneratedNotes({
    ...root,
    ...(Object.keys(defs).length > 0 ? { $defs: defs } : {})
  }) as Json
  describe("", bundled)
  for (const [name, def] of Object.entries((bundled.$defs ?? {}) as Json)) describe(name, def as Json)
  return bundled
}

/** A tool of a binding: its arguments closed to other fields. */
export const protocolToolSpec = <Name extends string>(
  name: Name,
  title: string,
  toolClass: ToolClass,
  operation: ProtocolToolSpec["operation"],
  args: Json,
  output: Json,
  summary: string
): ProtocolToolSpec<Name> => ({
  name,
  title,
  summary,
  toolClass,
  operation,
  inputSchema: { ...args, additionalProperties: false },
  outputSchema: output
})

/**
 * Arguments that do not decode: the protocol's 400 with the first failing field; a field of the body argument
 * (`body`: `payload`, `checkout`) is named as in the REST request body (`line_items[0].id`), `meta` and `id` as
 * arguments.
 */
export const invalidArgumentsOf = (error: ParseResult.ParseError, body: string) => {
  const prefix = new RegExp(`^${body}(\\.|(?=\\[)|$)`)
  const errors = plainIssues(error.issue).map(
    (issue) => new FieldIssue({ path: formatPath(issue.path).replace(prefix, ""), message: issue.message })
  )
  const first = errors[0]!
  return new InvalidRequest({ message: `${first.path || body}: ${first.message}`, errors })
}

/** A protocol's error object as the binding's JSON-RPC error, with `code` and `message` (the object's own text). */
export const protocolError = (code: number, message: unknown, body: unknown): McpError =>
  new McpError(code, typeof message === "string" ? message : "The call failed.", body)
