import { HttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import type { Checkout } from "../../../src/domain/checkout/Checkout.js"
import { conforms, details, newKey, VERSION } from "../../support/acp.js"
import { makeCheckoutRealPortServer, payWith } from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { mcpBuyer } from "../../support/mcp.js"

/**
 * The Agentic Commerce Protocol's MCP binding on `/mcp` (docs/agent-protocols.md, docs/mcp.md), with the official
 * MCP SDK client on a real port: the five checkout session tools beside Ribbon's own, a session made, addressed,
 * paid on the hosted page and completed through them, and bad arguments answered as the protocol's errors.
 */

const acpTools = {
  create_checkout_session: "sensitive-write",
  update_checkout_session: "write",
  get_checkout_session: "read",
  complete_checkout_session: "sensitive-write",
  cancel_checkout_session: "write"
} as const

/** A tool call's result: the session, as the binding's result and as MCP's structured content. */
const call = (client: Client, name: keyof typeof acpTools, args: Record<string, unknown>) =>
  Effect.promise(async () => (await client.callTool({ name, arguments: args })) as any)

/** A tool call the binding answers with a JSON-RPC error: that error. */
const refused = (client: Client, name: keyof typeof acpTools, args: Record<string, unknown>) =>
  Effect.promise(() =>
    client.callTool({ name, arguments: args }).then(
      (result) => {
        throw new Error(`${name} succeeded: ${JSON.stringify(result)}`)
      },
      (error: unknown) => error as McpError
    )
  )

const countOf = (table: "acp_checkout_sessions" | "quotes" | "acp_idempotency_keys") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`, ([row]) => row!.n)
  )
const writtenRows = Effect.all([countOf("acp_checkout_sessions"), countOf("quotes"), countOf("acp_idempotency_keys")])

describe("ACP's MCP binding at /mcp", () => {
  it.layer(makeCheckoutRealPortServer(), { timeout: 120_000 })((it) => {
    it.effect(
      "lists the five tools; create → update with the address → get (requires_escalation) → paid → complete",
      () =>
        Effect.gen(function* () {
          const { client, variantId, http } = yield* mcpBuyer
          const { tools } = yield* Effect.promise(() => client.listTools())
          for (const [name, toolClass] of Object.entries(acpTools)) {
            const tool = tools.find((each) => each.name === name)
            expect(tool, name).toBeDefined()
            expect(tool!._meta, name).toEqual({ "ribbon/scope": "orders:write", "ribbon/toolClass": toolClass })
            expect(tool!.annotations, name).toMatchObject({
              readOnlyHint: toolClass === "read",
              destructiveHint: toolClass === "sensitive-write"
            })
            expect(tool!.inputSchema.required, name).toEqual(
              name === "create_checkout_session"
                ? ["meta", "payload"]
                : name === "get_checkout_session" || name === "cancel_checkout_session"
                  ? ["meta", "id"]
                  : ["meta", "id", "payload"]
            )
          }
          // Ribbon's own tools are still there.
          expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["search", "createCheckout"]))

          const meta = { api_version: VERSION }
          const payload = { line_items: [{ id: variantId }], currency: "gbp", capabilities: {} }
          const key = newKey()
          const created = yield* call(client, "create_checkout_session", {
            meta: { ...meta, idempotency_key: key, user_agent: "test/1" },
            payload
          })
          expect(created.isError).toBeFalsy()
          const session = created.structuredContent
          conforms("CheckoutSession", session)
          expect(session).toMatchObject({ status: "not_ready_for_payment", protocol: { version: VERSION } })
          // The binding's result is the session itself, MCP's structured content beside it.
          expect(created.id).toBe(session.id)
          expect(created.status).toBe("not_ready_for_payment")
          // The same key and payload: the first answer, no second session.
          const sessions = yield* countOf("acp_checkout_sessions")
          const replayed = yield* call(client, "create_checkout_session", {
            meta: { ...meta, idempotency_key: key },
            payload
          })
          expect(replayed.structuredContent).toEqual(session)
          expect(yield* countOf("acp_checkout_sessions")).toBe(sessions)

          const updated = yield* call(client, "update_checkout_session", {
            meta,
            id: session.id,
            payload: { fulfillment_details: details }
          })
          expect(updated.structuredContent.status).toBe("requires_escalation")

          const read = yield* call(client, "get_checkout_session", { meta, id: session.id })
          conforms("CheckoutSession", read.structuredContent)
          const continueUrl = read.structuredContent.continue_url as string
          expect(read.structuredContent.status).toBe("requires_escalation")
          expect(continueUrl).toContain("/pay/")
          expect(read.content[0].text).toContain(continueUrl)

          // Before the person has paid, complete is the protocol's error, saying where they pay.
          const early = yield* refused(client, "complete_checkout_session", {
            meta,
            id: session.id,
            payload: { payment_data: {} }
          })
          expect(early).toBeInstanceOf(McpError)
          expect(early.code).toBe(-32000)
          expect(early.data).toMatchObject({ type: "invalid_request", code: "checkout_session_not_paid" })
          expect((early.data as any).message).toMatch(/continue_url/)

          const paid = yield* payWith({ paymentUrl: continueUrl } as Checkout).pipe(
            Effect.provideService(HttpClient.HttpClient, http)
          )
          expect(paid.status).toBe(200)
          yield* eventually(
            call(client, "get_checkout_session", { meta, id: session.id }),
            (result) => result.structuredContent.status === "completed",
            "completed"
          )
          const completed = yield* call(client, "complete_checkout_session", {
            meta: { ...meta, idempotency_key: newKey() },
            id: session.id,
            payload: { payment_data: {} }
          })
          conforms("CheckoutSessionWithOrder", completed.structuredContent)
          expect(completed.structuredContent.status).toBe("completed")
          const order = completed.structuredContent.order
          expect(order).toMatchObject({ checkout_session_id: session.id, status: "confirmed" })
          expect(order.line_items).toHaveLength(1)
          expect(order.line_items[0].id).toEqual(expect.any(String))
          expect(completed.content[0].text).toContain(order.line_items[0].id)

          // A completed session can no longer be cancelled.
          const late = yield* refused(client, "cancel_checkout_session", { meta, id: session.id })
          expect(late.data).toMatchObject({ code: "checkout_session_closed" })
          yield* Effect.promise(() => client.close())
        })
    )

    it.effect("a bad argument is the protocol's error with its param, and leaves nothing in the database", () =>
      Effect.gen(function* () {
        const { client, variantId } = yield* mcpBuyer
        const before = yield* writtenRows
        const meta = { api_version: VERSION, idempotency_key: newKey() }
        const noItems = yield* refused(client, "create_checkout_session", {
          meta,
          payload: { line_items: [], currency: "gbp", capabilities: {} }
        })
        expect(noItems.code).toBe(-32000)
        expect(noItems.data).toMatchObject({ type: "invalid_request", code: "invalid", param: "$.line_items" })
        const unknownItem = yield* refused(client, "create_checkout_session", {
          meta: { ...meta, idempotency_key: newKey() },
          payload: { line_items: [{ id: variantId }, { id: "no-such-variant" }], currency: "gbp", capabilities: {} }
        })
        expect(unknownItem.data).toMatchObject({ code: "invalid", param: "$.line_items[1].id" })
        const oldVersion = yield* refused(client, "get_checkout_session", {
          meta: { api_version: "2020-01-01" },
          id: "cs_missing"
        })
        expect(oldVersion.data).toMatchObject({ code: "unsupported_api_version", supported_versions: [VERSION] })
        const noMeta = yield* refused(client, "get_checkout_session", { id: "cs_missing" })
        expect(noMeta.data).toMatchObject({ code: "invalid", param: "$.meta" })
        const missing = yield* refused(client, "get_checkout_session", { meta, id: "cs_missing" })
        expect(missing.data).toMatchObject({ code: "checkout_session_not_found" })
        // No session and no quote; arguments that do not decode claim no key, while the unknown item's refusal
        // is kept under its key as its answer, as over REST.
        const [sessions, quotes, keys] = yield* writtenRows
        expect([sessions, quotes]).toEqual([before[0], before[1]])
        expect(keys).toBe(before[2] + 1)
        yield* Effect.promise(() => client.close())
      })
    )
  })
})
