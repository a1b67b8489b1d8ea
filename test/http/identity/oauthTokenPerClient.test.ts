import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { AuthRateLimits } from "../../../src/http/identity/AuthRateLimits.js"
import { baseUrlFrom, clientWithRefreshToken, realPortServerOn } from "../../support/auth.js"
import { TestDatabase } from "../../support/database.js"

/**
 * The token endpoint's per-client window (60 a minute) counts a client's requests only once the client
 * authenticated, and a public client's per source as well: a client id is no secret, so nobody can spend
 * another's window. The server listens on "::", so 127.0.0.1 and [::1] are two sources.
 */

const { tokenPerClient } = AuthRateLimits.defaultValue()
const plenty = { limit: 100_000, window: "1 minute" } as const
const Server = realPortServerOn(
  TestDatabase,
  { registerPerIp: plenty, tokenPerClient, tokenPerIp: plenty, signInPerIp: plenty, clientDocumentPerIp: plenty },
  { host: "::" }
)

const token = (from: "v4" | "v6", params: Record<string, string>) =>
  Effect.flatMap(baseUrlFrom(from), (base) =>
    Effect.promise(async () => {
      const response = await fetch(`${base}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", ...params }).toString()
      })
      return { status: response.status, body: (await response.json()) as any }
    })
  )

describe("OAuth token endpoint: the per-client window", () => {
  it.layer(Server, { timeout: 120_000 })((it) => {
    it.effect("61 bogus requests naming a client do not make its next real request a 429", () =>
      Effect.gen(function* () {
        expect(tokenPerClient).toEqual({ limit: 60, window: "1 minute" })
        const publicClient = yield* clientWithRefreshToken("none")
        const statuses: Array<number> = []
        for (let i = 0; i < 61; i++) {
          statuses.push((yield* token("v4", { refresh_token: "rbr_bogus", client_id: publicClient.clientId })).status)
        }
        expect(statuses.slice(0, 60)).toEqual(Array(60).fill(400))
        // A public client's requests count per source too: the sender is the one limited.
        expect(statuses[60]).toBe(429)
        const refreshed = yield* token("v6", {
          refresh_token: publicClient.refreshToken,
          client_id: publicClient.clientId
        })
        expect(refreshed.status).toBe(200)
        expect(refreshed.body.access_token).toMatch(/^rba_/)

        // A confidential client counts once it authenticated: requests with a wrong secret take nothing from it
        // (they meet the backoff after failed authentications instead).
        const confidential = yield* clientWithRefreshToken("client_secret_post")
        for (let i = 0; i < 61; i++) {
          const sent = yield* token("v4", {
            refresh_token: confidential.refreshToken,
            client_id: confidential.clientId,
            client_secret: "rcs_wrong"
          })
          expect([401, 429]).toContain(sent.status)
        }
        const legitimate = yield* token("v6", {
          refresh_token: confidential.refreshToken,
          client_id: confidential.clientId,
          client_secret: confidential.clientSecret!
        })
        expect(legitimate.status).toBe(200)
      })
    )
  })
})
