import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import type { IncomingHttpHeaders } from "node:http"
import { createServer } from "node:https"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect } from "effect"

/**
 * A real HTTPS callback receiver on 127.0.0.1 with a self-signed certificate (made with openssl), for
 * tests of signed callbacks: it records every request and answers 204 (or what `reply` says).
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
      "subjectAltName=IP:127.0.0.1,DNS:localhost"
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
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export interface Reply {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body?: string
}

/** Starts a receiver for the scope; `reply` gets each request and how many came before it. */
export const httpsReceiver = (reply: (request: Received, index: number) => Reply = () => ({ status: 204 })) =>
  Effect.acquireRelease(
    Effect.async<{
      readonly url: (path: string) => string
      readonly received: Array<Received>
      readonly close: () => void
    }>((resume) => {
      const received: Array<Received> = []
      const server = createServer(certificate, (req, res) => {
        let body = ""
        req.setEncoding("utf8")
        req.on("data", (chunk: string) => {
          body += chunk
        })
        req.on("end", () => {
          const request: Received = { path: req.url ?? "", headers: req.headers, body }
          const answer = reply(request, received.length)
          received.push(request)
          res.writeHead(answer.status, answer.headers ?? {})
          res.end(answer.body ?? "")
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(
          Effect.succeed({
            url: (path: string) => `https://127.0.0.1:${port}${path}`,
            received,
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
