import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { Forbidden } from "../domain/platform/Errors.js"

/**
 * Which web pages may call Ribbon from a browser, and under which names Ribbon answers (docs/mcp.md, "Browser
 * clients"). Two rules use it:
 * - CORS: `/mcp`, the OAuth endpoints a client calls itself (`/oauth/token`, `/oauth/register`,
 *   `/oauth/revoke`) and `/.well-known/*` (metadata, the JWKS) answer pages of an allowed origin with CORS
 *   headers; the HTML pages (sign-in, consent, payment, gift) never do.
 * - DNS rebinding: `/mcp` refuses a request whose `Origin` is not allowed, or whose `Host` is not this
 *   server's, with a 403 (the MCP transport's rule), before it looks at the token.
 */

export interface OriginSettings {
  /** PUBLIC_URL: its origin and host are the server's own. */
  readonly publicUrl: string
  /** ALLOWED_ORIGINS: the origins of other sites whose pages may call (`https://inspector.example.com`). */
  readonly allowedOrigins: ReadonlyArray<string>
  /** In development, the port whose loopback names (`localhost`, `127.0.0.1`, `[::1]`) are the server's too. */
  readonly localPort?: number | undefined
}

/** `text` as `scheme://host[:port]` when it is an http(s) origin and nothing more (no path, query or user). */
export const originOf = (text: string): string | undefined => {
  try {
    const url = new URL(text)
    const bare = url.pathname === "/" && url.search === "" && url.hash === "" && url.username === ""
    return bare && (url.protocol === "http:" || url.protocol === "https:") ? url.origin : undefined
  } catch {
    return undefined
  }
}

/** A `Host` header as `URL.host` writes it (lower case, no default port), for a server at `protocol`. */
const hostOf = (host: string, protocol: string): string | undefined => {
  if (/[/?#@\s]/.test(host)) return undefined
  try {
    return new URL(`${protocol}//${host}`).host
  } catch {
    return undefined
  }
}

export class OriginPolicy extends Context.Tag("ribbon/OriginPolicy")<
  OriginPolicy,
  {
    /** Whether a page of this origin (an `Origin` header) may call `/mcp` and get CORS headers. */
    readonly allowsOrigin: (origin: string) => boolean
    /** Whether a `Host` header names this server. */
    readonly servesHost: (host: string) => boolean
  }
>() {
  static make(settings: OriginSettings): OriginPolicy["Type"] {
    const publicUrl = new URL(settings.publicUrl)
    const loopback =
      settings.localPort === undefined
        ? []
        : ["localhost", "127.0.0.1", "[::1]"].map((name) => `${name}:${settings.localPort}`)
    const hosts = new Set([publicUrl.host, ...loopback])
    const origins = new Set([
      publicUrl.origin,
      ...loopback.map((host) => `http://${host}`),
      ...settings.allowedOrigins.map((origin) => originOf(origin) ?? origin)
    ])
    return {
      allowsOrigin: (origin) => {
        const normalized = originOf(origin)
        return normalized !== undefined && origins.has(normalized)
      },
      servesHost: (host) => {
        const normalized = hostOf(host, publicUrl.protocol)
        return normalized !== undefined && hosts.has(normalized)
      }
    }
  }

  static layer(settings: OriginSettings) {
    return Layer.succeed(OriginPolicy, OriginPolicy.make(settings))
  }
}

/** The methods a path serves to other origins, or `undefined` where CORS is not served. */
const corsMethodsOf = (path: string): string | undefined => {
  if (path === "/mcp") return "POST, GET, DELETE"
  if (path === "/oauth/token" || path === "/oauth/register" || path === "/oauth/revoke") return "POST"
  if (path.startsWith("/.well-known/")) return "GET"
  return undefined
}

/** Request headers a cross-origin page may send: those of the MCP transport and of OAuth clients. */
const allowedRequestHeaders =
  "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID, X-Request-Id"

/** Response headers a cross-origin page may read: the challenge that starts OAuth discovery, among others. */
const exposedResponseHeaders = "WWW-Authenticate, Mcp-Session-Id, X-Request-Id, Retry-After"

const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.url.split("?", 1)[0]!

/**
 * The CORS headers of a response to `request`, or `undefined` where CORS is not served. `Vary: Origin` goes
 * on every response of a CORS path (caches must keep one answer per origin); the rest only when the
 * request's `Origin` is allowed. No credentials: tokens travel in `Authorization`, never in cookies.
 */
export const corsHeadersFor = (
  policy: OriginPolicy["Type"],
  request: HttpServerRequest.HttpServerRequest
): Record<string, string> | undefined => {
  if (corsMethodsOf(pathOf(request)) === undefined) return undefined
  const origin = request.headers.origin
  return origin !== undefined && policy.allowsOrigin(origin)
    ? {
        vary: "Origin",
        "access-control-allow-origin": origin,
        "access-control-expose-headers": exposedResponseHeaders
      }
    : { vary: "Origin" }
}

/**
 * The answer to a CORS preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) on a CORS
 * path: 204 with what may be sent for an allowed origin, a 403 for another; `undefined` for any other request.
 */
export const preflightFor = (
  policy: OriginPolicy["Type"],
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse, Forbidden> | undefined => {
  const methods = corsMethodsOf(pathOf(request))
  const origin = request.headers.origin
  if (
    request.method !== "OPTIONS" ||
    methods === undefined ||
    origin === undefined ||
    request.headers["access-control-request-method"] === undefined
  ) {
    return undefined
  }
  if (!policy.allowsOrigin(origin)) return Effect.fail(foreignOrigin(origin))
  return Effect.succeed(
    HttpServerResponse.empty({
      status: 204,
      headers: {
        "access-control-allow-methods": methods,
        "access-control-allow-headers": allowedRequestHeaders,
        "access-control-max-age": "600"
      }
    })
  )
}

const foreignOrigin = (origin: string) =>
  new Forbidden({ message: `Pages of ${origin} may not call this server: it is not one of its allowed origins.` })

/**
 * The MCP transport's guard against DNS rebinding: a browser page that got this server's address under
 * another name sends that name as `Host` and its own `Origin`. Either one not this server's is a 403.
 * Clients outside a browser send no `Origin`.
 */
export const checkMcpCaller = (
  policy: OriginPolicy["Type"],
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<void, Forbidden> => {
  const { host, origin } = request.headers
  if (host === undefined || !policy.servesHost(host)) {
    return Effect.fail(
      new Forbidden({ message: `This server does not answer to the host ${host ?? "(none)"} on /mcp.` })
    )
  }
  if (origin !== undefined && !policy.allowsOrigin(origin)) return Effect.fail(foreignOrigin(origin))
  return Effect.void
}
