import type { CallToolResult, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either, type ParseResult, Schema } from "effect"
import {
  ACP_VERSION,
  AcpCancelRequest,
  AcpCheckoutSession,
  AcpCompleteRequest,
  AcpCreateRequest,
  AcpUpdateRequest
} from "../../domain/checkout/Acp.js"
import type { BearerContext, ToolClass } from "../../domain/identity/OAuth.js"
import type { AnyDomainError } from "../../domain/platform/Errors.js"
import { AcpIdempotency, type Answer } from "../../services/checkout/AcpIdempotency.js"
import { AcpSessions } from "../../services/checkout/AcpSessions.js"
import { ACP_SCOPE, checkAcpVersion, sessionPresenter } from "../acp/AcpLive.js"
import { render } from "../ErrorLines.js"
import { keyedAnswer, protocolAnswer } from "../ProtocolAnswers.js"
import {
  bundledSchemaOf,
  invalidArgumentsOf,
  type ProtocolToolSpec,
  protocolError,
  protocolToolSpec
} from "./ProtocolTools.js"

/**
 * The Agentic Commerce Protocol's MCP binding (ACP 2026-04-17, its `docs/mcp-binding.md`; docs/agent-protocols.md,
 * docs/decisions/0078-agentic-commerce-protocol.md): the five `*_checkout_session` tools on `/mcp`, beside the agent
 * API's. Each takes the binding's `{ meta, id, payload }` (the REST headers, path id and body) and runs the same
 * AcpSessions operation as `/acp`, under the protocol's idempotency when `meta.idempotency_key` is given. A result is
 * the protocol's CheckoutSession; an error is the JSON-RPC error -32000 with the protocol's error object as `data`.
 */

type Json = Record<string, unknown>

/** The scope of every ACP tool: that of every `/acp` operation, since each may lead to a purchase. */
export const ACP_TOOL_SCOPE = ACP_SCOPE

/** The JSON-RPC error code of every protocol error (the binding's "Error Handling"). */
export const ACP_ERROR_CODE = -32000

const Text = (max: number, description: string) =>
  Schema.String.pipe(Schema.maxLength(max)).annotations({ description })

/** `meta`: the protocol's headers as fields; fields the binding may add later are accepted and ignored. */
const Meta = Schema.Struct(
  {
    api_version: Schema.String.annotations({
      description: `The protocol version (the API-Version header); this server speaks ${ACP_VERSION}`
    }),
    idempotency_key: Schema.optional(
      Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)).annotations({
        description:
          "The Idempotency-Key: a retry with the same key and payload gets the first answer (recommended on create and complete)"
      })
    ),
    request_id: Schema.optional(Text(255, "The Request-Id, for correlation")),
    user_agent: Schema.optional(Text(512, "The agent's User-Agent")),
    accept_language: Schema.optional(Text(255, "The Accept-Language, the locale preferred")),
    signature: Schema.optional(Text(4096, "The request Signature (not checked by this server)")),
    timestamp: Schema.optional(Text(64, "The signing Timestamp, RFC 3339 (not checked by this server)"))
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ description: "Protocol metadata, the REST binding's headers: api_version is required" })

const SessionId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)).annotations({
  description: "The checkout session's id"
})

const payloadNote = (name: string) => ({ description: `The protocol's ${name}, as the REST request body` })

const CreateArguments = Schema.Struct({
  meta: Meta,
  payload: AcpCreateRequest.annotations(payloadNote("CheckoutSessionCreateRequest"))
})
const UpdateArguments = Schema.Struct({
  meta: Meta,
  id: SessionId,
  payload: AcpUpdateRequest.annotations(payloadNote("CheckoutSessionUpdateRequest"))
})
const GetArguments = Schema.Struct({ meta: Meta, id: SessionId })
const CompleteArguments = Schema.Struct({
  meta: Meta,
  id: SessionId,
  payload: AcpCompleteRequest.annotations(payloadNote("CheckoutSessionCompleteRequest"))
})
const CancelArguments = Schema.Struct({
  meta: Meta,
  id: SessionId,
  payload: Schema.optional(AcpCancelRequest.annotations(payloadNote("CancelSessionRequest")))
})

/**
 * Descriptions of the protocol's request fields that Ribbon's schemas leave plain, so that every argument a model
 * reads says what it is: by `$defs` name and path, then by path alone.
 */
const fieldNotes: Record<string, string> = {
  buyer: "Who is buying (not necessarily the recipient)",
  line_items: "The items: Ribbon variant ids, an id repeated once per unit",
  fulfillment_details: "The recipient and delivery address",
  capabilities: "What the agent can handle (payment handlers, interventions)",
  fulfillment_groups: "Passed through; Ribbon delivers each line on its own",
  affiliate_attribution: "Affiliate attribution, kept as given",
  coupons: "Coupon codes (Ribbon offers none)",
  discounts: "Discounts requested (Ribbon offers none)",
  locale: "The buyer's locale, BCP 47",
  timezone: "The buyer's time zone, IANA",
  metadata: "The agent's own key-value data, kept as given",
  order_notes: "A note for the order",
  selected_fulfillment_options: "The fulfillment option chosen per item (Ribbon offers one per kind of delivery)",
  authentication_result: "The outcome of a 3-D Secure or other authentication, kept as given",
  risk_signals: "Risk signals, kept as given",
  marketing_consents: "Marketing consents, kept as given",
  intent_trace: "Why the buyer cancelled",
  "intent_trace.reason_code": "The reason, one of the protocol's codes",
  "intent_trace.trace_summary": "The reason in words",
  "intent_trace.metadata": "More about the reason, kept as given",
  "AcpBuyer.first_name": "First name",
  "AcpBuyer.last_name": "Last name",
  "AcpBuyer.full_name": "Full name",
  "AcpBuyer.email": "Email address",
  "AcpBuyer.phone_number": "Phone number, E.164",
  "AcpBuyer.customer_id": "The agent's id for the buyer",
  "AcpBuyer.account_type": "The kind of buyer account",
  "AcpBuyer.authentication_status": "How the buyer was authenticated",
  "AcpBuyer.company": "The buyer's company",
  "AcpBuyer.loyalty": "Loyalty programme details",
  "AcpBuyer.tax_exemption": "Tax exemption details",
  "AcpItem.name": "The item's name, as the agent knows it",
  "AcpItem.unit_amount": "The unit price the agent saw, in minor units",
  "AcpFulfillmentDetails.name": "The recipient's full name",
  "AcpFulfillmentDetails.phone_number": "The recipient's phone number, E.164",
  "AcpFulfillmentDetails.email": "The recipient's email address",
  "AcpFulfillmentDetails.address": "The delivery address",
  "AcpAddress.name": "The name on the address",
  "AcpAddress.line_one": "Street and number",
  "AcpAddress.line_two": "Flat, suite or building",
  "AcpAddress.city": "City",
  "AcpAddress.state": "State, province or region code",
  "AcpAddress.postal_code": "Postal code",
  "AcpCapabilities.payment": "Payment capabilities",
  "AcpCapabilities.payment.handlers": "The payment handlers the agent supports",
  "AcpCapabilities.interventions": "The interventions (3-D Secure, redirects) the agent can handle",
  "AcpCapabilities.interventions.supported": "Interventions supported",
  "AcpCapabilities.interventions.required": "Interventions required",
  "AcpCapabilities.interventions.enforcement": "How interventions are enforced",
  "AcpCapabilities.interventions.display_context": "Where the agent displays an intervention",
  "AcpCapabilities.interventions.redirect_context": "Where the agent opens a redirect",
  "AcpCapabilities.interventions.max_redirects": "How many redirects the agent follows at most",
  "AcpCapabilities.interventions.max_interaction_depth": "How deep an interaction may go",
  "AcpCapabilities.extensions": "Protocol extensions the agent supports",
  "AcpSelectedFulfillmentOption.type": "The kind of delivery: shipping or digital",
  "AcpSelectedFulfillmentOption.option_id": "The option's id, from the session's fulfillment_options",
  "AcpSelectedFulfillmentOption.item_ids": "The items it is for"
}

/** Gives every property of `schema` (`where`: its `$defs` name) without a description the one in `fieldNotes`. */
const describe = (where: string, schema: Json, prefix = ""): void => {
  for (const [name, value] of Object.entries((schema.properties ?? {}) as Json)) {
    const property = value as Json
    const path = prefix === "" ? name : `${prefix}.${name}`
    if (typeof property.description !== "string") {
      const note = fieldNotes[`${where}.${path}`] ?? fieldNotes[path.replace(/^payload\./, "")]
      if (note !== undefined) property.description = note
    }
    const branches = (property.anyOf ?? []) as Array<Json>
    for (const shape of [property, property.items, ...branches, ...branches.map((b) => b.items)] as Array<Json>) {
      if (shape?.type === "object") describe(where, shape, path)
    }
  }
}

/** The JSON Schema of `schema`, bundled, with the ACP notes of `fieldNotes`. */
const jsonSchemaOf = (schema: Schema.Schema.Any): Json => bundledSchemaOf(schema, describe)

const sessionOutput = jsonSchemaOf(Schema.encodedSchema(AcpCheckoutSession))

export type AcpToolName =
  | "create_checkout_session"
  | "update_checkout_session"
  | "get_checkout_session"
  | "complete_checkout_session"
  | "cancel_checkout_session"

/** An ACP tool as McpTools lists it. */
export type AcpToolSpec = ProtocolToolSpec<AcpToolName>

const spec = (
  name: AcpToolName,
  title: string,
  toolClass: ToolClass,
  operation: AcpToolSpec["operation"],
  args: Schema.Schema.Any,
  summary: string
): AcpToolSpec => protocolToolSpec(name, title, toolClass, operation, jsonSchemaOf(args), sessionOutput, summary)

/** The binding's five tools, in its order. */
export const acpToolSpecs: ReadonlyArray<AcpToolSpec> = [
  spec(
    "create_checkout_session",
    "Create an ACP checkout session",
    "sensitive-write",
    { method: "POST", path: "/acp/checkout_sessions" },
    CreateArguments,
    "Agentic Commerce Protocol: create a checkout session for Ribbon variant ids (payload.line_items), priced by " +
      "quotes for the delivery country; once the recipient and address are in, it is requires_escalation with " +
      "continue_url, the page where the person pays"
  ),
  spec(
    "update_checkout_session",
    "Update an ACP checkout session",
    "write",
    { method: "POST", path: "/acp/checkout_sessions/{id}" },
    UpdateArguments,
    "Agentic Commerce Protocol: update a checkout session's items, buyer or fulfillment details (an absent field " +
      "stays, null clears); the session is priced again and its messages say what is still missing"
  ),
  spec(
    "get_checkout_session",
    "Read an ACP checkout session",
    "read",
    { method: "GET", path: "/acp/checkout_sessions/{id}" },
    GetArguments,
    "Agentic Commerce Protocol: a checkout session as it now is, with its order once paid"
  ),
  spec(
    "complete_checkout_session",
    "Complete an ACP checkout session",
    "sensitive-write",
    { method: "POST", path: "/acp/checkout_sessions/{id}/complete" },
    CompleteArguments,
    "Agentic Commerce Protocol: complete a checkout session; with a vault token from delegated payment in " +
      "payload.payment_data it pays the session, otherwise it succeeds once the person has paid at continue_url; " +
      "the result carries the order"
  ),
  spec(
    "cancel_checkout_session",
    "Cancel an ACP checkout session",
    "write",
    { method: "POST", path: "/acp/checkout_sessions/{id}/cancel" },
    CancelArguments,
    "Agentic Commerce Protocol: cancel a checkout session that has not been paid, optionally saying why"
  )
]

export const isAcpTool = (name: string): name is AcpToolName => acpToolSpecs.some((tool) => tool.name === name)

// ---------------------------------------------------------------------------------------------------------
// Running the tools.

/** The protocol's error object (the `acp` line of src/http/ErrorLines.ts) as the binding's JSON-RPC error. */
const errorOf = (body: unknown): McpError =>
  protocolError(ACP_ERROR_CODE, (body as { readonly message?: unknown } | null)?.message, body)

const domainError = (error: AnyDomainError) => errorOf(render("acp", error).body)

/** Arguments that do not decode: the protocol's `invalid`, a payload field named as in the REST body. */
const invalidArguments = (error: ParseResult.ParseError) => invalidArgumentsOf(error, "payload")

/** A short reading of a session for models that read text, with what to do next over MCP. */
const sessionText = (session: any): string => {
  const total = (session.totals ?? []).find((line: any) => line.type === "total")
  const lines = [
    `Checkout session ${session.id}: ${session.status}${total === undefined ? "" : `, total ${total.amount} (minor units of ${String(session.currency).toUpperCase()})`}.`,
    ...(session.messages ?? []).map((message: any) => `${message.type}: ${message.content ?? message.code ?? ""}`),
    ...(session.status === "requires_escalation" && typeof session.continue_url === "string"
      ? [
          `The person pays at ${session.continue_url}; once they have, complete_checkout_session succeeds with the order.`
        ]
      : []),
    ...(session.order === undefined
      ? []
      : [
          `Order ${session.order.id} (${session.order.status}): Ribbon orders ${(session.order.line_items ?? []).map((line: any) => line.id).join(", ")}.`
        ])
  ]
  return lines.join("\n")
}

const resultOf = (answer: Answer): CallToolResult | McpError => {
  if (answer.status >= 400) return errorOf(answer.body)
  const session = answer.body as Json
  // The binding's result is the session itself; MCP's is content and structured content: both are here.
  return { ...session, content: [{ type: "text", text: sessionText(session) }], structuredContent: session }
}

/**
 * The runner of the ACP tools: `run(name, bearer, args)` answers the tool's result, or the McpError to throw. The
 * caller has checked the token's scope.
 */
export const makeAcpTools = Effect.gen(function* () {
  const sessions = yield* AcpSessions
  const idempotency = yield* AcpIdempotency
  const present = yield* sessionPresenter
  // What the sessions' operations run in (their database), taken here as the `/acp` handlers take it.
  const context =
    yield* Effect.context<
      Effect.Effect.Context<ReturnType<(typeof sessions)["create" | "update" | "get" | "complete" | "cancel"]>>
    >()

  /** Runs `operation` once per `meta.idempotency_key` (on the REST endpoint's path), or once without a key. */
  const answer = <E, R>(
    bearer: BearerContext,
    meta: typeof Meta.Type,
    endpoint: string,
    body: unknown,
    status: number,
    operation: Effect.Effect<unknown, E, R>
  ) =>
    meta.idempotency_key === undefined
      ? protocolAnswer("acp", status, operation)
      : keyedAnswer(
          idempotency,
          { userId: bearer.user.id, endpoint, key: meta.idempotency_key, body },
          status,
          operation
        )

  const operationOf = (name: AcpToolName, bearer: BearerContext, args: unknown) => {
    const { user } = bearer
    const decode = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknownEither(schema, { errors: "all" })(args)
    const path = (id: string, rest = "") => `POST /acp/checkout_sessions/${encodeURIComponent(id)}${rest}`
    const run = <A extends { readonly meta: typeof Meta.Type }, I, R>(
      schema: Schema.Schema<A, I>,
      f: (decoded: A) => Effect.Effect<Answer, AnyDomainError, R>
    ) =>
      Either.match(decode(schema), {
        onLeft: (error) => Effect.fail<AnyDomainError>(invalidArguments(error)),
        onRight: (decoded) => Effect.zipRight(checkAcpVersion(decoded.meta.api_version), f(decoded))
      })
    switch (name) {
      case "create_checkout_session":
        return run(CreateArguments, ({ meta, payload }) =>
          answer(
            bearer,
            meta,
            "POST /acp/checkout_sessions",
            payload,
            201,
            Effect.map(sessions.create(user, payload, bearer.clientId), present)
          )
        )
      case "update_checkout_session":
        return run(UpdateArguments, ({ meta, id, payload }) =>
          answer(bearer, meta, path(id), payload, 200, Effect.map(sessions.update(user, id, payload), present))
        )
      case "get_checkout_session":
        return run(GetArguments, ({ id }) => protocolAnswer("acp", 200, Effect.map(sessions.get(user.id, id), present)))
      case "complete_checkout_session":
        return run(CompleteArguments, ({ meta, id, payload }) =>
          answer(
            bearer,
            meta,
            path(id, "/complete"),
            payload,
            200,
            Effect.map(sessions.complete(user, id, payload.buyer, payload.payment_data), present)
          )
        )
      case "cancel_checkout_session":
        return run(CancelArguments, ({ meta, id, payload }) =>
          answer(
            bearer,
            meta,
            path(id, "/cancel"),
            payload ?? {},
            200,
            Effect.map(sessions.cancel(user.id, id), present)
          )
        )
    }
  }

  const run = (name: AcpToolName, bearer: BearerContext, args: unknown) =>
    operationOf(name, bearer, args).pipe(
      Effect.map(resultOf),
      // What is left is a 5xx or an idempotency refusal: the protocol's error object all the same.
      Effect.catchAll((error) => Effect.succeed(domainError(error))),
      Effect.provide(context),
      Effect.withSpan("Mcp.acpTool", { attributes: { "mcp.tool": name } })
    )

  return { run } as const
})
