import type { HttpApiEndpoint } from "@effect/platform"
import { Schema, SchemaAST } from "effect"
import { CheckoutStatus, PathId } from "../../domain/checkout/Checkout.js"
import type { Scope, ToolClass } from "../../domain/identity/OAuth.js"
import { Api } from "../Api.js"
import {
  type AgentOperation,
  type ArgumentPlace,
  agentOperations,
  describeProperties,
  objectSchemaOf,
  withoutGeneratedNotes
} from "../Operations.js"
import { endpointsOf } from "../Reflection.js"
import { ACP_TOOL_SCOPE, acpToolSpecs } from "./AcpTools.js"
import { ucpToolSpecs } from "./UcpTools.js"

/**
 * The MCP tools (docs/mcp.md), read off the same HttpApi definition as the bearer middleware and the connector
 * manifest (src/http/Operations.ts): one tool per agent operation, with that operation's scope, tool class,
 * description and input and output schemas, so the three cannot drift apart. The event stream is the one
 * operation that is no tool: `waitForCheckout` stands for it, with the scope and class of the checkout status.
 * Beside them are the Agentic Commerce Protocol's five checkout session tools (its MCP binding, ./AcpTools.ts) and
 * the Universal Commerce Protocol's five checkout tools (its MCP binding, ./UcpTools.ts).
 */

type Json = Record<string, unknown>

/** Where a tool argument goes in the HTTP request of its operation. */

export interface McpTool {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly scope: Scope
  readonly toolClass: ToolClass
  /** The operation the tool runs (`GET /v1/search`), or none for `waitForCheckout`. */
  readonly operation: Pick<AgentOperation, "method" | "path"> | undefined
  readonly inputSchema: Json
  readonly outputSchema: Json | undefined
  /** Where each argument goes; every argument of `inputSchema` is here (none for the ACP tools). */
  readonly places: ReadonlyMap<string, ArgumentPlace>
  /** Set on a protocol binding's tools, which AcpTools or UcpTools runs rather than the operation's HTTP request. */
  readonly binding?: "acp" | "ucp"
  readonly annotations: {
    readonly title: string
    readonly readOnlyHint: boolean
    readonly destructiveHint: boolean
    readonly idempotentHint: boolean
    readonly openWorldHint: false
  }
}

/** Operations that are no tool: the event stream is for browsers and `EventSource`; `waitForCheckout` replaces it. */
const notTools: ReadonlySet<string> = new Set(["checkoutEvents"])

/** The name of the tool that waits for a checkout's status to change. */
export const waitToolName = "waitForCheckout"

/** Display titles; an operation added without one gets its name in words. */
const titles: Record<string, string> = {
  search: "Search gifts",
  product: "Product details",
  variant: "Variant details",
  availability: "Availability and all-in price",
  collections: "Browse collections",
  collection: "Collection and its products",
  tags: "Find tags",
  countries: "Supported countries",
  autocompleteAddress: "Autocomplete an address",
  validateAddress: "Validate an address",
  me: "Profile and saved addresses",
  updateMe: "Update the profile",
  addAddress: "Save an address",
  deleteAddress: "Delete a saved address",
  createQuote: "Quote an item",
  getQuote: "Read a quote",
  createCheckout: "Create a checkout (payment link)",
  getCheckout: "Checkout status",
  cancelCheckout: "Cancel an unpaid checkout",
  listOrders: "List orders",
  getOrder: "Order and tracking",
  cancelOrder: "Cancel an order",
  listAllowances: "Spending allowance",
  revokeAllowance: "Give up the spending allowance",
  [waitToolName]: "Wait for a checkout's status"
}

const titleOf = (name: string) =>
  titles[name] ??
  name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/^./, (first) => first.toUpperCase())
    .replace(/ [A-Z]/g, (w) => w.toLowerCase())

/** The spec's rule 4, on every sensitive write. */
export const confirmationRule =
  "Sensitive write: before calling it, show the person the items, the total, the recipient and the address, " +
  "and call it only after they confirm."

const descriptionOf = (summary: string, toolClass: ToolClass) => {
  const sentence = /[.!?]$/.test(summary) ? summary : `${summary}.`
  return toolClass === "sensitive-write" ? `${sentence} ${confirmationRule}` : sentence
}

/** The JSON Schema of a success body, when the operation answers with an object. */
const outputOf = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps): Json | undefined => {
  const encoded = Schema.encodedSchema(endpoint.successSchema)
  if (SchemaAST.isVoidKeyword(encoded.ast)) return undefined
  const { root, defs } = objectSchemaOf(encoded)
  if (root.type !== "object") return undefined
  return withoutGeneratedNotes(Object.keys(defs).length > 0 ? { ...root, $defs: defs } : root) as Json
}

const annotationsOf = (title: string, toolClass: ToolClass, method: string) => ({
  title,
  readOnlyHint: toolClass === "read",
  destructiveHint: toolClass === "sensitive-write",
  idempotentHint: toolClass === "read" || method === "PUT" || method === "DELETE",
  openWorldHint: false as const
})

/** The arguments of `waitForCheckout`, decoded with this schema. */
export const WaitArguments = Schema.Struct({
  checkoutId: PathId,
  status: Schema.optional(
    CheckoutStatus.annotations({
      description:
        "The status you last saw (default pending_payment): the tool returns once the checkout has another one"
    })
  ),
  timeoutSeconds: Schema.optional(
    Schema.Int.pipe(Schema.between(1, 25)).annotations({ description: "How long to wait at most (default 25)" })
  )
})

const collect = (): ReadonlyArray<McpTool> => {
  const endpoints = new Map<string, HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>(
    endpointsOf(Api).map(({ endpoint }) => [`${endpoint.method} ${endpoint.path}`, endpoint] as const)
  )
  const tools = agentOperations.flatMap((operation): ReadonlyArray<McpTool> => {
    if (notTools.has(operation.name)) return []
    const endpoint = endpoints.get(`${operation.method} ${operation.route}`)!
    const title = titleOf(operation.name)
    return [
      {
        name: operation.name,
        title,
        description: descriptionOf(operation.description, operation.toolClass),
        scope: operation.scope,
        toolClass: operation.toolClass,
        operation: { method: operation.method, path: operation.path },
        inputSchema: operation.inputSchema,
        outputSchema: outputOf(endpoint),
        places: operation.places,
        annotations: annotationsOf(title, operation.toolClass, operation.method)
      }
    ]
  })
  // The waiting tool reads what the checkout status reads, with its scope and class.
  const status = tools.find((tool) => tool.name === "getCheckout")!
  const waitInput = objectSchemaOf(WaitArguments)
  const waitRoot = withoutGeneratedNotes(waitInput.root) as Json
  describeProperties(waitToolName, waitRoot)
  const title = titleOf(waitToolName)
  tools.push({
    name: waitToolName,
    title,
    description:
      "Wait up to 25 seconds for a checkout to leave the status you last saw (default pending_payment) and " +
      "reach one where there is something to tell the person: confirmed, partially_confirmed, failed, expired, " +
      "cancelled or refunded (paid and placing pass by, reported as progress). Returns the checkout; if it has " +
      "not changed in time, it returns it as it is, and you can call again. Use it after handing the person the " +
      "paymentUrl instead of polling.",
    scope: status.scope,
    toolClass: status.toolClass,
    operation: undefined,
    inputSchema: {
      ...waitRoot,
      additionalProperties: false,
      ...(Object.keys(waitInput.defs).length > 0 ? { $defs: withoutGeneratedNotes(waitInput.defs) } : {})
    },
    outputSchema: status.outputSchema,
    places: new Map(),
    annotations: annotationsOf(title, status.toolClass, "GET")
  })
  // The protocols' tools, each with the scope of its REST binding (`orders:write` for both).
  const bindings = [
    ["acp", acpToolSpecs],
    ["ucp", ucpToolSpecs]
  ] as const
  for (const [binding, specs] of bindings) {
    for (const spec of specs) {
      tools.push({
        name: spec.name,
        title: spec.title,
        description: descriptionOf(spec.summary, spec.toolClass),
        scope: ACP_TOOL_SCOPE,
        toolClass: spec.toolClass,
        operation: spec.operation,
        inputSchema: spec.inputSchema,
        outputSchema: spec.outputSchema,
        places: new Map(),
        binding,
        annotations: annotationsOf(spec.title, spec.toolClass, spec.operation.method)
      })
    }
  }
  return tools
}

export const mcpTools: ReadonlyArray<McpTool> = collect()

export const mcpToolByName: ReadonlyMap<string, McpTool> = new Map(mcpTools.map((tool) => [tool.name, tool]))

/** The tools a token with `scopes` may see and call. */
export const toolsFor = (scopes: ReadonlyArray<string>) => mcpTools.filter((tool) => scopes.includes(tool.scope))

/** The tool list of docs/mcp.md, generated here and checked against the document by a test. */
export const toolTableMarkdown = (): string =>
  [
    "| Tool | Title | Scope | Class | Operation | Annotations |",
    "|---|---|---|---|---|---|",
    ...mcpTools.map((tool) => {
      const hints = [
        tool.annotations.readOnlyHint ? "readOnly" : undefined,
        tool.annotations.destructiveHint ? "destructive" : undefined,
        tool.annotations.idempotentHint ? "idempotent" : undefined
      ].filter((hint) => hint !== undefined)
      const operation =
        tool.operation === undefined
          ? "(waits on the checkout's events)"
          : `\`${tool.operation.method} ${tool.operation.path}\``
      return `| \`${tool.name}\` | ${tool.title} | \`${tool.scope}\` | ${tool.toolClass} | ${operation} | ${hints.join(", ") || "none"} |`
    })
  ].join("\n")

// ---------------------------------------------------------------------------------------------------------
// Short text renderings of results, for models that read text rather than structured content.

const money = (value: unknown): string | undefined => {
  const display = (value as { readonly display?: unknown } | null | undefined)?.display
  return typeof display === "string" ? display : undefined
}

const priceOf = (product: any): string => {
  const min = money(product?.priceRange?.min)
  const max = money(product?.priceRange?.max)
  if (min === undefined) return "no price"
  return max === undefined || max === min ? min : `${min}–${max}`
}

const productLine = (product: any) => `${product.title} — ${priceOf(product)} — ${product.id}`

const checkoutText = (checkout: any) =>
  [
    `Checkout ${checkout.id}: ${checkout.status}, total ${checkout.totalDisplay}.`,
    ...(checkout.status === "pending_payment" && typeof checkout.paymentUrl === "string"
      ? [`Payment link for the person: ${checkout.paymentUrl}`]
      : []),
    String(checkout.nextStep ?? "")
  ]
    .filter((line) => line !== "")
    .join("\n")

/**
 * A checkout's `nextStep` as told over MCP: the HTTP API's says to poll `statusUrl` or stream `eventsUrl`,
 * which an MCP client cannot do; here it names the tools that do the same.
 */
const nextStepOverMcp = (status: unknown, nextStep: unknown): unknown => {
  switch (status) {
    case "pending_payment":
      return `Give paymentUrl to the user to pay on Ribbon's hosted page; then call ${waitToolName} with this checkout's id.`
    case "paid":
    case "placing":
      return `Payment received; the orders are being placed. Call ${waitToolName} with this checkout's id to wait for the outcome.`
    case "confirmed":
      return "Every item is ordered. Tell the user; track each order with getOrder (its id is in orderIds)."
    default:
      return nextStep
  }
}

/** The tools whose result is a checkout. */
const checkoutTools: ReadonlySet<string> = new Set(["createCheckout", "getCheckout", "cancelCheckout", waitToolName])

/** A tool's result body as MCP clients get it: a checkout's `nextStep` names tools (`nextStepOverMcp`). */
export const resultOverMcp = (toolName: string, body: Record<string, unknown>): Record<string, unknown> =>
  checkoutTools.has(toolName) && typeof body.nextStep === "string"
    ? { ...body, nextStep: nextStepOverMcp(body.status, body.nextStep) }
    : body

const quoteText = (quote: any) =>
  `Quote ${quote.id}: ${quote.productTitle} (${quote.variantTitle}) to ${quote.countryCode}, ${quote.totalDisplay} all in, locked until ${quote.expiresAt}.`

const renderers: Record<string, (body: any) => string> = {
  search: (body) =>
    [
      ...(body.products ?? []).map(productLine),
      ...((body.collections ?? []).length > 0
        ? ["Collections:", ...body.collections.map((c: any) => `${c.name} — ${c.id}`)]
        : []),
      ...(body.nextCursor ? [`More results: cursor ${body.nextCursor}`] : [])
    ].join("\n") || "No products found.",
  collection: (body) =>
    [`${body.collection?.name} — ${body.collection?.id}`, ...(body.products ?? []).map(productLine)].join("\n"),
  collections: (body) => (body.collections ?? []).map((c: any) => `${c.name} — ${c.id}`).join("\n") || "None.",
  product: (body) =>
    [
      productLine(body.product),
      ...(body.variants ?? []).map((v: any) => `  variant ${v.title} — ${money(v.price) ?? "no price"} — ${v.id}`)
    ].join("\n"),
  availability: (body) =>
    (body.countries ?? [])
      .map(
        (c: any) => `${c.countryCode}: ${c.available ? "available" : "unavailable"} — ${money(c.price) ?? "?"} all in`
      )
      .join("\n"),
  listAllowances: (body) =>
    (body.allowances ?? [])
      .map(
        (a: any) =>
          `Allowance ${a.id} (${a.status}): up to ${a.perCheckoutLimit} per checkout, ${a.periodLimit} per ${a.period}, ${a.totalLimit} in total, in minor units of ${a.currency}; ${a.remainingInPeriod} may be spent now; ends ${a.expiresAt}.`
      )
      .join("\n") ||
    `No allowance: the user can set one up at ${body.setupUrl}. Until then, checkouts are paid at paymentUrl.`,
  createQuote: quoteText,
  getQuote: quoteText,
  createCheckout: checkoutText,
  getCheckout: checkoutText,
  cancelCheckout: checkoutText,
  [waitToolName]: checkoutText
}

/** The text a model reads beside the structured result. */
export const renderText = (toolName: string, body: unknown): string => {
  const renderer = renderers[toolName]
  if (renderer !== undefined) {
    try {
      return renderer(body)
    } catch {}
  }
  return JSON.stringify(body)
}
