import * as Fs from "node:fs"
import { createServer, type Server } from "node:https"
import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect } from "effect"
import { NotFound } from "../domain/platform/Errors.js"
import { render } from "../http/ErrorLines.js"
import { answeringHalfClosed } from "./HttpListener.js"

/**
 * The mutual-TLS listener (docs/company-api.md): HTTPS on MTLS_PORT with TLS_CERT/TLS_KEY, accepting only
 * clients whose certificate is signed by MTLS_CA (the handshake fails otherwise), serving `/public-api`
 * only. `enforceMtls` keys work here and nowhere else (src/http/company/ApiKeyAuthLive.ts checks the socket).
 */

export interface MtlsOptions {
  readonly port: number
  /** PEM file paths. */
  readonly ca: string
  readonly cert: string
  readonly key: string
  readonly host?: string
}

/** The HTTPS server that verifies client certificates, not listening yet (reads the PEM files). */
export const mtlsNodeServer = (options: MtlsOptions) =>
  answeringHalfClosed(
    createServer({
      ca: Fs.readFileSync(options.ca),
      cert: Fs.readFileSync(options.cert),
      key: Fs.readFileSync(options.key),
      requestCert: true,
      rejectUnauthorized: true
    })
  )

/** The mutual-TLS listener: `server` (from `mtlsNodeServer`) listening on MTLS_PORT. */
export const mtlsHttpServer = (server: Server, options: MtlsOptions) =>
  NodeHttpServer.layer(() => server as any, {
    port: options.port,
    ...(options.host === undefined ? {} : { host: options.host })
  })

export const mtlsRoot = "/public-api"

/** Anything outside `/public-api` is a 404 on this listener. */
export const publicApiOnly = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    if (request.url === mtlsRoot || request.url.startsWith(`${mtlsRoot}/`)) return app
    const rendered = render("v1", new NotFound({ message: "The mutual-TLS listener serves /public-api only." }))
    return Effect.succeed(
      HttpServerResponse.unsafeJson(rendered.body, { status: 404, contentType: rendered.contentType })
    )
  })
