import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { get, RibbonTestServer, testPublicUrl } from "../../support/http.js"

/**
 * The connector manifest is derived from the HttpApi definition; this table is the spec's ("Endpoints":
 * tool class and scope per operation). Every `/v1` route must appear in the manifest with the spec's class
 * and scope, and nothing else may.
 */
const spec: Record<string, readonly [toolClass: string, scope: string]> = {
  "GET /v1/search": ["read", "catalog:read"],
  "GET /v1/products/{productId}": ["read", "catalog:read"],
  "GET /v1/variants/{variantId}": ["read", "catalog:read"],
  "GET /v1/variants/{variantId}/availability": ["read", "catalog:read"],
  "GET /v1/collections": ["read", "catalog:read"],
  "GET /v1/collections/{collectionId}": ["read", "catalog:read"],
  "GET /v1/tags": ["read", "catalog:read"],
  "GET /v1/countries": ["read", "catalog:read"],
  "GET /v1/addresses/autocomplete": ["read", "catalog:read"],
  "POST /v1/addresses/validate": ["read", "catalog:read"],
  "GET /v1/me": ["read", "profile"],
  "PATCH /v1/me": ["write", "profile"],
  "POST /v1/me/addresses": ["write", "profile"],
  "DELETE /v1/me/addresses/{addressId}": ["write", "profile"],
  "POST /v1/quotes": ["write", "orders:write"],
  "GET /v1/quotes/{quoteId}": ["read", "orders:read"],
  "POST /v1/checkouts": ["sensitive-write", "orders:write"],
  // Not in the spec's table: docs/decisions/0027-placement-and-orders.md (status, events and orders) and
  // docs/checkout.md.
  "GET /v1/checkouts/{checkoutId}": ["read", "orders:read"],
  "GET /v1/checkouts/{checkoutId}/events": ["read", "orders:read"],
  "POST /v1/checkouts/{checkoutId}/cancel": ["write", "orders:write"],
  "GET /v1/orders": ["read", "orders:read"],
  "GET /v1/orders/{orderId}": ["read", "orders:read"],
  "POST /v1/orders/{orderId}/cancel": ["sensitive-write", "orders:write"],
  // Spending allowances (docs/allowances.md).
  "GET /v1/allowances": ["read", "payments:allowance"],
  "DELETE /v1/allowances/{allowanceId}": ["write", "payments:allowance"]
}

describe("connector manifest", () => {
  it.layer(RibbonTestServer)((it) => {
    it.effect("lists every /v1 operation with the spec's tool class and scope, and nothing else", () =>
      Effect.gen(function* () {
        const { body: manifest, status } = yield* get("/.well-known/ribbon-agents.json")
        expect(status).toBe(200)
        const { body: openapi } = yield* get("/openapi.json")
        const routes = Object.entries(openapi.paths as Record<string, Record<string, unknown>>)
          .filter(([path]) => path.startsWith("/v1/"))
          .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
        expect(routes.length).toBeGreaterThanOrEqual(14)
        const operations = new Map<string, any>(
          manifest.operations.map((op: any) => [`${op.method} ${op.path}`, op] as const)
        )
        expect([...operations.keys()].sort()).toEqual([...routes].sort())
        for (const route of routes) {
          const op = operations.get(route)
          expect(spec[route], `${route} is not in the spec table`).toBeDefined()
          expect([op.toolClass, op.scope], route).toEqual(spec[route])
          expect(op.description.length, route).toBeGreaterThan(10)
          expect(op.inputSchema.type).toBe("object")
        }
        const names = manifest.operations.map((op: any) => op.name)
        expect(new Set(names).size).toBe(names.length)
      })
    )

    it.effect("describes the service, its OAuth documents, scopes, tool classes and example prompts", () =>
      Effect.gen(function* () {
        const { body } = yield* get("/.well-known/ribbon-agents.json")
        expect(body).toMatchObject({
          name: "ribbon",
          apiBaseUrl: `${testPublicUrl}/v1`,
          oauth: {
            authorizationServerMetadata: `${testPublicUrl}/.well-known/oauth-authorization-server`,
            protectedResourceMetadata: `${testPublicUrl}/.well-known/oauth-protected-resource`,
            jwksUri: `${testPublicUrl}/.well-known/jwks.json`
          },
          mcp: { url: `${testPublicUrl}/mcp`, transport: "streamable-http" }
        })
        expect(body.description.length).toBeGreaterThan(40)
        expect(body.scopes.map((s: any) => s.name)).toEqual([
          "profile",
          "catalog:read",
          "orders:read",
          "orders:write",
          "payments:allowance",
          "offline_access"
        ])
        for (const scope of body.scopes) expect(scope.description.length).toBeGreaterThan(5)
        expect(Object.keys(body.toolClasses)).toEqual(["read", "write", "sensitive-write"])
        expect(body.examplePrompts.length).toBeGreaterThanOrEqual(3)
      })
    )

    it.effect("gives each operation the JSON Schema of its inputs (path, query and body together)", () =>
      Effect.gen(function* () {
        const { body } = yield* get("/.well-known/ribbon-agents.json")
        const byName = new Map<string, any>(body.operations.map((op: any) => [op.name, op] as const))
        const search = byName.get("search")
        expect(Object.keys(search.inputSchema.properties)).toEqual(
          expect.arrayContaining(["q", "budget", "country", "limit", "cursor"])
        )
        expect(search.inputSchema.required).toEqual([])
        const product = byName.get("product")
        expect(product.inputSchema.required).toEqual(["productId"])
        const addAddress = byName.get("addAddress")
        expect(addAddress.inputSchema.required).toEqual(
          expect.arrayContaining(["firstName", "lastName", "countryCode"])
        )
        expect(addAddress.inputSchema.properties.label).toMatchObject({ type: "string", maxLength: 40 })
      })
    )
  })
})
