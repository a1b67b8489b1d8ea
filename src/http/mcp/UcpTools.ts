import type { CallToolResult, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either, type ParseResult, Schema } from "effect"
import { UcpAgentMissing, UcpIdempotencyConflict } from "../../domain/checkout/Errors.js"
import { UCP_VERSION, UcpCheckout, UcpCheckoutRequest, UcpCompleteRequest } from "../../domain/checkout/Ucp.js"
import type { BearerContext, ToolClass } from "../../domain/identity/OAuth.js"
import type { AnyDomainError } from "../../domain/platform/Errors.js"
import { AcpIdempotency, type Answer } from "../../services/checkout/AcpIdempotency.js"
import { render } from "../ErrorLines.js"
import { keyedAnswer, protocolAnswer } from "../ProtocolAnswers.js"
import { makeUcpCheckouts } from "../ucp/operations.js"
import {
  bundledSchemaOf,
  invalidArgumentsOf,
  type ProtocolToolSpec,
  protocolError,
  protocolToolSpec
} from "./ProtocolTools.js"

/**
 * The Universal Commerce Protocol's MCP binding (release 2026-04-08, its `checkout-mcp.md`; docs/agent-protocols.md,
 * docs/decisions/0086-ucp-idempotency-payment-and-mcp.md): the checkout capability's five tools on `/mcp`, beside
 * the agent API's and ACP's. Each takes the binding's `{ meta, id, checkout }` and runs the same operation as the
 * REST binding (src/http/ucp/operations.ts), under the protocol's idempotency when `meta["idempotency-key"]` is given
 * (required on complete and cancel), in the store and under the endpoint the REST binding uses. A result is UCP's
 * checkout as structured content; a protocol error is the JSON-RPC error -32000 (-32001 for a missing profile) with
 * the protocol's `{code, content}` as `data`.
 */

type Json = Record<string, unknown>

/** The JSON-RPC codes of the binding's protocol errors: discovery (the platform's profile) and every other. */
export const UCP_DISCOVERY_ERROR_CODE = -32001
export const UCP_ERROR_CODE = -32000

const Key = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)).annotations({
  description:
    "The Idempotency-Key: a retry with the same key and arguments gets the first answer (kept 24 hours); UUID v4 recommended"
})

/** `meta`: `ucp-agent` (the platform's profile) on every call; fields the binding may add are accepted and ignored. */
const meta = (key: "optional" | "required") =>
  Schema.Struct(
    {
      "ucp-agent": Schema.Struct({
        profile: Schema.String.pipe(Schema.maxLength(2048)).annotations({
          description: "The platform's profile URL (the UCP-Agent header's profile)"
        })
      }).annotations({ description: "The platform making the call" }),
      "idempotency-key": key === "optional" ? Schema.optional(Key) : Key
    },
    Schema.Record({ key: Schema.String, value: Schema.Unknown })
  ).annotations({
    description:
      key === "optional"
        ? "Request metadata: ucp-agent is required, idempotency-key recommended"
        : "Request metadata: ucp-agent and idempotency-key are required"
  })
const Meta = meta("optional")
const KeyedMeta = meta("required")

const CheckoutId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)).annotations({
  description: "The checkout's id"
})

const CreateArguments = Schema.Struct({
  meta: Meta,
  checkout: UcpCheckoutRequest.annotations({ description: "The checkout: line items, buyer and fulfillment" })
})
const GetArguments = Schema.Struct({ meta: Meta, id: CheckoutId })
const UpdateArguments = Schema.Struct({
  meta: Meta,
  id: CheckoutId,
  checkout: UcpCheckoutRequest.annotations({ description: "The whole checkout: what it leaves out is cleared" })
})
const CompleteArguments = Schema.Struct({
  meta: KeyedMeta,
  id: CheckoutId,
  checkout: UcpCompleteRequest.annotations({ description: "The payment: an instrument of the ribbon_card handler" })
})
const CancelArguments = Schema.Struct({ meta: KeyedMeta, id: CheckoutId })

const checkoutOutput = bundledSchemaOf(Schema.encodedSchema(UcpCheckout))

export type UcpToolName =
  | "create_checkout"
  | "get_checkout"
  | "update_checkout"
  | "complete_checkout"
  | "cancel_checkout"

export type UcpToolSpec = ProtocolToolSpec<UcpToolName>

const spec = (
  name: UcpToolName,
  title: string,
  toolClass: ToolClass,
  operation: UcpToolSpec["operation"],
  args: Schema.Schema.Any,
  summary: string
): UcpToolSpec => protocolToolSpec(name, title, toolClass, operation, bundledSchemaOf(args), checkoutOutput, summary)

/** The binding's five tools, in its order. */
export const ucpToolSpecs: ReadonlyArray<UcpToolSpec> = [
  spec(
    "create_checkout",
    "Create a UCP checkout",
    "sensitive-write",
    { method: "POST", path: "/ucp/checkout-sessions" },
    CreateArguments,
    `Universal Commerce Protocol ${UCP_VERSION}: create a checkout for Ribbon variant ids (checkout.line_items), ` +
      "priced by quotes for the delivery country (checkout.fulfillment); its messages say what is missing"
  ),
  spec(
    "get_checkout",
    "Read a UCP checkout",
    "read",
    { method: "GET", path: "/ucp/checkout-sessions/{id}" },
    GetArguments,
    "Universal Commerce Protocol: a checkout as it now is, with its order once paid"
  ),
  spec(
    "update_checkout",
    "Update a UCP checkout",
    "write",
    { method: "PUT", path: "/ucp/checkout-sessions/{id}" },
    UpdateArguments,
    "Universal Commerce Protocol: replace a checkout's items, buyer and fulfillment (what is left out is cleared)"
  ),
  spec(
    "complete_checkout",
    "Complete a UCP checkout",
    "sensitive-write",
    { method: "POST", path: "/ucp/checkout-sessions/{id}/complete" },
    CompleteArguments,
    "Universal Commerce Protocol: complete a checkout; a token of the ribbon_card handler in checkout.payment pays " +
      "it, otherwise it succeeds once the person has paid at continue_url; the result carries the order"
  ),
  spec(
    "cancel_checkout",
    "Cancel a UCP checkout",
    "write",
    { method: "POST", path: "/ucp/checkout-sessions/{id}/cancel" },
    CancelArguments,
    "Universal Commerce Protocol: cancel a checkout that has not been paid"
  )
]

export const isUcpTool = (name: string): name is UcpToolName => ucpToolSpecs.some((tool) => tool.name === name)

/** The protocol's error object (the `ucp` line of src/http/ErrorLines.ts) as the binding's JSON-RPC error. */
const errorOf = (body: unknown): McpError => {
  const { code, content } = (body ?? {}) as { readonly code?: unknown; readonly content?: unknown }
  return protocolError(code === "invalid_profile_url" ? UCP_DISCOVERY_ERROR_CODE : UCP_ERROR_CODE, content, body)
}

const invalidArguments = (error: ParseResult.ParseError) => invalidArgumentsOf(error, "checkout")

/** The platform's profile, as the REST binding's `UCP-Agent` asks: an http(s) URL. */
const checkProfile = (profile: string) =>
  /^https?:\/\//.test(profile) && URL.canParse(profile)
    ? Effect.void
    : Effect.fail(
        new UcpAgentMissing({
          message: 'meta["ucp-agent"].profile must be the platform\'s profile URL: "https://platform.example/profile".'
        })
      )

/** A short reading of a checkout for models that read text, with what to do next over MCP. */
const checkoutText = (checkout: any): string => {
  const total = (checkout.totals ?? []).find((line: any) => line.type === "total")
  return [
    `Checkout ${checkout.id}: ${checkout.status}${total === undefined ? "" : `, total ${total.amount} (minor units of ${checkout.currency})`}.`,
    ...(checkout.messages ?? []).map((message: any) => `${message.type}: ${message.content ?? message.code ?? ""}`),
    ...(checkout.status === "requires_escalation" && typeof checkout.continue_url === "string"
      ? [`The person pays at ${checkout.continue_url}; once they have, complete_checkout succeeds with the order.`]
      : []),
    ...(checkout.status === "ready_for_complete"
      ? ["A token of the ribbon_card handler would pay it: call complete_checkout with it."]
      : []),
    ...(checkout.order === undefined ? [] : [`Order ${checkout.order.id}: ${checkout.order.permalink_url}`])
  ].join("\n")
}

const resultOf = (answer: Answer): CallToolResult | McpError => {
  if (answer.status >= 400) return errorOf(answer.body)
  const checkout = answer.body as Json
  return { content: [{ type: "text", text: checkoutText(checkout) }], structuredContent: checkout }
}

/**
 * The runner of the UCP tools: `run(name, bearer, args)` answers the tool's result, or the McpError to throw. The
 * caller has checked the token's scope.
 */
export const makeUcpTools = Effect.gen(function* () {
  const checkouts = yield* makeUcpCheckouts
  const idempotency = yield* AcpIdempotency
  // What the operations run in (their database), taken here as the `/ucp` handlers take it.
  const context =
    yield* Effect.context<
      Effect.Effect.Context<ReturnType<(typeof checkouts)["create" | "update" | "get" | "complete" | "cancel"]>>
    >()

  /** Runs `operation` once per `meta["idempotency-key"]` (on the REST endpoint), or once without a key. */
  const answer = <E, R>(
    bearer: BearerContext,
    key: string | undefined,
    endpoint: string,
    body: unknown,
    status: number,
    operation: Effect.Effect<unknown, E, R>
  ) =>
    key === undefined
      ? protocolAnswer("ucp", status, operation)
      : keyedAnswer(idempotency, { userId: bearer.user.id, endpoint, key, body }, status, operation, "ucp")

  const operationOf = (name: UcpToolName, bearer: BearerContext, args: unknown) => {
    const { user } = bearer
    const path = (method: string, id: string, rest = "") =>
      `${method} /ucp/checkout-sessions/${encodeURIComponent(id)}${rest}`
    const run = <A extends { readonly meta: typeof Meta.Type }, I, R>(
      schema: Schema.Schema<A, I>,
      f: (decoded: A) => Effect.Effect<Answer, AnyDomainError, R>
    ) =>
      Either.match(Schema.decodeUnknownEither(schema, { errors: "all" })(args), {
        onLeft: (error) => Effect.fail<AnyDomainError>(invalidArguments(error)),
        onRight: (decoded) => Effect.zipRight(checkProfile(decoded.meta["ucp-agent"].profile), f(decoded))
      })
    switch (name) {
      case "create_checkout":
        return run(CreateArguments, ({ meta, checkout }) =>
          answer(
            bearer,
            meta["idempotency-key"],
            "POST /ucp/checkout-sessions",
            checkout,
            201,
            checkouts.create(user, checkout, meta["ucp-agent"].profile)
          )
        )
      case "get_checkout":
        return run(GetArguments, ({ id }) => protocolAnswer("ucp", 200, checkouts.get(user, id)))
      case "update_checkout":
        return run(UpdateArguments, ({ meta, id, checkout }) =>
          answer(bearer, meta["idempotency-key"], path("PUT", id), checkout, 200, checkouts.update(user, id, checkout))
        )
      case "complete_checkout":
        return run(CompleteArguments, ({ meta, id, checkout }) =>
          answer(
            bearer,
            meta["idempotency-key"],
            path("POST", id, "/complete"),
            checkout,
            200,
            checkouts.complete(user, id, checkout.payment)
          )
        )
      case "cancel_checkout":
        return run(CancelArguments, ({ meta, id }) =>
          answer(bearer, meta["idempotency-key"], path("POST", id, "/cancel"), {}, 200, checkouts.cancel(user, id))
        )
    }
  }

  const run = (name: UcpToolName, bearer: BearerContext, args: unknown) =>
    operationOf(name, bearer, args).pipe(
      Effect.map(resultOf),
      // What is left is a 5xx or an idempotency refusal (another body is UCP's 409): the protocol's error object.
      Effect.catchAll((error) =>
        Effect.succeed(
          errorOf(
            render(
              "ucp",
              error._tag === "IdempotencyKeyReused" ? new UcpIdempotencyConflict({ message: error.message }) : error
            ).body
          )
        )
      ),
      Effect.provide(context),
      Effect.withSpan("Mcp.ucpTool", { attributes: { "mcp.tool": name } })
    )

  return { run } as const
})
