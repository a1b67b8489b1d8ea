import { HttpApi, HttpApiError, OpenApi } from "@effect/platform"
import { Effect, type ParseResult, Schema } from "effect"
import { formatPath, plainIssues } from "../domain/platform/IssueMessages.js"
import { finishDocument } from "./OpenApiDocument.js"

/**
 * Request decoding failures in plain words. HttpApi turns every failed decoding of a request into an
 * `HttpApiDecodeError` through this one static method, with Effect's own formatter, whose messages describe a
 * field by its documentation ("Expected In minor units of the billing currency (USD), actual -1"). It is
 * replaced, once, by one that names the rule (`plainIssues`); the middleware renders the issues in each API
 * line's 400. test/http/ApiBase.test.ts pins what that relies on.
 */
HttpApiError.HttpApiDecodeError.fromParseError = (error: ParseResult.ParseError) => {
  const issues = plainIssues(error.issue).map(({ path, message }) => ({ _tag: "Type" as const, path, message }))
  const message = issues.map(({ path, message }) => `${formatPath(path) || "request"}: ${message}`).join("; ")
  return Effect.succeed(new HttpApiError.HttpApiDecodeError({ issues, message }))
}

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
