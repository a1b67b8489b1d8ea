import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Config, Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { makeId } from "../src/domain/platform/Ids.js"
import { postgres } from "../src/layers/Database.js"
import { PublicUrl } from "../src/services/catalog/Catalog.js"
import { OAuthClients } from "../src/services/identity/OAuthClients.js"
import { Tokens } from "../src/services/identity/Tokens.js"
import { Users } from "../src/services/identity/Users.js"
import { OutboundPolicy } from "../src/services/platform/OutboundHttp.js"

/** What the Postgres benchmarks share: flags, their database, the bundled server, a token, percentiles. */

export const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
export const host = "127.0.0.1"

const argv = process.argv.slice(2)

/** `--name value` from the command line, or `fallback`. */
export const option = (name: string, fallback: string) => {
  const index = argv.indexOf(`--${name}`)
  return index === -1 ? fallback : argv[index + 1]!
}

/** The Postgres server (DATABASE_URL, or the local one) and the URL of the benchmark's database on it. */
export const benchDatabase = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`--database: not a plain identifier: ${name}`)
  const serverUrl = new URL(
    Effect.runSync(
      Config.string("DATABASE_URL").pipe(Config.withDefault("postgres://postgres@127.0.0.1:5432/postgres"))
    )
  )
  const databaseUrl = new URL(serverUrl)
  databaseUrl.pathname = `/${name}`
  return { serverUrl, databaseUrl }
}

export const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = Net.createServer()
    probe.listen(0, host, () => {
      const { port } = probe.address() as Net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** Whether the server on `port` answers `/health` with a 200. */
export const healthy = (port: number) =>
  new Promise<boolean>((resolve) => {
    const request = Http.get({ host, port, path: "/health" }, (response) => {
      response.resume()
      response.on("end", () => resolve(response.statusCode === 200))
    })
    request.on("error", () => resolve(false))
  })

/** The server's tuning settings, passed through from the bench's own environment when set there. */
const tuning = ["DATABASE_POOL_SIZE", "WORKER_CONCURRENCY", "PAYMENTS_IN_FLIGHT"]
const passThrough = () =>
  Object.fromEntries(tuning.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])))

/**
 * The server as `npm start` runs it (the esbuild bundle, rebuilt first), on `port` with `env` (and the
 * tuning settings of the bench's environment); resolves once `/health` answers. `build: false` runs the
 * bundle as it is, so that a further instance runs the same code as the first.
 */
export const startServer = async (
  port: number,
  env: Record<string, string>,
  nodeFlags: ReadonlyArray<string> = [],
  options: { readonly build?: boolean } = {}
): Promise<ChildProcess> => {
  if (options.build !== false) {
    await new Promise<void>((resolve, reject) =>
      spawn(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" }).on("exit", (code) =>
        code === 0 ? resolve() : reject(new Error("build failed"))
      )
    )
  }
  const child = spawn(process.execPath, [...nodeFlags, "dist/ribbon.mjs", "serve"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    env: { PATH: process.env.PATH ?? "", PORT: String(port), LOG_LEVEL: "Warn", ...passThrough(), ...env }
  })
  for (let attempt = 0; attempt < 3000; attempt++) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode})`)
    if (await healthy(port)) return child
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("the server did not start within 5 minutes")
}

/** An access token with `scope` of a new user, for the server at `publicUrl` on the database at `databaseUrl`. */
export const issueToken = (options: {
  readonly publicUrl: string
  readonly databaseUrl: URL
  readonly scope: string
  readonly clientName: string
  readonly defaultCountry: string
}) =>
  Effect.gen(function* () {
    const clients = yield* OAuthClients
    const tokenService = yield* Tokens
    const user = yield* (yield* Users).create({
      email: `bench-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`,
      password: "correct horse battery",
      defaultCountry: options.defaultCountry
    })
    const client = yield* clients.register({
      client_name: options.clientName,
      redirect_uris: ["http://127.0.0.1/callback"],
      token_endpoint_auth_method: "none"
    })
    const grant = { familyId: yield* makeId, clientId: client.client_id, userId: user.id, scope: options.scope }
    return (yield* tokenService.issueTokens({ ...grant, refreshScope: options.scope })).access_token
  }).pipe(
    Effect.provide(
      Layer.mergeAll(OAuthClients.Default, Tokens.Default, Users.Default).pipe(
        Layer.provide([Layer.succeed(PublicUrl, options.publicUrl), OutboundPolicy.Default]),
        Layer.provide(postgres(Redacted.make(options.databaseUrl.toString()), { maxConnections: 2 })),
        Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
      )
    ),
    Effect.scoped
  )

/** The `p`-th percentile (nearest rank) of `values`. */
export const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

/** Runs `work` over `count` indexes with `inFlight` at a time. */
export const pool = async <A>(count: number, inFlight: number, work: (index: number) => Promise<A>) => {
  const out = new Array<A>(count)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(inFlight, count) }, async () => {
      while (next < count) {
        const index = next++
        out[index] = await work(index)
      }
    })
  )
  return out
}

/** CPU time (user + system, every thread) a process has used so far, in milliseconds. */
export const cpuMillisOf = (pid: number) => {
  const fields = Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

/** The load averages over 1, 5 and 15 minutes (as `uptime` prints them). */
export const loadAverage = () => Fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
