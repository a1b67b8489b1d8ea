import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import { createServer } from "node:http"
import { request } from "node:https"
import * as Os from "node:os"
import * as Path from "node:path"
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../../src/layers/Config.js"
import { mtlsHttpServer } from "../../src/layers/Mtls.js"
import { ApiLive, ServicesLive, serveApi } from "../../src/layers/Server.js"
import { PublicUrl } from "../../src/services/catalog/Catalog.js"
import { Signals } from "../../src/services/platform/Signals.js"
import { createCompany, keyHeaders, v2Keys, v3Keys } from "../support/company.js"
import { TestDatabase } from "../support/database.js"
import { RateLimitsMemoryLive, TestSettingsLive, testMaxBodyBytes, testPublicUrl } from "../support/http.js"

/**
 * The mutual-TLS listener beside the plain one, on the same services: certificates for a test CA, the
 * server and a client are made with openssl here, plus a client certificate from a CA the server does not trust.
 */

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-mtls-"))
const file = (name: string) => Path.join(dir, name)
const openssl = (...args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })

const makeCertificates = () => {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  for (const ca of ["ca", "rogue-ca"]) {
    openssl("req", "-x509", ...ec, "-keyout", `${ca}.key`, "-out", `${ca}.crt`, "-days", "2", "-subj", `/CN=${ca}`)
  }
  const issue = (name: string, ca: string, ext: string) => {
    openssl("req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`)
    Fs.writeFileSync(file(`${name}.ext`), ext)
    openssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${ca}.crt`,
      "-CAkey",
      `${ca}.key`,
      "-CAcreateserial",
      "-out",
      `${name}.crt`,
      "-days",
      "2",
      "-extfile",
      `${name}.ext`
    )
  }
  issue("server", "ca", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
  issue("client", "ca", "extendedKeyUsage=clientAuth\n")
  issue("rogue", "rogue-ca", "extendedKeyUsage=clientAuth\n")
}

interface Reply {
  readonly status: number
  readonly body: any
}

/** A request to the mTLS listener, with or without a client certificate. */
const httpsGet = (port: number, path: string, headers: Record<string, string>, client?: "client" | "rogue") =>
  Effect.async<Reply, Error>((resume) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        headers,
        ca: Fs.readFileSync(file("ca.crt")),
        ...(client === undefined
          ? {}
          : { cert: Fs.readFileSync(file(`${client}.crt`)), key: Fs.readFileSync(file(`${client}.key`)) })
      },
      (res) => {
        let text = ""
        res.on("data", (chunk) => {
          text += chunk
        })
        res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: JSON.parse(text || "null") })))
      }
    )
    req.on("error", (error) => resume(Effect.fail(error)))
    req.end()
  })

const plainGet = (port: number, path: string, headers: Record<string, string>) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers })
    return { status: response.status, body: await response.json() } as Reply
  })

const portOf = (context: Context.Context<HttpServer.HttpServer>) =>
  (Context.get(context, HttpServer.HttpServer).address as HttpServer.TcpAddress).port

const Services = Layer.mergeAll(ServicesLive, RateLimitsMemoryLive).pipe(
  Layer.provide([Layer.succeed(PublicUrl, testPublicUrl), Signals.layerInProcess, TestSettingsLive]),
  Layer.provideMerge(TestDatabase)
)

/** Both listeners on the test's services; their ports. */
const listeners = Effect.gen(function* () {
  const services = yield* Effect.context<Layer.Layer.Success<typeof Services>>()
  const provided = Layer.succeedContext(services)
  const plain = yield* Layer.build(
    serveApi(ApiLive, { maxBodyBytes: testMaxBodyBytes, telemetry: false }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provide(provided)
    )
  )
  const mtls = yield* Layer.build(
    serveApi(ApiLive, { maxBodyBytes: testMaxBodyBytes, telemetry: false, publicApiOnly: true }).pipe(
      Layer.provideMerge(
        mtlsHttpServer({
          port: 0,
          host: "127.0.0.1",
          ca: file("ca.crt"),
          cert: file("server.crt"),
          key: file("server.key")
        })
      ),
      Layer.provide(provided)
    )
  )
  return { plain: portOf(plain), mtls: portOf(mtls) }
})

describe("mutual TLS", () => {
  it("reads MTLS_PORT, MTLS_CA, TLS_CERT and TLS_KEY together", () => {
    const read = (map: Record<string, string>) =>
      Effect.runSync(
        Effect.map(AppConfig, (config) => config.mtls).pipe(
          Effect.provide(AppConfig.Default),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(map))))
        )
      )
    expect(read({})).toEqual(Option.none())
    expect(read({ MTLS_PORT: "8443", MTLS_CA: "/ca.pem", TLS_CERT: "/c.pem", TLS_KEY: "/k.pem" })).toEqual(
      Option.some({ port: 8443, ca: "/ca.pem", cert: "/c.pem", key: "/k.pem" })
    )
  })

  it.layer(Services, { timeout: 120_000 })((it) => {
    it.scoped(
      "an enforceMtls key works on the mTLS listener only; clients without a trusted certificate are refused",
      () =>
        Effect.gen(function* () {
          makeCertificates()
          yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
          const ports = yield* listeners
          const company = yield* createCompany()
          const created = yield* httpsGet(ports.mtls, v2Keys, keyHeaders(company.apiKey), "client")
          expect(created.status).toBe(200)

          // An enforceMtls key, created over the plain listener by an ordinary key.
          const response = yield* Effect.promise(async () => {
            const r = await fetch(`http://127.0.0.1:${ports.plain}${v3Keys}`, {
              method: "POST",
              headers: { ...keyHeaders(company.apiKey), "content-type": "application/json" },
              body: JSON.stringify({ name: "mtls", enforceMtls: true })
            })
            return (await r.json()) as any
          })
          const mtlsKey = response.data.apiKey as string
          expect(response.data.enforceMtls).toBe(true)

          const over = yield* httpsGet(ports.mtls, v3Keys, keyHeaders(mtlsKey), "client")
          expect(over.status).toBe(200)
          expect(over.body.data.map((k: any) => k.name)).toContain("mtls")
          const plain = yield* plainGet(ports.plain, v3Keys, keyHeaders(mtlsKey))
          expect(plain.status).toBe(403)
          expect(plain.body).toEqual({
            status: 403,
            errorCode: "403_KEYS_003",
            message: expect.stringContaining("mTLS")
          })

          // No certificate, or one from a CA the server does not trust: the handshake fails.
          const bare = yield* Effect.flip(httpsGet(ports.mtls, v3Keys, keyHeaders(mtlsKey)))
          expect(bare.message).toMatch(/certificate|handshake|socket hang up|ECONNRESET|alert/i)
          const rogue = yield* Effect.flip(httpsGet(ports.mtls, v3Keys, keyHeaders(mtlsKey), "rogue"))
          expect(rogue.message).toMatch(/certificate|handshake|socket hang up|ECONNRESET|alert|unknown ca/i)

          // Only /public-api is served there.
          const health = yield* httpsGet(ports.mtls, "/health", {}, "client")
          expect(health.status).toBe(404)
        })
    )
  })
})
