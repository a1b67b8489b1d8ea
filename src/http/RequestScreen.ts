import { HttpMethod, type HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { InvalidRequest, UnsupportedMediaType } from "../domain/platform/Errors.js"
import type { RouteTable } from "./Routes.js"

/**
 * Deepest nesting of objects and arrays a JSON body may have. Ribbon's deepest body nests 4 levels; the
 * schema decoders recurse, so thousands of levels would overflow the stack.
 */
export const maxJsonDepth = 32

/** Why a JSON text is refused before it is parsed; malformed JSON is left to the parser's own 400. */
export const jsonHazard = (text: string): "nul" | "depth" | undefined => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) {
        if (text.startsWith("u0000", i + 1)) return "nul"
        i++
      } else if (c === 34 /* " */) inString = false
      else if (c === 0) return "nul"
    } else if (c === 34) inString = true
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > maxJsonDepth) return "depth"
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--
  }
  return undefined
}

const nulRefused = (where: string) =>
  InvalidRequest.field("", `The ${where} contains a NUL character, which no field accepts.`)

/** Whether the path's percent-encoding decodes to text (`%zz`, `%FF` and encoded surrogates do not). */
const decodablePath = (url: string): boolean => {
  const path = url.split("?", 1)[0]!
  if (!path.includes("%")) return true
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

const undecodablePath = InvalidRequest.field("", "The path is not valid percent-encoded UTF-8.")

const tooDeep = InvalidRequest.field("", `The JSON body nests deeper than ${maxJsonDepth} levels.`)

const mediaTypeOf = (contentType: string | undefined): string | undefined =>
  contentType?.split(";", 1)[0].trim().toLowerCase() || undefined

/**
 * What every request is checked for before it is routed and decoded, so no operation has to:
 * - a NUL character in the URL or the body is refused with a 400 (PostgreSQL refuses it in text, so it
 *   would otherwise surface as a 500 from whichever query it reached), and so is a path whose
 *   percent-encoding does not decode (the router would answer a 404 that names no field);
 * - a body in a media type its operation does not take gets a 415 (no content type counts as JSON, as the
 *   decoder takes it);
 * - a JSON body nested deeper than `maxJsonDepth` gets a 400;
 * - a `multipart/form-data` body (a file upload) is left unread, to its operation's multipart parser;
 * - an empty JSON body, or an empty body with no content type, where the operation's body has no required
 *   field, is taken as `{}` (the platform reads an empty body as `null`, which no object schema takes):
 *   `curl -X POST …/cancel` needs no `-d '{}'`.
 * The body is read here once; the decoder reads the same buffered text. Succeeds with the request to serve.
 */
export const screenRequest = (
  request: HttpServerRequest.HttpServerRequest,
  routes: RouteTable
): Effect.Effect<HttpServerRequest.HttpServerRequest, unknown> => {
  if (request.url.includes("%00")) return Effect.fail(nulRefused("URL"))
  if (!decodablePath(request.url)) return Effect.fail(undecodablePath)
  if (!HttpMethod.hasBody(request.method)) return Effect.succeed(request)
  const operation = routes.find(request.method, request.url)
  const accepted = operation?.bodyMediaTypes
  if (accepted === undefined) return Effect.succeed(request)
  const sent = mediaTypeOf(request.headers["content-type"])
  const mediaType = sent ?? "application/json"
  if (!accepted.includes(mediaType)) {
    // A bodiless request without a content type is left to the decoder, which names the missing fields; or,
    // where the body may be left out, it is `{}` whatever media type the operation takes (a form's too).
    if (sent === undefined && (request.headers["content-length"] ?? "0") === "0") {
      if (operation?.bodyOptional !== true) return Effect.succeed(request)
      return Effect.map(request.text, (text) => (text.trim() === "" ? withEmptyObjectBody(request) : request))
    }
    return Effect.fail(
      new UnsupportedMediaType({
        message: `This operation takes its body as ${accepted.join(" or ")}, not ${mediaType}.`,
        acceptedMediaTypes: accepted
      })
    )
  }
  // A file upload is read once, by the multipart parser, as a stream to disk: never buffered here as text. Its
  // operation judges what the file holds.
  if (mediaType === "multipart/form-data") return Effect.succeed(request)
  return Effect.flatMap(request.text, (text) => {
    const json = mediaType === "application/json"
    if (json && operation?.bodyOptional === true && text.trim() === "")
      return Effect.succeed(withEmptyObjectBody(request))
    const hazard = json ? jsonHazard(text) : /%00|\0/.test(text) ? "nul" : undefined
    if (hazard === undefined) return Effect.succeed(request)
    return Effect.fail(hazard === "nul" ? nulRefused("body") : tooDeep)
  })
}

/**
 * The request with `{}` as its JSON body. The platform's request has no way to replace a body, so this is
 * the same request with its body readers shadowed; everything else (headers, URL, address) is its own.
 */
const withEmptyObjectBody = (request: HttpServerRequest.HttpServerRequest): HttpServerRequest.HttpServerRequest =>
  Object.create(request, {
    text: { value: Effect.succeed("{}") },
    json: { value: Effect.succeed({}) }
  })
