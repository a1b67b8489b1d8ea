import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import { request } from "node:https"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { AppConfig } from "../../src/layers/Config.js"
import { CliDatabaseLive } from "../../src/layers/Database.js"
import { MigrationsLive } from "../../src/layers/Migrations.js"
import { makeServerLive } from "../../src/layers/Server.js"
import { freePort } from "../support/auth.js"
import { createCompany, keyHeaders, v2Keys, v3Keys } from "../support/company.js"

/**
 * The mutual-TLS listener as `npm start` runs it: the server of `ribbon serve` with MTLS_PORT, MTLS_CA,
 * TLS_CERT and TLS_KEY set, on an embedded database in a temporary DATA_DIR. Certificates for a test CA,
 * the server and a client are made with openssl here, plus a client certificate from a CA the server does
 * not trust.
 */

const openssl = (dir: string, ...args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })

/** `ca.crt`, `server.crt`/`.key` and `client.crt`/`.key` signed by it, and `rogue.crt`/`.key` by `rogue-ca`. */
const makeCertificates = (dir: string) => {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  for (const ca of ["ca", "rogue-ca"]) {
    openssl(dir, "req", "-x509", ...ec, "-keyout", `${ca}.key`, "-out", `${ca}.crt`, "-days", "2", "-subj", `/CN=${ca}`)
  }
  const issue = (name: string, ca: string, ext: string) => {
    openssl(dir, "req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`)
    Fs.writeFileSync(Path.join(dir, `${name}.ext`), ext)
    const signed = ["-CA", `${ca}.crt`, "-CAkey", `${ca}.key`, "-CAcreateserial", "-days", "2"]
    openssl(dir, "x509", "-req", "-in", `${name}.csr`, ...signed, "-out", `${name}.crt`, "-extfile", `${name}.ext`)
  }
  issue("server", "ca", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
  issue("client", "ca", "extendedKeyUsage=clientAuth\n")
  issue("rogue", "rogue-ca", "extendedKeyUsage=clientAuth\n")
}

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-mtls-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

interface Reply {
  readonly status: number
  readonly body: any
}

/** A request to the mTLS listener, with the client certificate `client` or `rogue`, or none. */
const httpsGet = (
  dir: string,
  port: number,
  path: string,
  headers: Record<string, string>,
  client?: "client" | "rogue"
) =>
  Effect.async<Reply, Error>((resume) => {
    const read = (name: string) => Fs.readFileSync(Path.join(dir, name))
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        headers,
        ca: read("ca.crt"),
        ...(client === undefined ? {} : { cert: read(`${client}.crt`), key: read(`${client}.key`) })
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

const plainRequest = (port: number, path: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, init)
    return { status: response.status, body: await response.json() } as Reply
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

  it.scopedLive(
    "the server starts with both listeners; an enforceMtls key works on the mTLS one only, and clients without a trusted certificate are refused",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        makeCertificates(dir)
        const ports = { plain: yield* freePort, mtls: yield* freePort }
        const env = ConfigProvider.fromMap(
          new Map([
            ["PORT", String(ports.plain)],
            ["MTLS_PORT", String(ports.mtls)],
            ["MTLS_CA", Path.join(dir, "ca.crt")],
            ["TLS_CERT", Path.join(dir, "server.crt")],
            ["TLS_KEY", Path.join(dir, "server.key")],
            ["DATA_DIR", Path.join(dir, "data")],
            ["SHUTDOWN_GRACE", "1 second"]
          ])
        )
        // A company and its first key, made as `ribbon company create` makes them before the server starts.
        const company = yield* createCompany().pipe(
          Effect.provide(MigrationsLive.pipe(Layer.provideMerge(CliDatabaseLive), Layer.provide(AppConfig.Default))),
          Effect.withConfigProvider(env)
        )
        yield* Layer.build(makeServerLive({ host: "127.0.0.1" })).pipe(Effect.withConfigProvider(env))

        // A client certificate signed by MTLS_CA: an ordinary key works there.
        const ordinary = yield* httpsGet(dir, ports.mtls, v2Keys, keyHeaders(company.apiKey), "client")
        expect(ordinary.status).toBe(200)

        // An enforceMtls key, created over the plain listener by an ordinary key.
        const response = yield* plainRequest(ports.plain, v3Keys, {
          method: "POST",
          headers: { ...keyHeaders(company.apiKey), "content-type": "application/json" },
          body: JSON.stringify({ name: "mtls", enforceMtls: true })
        })
        const mtlsKey = response.body.data.apiKey as string
        expect(response.body.data.enforceMtls).toBe(true)

        const over = yield* httpsGet(dir, ports.mtls, v3Keys, keyHeaders(mtlsKey), "client")
        expect(over.status).toBe(200)
        expect(over.body.data.map((k: any) => k.name)).toContain("mtls")
        const plain = yield* plainRequest(ports.plain, v3Keys, { headers: keyHeaders(mtlsKey) })
        expect(plain.status).toBe(403)
        expect(plain.body).toEqual({
          status: 403,
          errorCode: "403_KEYS_003",
          message: expect.stringContaining("mTLS")
        })

        // No certificate, or one from a CA the server does not trust: the handshake fails.
        const bare = yield* Effect.flip(httpsGet(dir, ports.mtls, v3Keys, keyHeaders(mtlsKey)))
        expect(bare.message).toMatch(/certificate|handshake|socket hang up|ECONNRESET|alert/i)
        const rogue = yield* Effect.flip(httpsGet(dir, ports.mtls, v3Keys, keyHeaders(mtlsKey), "rogue"))
        expect(rogue.message).toMatch(/certificate|handshake|socket hang up|ECONNRESET|alert|unknown ca/i)

        // The served document names both listeners as its servers.
        const document = yield* plainRequest(ports.plain, "/openapi.json")
        expect(document.body.servers).toEqual([
          { url: `http://localhost:${ports.plain}`, description: "This server" },
          { url: `https://localhost:${ports.mtls}`, description: expect.stringContaining("Mutual TLS") }
        ])

        // Only /public-api is served there; the plain listener serves everything.
        expect((yield* httpsGet(dir, ports.mtls, "/health", {}, "client")).status).toBe(404)
        expect((yield* plainRequest(ports.plain, "/health")).status).toBe(200)
      }),
    180_000
  )
})
