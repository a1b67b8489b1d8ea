import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { get, RibbonTestServer, ribbonClient } from "../support/http.js"

describe("Ribbon API", () => {
  it.layer(RibbonTestServer)((it) => {
    it.effect("serves liveness and readiness through the derived client", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        expect(yield* client.health.health()).toEqual({ status: "ok" })
        const ready = yield* client.health.ready()
        expect(ready.status).toBe("ready")
        expect(ready.migration).toBeGreaterThanOrEqual(2)
      })
    )

    it.effect("answers unknown routes with a 404 in each line's format", () =>
      Effect.gen(function* () {
        const v1 = yield* get("/v1/does-not-exist")
        expect(v1.status).toBe(404)
        expect(v1.headers["content-type"]).toBe("application/problem+json")
        expect(v1.body).toMatchObject({
          status: 404,
          code: "not_found",
          detail: "No route matches GET on this path."
        })

        const oauth = yield* get("/oauth/does-not-exist")
        expect(oauth.status).toBe(404)
        expect(oauth.body).toEqual({ error: "invalid_request", error_description: expect.any(String) })

        const v2 = yield* get("/public-api/v2/does-not-exist")
        expect(v2.status).toBe(404)
        expect(v2.body).toEqual({ status: 404, errorCode: "NOT_FOUND", message: expect.any(String) })

        const v3 = yield* get("/public-api/v3/does-not-exist")
        expect(v3.status).toBe(404)
        expect(v3.body).toEqual({ status: 404, errorCode: "404_PBLC_001", message: expect.any(String) })

        for (const response of [v1, oauth, v2, v3]) expect(response.headers["x-request-id"]).toBeTruthy()
      })
    )

    it.effect("serves the API reference at /docs", () =>
      Effect.gen(function* () {
        const docs = yield* get("/docs")
        expect(docs.status).toBe(200)
        expect(docs.headers["content-type"]).toContain("text/html")
        expect(docs.text).toContain("api-reference")
        expect(docs.headers["content-security-policy"]).toContain("frame-ancestors 'none'")
        expect(docs.headers["x-frame-options"]).toBe("DENY")
      })
    )

    it.effect("sends nosniff on every response, and no-store unless the route chose its caching", () =>
      Effect.gen(function* () {
        const responses = yield* Effect.all([get("/health"), get("/v1/nowhere"), get("/openapi.json"), get("/docs")])
        for (const response of responses) {
          expect(response.headers["x-content-type-options"]).toBe("nosniff")
          expect(response.headers["cache-control"]).toBe("no-store")
        }
      })
    )
  })
})
