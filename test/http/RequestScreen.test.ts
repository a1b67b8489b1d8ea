import { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { jsonHazard, maxJsonDepth } from "../../src/http/RequestScreen.js"
import { get, RibbonTestServer, raw } from "../support/http.js"

const send = (method: "POST" | "DELETE" | "PUT", url: string, body: string, contentType: string) =>
  raw(HttpClientRequest.make(method)(url).pipe(HttpClientRequest.bodyText(body, contentType)))

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`

describe("jsonHazard", () => {
  it("finds an escaped or raw NUL inside strings, and nothing in escaped backslashes", () => {
    expect(jsonHazard(String.raw`{"a":"x\u0000y"}`)).toBe("nul")
    expect(jsonHazard(`{"a":"x\u0000y"}`)).toBe("nul")
    expect(jsonHazard(String.raw`{"a\u0000":1}`)).toBe("nul")
    expect(jsonHazard(String.raw`{"a":"x\\u0000y"}`)).toBeUndefined()
    expect(jsonHazard(String.raw`{"a":"\"[[[["}`)).toBeUndefined()
  })

  it("bounds the depth of objects and arrays, not of brackets inside strings", () => {
    expect(jsonHazard(nested(maxJsonDepth))).toBeUndefined()
    expect(jsonHazard(nested(maxJsonDepth + 1))).toBe("depth")
    expect(jsonHazard(`{"a":"${"[".repeat(100)}"}`)).toBeUndefined()
  })
})

describe("hostile requests", () => {
  it.layer(RibbonTestServer)((it) => {
    it.effect("a NUL byte in a path id, a query value or a body is a 400 in the line's format", () =>
      Effect.gen(function* () {
        const path = yield* get("/pay/%00")
        expect(path.status).toBe(400)
        expect(path.body).toMatchObject({ code: "invalid_request", detail: expect.stringContaining("NUL") })

        const query = yield* get("/v1/search?q=a%00b")
        expect(query.status).toBe(400)

        const json = yield* send(
          "POST",
          "/oauth/introspect",
          String.raw`{"token":"x","client_id":"\u0000"}`,
          "application/json"
        )
        expect(json.status).toBe(400)
        expect(json.body).toEqual({ error: "invalid_request", error_description: expect.stringContaining("NUL") })

        const form = yield* send("POST", "/oauth/token", "grant_type=a%00b", "application/x-www-form-urlencoded")
        expect(form.status).toBe(400)

        const v3 = yield* get("/public-api/v3/authentication/api-keys/%00")
        expect(v3.status).toBe(400)
        expect(v3.body).toMatchObject({ errorCode: "400_PBLC_001" })
      })
    )

    it.effect("a body in a media type the operation does not take is a 415 naming the ones it takes", () =>
      Effect.gen(function* () {
        const multipart = yield* send("POST", "/oauth/token", "--x\r\ngarbage", "multipart/form-data; boundary=x")
        expect(multipart.status).toBe(415)
        expect(multipart.body.error).toBe("invalid_request")

        const text = yield* send("POST", "/public-api/v2/authentication/apiKeys", "hello", "text/plain")
        expect(text.status).toBe(415)
        expect(text.body).toEqual({ status: 415, errorCode: "UNSUPPORTED_MEDIA_TYPE", message: expect.any(String) })

        const form = yield* send("POST", "/v1/quotes", "variantId=x", "application/x-www-form-urlencoded")
        expect(form.status).toBe(415)
        expect(form.headers["content-type"]).toBe("application/problem+json")
        expect(form.body).toMatchObject({ code: "unsupported_media_type", acceptedMediaTypes: ["application/json"] })
      })
    )

    it.effect("JSON nested past the bound is a 400, however deep", () =>
      Effect.gen(function* () {
        for (const depth of [maxJsonDepth + 1, 5_000, 30_000]) {
          const response = yield* send("POST", "/oauth/register", nested(depth), "application/json")
          expect(response.status).toBe(400)
          expect(response.body.error_description).toContain(`deeper than ${maxJsonDepth}`)
        }
      })
    )

    it.effect("a wrong method on a known path is a 405 with Allow; an unknown path stays a 404", () =>
      Effect.gen(function* () {
        const wrong = yield* send("DELETE", "/v1/search", "", "application/json")
        expect(wrong.status).toBe(405)
        expect(wrong.headers.allow).toBe("GET")
        expect(wrong.body).toMatchObject({ code: "method_not_allowed", allowedMethods: ["GET"] })

        const keys = yield* send("PUT", "/public-api/v3/authentication/api-keys", "{}", "application/json")
        expect(keys.status).toBe(405)
        expect(keys.headers.allow).toBe("GET, POST")
        expect(keys.body).toEqual({ status: 405, errorCode: "405_PBLC_001", message: expect.any(String) })

        const unknown = yield* send("DELETE", "/v1/nowhere", "", "application/json")
        expect(unknown.status).toBe(404)
        expect(unknown.text).not.toContain("nowhere")
      })
    )

    it.effect("a path id of any length reaches its schema, which names the field", () =>
      Effect.gen(function* () {
        for (const length of [65, 101, 4_000]) {
          const response = yield* get(`/pay/${"a".repeat(length)}`)
          expect(response.status).toBe(400)
          expect(response.body.errors[0].path).toBe("checkoutId")
        }
      })
    )
  })
})
