import { request as httpRequest } from "node:http"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { OriginPolicy } from "../../../src/http/BrowserOrigins.js"
import { BaseUrl, issueTestToken, realPortServerOn } from "../../support/auth.js"
import { TestDatabase } from "../../support/database.js"

/**
 * Browser clients (docs/mcp.md, "Browser clients"): CORS on `/mcp`, the OAuth endpoints clients call and
 * `/.well-known/*` for the allowed origins only, never on the HTML pages; and `/mcp`'s guard against DNS
 * rebinding, which refuses another site's `Origin` or another name's `Host` with a 403 before any tool runs.
 */

const inspector = "http://inspector.example"
const evil = "http://evil.example.com"

interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly body: any
}

/** One request with exactly these headers (`fetch` would not send another `Host`). */
const send = (
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string
): Effect.Effect<Answer> =>
  Effect.promise(
    () =>
      new Promise<Answer>((resolve, reject) => {
        const url = new URL(path, baseUrl)
        const sent = httpRequest(url, { method, headers }, (response) => {
          let text = ""
          response.setEncoding("utf8")
          response.on("data", (chunk: string) => {
            text += chunk
          })
          response.on("end", () => {
            let parsed: unknown = text
            try {
              parsed = JSON.parse(text)
            } catch {}
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: parsed })
          })
        })
        sent.on("error", reject)
        sent.end(body)
      })
  )

const jsonRpc = { "content-type": "application/json", accept: "application/json, text/event-stream" }

const toolCall = (name: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } })

const preflight = (baseUrl: string, path: string, origin: string, method = "POST") =>
  send(baseUrl, "OPTIONS", path, {
    origin,
    "access-control-request-method": method,
    "access-control-request-headers": "authorization, content-type, mcp-protocol-version"
  })

const displayNameOf = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ displayName: string | null }>`SELECT display_name FROM users WHERE id = ${userId}`,
      (rows) => rows[0]?.displayName ?? null
    )
  ).pipe(Effect.orDie)

describe("browser clients: CORS and the origin checks of /mcp", () => {
  it.layer(realPortServerOn(TestDatabase, undefined, { allowedOrigins: [inspector] }), { timeout: 60_000 })((it) => {
    it.effect("/mcp refuses another site's Origin and another Host with a 403, and runs no tool", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const user = yield* issueTestToken({ scopes: ["profile"] }, baseUrl)
        const authorization = `Bearer ${user.accessToken}`
        const port = new URL(baseUrl).port
        const rename = toolCall("updateMe", { displayName: "Mallory" })
        const before = yield* displayNameOf(user.userId)

        for (const headers of [{ origin: evil }, { origin: "null" }, { host: `evil.example.com:${port}` }]) {
          const refused = yield* send(baseUrl, "POST", "/mcp", { ...jsonRpc, authorization, ...headers }, rename)
          expect(refused.status, JSON.stringify(headers)).toBe(403)
          expect(refused.body.code).toBe("forbidden")
          expect(refused.body.detail).toMatch(/evil\.example\.com|null/)
          expect(refused.headers["access-control-allow-origin"]).toBeUndefined()
        }
        // Before the token: a foreign page learns nothing of it either.
        const anonymous = yield* send(baseUrl, "POST", "/mcp", { ...jsonRpc, origin: evil }, rename)
        expect(anonymous.status).toBe(403)
        expect(anonymous.headers["www-authenticate"]).toBeUndefined()
        expect(yield* displayNameOf(user.userId)).toBe(before)

        // The server's own origin and an allowed one pass, and so does a client that sends no Origin.
        for (const origin of [baseUrl, inspector, undefined]) {
          const headers = origin === undefined ? {} : { origin }
          const answered = yield* send(baseUrl, "POST", "/mcp", { ...jsonRpc, authorization, ...headers }, rename)
          expect(answered.status, String(origin)).toBe(200)
        }
        expect(yield* displayNameOf(user.userId)).toBe("Mallory")
      })
    )

    it.effect("the SDK client works from an allowed origin, and fails from another", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const user = yield* issueTestToken({ scopes: ["catalog:read"] }, baseUrl)
        const connect = (origin: string) =>
          Effect.promise(async () => {
            const client = new Client({ name: "browser-like", version: "1.0.0" })
            const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
              requestInit: { headers: { authorization: `Bearer ${user.accessToken}`, origin } }
            })
            return client.connect(transport).then(
              async () => {
                const { tools } = await client.listTools()
                await client.close()
                return tools.length
              },
              (error: unknown) => String(error)
            )
          })
        expect(yield* connect(inspector)).toBeGreaterThan(0)
        expect(yield* connect(evil)).toMatch(/403/)
      })
    )

    it.effect("an allowed origin gets CORS on /mcp, the OAuth endpoints and /.well-known, errors included", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        for (const [path, method] of [
          ["/mcp", "POST"],
          ["/oauth/register", "POST"],
          ["/oauth/token", "POST"],
          ["/oauth/revoke", "POST"],
          ["/.well-known/oauth-protected-resource", "GET"],
          ["/.well-known/jwks.json", "GET"]
        ] as const) {
          const answer = yield* preflight(baseUrl, path, inspector, method)
          expect(answer.status, path).toBe(204)
          expect(answer.headers["access-control-allow-origin"], path).toBe(inspector)
          expect(answer.headers["access-control-allow-methods"], path).toContain(method)
          expect(String(answer.headers["access-control-allow-headers"]).toLowerCase(), path).toContain("authorization")
          expect(answer.headers["access-control-allow-credentials"], path).toBeUndefined()
        }

        // The 401 that starts discovery: its challenge is readable by the page.
        const challenge = yield* send(baseUrl, "POST", "/mcp", { ...jsonRpc, origin: inspector }, toolCall("me", {}))
        expect(challenge.status).toBe(401)
        expect(challenge.headers["access-control-allow-origin"]).toBe(inspector)
        expect(challenge.headers["access-control-expose-headers"]).toContain("WWW-Authenticate")
        expect(challenge.headers["access-control-expose-headers"]).toContain("Mcp-Session-Id")
        expect(challenge.headers.vary).toContain("Origin")

        const metadata = yield* send(baseUrl, "GET", "/.well-known/oauth-authorization-server", { origin: inspector })
        expect(metadata.status).toBe(200)
        expect(metadata.headers["access-control-allow-origin"]).toBe(inspector)
        const jwks = yield* send(baseUrl, "GET", "/.well-known/jwks.json", { origin: inspector })
        expect(jwks.headers["access-control-allow-origin"]).toBe(inspector)

        const registered = yield* send(
          baseUrl,
          "POST",
          "/oauth/register",
          { "content-type": "application/json", origin: inspector },
          JSON.stringify({
            client_name: "Inspector",
            redirect_uris: ["http://127.0.0.1:6274/oauth/callback"],
            token_endpoint_auth_method: "none"
          })
        )
        expect(registered.status).toBe(201)
        expect(registered.headers["access-control-allow-origin"]).toBe(inspector)
        // An OAuth error is readable too.
        const badGrant = yield* send(
          baseUrl,
          "POST",
          "/oauth/token",
          { "content-type": "application/x-www-form-urlencoded", origin: inspector },
          "grant_type=password"
        )
        expect(badGrant.status).toBeGreaterThanOrEqual(400)
        expect(badGrant.headers["access-control-allow-origin"]).toBe(inspector)
      })
    )

    it.effect("another origin gets no CORS and its preflight a 403; the HTML pages never send CORS", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const sql = yield* SqlClient.SqlClient
        const clients = () =>
          Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM oauth_clients`, (rows) => rows[0]!.n)
        const before = yield* clients()

        const refused = yield* preflight(baseUrl, "/oauth/register", evil)
        expect(refused.status).toBe(403)
        expect(refused.body.error).toBe("access_denied")
        expect(refused.body.error_description).toContain(evil)
        expect(refused.headers["access-control-allow-origin"]).toBeUndefined()
        const mcpRefused = yield* preflight(baseUrl, "/mcp", evil)
        expect(mcpRefused.status).toBe(403)
        expect(mcpRefused.body.code).toBe("forbidden")

        // A simple request still reaches a public endpoint, but the page cannot read the answer.
        const metadata = yield* send(baseUrl, "GET", "/.well-known/oauth-protected-resource", { origin: evil })
        expect(metadata.status).toBe(200)
        expect(metadata.headers["access-control-allow-origin"]).toBeUndefined()
        expect(metadata.headers.vary).toContain("Origin")

        // The sign-in and consent pages, and the API outside the list, get no CORS even for an allowed origin.
        for (const path of ["/oauth/authorize", "/v1/search"]) {
          const page = yield* preflight(baseUrl, path, inspector, "GET")
          expect(page.status, path).toBe(405)
          expect(page.headers["access-control-allow-origin"], path).toBeUndefined()
          const got = yield* send(baseUrl, "GET", path, { origin: inspector })
          expect(got.headers["access-control-allow-origin"], path).toBeUndefined()
        }
        expect(yield* clients()).toBe(before)
      })
    )
  })
})

describe("OriginPolicy", () => {
  it("is the public URL's origin and host, the allowed origins, and in development the loopback names", () => {
    const production = OriginPolicy.make({ publicUrl: "https://ribbon.example.com", allowedOrigins: [inspector] })
    expect(
      ["https://ribbon.example.com", "https://RIBBON.example.com:443", inspector].map(production.allowsOrigin)
    ).toEqual([true, true, true])
    expect([evil, "null", "http://ribbon.example.com", "http://localhost:3000"].map(production.allowsOrigin)).toEqual([
      false,
      false,
      false,
      false
    ])
    expect(["ribbon.example.com", "ribbon.example.com:443"].map(production.servesHost)).toEqual([true, true])
    expect(["localhost:3000", "evil.example.com", "ribbon.example.com:8443", ""].map(production.servesHost)).toEqual([
      false,
      false,
      false,
      false
    ])

    const development = OriginPolicy.make({ publicUrl: "http://localhost:3000", allowedOrigins: [], localPort: 3000 })
    expect(["localhost:3000", "127.0.0.1:3000", "[::1]:3000"].map(development.servesHost)).toEqual([true, true, true])
    expect(["127.0.0.1:3001", "evil.example.com:3000"].map(development.servesHost)).toEqual([false, false])
    expect(["http://127.0.0.1:3000", "http://[::1]:3000"].map(development.allowsOrigin)).toEqual([true, true])
    expect(["http://localhost:6274"].map(development.allowsOrigin)).toEqual([false])
  })
})
