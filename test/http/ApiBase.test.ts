import { HttpApi, HttpApiEndpoint, HttpApiError, HttpApiGroup, OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { makeApi } from "../../src/http/ApiBase.js"

/**
 * `makeApi` replaces `HttpApi.make`'s error schema, which `@effect/platform` offers no supported way to
 * leave out. These tests pin what that override relies on, so a platform upgrade that changes it fails here
 * rather than silently putting `HttpApiDecodeError` back into every operation of the document.
 */
describe("makeApi", () => {
  const group = HttpApiGroup.make("things").add(HttpApiEndpoint.get("list", "/things").addSuccess(Schema.String))

  it("HttpApi.make still declares HttpApiDecodeError, as a plain errorSchema field", () => {
    const api = HttpApi.make("plain")
    expect(api.errorSchema).toBe(HttpApiError.HttpApiDecodeError)
    expect(Object.getOwnPropertyDescriptor(api, "errorSchema")?.writable).toBe(true)
    const document = OpenApi.fromApi(api.add(group))
    expect(JSON.stringify(document)).toContain("HttpApiDecodeError")
  })

  it("leaves HttpApiDecodeError out of the error schema and the document", () => {
    const api = makeApi("ribbon-fixture")
    expect(api.errorSchema).toBe(Schema.Never)
    const document = OpenApi.fromApi(api.add(group))
    expect(JSON.stringify(document)).not.toContain("HttpApiDecodeError")
    expect(Object.keys(document.paths["/things"]?.get?.responses ?? {})).toEqual(["200"])
  })

  it("HttpApi's decoding failures go through the replaced fromParseError, in plain words", () => {
    const Body = Schema.Struct({ amount: Schema.NonNegativeInt.annotations({ description: "In minor units" }) })
    const decoded = Schema.decodeUnknownEither(Body)({ amount: -1 })
    if (Either.isRight(decoded)) throw new Error("expected a failure")
    const failure = Effect.runSync(Effect.flip(HttpApiError.HttpApiDecodeError.refailParseError(decoded.left)))
    expect(failure.issues).toEqual([{ _tag: "Type", path: ["amount"], message: "must be at least 0" }])
  })
})
