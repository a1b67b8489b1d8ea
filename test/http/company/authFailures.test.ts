import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, realPortServerOn, TimeTravel } from "../../support/auth.js"
import { createCompany, raiseLimits, v2Keys, v3Keys } from "../../support/company.js"
import { TestDatabase } from "../../support/database.js"

/**
 * Bad `X-Api-Key`s earn a growing 429 (docs/company-api.md), counted per source and never per key: the
 * server listens on "::", so 127.0.0.1 and [::1] are two sources. Small limits: 3 free failures, then waits
 * of 10, 20 and 40 s (the cap).
 */

const Server = realPortServerOn(TestDatabase, undefined, {
  host: "::",
  failureLimits: {
    perSource: { free: 3, window: "10 minutes", firstWait: "10 seconds", maxWait: "40 seconds" },
    perAccount: { free: 3, window: "10 minutes", firstWait: "10 seconds", maxWait: "40 seconds" }
  }
})

interface Sent {
  readonly status: number
  readonly retryAfter: string | null
  readonly body: any
}

/** A request from 127.0.0.1 (`v4`) or [::1] (`v6`) to the server's port. */
const send = (from: "v4" | "v6", method: string, path: string, apiKey: string | undefined, body?: unknown) =>
  Effect.flatMap(BaseUrl, (baseUrl) =>
    Effect.promise(async (): Promise<Sent> => {
      const base = from === "v4" ? baseUrl : baseUrl.replace("127.0.0.1", "[::1]")
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          ...(apiKey === undefined ? {} : { "x-api-key": apiKey }),
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      return {
        status: response.status,
        retryAfter: response.headers.get("retry-after"),
        body: text && JSON.parse(text)
      }
    })
  )

describe("company API: backoff after bad API keys", () => {
  it.layer(Server, { timeout: 120_000 })((it) => {
    it.effect(
      "401s, then 429 in the line's format with a growing Retry-After; the key's owner elsewhere is not refused",
      () =>
        Effect.gen(function* () {
          const travel = yield* TimeTravel
          const company = yield* createCompany()
          yield* raiseLimits(company.companyId)
          const good = company.apiKey
          const doomed = yield* send("v6", "POST", v3Keys, good, { name: "doomed" })
          const deletedKey: string = doomed.body.data.apiKey
          expect((yield* send("v6", "DELETE", `${v3Keys}/${doomed.body.data.id}`, good)).status).toBe(204)

          // A malformed, an unknown and a deleted key, then a wrong one on v2: four failures, three free.
          expect((yield* send("v4", "GET", v3Keys, "not-a-key")).status).toBe(401)
          expect((yield* send("v4", "GET", v3Keys, "0123456789abcdef01234567")).status).toBe(401)
          expect((yield* send("v4", "GET", v3Keys, deletedKey)).status).toBe(401)
          expect((yield* send("v4", "GET", v2Keys, "fedcba9876543210fedcba98")).status).toBe(401)

          const v3 = yield* send("v4", "GET", v3Keys, "0123456789abcdef01234567")
          expect(v3.status).toBe(429)
          expect(v3.body).toEqual({ status: 429, message: expect.stringContaining("retry after 10 s") })
          expect(v3.retryAfter).toBe("10")
          // The source waits whatever key it sends, on either line: its next try is not even looked at.
          const v2 = yield* send("v4", "GET", v2Keys, good)
          expect(v2.status).toBe(429)
          expect(v2.body).toEqual({ status: 429, message: expect.any(String) })
          expect(Number(v2.retryAfter)).toBeGreaterThan(0)
          // Without a key there is nothing to count or to refuse.
          expect((yield* send("v4", "GET", v3Keys, undefined)).status).toBe(401)

          // The owner of the key, elsewhere, is not refused, and that source's failures are its own.
          expect((yield* send("v6", "GET", v3Keys, good)).status).toBe(200)
          expect((yield* send("v6", "GET", v3Keys, "0123456789abcdef01234567")).status).toBe(401)
          expect((yield* send("v6", "GET", v3Keys, good)).status).toBe(200)

          // Each further failure doubles the wait, up to the cap; after a wait the good key works from there too.
          yield* travel.advance("10 seconds")
          expect((yield* send("v4", "GET", v3Keys, good)).status).toBe(200)
          expect((yield* send("v4", "GET", v3Keys, "0123456789abcdef01234567")).status).toBe(401)
          expect((yield* send("v4", "GET", v3Keys, good)).retryAfter).toBe("20")
          yield* travel.advance("20 seconds")
          expect((yield* send("v4", "GET", v2Keys, deletedKey)).status).toBe(401)
          expect((yield* send("v4", "GET", v2Keys, deletedKey)).retryAfter).toBe("40")
          yield* travel.advance("40 seconds")
          expect((yield* send("v4", "GET", v3Keys, "not-a-key")).status).toBe(401)
          const capped = yield* send("v4", "GET", v3Keys, "not-a-key")
          expect(capped.status).toBe(429)
          expect(capped.retryAfter).toBe("40")
        })
    )
  })
})
