import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { OAuthClients } from "../../../src/services/identity/OAuthClients.js"
import { Users } from "../../../src/services/identity/Users.js"
import { Browser, baseUrlFrom, clientWithRefreshToken, realPortServerOn, TimeTravel } from "../../support/auth.js"
import { TestDatabase } from "../../support/database.js"

/**
 * The authorization server's safeguards against guessing (docs/oauth.md): failed client authentications at
 * the token, revocation and introspection endpoints and failed sign-ins earn a growing 429 per source, failed
 * sign-ins also per account. The server listens on "::", so 127.0.0.1 and [::1] are two sources.
 */

const plenty = { limit: 100_000, window: "1 minute" } as const

const Server = realPortServerOn(
  TestDatabase,
  {
    registerPerIp: plenty,
    tokenPerClient: plenty,
    tokenPerIp: plenty,
    signInPerIp: plenty,
    clientDocumentPerIp: plenty
  },
  {
    host: "::",
    failureLimits: {
      perSource: { free: 3, window: "10 minutes", firstWait: "10 seconds", maxWait: "40 seconds" },
      perAccount: { free: 2, window: "10 minutes", firstWait: "10 seconds", maxWait: "40 seconds" }
    }
  }
)

interface Reply {
  readonly status: number
  readonly retryAfter: string | null
  readonly body: any
}

const postForm = (from: "v4" | "v6", path: string, params: Record<string, string>) =>
  Effect.flatMap(baseUrlFrom(from), (base) =>
    Effect.promise(async (): Promise<Reply> => {
      const response = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(params).toString()
      })
      const text = await response.text()
      return {
        status: response.status,
        retryAfter: response.headers.get("retry-after"),
        body: text && JSON.parse(text)
      }
    })
  )

describe("OAuth: backoff after failed client authentication and sign-in", () => {
  it.layer(Server, { timeout: 120_000 })((it) => {
    it.effect("bad client secrets at token, revoke and introspect earn a 429 for their source only", () =>
      Effect.gen(function* () {
        const travel = yield* TimeTravel
        const { clientId, clientSecret } = yield* clientWithRefreshToken("client_secret_post")
        const wrong = { client_id: clientId, client_secret: "rcs_wrong" }
        const right = { client_id: clientId, client_secret: clientSecret! }
        const refresh = { grant_type: "refresh_token", refresh_token: "rbr_unknown" }
        expect((yield* postForm("v4", "/oauth/token", { ...refresh, ...wrong })).body.error).toBe("invalid_client")
        expect((yield* postForm("v4", "/oauth/revoke", { token: "x", ...wrong })).status).toBe(401)
        expect((yield* postForm("v4", "/oauth/introspect", { token: "x", ...wrong })).status).toBe(401)
        const unknown = { token: "x", client_id: "000000000000000000000000", client_secret: "rcs_x" }
        expect((yield* postForm("v4", "/oauth/introspect", unknown)).body.error).toBe("invalid_client")

        // Four failures, three free: the source waits, even with the right secret.
        for (const path of ["/oauth/introspect", "/oauth/revoke"]) {
          const refused = yield* postForm("v4", path, { token: "x", ...right })
          expect(refused.status).toBe(429)
          expect(refused.body).toEqual({ error: "temporarily_unavailable", error_description: expect.any(String) })
          expect(refused.retryAfter).toBe("10")
        }
        expect((yield* postForm("v4", "/oauth/token", { ...refresh, ...right })).status).toBe(429)
        // The client, from elsewhere, is not refused.
        expect((yield* postForm("v6", "/oauth/introspect", { token: "x", ...right })).body).toEqual({ active: false })
        yield* travel.advance("10 seconds")
        expect((yield* postForm("v4", "/oauth/introspect", { token: "x", ...right })).status).toBe(200)
        expect((yield* postForm("v4", "/oauth/token", { ...refresh, ...wrong })).status).toBe(401)
        expect((yield* postForm("v4", "/oauth/revoke", { token: "x", ...right })).retryAfter).toBe("20")
      })
    )

    it.effect(
      "failed sign-ins wait per account from every source, growing; the right password works after the wait",
      () =>
        Effect.gen(function* () {
          const travel = yield* TimeTravel
          const email = `owner${Math.random().toString(36).slice(2)}@example.com`
          const password = "the owner's password"
          yield* Effect.flatMap(Users, (users) => users.create({ email, password })).pipe(Effect.orDie)
          const client = yield* Effect.flatMap(OAuthClients, (clients) =>
            clients.register({
              client_name: "Agent",
              redirect_uris: ["http://127.0.0.1/cb"],
              token_endpoint_auth_method: "none"
            })
          ).pipe(Effect.orDie)
          const query = new URLSearchParams({
            response_type: "code",
            client_id: client.client_id,
            code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            code_challenge_method: "S256"
          })
          /** A browser at 127.0.0.1 or [::1] on the sign-in page; `signIn` submits its form. */
          const browserAt = (from: "v4" | "v6") =>
            Effect.gen(function* () {
              const base = yield* baseUrlFrom(from)
              const browser = new Browser()
              const page = yield* Effect.promise(() =>
                browser.request(`${base}/oauth/authorize?${query}`).then((r) => r.text())
              )
              return (as: string, secret: string) =>
                Effect.promise(async () => {
                  const response = await browser.submit(base, page, "sign_in", { email: as, password: secret })
                  return { status: response.status, retryAfter: response.headers.get("retry-after") }
                })
            })
          const here = yield* browserAt("v4")
          const there = yield* browserAt("v6")

          // Three failures from 127.0.0.1, two free for the account: the account waits 10 s, from anywhere.
          for (let i = 0; i < 3; i++) expect((yield* here(email, "guess")).status).toBe(401)
          expect(yield* there(email, "another guess")).toEqual({ status: 429, retryAfter: "10" })
          expect((yield* there(email, password)).status).toBe(429)
          // Other accounts are not held up by it.
          expect((yield* there("someone@example.com", "guess")).status).toBe(401)
          yield* travel.advance("10 seconds")
          // A fourth failure: the wait doubles.
          expect((yield* there(email, "guess again")).status).toBe(401)
          expect(yield* here(email, password)).toEqual({ status: 429, retryAfter: "20" })
          yield* travel.advance("20 seconds")
          expect((yield* there(email, password)).status).toBe(200) // signed in: the consent page

          // 127.0.0.1 has failed three times: a fourth failure, on any account, makes that source wait.
          expect((yield* here("nobody@example.com", "guess")).status).toBe(401)
          expect(yield* here("nobody.else@example.com", "guess")).toEqual({ status: 429, retryAfter: "10" })
          const elsewhere = yield* browserAt("v6")
          expect((yield* elsewhere("nobody.else@example.com", "guess")).status).toBe(401)
        })
    )
  })
})
