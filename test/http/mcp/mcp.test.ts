import { describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { mcpTools } from "../../../src/http/mcp/McpTools.js"
import { BaseUrl, Browser, formFields, issueTestToken } from "../../support/auth.js"
import { londonAddress, makeCheckoutRealPortServer, recipient } from "../../support/checkout.js"
import { connectWithOAuth, connectWithToken } from "../../support/mcp.js"

/**
 * `/mcp` with the official MCP SDK client on a real port: the 401 that starts discovery, the OAuth flow the
 * SDK runs with a sign-up and consent in between, the tool list, a whole purchase (search to the waiting
 * tool seeing `confirmed`, paid on the hosted page), a token limited to `catalog:read`, and bad input.
 */

const withBaseUrl = <A>(f: (baseUrl: string) => Promise<A>) =>
  Effect.flatMap(BaseUrl, (baseUrl) => Effect.promise(() => f(baseUrl)))

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as {
    readonly isError?: boolean
    readonly content: ReadonlyArray<{ readonly type: string; readonly text: string }>
    readonly structuredContent?: any
  }

const textOf = (result: { readonly content: ReadonlyArray<{ readonly text: string }> }) =>
  result.content.map((item) => item.text).join("\n")

const initialize = (protocolVersion: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } }
  })

const jsonRpcHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }

/** The JSON-RPC messages of an SSE response body. */
const messagesOf = (text: string) =>
  text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice("data: ".length)))

describe("MCP server at /mcp", () => {
  it.layer(makeCheckoutRealPortServer(), { timeout: 120_000 })((it) => {
    it.effect("answers 401 with the resource metadata challenge without a valid token, 405 to GET and DELETE", () =>
      withBaseUrl(async (baseUrl) => {
        const challenge = `Bearer resource_metadata="${baseUrl}/.well-known/oauth-protected-resource"`
        for (const headers of [{}, { authorization: "Bearer not-a-token" }]) {
          const response = await fetch(`${baseUrl}/mcp`, {
            method: "POST",
            headers: { ...jsonRpcHeaders, ...headers },
            body: initialize("2025-06-18")
          })
          expect(response.status).toBe(401)
          expect(response.headers.get("www-authenticate")).toBe(challenge)
          expect(((await response.json()) as any).code).toBe("invalid_token")
        }
        const metadata = (await (await fetch(`${baseUrl}/.well-known/oauth-protected-resource`)).json()) as any
        expect(metadata.resource).toBe(baseUrl)
        const manifest = (await (await fetch(`${baseUrl}/.well-known/ribbon-agents.json`)).json()) as any
        expect(manifest.mcp).toEqual({ url: `${baseUrl}/mcp`, transport: "streamable-http" })
      }).pipe(
        Effect.zipRight(
          Effect.gen(function* () {
            const baseUrl = yield* BaseUrl
            const user = yield* issueTestToken({}, baseUrl)
            yield* Effect.promise(async () => {
              const authorization = `Bearer ${user.accessToken}`
              for (const method of ["GET", "DELETE"]) {
                const response = await fetch(`${baseUrl}/mcp`, {
                  method,
                  headers: { authorization, accept: "text/event-stream" }
                })
                expect(response.status, method).toBe(405)
                expect(response.headers.get("allow")).toBe("POST")
              }
              // The previous protocol revision is still accepted, and the current one offered.
              for (const version of ["2025-06-18", "2025-11-25"]) {
                const response = await fetch(`${baseUrl}/mcp`, {
                  method: "POST",
                  headers: { ...jsonRpcHeaders, authorization },
                  body: initialize(version)
                })
                expect(response.status).toBe(200)
                expect(response.headers.get("mcp-session-id")).toBeNull()
                const [message] = messagesOf(await response.text())
                expect(message.result.protocolVersion).toBe(version)
                expect(message.result.serverInfo.name).toBe("ribbon")
              }
              // Protocol misuse is a JSON-RPC error, not a tool result.
              const response = await fetch(`${baseUrl}/mcp`, {
                method: "POST",
                headers: { ...jsonRpcHeaders, authorization, "mcp-protocol-version": "2025-06-18" },
                body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "noSuchTool" } })
              })
              const [message] = messagesOf(await response.text())
              expect(message.error.code).toBe(-32602)
            })
          })
        )
      )
    )

    it.effect("OAuth through the SDK, the tool list, and a purchase from search to a confirmed checkout", () =>
      withBaseUrl(async (baseUrl) => {
        const { client, provider, refused, callback } = await connectWithOAuth(
          baseUrl,
          "profile catalog:read orders:read orders:write",
          { email: `mcp-${Date.now()}@example.com`, password: "a long enough password" }
        )
        expect(String(refused)).toMatch(/Unauthorized/)
        expect(callback.searchParams.get("iss")).toBe(baseUrl)
        // The SDK asks for offline_access as well, since the authorization server offers refresh tokens.
        expect(provider.saved?.scope?.split(" ")).toEqual(
          expect.arrayContaining(["profile", "catalog:read", "orders:read", "orders:write"])
        )

        const { tools } = await client.listTools()
        expect(tools.map((tool) => tool.name).sort()).toEqual(mcpTools.map((tool) => tool.name).sort())
        for (const tool of tools) {
          expect(tool.title, tool.name).toBeTruthy()
          expect(tool.annotations?.title, tool.name).toBe(tool.title)
          expect(tool.annotations?.openWorldHint, tool.name).toBe(false)
          expect(tool.inputSchema.type, tool.name).toBe("object")
        }
        const byName = new Map(tools.map((tool) => [tool.name, tool]))
        expect(byName.get("search")!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
        expect(Object.keys(byName.get("search")!.inputSchema.properties!)).toEqual(
          expect.arrayContaining(["q", "budget", "country", "limit", "cursor"])
        )
        expect(byName.get("search")!.outputSchema?.type).toBe("object")
        expect(byName.get("createQuote")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false })
        for (const name of ["createCheckout", "cancelOrder"]) {
          expect(byName.get(name)!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })
          expect(byName.get(name)!.description).toMatch(/confirm/)
          expect(byName.get(name)!.description).toMatch(/items, the total, the recipient and the address/)
        }
        expect(byName.get("createCheckout")!.inputSchema.required).toEqual(
          expect.arrayContaining(["items", "recipient", "shippingAddress"])
        )
        expect(byName.has("checkoutEvents")).toBe(false)

        // Search, then a product's variants, then their availability, until one ships to GB.
        const search = await call(client, "search", { q: "mug", country: "GB", limit: "20" })
        expect(search.isError).toBeFalsy()
        const products = search.structuredContent.products as Array<any>
        expect(products.length).toBeGreaterThan(0)
        const firstLine = textOf(search).split("\n")[0]!
        expect(firstLine).toContain(products[0].title)
        expect(firstLine).toContain(products[0].id)
        expect(firstLine).toContain(products[0].priceRange.min.display)
        let variantId: string | undefined
        for (const product of products) {
          const detail = await call(client, "product", { productId: product.id, country: "GB" })
          for (const variant of detail.structuredContent.variants as Array<any>) {
            if (!variant.shippingRequired) continue
            const availability = await call(client, "availability", { variantId: variant.id, countries: "GB" })
            if (availability.structuredContent.countries[0]?.available === true) variantId = variant.id
            if (variantId !== undefined) break
          }
          if (variantId !== undefined) break
        }
        expect(variantId).toBeDefined()
        const quote = await call(client, "createQuote", { variantId, countryCode: "GB" })
        expect(quote.isError).toBeFalsy()
        expect(textOf(quote)).toContain(quote.structuredContent.totalDisplay)
        const created = await call(client, "createCheckout", {
          items: [{ quoteId: quote.structuredContent.id, quantity: 2 }],
          recipient,
          shippingAddress: londonAddress
        })
        expect(created.isError).toBeFalsy()
        const checkout = created.structuredContent
        expect(checkout.status).toBe("pending_payment")
        expect(textOf(created)).toContain(checkout.paymentUrl)
        // The next step names the tool that waits, not the URLs an MCP client cannot poll or stream.
        expect(checkout.nextStep).toContain("waitForCheckout")
        expect(textOf(created)).not.toMatch(/statusUrl|eventsUrl/)

        // The agent waits while the person pays on the hosted page; the wait reports each step as progress.
        const progress: Array<string> = []
        let started: () => void = () => {}
        const waitingStarted = new Promise<void>((resolve) => {
          started = resolve
        })
        const waiting = client.callTool(
          { name: "waitForCheckout", arguments: { checkoutId: checkout.id, status: "pending_payment" } },
          undefined,
          {
            onprogress: (step) => {
              progress.push(step.message ?? "")
              started()
            }
          }
        )
        await waitingStarted
        expect(progress).toEqual(["Waiting: the checkout is pending payment"])
        const browser = new Browser()
        const page = await browser.request(checkout.paymentUrl)
        expect(page.status).toBe(200)
        const html = await page.text()
        expect(html).toContain(checkout.totalDisplay)
        const paid = await browser.request(checkout.paymentUrl.split("?")[0], {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            ...formFieldsOrToken(html, checkout.paymentUrl),
            number: "4242 4242 4242 4242",
            expiry: "12/34",
            cvc: "123",
            name: "Ada Lovelace"
          }).toString()
        })
        expect(paid.status).toBeLessThan(400)
        const settled = (await waiting) as any
        expect(settled.isError).toBeFalsy()
        expect(settled.structuredContent.status).toBe("confirmed")
        expect(settled.structuredContent.orderIds).toHaveLength(1)
        expect(settled.structuredContent.nextStep).toContain("getOrder")
        expect(settled.structuredContent.nextStep).not.toContain("/v1/")
        expect(progress).toEqual(expect.arrayContaining(["Checkout: paid", "Checkout: placing", "Checkout: confirmed"]))

        // Called again with what it last saw, it answers at once; the order is there to read.
        const again = await call(client, "waitForCheckout", { checkoutId: checkout.id, status: "pending_payment" })
        expect(again.structuredContent.status).toBe("confirmed")
        // Nothing changes after confirmed within the bound: the checkout as it is, and a note to call again.
        const unchanged = await call(client, "waitForCheckout", {
          checkoutId: checkout.id,
          status: "confirmed",
          timeoutSeconds: 1
        })
        expect(unchanged.isError).toBeFalsy()
        expect(unchanged.structuredContent.status).toBe("confirmed")
        expect(textOf(unchanged)).toContain("No change after 1 s")
        const orders = await call(client, "listOrders", {})
        expect(JSON.stringify(orders.structuredContent)).toContain(settled.structuredContent.orderIds[0])
        await client.close()
      })
    )

    it.effect("every tool argument has a plain description, and no schema carries Effect's refinement titles", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const user = yield* issueTestToken({}, baseUrl)
        yield* Effect.promise(async () => {
          const client = await connectWithToken(baseUrl, user.accessToken)
          const { tools } = await client.listTools()
          expect(tools.map((tool) => tool.name).sort()).toEqual(mcpTools.map((tool) => tool.name).sort())
          const problems: Array<string> = []
          /** Walks a schema: no generated title or description; with `described`, a description on every property. */
          const check = (where: string, schema: any, described: boolean) => {
            if (schema === null || typeof schema !== "object") return
            if (typeof schema.title === "string" && /^[a-z]+(\(.*\))?$/.test(schema.title)) {
              problems.push(`${where}: title ${schema.title}`)
            }
            if (
              typeof schema.description === "string" &&
              /^an? (string|number|integer|array)\b/.test(schema.description)
            ) {
              problems.push(`${where}: description "${schema.description}"`)
            }
            for (const [name, property] of Object.entries<any>(schema.properties ?? {})) {
              if (described && (typeof property.description !== "string" || property.description === "")) {
                problems.push(`${where}.${name}: no description`)
              }
              check(`${where}.${name}`, property, described)
            }
            for (const inner of [schema.items, ...(schema.anyOf ?? []), ...Object.values(schema.$defs ?? {})]) {
              check(where, inner, described)
            }
          }
          for (const tool of tools) {
            check(tool.name, tool.inputSchema, true)
            check(`${tool.name} (output)`, tool.outputSchema, false)
          }
          expect(problems).toEqual([])
          // A required argument is not described as having a default.
          const autocomplete = tools.find((tool) => tool.name === "autocompleteAddress")!.inputSchema as any
          expect(autocomplete.required).toContain("country")
          expect(autocomplete.properties.country.description).not.toMatch(/default/i)
          await client.close()
        })
      })
    )

    it.effect("a catalog:read token sees and may call only the read catalog tools", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const user = yield* issueTestToken({ scopes: ["catalog:read"] }, baseUrl)
        yield* Effect.promise(async () => {
          const client = await connectWithToken(baseUrl, user.accessToken)
          const { tools } = await client.listTools()
          const expected = mcpTools.filter((tool) => tool.scope === "catalog:read")
          expect(tools.map((tool) => tool.name).sort()).toEqual(expected.map((tool) => tool.name).sort())
          for (const tool of tools) expect(tool.annotations?.readOnlyHint, tool.name).toBe(true)
          const countries = await call(client, "countries", {})
          expect(countries.structuredContent.countries).toContain("GB")
          // A call outside them is answered in HTTP: 403 with the scope challenge (no OAuth provider here to
          // answer it, so the SDK reports the status).
          for (const [name, scope] of [
            ["createQuote", "catalog:read orders:write"],
            ["me", "profile catalog:read"],
            ["waitForCheckout", "catalog:read orders:read"]
          ] as const) {
            const refused = await call(client, name, { variantId: "x", checkoutId: "x" }).then(
              () => undefined,
              (error: unknown) => error
            )
            expect(refused, name).toBeInstanceOf(StreamableHTTPError)
            expect((refused as StreamableHTTPError).code, name).toBe(403)
            const raw = await fetch(`${baseUrl}/mcp`, {
              method: "POST",
              headers: { ...jsonRpcHeaders, authorization: `Bearer ${user.accessToken}` },
              body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: {} } })
            })
            expect(raw.status, name).toBe(403)
            expect(raw.headers.get("www-authenticate"), name).toContain(`error="insufficient_scope", scope="${scope}"`)
          }
          await client.close()
        })
      })
    )

    it.effect("bad input and business errors are tool errors with the HTTP API's code and message", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const user = yield* issueTestToken({}, baseUrl)
        yield* Effect.promise(async () => {
          const client = await connectWithToken(baseUrl, user.accessToken)
          const direct = await fetch(`${baseUrl}/v1/search?limit=abc`, {
            headers: { authorization: `Bearer ${user.accessToken}` }
          })
          const problem = (await direct.json()) as any
          expect(direct.status).toBe(400)
          const bad = await call(client, "search", { limit: "abc" })
          expect(bad.isError).toBe(true)
          expect(textOf(bad)).toContain(`Error 400 ${problem.code}: ${problem.detail}`)
          expect(bad.structuredContent).toBeUndefined()

          const emptyCart = await call(client, "createCheckout", {
            items: [],
            recipient,
            shippingAddress: londonAddress
          })
          expect(emptyCart.isError).toBe(true)
          expect(textOf(emptyCart)).toMatch(/Error 400 invalid_request: items/)

          const unknownArgument = await call(client, "countries", { colour: "red" })
          expect(unknownArgument.isError).toBe(true)
          expect(textOf(unknownArgument)).toContain("colour")

          const missing = await call(client, "getQuote", { quoteId: "0123456789abcdef01234567" })
          expect(missing.isError).toBe(true)
          expect(textOf(missing)).toMatch(/Error 404 quote_not_found/)

          const waitBad = await call(client, "waitForCheckout", { checkoutId: "x", timeoutSeconds: 90 })
          expect(waitBad.isError).toBe(true)
          expect(textOf(waitBad)).toMatch(/Error 400 invalid_request: timeoutSeconds/)

          await expect(client.callTool({ name: "noSuchTool", arguments: {} })).rejects.toThrow(/Unknown tool/)
          await client.close()
        })
      })
    )
  })
})

/** The hidden fields of the payment form (its token), or the token from the link. */
const formFieldsOrToken = (html: string, paymentUrl: string): Record<string, string> => {
  try {
    return formFields(html, "pay")
  } catch {
    return { t: new URL(paymentUrl).searchParams.get("t")! }
  }
}
