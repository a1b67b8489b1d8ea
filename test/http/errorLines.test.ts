import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema, Stream } from "effect"
import { DomainError, InvalidRequest, NotFound } from "../../src/domain/platform/Errors.js"
import { makeApi } from "../../src/http/ApiBase.js"
import { type Line, lineError } from "../../src/http/ErrorLines.js"
import { get, postText, raw, serveForTest, testMaxBodyBytes } from "../support/http.js"

/** A test-only error with an extension field, as later areas will define. */
class ConsentRequired extends DomainError<ConsentRequired>()(
  "ConsentRequired",
  { consentText: Schema.String },
  {
    status: 422,
    title: "Consent required",
    v1: "sms_consent_required",
    oauth: "invalid_request",
    v2: "UNPROCESSABLE_ENTITY",
    v3: "422_ORDS_901"
  }
) {}

const Order = Schema.Struct({
  items: Schema.Array(
    Schema.Struct({
      quoteId: Schema.String,
      quantity: Schema.Int.pipe(Schema.between(1, 10))
    })
  ).pipe(Schema.minItems(1)),
  channel: Schema.Literal("email", "sms"),
  // Described for the document, as Ribbon's fields are: the description must not leak into the message.
  amount: Schema.optional(
    Schema.NonNegativeInt.annotations({ description: "In minor units of the billing currency (USD)" })
  ),
  note: Schema.optional(Schema.String.pipe(Schema.maxLength(64)).annotations({ description: "A note" })),
  tags: Schema.optional(Schema.Array(Schema.String).pipe(Schema.maxItems(2)))
})

/** The same four endpoints under every line's prefix. */
const fixtureGroup = <const Name extends string>(name: Name, line: Line, prefix: `/${string}`) =>
  HttpApiGroup.make(name)
    .add(
      HttpApiEndpoint.post("create", "/orders")
        .setPayload(Order)
        .addSuccess(Schema.Struct({ ok: Schema.Boolean }))
    )
    .add(HttpApiEndpoint.get("missing", "/missing"))
    .add(HttpApiEndpoint.get("consent", "/consent"))
    .add(HttpApiEndpoint.get("defect", "/defect"))
    .addError(lineError(line, InvalidRequest))
    .addError(lineError(line, NotFound))
    .addError(lineError(line, ConsentRequired))
    .prefix(prefix)

const FixtureApi = makeApi("fixture")
  .add(fixtureGroup("v1", "v1", "/v1"))
  .add(fixtureGroup("oauth", "oauth", "/oauth"))
  .add(fixtureGroup("v2", "v2", "/public-api/v2"))
  .add(fixtureGroup("v3", "v3", "/public-api/v3"))

const handlersFor = (name: "v1" | "oauth" | "v2" | "v3") =>
  HttpApiBuilder.group(FixtureApi, name, (handlers) =>
    handlers
      .handle("create", () => Effect.succeed({ ok: true }))
      .handle("missing", () => new NotFound({ message: "Order 42 does not exist." }))
      .handle("consent", () => new ConsentRequired({ message: "SMS needs consent.", consentText: "I agree to SMS." }))
      .handle("defect", () => Effect.die(new Error("secret stack detail")))
  )

const FixtureLive = HttpApiBuilder.api(FixtureApi).pipe(
  Layer.provide([handlersFor("v1"), handlersFor("oauth"), handlersFor("v2"), handlersFor("v3")])
)

const prefixes = { v1: "/v1", oauth: "/oauth", v2: "/public-api/v2", v3: "/public-api/v3" } as const

const validOrder = { items: [{ quoteId: "q1", quantity: 2 }], channel: "email" }
const nestedOutOfRange = {
  items: [
    { quoteId: "q1", quantity: 2 },
    { quoteId: "q2", quantity: 11 }
  ],
  channel: "email"
}

describe("error lines", () => {
  it.layer(serveForTest(FixtureLive))((it) => {
    it.effect("a valid request succeeds on every line", () =>
      Effect.gen(function* () {
        for (const prefix of Object.values(prefixes)) {
          const response = yield* postText(`${prefix}/orders`, JSON.stringify(validOrder))
          expect(response.status).toBe(200)
          expect(response.body).toEqual({ ok: true })
        }
      })
    )

    describe("a decoding failure with a nested path", () => {
      it.effect("/v1: problem+json with every failing field", () =>
        Effect.gen(function* () {
          const response = yield* postText("/v1/orders", JSON.stringify(nestedOutOfRange))
          expect(response.status).toBe(400)
          expect(response.headers["content-type"]).toBe("application/problem+json")
          expect(response.body).toMatchObject({
            type: "urn:ribbon:error:invalid_request",
            title: "Invalid request",
            status: 400,
            code: "invalid_request",
            errors: [{ path: "items[1].quantity", message: expect.stringContaining("between 1 and 10") }]
          })
          expect(response.body.detail).toContain("items[1].quantity")
        })
      )

      it.effect("/oauth: RFC 6749 body", () =>
        Effect.gen(function* () {
          const response = yield* postText("/oauth/orders", JSON.stringify(nestedOutOfRange))
          expect(response.status).toBe(400)
          expect(response.headers["cache-control"]).toBe("no-store")
          expect(response.body).toEqual({
            error: "invalid_request",
            error_description: expect.stringContaining("items[1].quantity")
          })
        })
      )

      it.effect("/public-api/v2: {path, errorCode, message}", () =>
        Effect.gen(function* () {
          const response = yield* postText("/public-api/v2/orders", JSON.stringify(nestedOutOfRange))
          expect(response.status).toBe(400)
          expect(response.body).toEqual({
            path: "items[1].quantity",
            errorCode: "INVALID_REQUEST",
            message: expect.stringContaining("between 1 and 10")
          })
        })
      )

      it.effect("/public-api/v3: the 400_PBLC_001 envelope", () =>
        Effect.gen(function* () {
          const response = yield* postText("/public-api/v3/orders", JSON.stringify(nestedOutOfRange))
          expect(response.status).toBe(400)
          expect(response.body).toEqual({
            message: expect.stringContaining("items[1].quantity"),
            errorCode: "400_PBLC_001",
            errors: [{ path: "items[1].quantity", errorCode: "400_PBLC_001", message: expect.any(String) }]
          })
        })
      )
    })

    it.effect("bad JSON, wrong type, missing field and unknown enum are 400s naming the field", () =>
      Effect.gen(function* () {
        const cases: Array<[string, string]> = [
          ['{"items": [', ""],
          [JSON.stringify({ ...validOrder, items: [{ quoteId: 7, quantity: 1 }] }), "items[0].quoteId"],
          [JSON.stringify({ items: validOrder.items }), "channel"],
          [JSON.stringify({ ...validOrder, channel: "pigeon" }), "channel"],
          [JSON.stringify({ ...validOrder, items: [] }), "items"]
        ]
        for (const [body, path] of cases) {
          const v2 = yield* postText("/public-api/v2/orders", body)
          expect(v2.status, body).toBe(400)
          expect(v2.body.path, body).toBe(path)
          expect(v2.body.errorCode).toBe("INVALID_REQUEST")
          const v1 = yield* postText("/v1/orders", body)
          expect(v1.status).toBe(400)
          expect(v1.body.code).toBe("invalid_request")
          expect(v1.body.errors[0].path).toBe(path)
        }
      })
    )

    it.effect("a decoding failure names the field and the rule in plain words", () =>
      Effect.gen(function* () {
        const cases: Array<[Record<string, unknown>, string, string]> = [
          [{ ...validOrder, amount: -1 }, "amount", "must be at least 0"],
          [{ ...validOrder, amount: 1.5 }, "amount", "must be an integer"],
          [{ ...validOrder, amount: "12" }, "amount", "must be a number"],
          [{ ...validOrder, note: "x".repeat(65) }, "note", "must be at most 64 characters"],
          [{ ...validOrder, channel: "pigeon" }, "channel", "must be one of email, sms"],
          [{ ...validOrder, channel: undefined }, "channel", "is missing"],
          [{ ...validOrder, tags: ["a", "b", "c"] }, "tags", "must have at most 2 items"],
          [{ ...validOrder, items: [{ quoteId: "q1", quantity: 0 }] }, "items[0].quantity", "must be between 1 and 10"],
          [{ ...validOrder, items: [] }, "items", "must have at least 1 item"],
          [{ ...validOrder, items: "none" }, "items", "must be an array"]
        ]
        for (const [body, path, rule] of cases) {
          const v3 = yield* postText("/public-api/v3/orders", JSON.stringify(body))
          expect(v3.status, path).toBe(400)
          expect(v3.body, path).toEqual({
            message: `${path}: ${rule}`,
            errorCode: "400_PBLC_001",
            errors: [{ path, errorCode: "400_PBLC_001", message: rule }]
          })
          const v2 = yield* postText("/public-api/v2/orders", JSON.stringify(body))
          expect(v2.body, path).toEqual({ path, errorCode: "INVALID_REQUEST", message: `${path}: ${rule}` })
          const v1 = yield* postText("/v1/orders", JSON.stringify(body))
          expect(v1.body.detail, path).toBe(`${path}: ${rule}`)
        }
        const whole = yield* postText("/public-api/v3/orders", "[]")
        expect(whole.body.message).toBe("request: must be an object")
      })
    )

    it.effect("a domain error comes out with its status and each line's code", () =>
      Effect.gen(function* () {
        const v1 = yield* get("/v1/missing")
        expect(v1.status).toBe(404)
        expect(v1.body).toEqual({
          type: "urn:ribbon:error:not_found",
          title: "Not found",
          status: 404,
          detail: "Order 42 does not exist.",
          code: "not_found"
        })
        expect((yield* get("/oauth/missing")).body).toEqual({
          error: "invalid_request",
          error_description: "Order 42 does not exist."
        })
        expect((yield* get("/public-api/v2/missing")).body).toEqual({
          status: 404,
          errorCode: "NOT_FOUND",
          message: "Order 42 does not exist."
        })
        expect((yield* get("/public-api/v3/missing")).body).toEqual({
          status: 404,
          errorCode: "404_PBLC_001",
          message: "Order 42 does not exist."
        })
      })
    )

    it.effect("/v1 carries an error's extension fields", () =>
      Effect.gen(function* () {
        const response = yield* get("/v1/consent")
        expect(response.status).toBe(422)
        expect(response.body).toMatchObject({ code: "sms_consent_required", consentText: "I agree to SMS." })
        const v3 = yield* get("/public-api/v3/consent")
        expect(v3.body).toEqual({ status: 422, errorCode: "422_ORDS_901", message: "SMS needs consent." })
      })
    )

    it.effect("a defect is a 500 with the request id and no internals", () =>
      Effect.gen(function* () {
        for (const prefix of Object.values(prefixes)) {
          const response = yield* get(`${prefix}/defect`)
          expect(response.status).toBe(500)
          expect(response.text).not.toContain("secret stack detail")
          expect(response.text).not.toMatch(/\bat .*\.ts:\d+/)
          const requestId = response.headers["x-request-id"]
          expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
          if (prefix === "/v1") expect(response.body).toMatchObject({ code: "internal_error", requestId })
        }
        expect((yield* get("/public-api/v2/defect")).body).toMatchObject({ status: 500, errorCode: "INTERNAL_ERROR" })
        expect((yield* get("/oauth/defect")).body).toMatchObject({ error: "server_error" })
      })
    )

    it.effect("a body over the limit is a 413 in the line's format", () =>
      Effect.gen(function* () {
        const huge = JSON.stringify({ ...validOrder, padding: "x".repeat(testMaxBodyBytes) })
        const v1 = yield* postText("/v1/orders", huge)
        expect(v1.status).toBe(413)
        expect(v1.body).toMatchObject({ status: 413, code: "payload_too_large", limitBytes: testMaxBodyBytes })
        const v2 = yield* postText("/public-api/v2/orders", huge)
        expect(v2.status).toBe(413)
        expect(v2.body).toEqual({ status: 413, errorCode: "PAYLOAD_TOO_LARGE", message: expect.any(String) })
        const v3 = yield* postText("/public-api/v3/orders", huge)
        expect(v3.body.errorCode).toBe("413_PBLC_001")
        const oauth = yield* postText("/oauth/orders", huge)
        expect(oauth.status).toBe(413)
        expect(oauth.body.error).toBe("invalid_request")
      })
    )

    it.effect("a chunked body that grows past the limit is cut off, and the server keeps serving", () =>
      Effect.gen(function* () {
        const chunk = new TextEncoder().encode("x".repeat(16 * 1024))
        const cut = yield* raw(
          HttpClientRequest.post("/public-api/v3/orders").pipe(
            HttpClientRequest.bodyStream(Stream.make(...Array.from({ length: 8 }, () => chunk)), {
              contentType: "application/json"
            })
          )
        ).pipe(Effect.flip)
        expect(cut._tag).toBe("RequestError")
        const next = yield* postText("/public-api/v3/orders", JSON.stringify(validOrder))
        expect(next.status).toBe(200)
      })
    )

    it.effect("unknown routes are 404s in the line's format", () =>
      Effect.gen(function* () {
        expect((yield* get("/public-api/v3/nothing")).body).toMatchObject({ errorCode: "404_PBLC_001" })
        expect((yield* get("/oauth/nothing")).status).toBe(404)
      })
    )

    it.effect("the OpenAPI document describes each line's real 400 body", () =>
      Effect.gen(function* () {
        const { body } = yield* get("/openapi.json")
        const badRequest = (path: string) => body.paths[path].post.responses["400"].content
        expect(badRequest("/v1/orders")).toEqual({
          "application/problem+json": { schema: { $ref: "#/components/schemas/V1InvalidRequest" } }
        })
        expect(badRequest("/public-api/v2/orders")["application/json"].schema.$ref).toBe(
          "#/components/schemas/V2InvalidRequest"
        )
        expect(body.components.schemas.V2InvalidRequest.required).toEqual(["path", "errorCode", "message"])
        expect(body.components.schemas.V3InvalidRequest.required).toEqual(["message", "errorCode", "errors"])
        expect(body.components.schemas.OAuthInvalidRequest.required).toEqual(["error", "error_description"])
        expect(JSON.stringify(body)).not.toContain("HttpApiDecodeError")
      })
    )

    it.effect("request ids: a valid one is echoed, an invalid one replaced", () =>
      Effect.gen(function* () {
        const echoed = yield* get("/v1/missing", { "x-request-id": "agent-run-7.step:3" })
        expect(echoed.headers["x-request-id"]).toBe("agent-run-7.step:3")
        const replaced = yield* get("/v1/missing", { "x-request-id": "bad id with spaces" })
        expect(replaced.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
      })
    )
  })
})
