import { HttpApi, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { finishDocument } from "./OpenApiDocument.js"

/**
 * An empty HttpApi for Ribbon's routes. `HttpApi.make` declares its built-in `HttpApiDecodeError` as a
 * 400 of every operation, but Ribbon never sends that body: decoding failures are rendered in each API
 * line's own 400 format, which the line's groups declare. So the API starts without it, and the document
 * and the derived client know only the bodies clients really receive. The platform has no supported way to
 * leave it out, so `errorSchema` is replaced; test/http/ApiBase.test.ts pins what that relies on.
 */
export const makeApi = <const Id extends string>(identifier: Id): HttpApi.HttpApi<Id, never, never, never> => {
  const api = HttpApi.make(identifier).annotate(OpenApi.Transform, finishDocument)
  Object.assign(api, { errorSchema: Schema.Never })
  return api as unknown as HttpApi.HttpApi<Id, never, never, never>
}
