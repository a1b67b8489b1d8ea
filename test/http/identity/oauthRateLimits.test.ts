import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, Browser, makeRealPortServer, TimeTravel } from "../../support/auth.js"

/** The authorization server's rate limits, with small limits: 429 with Retry-After, nothing stored. */

const rule = { limit: 2, window: "1 minute" } as const
const Server = makeRealPortServer({
  registerPerIp: rule,
  tokenPerClient: rule,
  tokenPerIp: { limit: 100, window: "1 minute" },
  signInPerIp: rule,
  clientDocumentPerIp: rule
})

const register = (baseUrl: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${baseUrl}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Busy agent",
        redirect_uris: ["http://127.0.0.1/cb"],
        token_endpoint_auth_method: "none"
      })
    })
    return { status: response.status, headers: response.headers, body: (await response.json()) as any }
  })

const clients = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM oauth_clients`
).pipe(
  Effect.map((rows) => rows[0]!.n),
  Effect.orDie
)

describe("OAuth rate limits", () => {
  it.layer(Server, { timeout: 120_000 })((it) => {
    it.effect("registration per IP, then the window passes; the token endpoint per client; sign-in per IP", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const travel = yield* TimeTravel
        const first = yield* register(baseUrl)
        expect(first.status).toBe(201)
        expect((yield* register(baseUrl)).status).toBe(201)
        const before = yield* clients
        const limited = yield* register(baseUrl)
        expect(limited.status).toBe(429)
        expect(limited.body).toEqual({ error: "temporarily_unavailable", error_description: expect.any(String) })
        const retryAfter = Number(limited.headers.get("retry-after"))
        expect(retryAfter).toBeGreaterThan(0)
        expect(retryAfter).toBeLessThanOrEqual(60)
        expect(yield* clients).toBe(before)
        yield* travel.advance("1 minute")
        expect((yield* register(baseUrl)).status).toBe(201)

        // The token endpoint counts an authenticated client (a public one per source), whatever the grant's outcome.
        const token = (clientId: string) =>
          Effect.promise(() =>
            fetch(`${baseUrl}/oauth/token`, {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "rbr_x", client_id: clientId })
            }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
          )
        expect((yield* token(first.body.client_id)).body.error).toBe("invalid_grant")
        expect((yield* token(first.body.client_id)).body.error).toBe("invalid_grant")
        const tooMany = yield* token(first.body.client_id)
        expect(tooMany.status).toBe(429)
        expect(tooMany.body.error).toBe("temporarily_unavailable")
        expect((yield* token("000000000000000000000000")).status).toBe(401)

        // Sign-in attempts per IP: the form answers with a page and Retry-After.
        const browser = new Browser()
        const authorize = `${baseUrl}/oauth/authorize?${new URLSearchParams({
          response_type: "code",
          client_id: first.body.client_id,
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256"
        })}`
        const page = yield* Effect.promise(() => browser.request(authorize).then((r) => r.text()))
        const attempt = () =>
          Effect.promise(() =>
            browser.submit(baseUrl, page, "sign_in", { email: "x@example.com", password: "wrong password" })
          )
        expect((yield* attempt()).status).toBe(401)
        expect((yield* attempt()).status).toBe(401)
        const blocked = yield* attempt()
        expect(blocked.status).toBe(429)
        expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0)
        expect(yield* Effect.promise(() => blocked.text())).toContain("Too many sign-in attempts")
      })
    )

    it.effect(
      "authorization requests naming their client by a document URL, per IP; a registered client is not counted",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const authorize = (clientId: string) =>
            Effect.promise(async () => {
              const query = new URLSearchParams({
                response_type: "code",
                client_id: clientId,
                redirect_uri: "http://127.0.0.1/cb",
                code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                code_challenge_method: "S256"
              })
              const response = await fetch(`${baseUrl}/oauth/authorize?${query}`, { redirect: "manual" })
              return {
                status: response.status,
                retryAfter: response.headers.get("retry-after"),
                text: await response.text()
              }
            })
          // Loopback documents are refused by the outbound guard: an error page each time, but a fetch attempted.
          const document = "https://127.0.0.1:9/client.json"
          expect((yield* authorize(document)).status).toBe(400)
          expect((yield* authorize(document)).status).toBe(400)
          const limited = yield* authorize("https://127.0.0.1:9/other.json")
          expect(limited.status).toBe(429)
          expect(Number(limited.retryAfter)).toBeGreaterThan(0)
          expect(limited.text).toContain("Too many authorization requests")
          // A client registered here needs no fetch, and is not limited.
          const registered = yield* register(baseUrl)
          expect(registered.status).toBe(201)
          expect((yield* authorize(registered.body.client_id)).status).not.toBe(429)
        })
    )
  })
})
