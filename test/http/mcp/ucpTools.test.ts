import { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { VERSION as ACP_VERSION, delegation } from "../../support/acp.js"
import { makeCheckoutRealPortServer } from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { mcpBuyer } from "../../support/mcp.js"
import {
  buyer,
  CHECKOUT,
  conforms,
  countOf,
  londonDestination,
  schemaAvailable,
  validatedCount
} from "../../support/ucp.js"

/**
 * The Universal Commerce Protocol's MCP binding on `/mcp` (docs/agent-protocols.md, docs/mcp.md), with the official
 * MCP SDK client on a real port: the five checkout tools beside the others, and a purchase through them, paid with a
 * token of Ribbon's payment handler; bad arguments are the protocol's errors.
 */

const ucpTools = {
  create_checkout: "sensitive-write",
  get_checkout: "read",
  update_checkout: "write",
  complete_checkout: "sensitive-write",
  cancel_checkout: "write"
} as const

const call = (client: Client, name: keyof typeof ucpTools, args: Record<string, unknown>) =>
  Effect.promise(async () => (await client.callTool({ name, arguments: args })) as any)

const refused = (client: Client, name: keyof typeof ucpTools, args: Record<string, unknown>) =>
  Effect.promise(() =>
    client.callTool({ name, arguments: args }).then(
      (result) => {
        throw new Error(`${name} succeeded: ${JSON.stringify(result)}`)
      },
      (error: unknown) => error as McpError
    )
  )

const agent = { profile: "https://platform.example/.well-known/ucp" }
let keys = 0
const newKey = () => `ucp-mcp-${Date.now()}-${++keys}`

describe("UCP's MCP binding at /mcp", () => {
  it.layer(makeCheckoutRealPortServer(), { timeout: 120_000 })((it) => {
    it.effect("lists the five tools; create → update → tokenized → ready_for_complete → complete → completed", () =>
      Effect.gen(function* () {
        const { client, variantId, http, accessToken } = yield* mcpBuyer
        const { tools } = yield* Effect.promise(() => client.listTools())
        for (const [name, toolClass] of Object.entries(ucpTools)) {
          const tool = tools.find((each) => each.name === name)
          expect(tool, name).toBeDefined()
          expect(tool!._meta, name).toEqual({ "ribbon/scope": "orders:write", "ribbon/toolClass": toolClass })
          expect(tool!.outputSchema, name).toBeDefined()
        }
        expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["search", "create_checkout_session"]))

        const lineItems = [{ item: { id: variantId }, quantity: 1 }]
        const key = newKey()
        const created = yield* call(client, "create_checkout", {
          meta: { "ucp-agent": agent, "idempotency-key": key },
          checkout: { line_items: lineItems }
        })
        expect(created.isError).toBeFalsy()
        const checkout = created.structuredContent
        conforms(CHECKOUT, checkout)
        expect(checkout.status).toBe("incomplete")
        // The same key and arguments: the first answer, no second checkout.
        const sessions = yield* countOf("acp_checkout_sessions")
        const replayed = yield* call(client, "create_checkout", {
          meta: { "ucp-agent": agent, "idempotency-key": key },
          checkout: { line_items: lineItems }
        })
        expect(replayed.structuredContent).toEqual(checkout)
        expect(yield* countOf("acp_checkout_sessions")).toBe(sessions)
        // Another body under it: the protocol's conflict.
        const conflict = yield* refused(client, "create_checkout", {
          meta: { "ucp-agent": agent, "idempotency-key": key },
          checkout: { line_items: [{ ...lineItems[0], quantity: 2 }] }
        })
        expect(conflict.code).toBe(-32000)
        expect(conflict.data).toMatchObject({ code: "idempotency_conflict" })

        const updated = yield* call(client, "update_checkout", {
          meta: { "ucp-agent": agent },
          id: checkout.id,
          checkout: {
            line_items: lineItems,
            buyer,
            fulfillment: { methods: [{ type: "shipping", destinations: [londonDestination] }] }
          }
        })
        conforms(CHECKOUT, updated.structuredContent)
        expect(updated.structuredContent.status).toBe("requires_escalation")
        expect(updated.content[0].text).toContain(updated.structuredContent.continue_url)
        const total = updated.structuredContent.totals.find((t: any) => t.type === "total").amount

        // The platform tokenizes the card with the handler (delegated payment, bound to this checkout).
        const tokenized = yield* http.execute(
          HttpClientRequest.post("/agentic_commerce/delegate_payment").pipe(
            HttpClientRequest.bearerToken(accessToken),
            HttpClientRequest.setHeaders({ "api-version": ACP_VERSION, "idempotency-key": newKey() }),
            HttpClientRequest.bodyUnsafeJson(delegation({ max_amount: total, checkout_session_id: checkout.id }))
          )
        )
        expect(tokenized.status).toBe(201)
        const token = ((yield* tokenized.json) as { id: string }).id
        const ready = yield* call(client, "get_checkout", { meta: { "ucp-agent": agent }, id: checkout.id })
        expect(ready.structuredContent.status).toBe("ready_for_complete")

        // complete needs its idempotency key.
        const unkeyed = yield* refused(client, "complete_checkout", {
          meta: { "ucp-agent": agent },
          id: checkout.id,
          checkout: { payment: {} }
        })
        expect(unkeyed.data).toMatchObject({ code: "invalid", path: "$.meta.idempotency-key" })

        const completed = yield* call(client, "complete_checkout", {
          meta: { "ucp-agent": agent, "idempotency-key": newKey() },
          id: checkout.id,
          checkout: {
            payment: {
              instruments: [
                {
                  id: "instr_1",
                  handler_id: "ribbon_card",
                  type: "card",
                  selected: true,
                  credential: { type: "token", token }
                }
              ]
            }
          }
        })
        conforms(CHECKOUT, completed.structuredContent)
        expect(["complete_in_progress", "completed"]).toContain(completed.structuredContent.status)
        const done = yield* eventually(
          call(client, "get_checkout", { meta: { "ucp-agent": agent }, id: checkout.id }),
          (result) => result.structuredContent.status === "completed",
          "completed"
        )
        conforms(CHECKOUT, done.structuredContent)
        expect(done.structuredContent.order).toEqual({ id: expect.any(String), permalink_url: expect.any(String) })
        expect(done.content[0].text).toContain(done.structuredContent.order.id)

        // A completed checkout can no longer be cancelled.
        const late = yield* refused(client, "cancel_checkout", {
          meta: { "ucp-agent": agent, "idempotency-key": newKey() },
          id: checkout.id
        })
        expect(late.data).toMatchObject({ code: "checkout_session_closed" })
        yield* Effect.promise(() => client.close())
      })
    )

    it.effect("a call without the platform's profile is a discovery error, and leaves nothing", () =>
      Effect.gen(function* () {
        const { client, variantId } = yield* mcpBuyer
        const before = yield* Effect.all([countOf("acp_checkout_sessions"), countOf("quotes")])
        const noProfile = yield* refused(client, "create_checkout", {
          meta: { "ucp-agent": { profile: "nope" } },
          checkout: { line_items: [{ item: { id: variantId }, quantity: 1 }] }
        })
        expect(noProfile).toBeInstanceOf(McpError)
        expect(noProfile.code).toBe(-32001)
        expect(noProfile.data).toMatchObject({ code: "invalid_profile_url" })
        const noItems = yield* refused(client, "create_checkout", {
          meta: { "ucp-agent": agent },
          checkout: { line_items: [] }
        })
        expect(noItems.code).toBe(-32000)
        expect(noItems.data).toMatchObject({ code: "invalid", path: "$.line_items" })
        const missing = yield* refused(client, "get_checkout", { meta: { "ucp-agent": agent }, id: "nope" })
        expect(missing.data).toMatchObject({ code: "checkout_session_not_found" })
        expect(yield* Effect.all([countOf("acp_checkout_sessions"), countOf("quotes")])).toEqual(before)
        yield* Effect.promise(() => client.close())
      })
    )

    it.effect.skipIf(!schemaAvailable)("validated the checkouts above against the protocol's schemas", () =>
      Effect.sync(() => expect(validatedCount()).toBeGreaterThanOrEqual(4))
    )
  })
})
