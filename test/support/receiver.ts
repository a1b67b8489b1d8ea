import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import type { IncomingHttpHeaders } from "node:http"
import { createServer } from "node:https"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import type { TLSSocket } from "node:tls"
import { Effect } from "effect"

/**
 * A real HTTPS callback receiver on 127.0.0.1 with a self-signed certificate (made with openssl, for
 * 127.0.0.1, ::1 and localhost), for tests of outbound calls and signed callbacks: it records every
 * request and TCP connection, and answers 204 (or what `reply` says).
 */

const makeCertificate = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-receiver-"))
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      "key.pem",
      "-out",
      "cert.pem",
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost"
    ],
    { cwd: dir, stdio: "pipe" }
  )
  return {
    key: Fs.readFileSync(Path.join(dir, "key.pem"), "utf8"),
    cert: Fs.readFileSync(Path.join(dir, "cert.pem"), "utf8")
  }
}

/** The receiver's certificate: trust it with `OutboundPolicy.layer({ trustedCaPems: [certificate.cert] })`. */
export const certificate = makeCertificate()

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** The SNI host name the client sent (`false` for none, as for an IP address). */
  readonly servername: string | false | null
}

export interface Reply {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body?: string
  /** Never answer (for time limits). */
  readonly hang?: boolean
  /** Answer only once this settles (a receiver that answers slowly). */
  readonly after?: Promise<unknown>
}

export interface HttpsReceiver {
  readonly port: number
  /** The URL of `path` on the receiver, addressed as `host` (127.0.0.1 unless told). */
  readonly url: (path: string, host?: string) => string
  readonly received: Array<Received>
  /** How many TCP connections were made to it. */
  readonly connections: () => number
  readonly close: () => void
}

/** Starts a receiver for the scope; `reply` gets each request and how many came before it. */
export const httpsReceiver = (reply: (request: Received, index: number) => Reply = () => ({ status: 204 })) =>
  Effect.acquireRelease(
    Effect.async<HttpsReceiver>((resume) => {
      const received: Array<Received> = []
      let connections = 0
      const server = createServer(certificate, (req, res) => {
        let body = ""
        req.setEncoding("utf8")
        req.on("data", (chunk: string) => {
          body += chunk
        })
        req.on("end", () => {
          const request: Received = {
            method: req.method ?? "",
            path: req.url ?? "",
            headers: req.headers,
            body,
            servername: (req.socket as TLSSocket).servername ?? false
          }
          const answer = reply(request, received.length)
          received.push(request)
          if (answer.hang === true) return
          const send = () => {
            res.writeHead(answer.status, answer.headers ?? {})
            res.end(answer.body ?? "")
          }
          if (answer.after === undefined) return send()
          answer.after.then(send, send)
        })
      })
      server.on("connection", () => {
        connections++
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(
          Effect.succeed({
            port,
            url: (path: string, host = "127.0.0.1") => `https://${host}:${port}${path}`,
            received,
            connections: () => connections,
            close: () => {
              server.closeAllConnections()
              server.close()
            }
          })
        )
      })
    }),
    (receiver) => Effect.sync(() => receiver.close())
  )
