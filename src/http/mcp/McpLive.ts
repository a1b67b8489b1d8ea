import {
  type HttpApi,
  HttpApiBuilder,
  type HttpApp,
  type HttpRouter,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification
} from "@modelcontextprotocol/sdk/types.js"
import { Duration, Effect, Either, FiberRef, Layer, Option, Runtime, Schema, Stream } from "effect"
import { CheckoutStatus } from "../../domain/checkout/Checkout.js"
import { InsufficientScope } from "../../domain/identity/Errors.js"
import type { BearerContext } from "../../domain/identity/OAuth.js"
import { FieldIssue, InvalidRequest, MethodNotAllowed } from "../../domain/platform/Errors.js"
import { formatPath, plainIssues } from "../../domain/platform/IssueMessages.js"
import { Pricing } from "../../services/catalog/Pricing.js"
import { Events } from "../../services/checkout/Events.js"
import { Bearers } from "../../services/identity/Bearers.js"
import { challengeScope } from "../../services/identity/OAuthRules.js"
import { checkMcpCaller, OriginPolicy } from "../BrowserOrigins.js"
import { render } from "../ErrorLines.js"
import { bearerTokenOf } from "../identity/Agent.js"
import { currentRequestId } from "../Middleware.js"
import { isAcpTool, makeAcpTools } from "./AcpTools.js"
import {
  type McpTool,
  mcpToolByName,
  renderText,
  resultOverMcp,
  toolsFor,
  WaitArguments,
  waitToolName
} from "./McpTools.js"
import { isUcpTool, makeUcpTools } from "./UcpTools.js"

/**
 * `/mcp`: the agent API as a Model Context Protocol server over Streamable HTTP (docs/mcp.md), served by the
 * same router as the HttpApi, behind the same bearer tokens, answering only its own host and the pages of
 * allowed origins (src/http/BrowserOrigins.ts).
 *
 * Stateless: every POST gets a server and a transport of its own (the SDK's stateless mode), so any instance
 * answers any request and nothing is kept between them; GET (a standalone event stream) and DELETE (ending
 * a session) are answered 405. A tool call runs its operation through this server's own HttpApp, in process,
 * with the caller's token: the same handlers, validation, scope checks and error bodies as over HTTP.
 */

const serverInfo = { name: "ribbon", title: "Ribbon", version: "1.0.0" }

const instructions =
  "Ribbon is a gifting marketplace acting for the signed-in person. Flow: search or browse, read a variant's " +
  "availability for the destination country, create one quote per cart line, create one checkout for all " +
  "quotes, hand the person the paymentUrl (they pay on the hosted page; never ask for card details), then " +
  "call waitForCheckout until the status is confirmed or partially_confirmed. Tools marked destructive " +
  "(createCheckout, cancelOrder, create_checkout_session, complete_checkout_session, create_checkout, " +
  "complete_checkout) need the person's confirmation first: show the items, the total, the recipient and the " +
  "address, and call only after they agree. Agents that speak the Agentic Commerce Protocol may use its " +
  "*_checkout_session tools instead, and those that speak the Universal Commerce Protocol its *_checkout tools."

/** The server's own HttpApp, which tool calls run their operations through. */
type OwnApp = HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>

/** Who calls: the token's user and scopes, and the headers their operations are run with. */
interface Caller {
  readonly bearer: BearerContext
  readonly headers: Readonly<Record<string, string>>
}

/** What an operation answered, its body parsed when it is JSON. */
interface Answer {
  readonly status: number
  readonly body: unknown
}

type SendProgress = (progress: number, message: string) => Promise<void>

/** The statuses `waitForCheckout` passes by: the checkout is on its way from paid to placed. */
const passing: ReadonlySet<string> = new Set(["paid", "placing"])

const statusOfEvent = (type: string): string | undefined => {
  const status = type.startsWith("checkout.") ? type.slice("checkout.".length) : ""
  return Schema.is(CheckoutStatus)(status) ? status : undefined
}

const toolError = (status: number, body: unknown): CallToolResult => {
  const problem = (body ?? {}) as { readonly code?: unknown; readonly detail?: unknown; readonly title?: unknown }
  const code = typeof problem.code === "string" ? problem.code : `http_${status}`
  const detail = typeof problem.detail === "string" ? problem.detail : String(problem.title ?? "The call failed.")
  return {
    isError: true,
    content: [
      { type: "text", text: `Error ${status} ${code}: ${detail}` },
      { type: "text", text: JSON.stringify(body) }
    ]
  }
}

/** A domain error as the `/v1` line renders it, as a tool error. */
const domainError = (error: Parameters<typeof render>[1]): CallToolResult => {
  const rendered = render("v1", error)
  return toolError(rendered.status, rendered.body)
}

const toolResult = (tool: McpTool, answer: Answer, note?: string): CallToolResult => {
  if (answer.status >= 400) return toolError(answer.status, answer.body)
  if (answer.body === undefined || answer.body === null || typeof answer.body !== "object") {
    return { content: [{ type: "text", text: answer.status === 204 ? "Done." : String(answer.body ?? "Done.") }] }
  }
  const body = resultOverMcp(tool.name, answer.body as Record<string, unknown>)
  const text = renderText(tool.name, body)
  return {
    content: [{ type: "text", text: note === undefined ? text : `${text}\n${note}` }],
    ...(tool.outputSchema === undefined ? {} : { structuredContent: body })
  }
}

const argumentText = (value: unknown): string =>
  Array.isArray(value) ? value.map(String).join(",") : typeof value === "object" ? JSON.stringify(value) : String(value)

/** The request line and body of a tool's operation for `args`, or the 400 the HTTP API would give. */
const requestOf = (tool: McpTool, args: Record<string, unknown>) => {
  const operation = tool.operation!
  const query = new URLSearchParams()
  const body: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(args)) {
    const place = tool.places.get(name)
    if (place === undefined) return Either.left(InvalidRequest.field(name, "is not an argument of this tool"))
    if (value === undefined || value === null) {
      if (place === "body") body[name] = value
      continue
    }
    if (place === "query") query.set(name, argumentText(value))
    if (place === "body") body[name] = value
  }
  let missing: string | undefined
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = args[name]
    if (value === undefined || value === null || value === "") missing ??= name
    return encodeURIComponent(argumentText(value ?? ""))
  })
  if (missing !== undefined) return Either.left(InvalidRequest.field(missing, "is missing"))
  const search = query.toString()
  const hasBody = [...tool.places.values()].includes("body")
  return Either.right({
    method: operation.method,
    url: search === "" ? path : `${path}?${search}`,
    body: hasBody ? JSON.stringify(body) : undefined
  })
}

/** The known tools that the JSON-RPC message (or batch) in `body` calls; none for a body that is not JSON. */
const toolsCalledIn = (body: string): ReadonlyArray<McpTool> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return []
  }
  return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((message) => {
    const { method, params } = (message ?? {}) as { readonly method?: unknown; readonly params?: { name?: unknown } }
    const tool =
      method === "tools/call" && typeof params?.name === "string" ? mcpToolByName.get(params.name) : undefined
    return tool === undefined ? [] : [tool]
  })
}

/**
 * The `/mcp` route, on the HttpApi's router. `Router.Live` and `Middleware.layer` are memoized, so these are
 * the same router and middleware list as the served app's (src/layers/Server.ts); it needs the API itself.
 */
export const McpLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const bearers = yield* Bearers
    const events = yield* Events
    const origins = yield* OriginPolicy
    const acpTools = yield* makeAcpTools
    const ucpTools = yield* makeUcpTools
    // The server's own HttpApp, built once on first use: by then every route and middleware is registered.
    const apiContext = yield* Effect.context<HttpApi.Api | HttpApiBuilder.Middleware | HttpApiBuilder.Router>()
    const ownApp = yield* Effect.cached(Effect.provide(HttpApiBuilder.httpApp, apiContext))

    /** Runs one operation through the app with the caller's token (and the `/mcp` request's id, for the logs). */
    const call = (
      app: OwnApp,
      caller: Caller,
      request: { readonly method: string; readonly url: string; readonly body: string | undefined }
    ) =>
      Effect.gen(function* () {
        const headers: Record<string, string> = { ...caller.headers, accept: "application/json" }
        if (request.body !== undefined) headers["content-type"] = "application/json"
        const web = new Request(`http://mcp.internal${request.url}`, {
          method: request.method,
          headers,
          ...(request.body === undefined ? {} : { body: request.body })
        })
        const response = yield* app.pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(web)),
          Effect.scoped
        )
        const text = yield* Effect.promise(() => HttpServerResponse.toWeb(response).text())
        let body: unknown = text === "" ? undefined : text
        try {
          body = text === "" ? undefined : JSON.parse(text)
        } catch {}
        return { status: response.status, body } satisfies Answer
      })

    /**
     * `waitForCheckout`: the checkout as the status endpoint shows it (which checks the token and the owner),
     * then its events from the last one stored, until its status settles somewhere other than `status` or the
     * time is up; each event is reported as progress.
     */
    const wait = (
      app: OwnApp,
      caller: Caller,
      tool: McpTool,
      args: Record<string, unknown>,
      progress: SendProgress | undefined
    ) =>
      Effect.gen(function* () {
        const decoded = Schema.decodeUnknownEither(WaitArguments, { onExcessProperty: "error" })(args)
        if (Either.isLeft(decoded)) {
          const issues = plainIssues(decoded.left.issue)
          const errors = issues.map((issue) => new FieldIssue({ path: formatPath(issue.path), message: issue.message }))
          const first = errors[0]!
          return domainError(new InvalidRequest({ message: `${first.path || "request"}: ${first.message}`, errors }))
        }
        const { checkoutId, status: since = "pending_payment", timeoutSeconds = 25 } = decoded.right
        const read = call(app, caller, {
          method: "GET",
          url: `/v1/checkouts/${encodeURIComponent(checkoutId)}`,
          body: undefined
        })
        const first = yield* read
        if (first.status >= 400) return toolResult(tool, first)
        const settled = (status: string) => status !== since && !passing.has(status)
        const stored = yield* events.after(checkoutId, "0")
        const latest = stored
          .map((row) => statusOfEvent(row.type))
          .filter((s) => s !== undefined)
          .at(-1)
        const current = latest ?? String((first.body as { readonly status?: unknown }).status)
        if (settled(current)) return toolResult(tool, latest === undefined ? first : yield* read)
        let reported = 0
        if (progress !== undefined) {
          yield* Effect.promise(() => progress(++reported, `Waiting: the checkout is ${current.replace("_", " ")}`))
        }
        const reached = yield* events.stream(checkoutId, stored.at(-1)?.id ?? "0", { follow: true }).pipe(
          Stream.mapEffect((row) =>
            Effect.as(
              progress === undefined
                ? Effect.void
                : Effect.promise(() =>
                    progress(++reported, row.type.replace("checkout.", "Checkout: ").replace("_", " "))
                  ),
              statusOfEvent(row.type)
            )
          ),
          Stream.filter((status): status is string => status !== undefined && settled(status)),
          Stream.runHead,
          Effect.timeoutOption(Duration.seconds(timeoutSeconds)),
          Effect.map(Option.flatten)
        )
        const now = yield* read
        const note = Option.isNone(reached)
          ? `No change after ${timeoutSeconds} s: call ${waitToolName} again to keep waiting.`
          : undefined
        return toolResult(tool, now, note)
      })

    /** One MCP server for one request, acting for `bearer`. */
    const makeServer = (
      app: OwnApp,
      runtime: Runtime.Runtime<HttpRouter.HttpRouter.DefaultServices>,
      caller: Caller
    ) => {
      const { bearer } = caller
      const server = new Server(serverInfo, { capabilities: { tools: { listChanged: false } }, instructions })
      server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: toolsFor(bearer.scopes).map((tool) => ({
          name: tool.name,
          title: tool.title,
          description: tool.description,
          inputSchema: tool.inputSchema as { type: "object" },
          ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema as { type: "object" } }),
          annotations: tool.annotations,
          _meta: { "ribbon/scope": tool.scope, "ribbon/toolClass": tool.toolClass }
        }))
      }))
      server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
        const tool = mcpToolByName.get(request.params.name)
        if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
        if (!bearer.scopes.includes(tool.scope)) {
          return domainError(
            new InsufficientScope({
              message: `The ${tool.name} tool needs the ${tool.scope} scope, which this token does not have.`,
              scope: challengeScope(bearer.scopes, [tool.scope]),
              resourceMetadata: bearers.resourceMetadataUrl
            })
          )
        }
        const args = request.params.arguments ?? {}
        const token = extra._meta?.progressToken
        const progress: SendProgress | undefined =
          token === undefined
            ? undefined
            : (value, message) =>
                extra
                  .sendNotification({
                    method: "notifications/progress",
                    params: { progressToken: token, progress: value, message }
                  } as ServerNotification)
                  .catch(() => {})
        const run: Effect.Effect<CallToolResult | McpError, never, HttpRouter.HttpRouter.DefaultServices> =
          tool.binding === "acp" && isAcpTool(tool.name)
            ? acpTools.run(tool.name, bearer, args)
            : tool.binding === "ucp" && isUcpTool(tool.name)
              ? ucpTools.run(tool.name, bearer, args)
              : tool.operation === undefined
                ? wait(app, caller, tool, args, progress)
                : Either.match(requestOf(tool, args), {
                    onLeft: (error) => Effect.succeed(domainError(error)),
                    onRight: (line) => Effect.map(call(app, caller, line), (answer) => toolResult(tool, answer))
                  })
        const result = await Runtime.runPromise(runtime)(
          Effect.withSpan(run, "Mcp.callTool", { attributes: { "mcp.tool": tool.name } }),
          { signal: extra.signal }
        )
        // The protocol bindings answer their errors as JSON-RPC errors, the protocol's error object as their data.
        if (result instanceof McpError) throw result
        return result
      })
      return server
    }

    const handle = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      yield* checkMcpCaller(origins, request)
      const token = bearerTokenOf(request.headers.authorization)
      const bearer = yield* bearers.authenticate(token)
      if (request.method !== "POST") {
        return yield* new MethodNotAllowed({
          message:
            "This MCP server is stateless: send JSON-RPC messages with POST; there is no stream to GET or session to DELETE.",
          allowedMethods: ["POST"]
        })
      }
      const body = yield* request.text
      // A tool call the token's scopes do not cover is answered in HTTP, 403 with the scope challenge, so that
      // the client can ask the person for more (MCP 2025-11-25, "Scope challenge handling").
      const refused = toolsCalledIn(body).filter((tool) => !bearer.scopes.includes(tool.scope))
      if (refused.length > 0) {
        return yield* new InsufficientScope({
          message: refused.map((tool) => `The ${tool.name} tool needs the ${tool.scope} scope.`).join(" "),
          scope: challengeScope(
            bearer.scopes,
            refused.map((tool) => tool.scope)
          ),
          resourceMetadata: bearers.resourceMetadataUrl
        })
      }
      const app = yield* ownApp
      const runtime = yield* Effect.runtime<HttpRouter.HttpRouter.DefaultServices>()
      const requestId = yield* FiberRef.get(currentRequestId)
      const server = makeServer(app, runtime, {
        bearer,
        headers: { authorization: `Bearer ${token}`, "x-request-id": requestId }
      })
      const transport = new WebStandardStreamableHTTPServerTransport({}) // no session ids: stateless
      const response = yield* Effect.promise(async () => {
        await server.connect(transport)
        return transport.handleRequest(
          new Request("http://mcp.internal/mcp", { method: "POST", headers: request.headers, body })
        )
      })
      return HttpServerResponse.fromWeb(closingWhenDone(response, () => server.close()))
    })

    yield* router.all("/mcp", handle)
  })
).pipe(
  // Pricing: the one the UCP tools' checkouts read currencies from, as `/ucp`'s (src/http/ucp/UcpLive.ts).
  Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer, Pricing.Default])
)

/** `response` with its body wrapped so that `close` runs once the body ends or its reader goes away. */
const closingWhenDone = (response: Response, close: () => Promise<void>): Response => {
  const source = response.body
  if (source === null) {
    void close().catch(() => {})
    return response
  }
  const reader = source.getReader()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read()
      if (done) {
        controller.close()
        void close().catch(() => {})
      } else controller.enqueue(value)
    },
    async cancel(reason) {
      await reader.cancel(reason)
      void close().catch(() => {})
    }
  })
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
}
