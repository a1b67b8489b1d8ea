import { type HttpApi, HttpApiSchema, type HttpMethod } from "@effect/platform"
import { Either, Option, Schema, type SchemaAST } from "effect"
import * as FindMyWay from "find-my-way-ts"
import { endpointsOf } from "./Reflection.js"

/**
 * The router's settings, shared by the server's router and the route table below so that both match
 * alike. A path id longer than find-my-way's default 100 characters would make the route disappear (a
 * 404) instead of reaching its schema, which refuses it with a 400 naming the field. find-my-way folds
 * doubled slashes before it splits off the query, so by default `?redirect_uri=http://127.0.0.1/cb`
 * arrived as `http:/127.0.0.1/cb`: a URL is taken as written instead.
 */
export const routerConfig = { maxParamLength: 8192, ignoreDuplicateSlashes: false } as const

/**
 * An operation as the request screening sees it: the media types its body is taken in, if it takes one,
 * and whether that body may be left out (it has no required field).
 */
export interface RouteOperation {
  readonly method: HttpMethod.HttpMethod
  /** As defined, with `:name` parameters. */
  readonly path: string
  readonly bodyMediaTypes: ReadonlyArray<string> | undefined
  readonly bodyOptional: boolean
  /**
   * The body limit of a file upload (a `Multipart` payload with its own `maxTotalSize`), in bytes, in place of
   * the server's; `undefined` for every other operation.
   */
  readonly bodyLimitBytes: number | undefined
}

/**
 * The routes of an HttpApi, read off its definition, for what is decided before routing: which methods a
 * path answers (405 with `Allow`) and which media types an operation takes its body in (415).
 */
export interface RouteTable {
  /** The operation a method and path reach, if any. */
  readonly find: (method: string, url: string) => RouteOperation | undefined
  /** The methods the path answers, empty when no route has it. */
  readonly methodsOf: (url: string) => ReadonlyArray<string>
  /** Every operation, in definition order. */
  readonly operations: ReadonlyArray<RouteOperation>
}

const methods = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const

/**
 * `Union(json, form)` takes both media types; a single schema takes its own; a `Multipart` one (a file upload,
 * marked by its own annotation rather than an encoding) takes `multipart/form-data`.
 */
const mediaTypesOf = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  const members = ast._tag === "Union" ? ast.types : [ast]
  return [
    ...new Set(
      members.map((member) =>
        HttpApiSchema.getMultipart(member) !== undefined || HttpApiSchema.getMultipartStream(member) !== undefined
          ? "multipart/form-data"
          : HttpApiSchema.getEncoding(member).contentType
      )
    )
  ]
}

const tables = new WeakMap<object, RouteTable>()

export const routeTableOf = (api: HttpApi.HttpApi.Any): RouteTable => {
  const known = tables.get(api)
  if (known !== undefined) return known
  const router = FindMyWay.make<RouteOperation>(routerConfig)
  const operations: Array<RouteOperation> = []
  for (const { endpoint } of endpointsOf(api as HttpApi.HttpApi<string, never>)) {
    const payload = endpoint.payloadSchema
    const bodyMediaTypes = payload._tag === "Some" ? mediaTypesOf(payload.value.ast) : undefined
    const bodyOptional =
      payload._tag === "Some" && Either.isRight(Schema.decodeUnknownEither(payload.value as Schema.Schema<unknown>)({}))
    const multipart = payload._tag === "Some" ? HttpApiSchema.getMultipart(payload.value.ast) : undefined
    const bodyLimitBytes =
      multipart?.maxTotalSize === undefined || Option.isNone(multipart.maxTotalSize)
        ? undefined
        : Number(multipart.maxTotalSize.value)
    const operation = { method: endpoint.method, path: endpoint.path, bodyMediaTypes, bodyOptional, bodyLimitBytes }
    operations.push(operation)
    router.on(endpoint.method, endpoint.path as FindMyWay.PathInput, operation)
  }
  const table: RouteTable = {
    find: (method, url) => router.find(method, url)?.handler,
    methodsOf: (url) => methods.filter((method) => router.find(method, url) !== undefined),
    operations
  }
  tables.set(api, table)
  return table
}
