/**
 * `npm run bench:auth`: what API-key authentication and rate limiting cost. Two servers in this process
 * on the same services and database serve `GET /public-api/v3/authentication/api-keys`: one behind the real
 * middleware, for a company whose limits are raised so the limiter runs but never refuses; one with
 * authentication and rate limiting switched off (the middleware hands every request the same caller).
 * autocannon loads them in alternating rounds; the ratio is authenticated / unauthenticated requests per second.
 *
 *   npm run bench:auth -- [--duration 5] [--rounds 3] [--connections 20]
 *
 * With REDIS_URL the rate limits use Redis (targets: ratio ≥ 0.8 with the memory store, ≥ 0.6 with Redis).
 */

import { createServer } from "node:http"
import { createRequire } from "node:module"
import { RateLimiter } from "@effect/experimental"
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Config, Console, Context, Effect, Layer, Option } from "effect"
import { Api } from "../src/http/Api.js"
import { apiKeyAuthLayers } from "../src/http/company/ApiKeyAuthLive.js"
import { embedded } from "../src/layers/Database.js"
import { MigrationsLive } from "../src/layers/Migrations.js"
import { RateLimiterMemoryLive, redisRateLimiterStore } from "../src/layers/Redis.js"
import { makeHandlersLive, ServicesLive, SimulatorsLive, serveApi } from "../src/layers/Server.js"
import { PublicUrl } from "../src/services/catalog/Catalog.js"
import { Companies } from "../src/services/company/Companies.js"
import { KeyStore } from "../src/services/company/KeyStore.js"
import { readModesOf } from "../src/services/company/Masking.js"
import { CompanyPolicy } from "../src/services/company/Policy.js"
import { OutboundPolicy } from "../src/services/platform/OutboundHttp.js"
import { RateLimits } from "../src/services/platform/RateLimits.js"
import { Signals } from "../src/services/platform/Signals.js"
import { FulfillmentSettings } from "../src/services/simulators/FulfillmentSimulator.js"

const argv = process.argv.slice(2)
const numberOption = (name: string, fallback: number) => {
  const index = argv.indexOf(`--${name}`)
  return index === -1 ? fallback : Number(argv[index + 1])
}
const duration = numberOption("duration", 5)
const rounds = numberOption("rounds", 3)
const connections = numberOption("connections", 20)
const path = "/public-api/v3/authentication/api-keys"

// autocannon ships no types; this is the part of its API used here.
const autocannon = createRequire(import.meta.url)("autocannon") as (options: {
  readonly url: string
  readonly connections: number
  readonly duration: number
  readonly headers: Record<string, string>
}) => Promise<{
  readonly requests: { readonly total: number }
  readonly duration: number
  readonly non2xx: number
  readonly errors: number
}>

const redisUrl = Effect.runSync(Config.option(Config.string("REDIS_URL")))

const store = Option.match(redisUrl, {
  onNone: () => RateLimiterMemoryLive,
  onSome: (url) =>
    RateLimiter.layer.pipe(
      Layer.provideMerge(redisRateLimiterStore({ url, prefix: `ribbon:bench:${Date.now().toString(36)}:` }))
    )
})

const Services = Layer.mergeAll(ServicesLive, RateLimits.Default.pipe(Layer.provideMerge(store))).pipe(
  // The public URL stays in the context: the handlers read it too (the dashboard's cookies).
  Layer.provideMerge(Layer.succeed(PublicUrl, "http://localhost")),
  Layer.provide([
    Signals.layerInProcess,
    SimulatorsLive.pipe(Layer.provide(FulfillmentSettings.Default)),
    OutboundPolicy.Default
  ]),
  Layer.provideMerge(Layer.provideMerge(MigrationsLive, embedded({ dataDir: Option.none(), exposeSocket: false })))
)

const listen = (auth: ReturnType<typeof apiKeyAuthLayers>) =>
  Effect.gen(function* () {
    const services = yield* Effect.context<Layer.Layer.Success<typeof Services>>()
    const api = HttpApiBuilder.api(Api).pipe(Layer.provide(makeHandlersLive(auth)))
    const built = yield* Layer.build(
      serveApi(api, { maxBodyBytes: 1024 * 1024, telemetry: false }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provide(Layer.succeedContext(services))
      )
    )
    const address = Context.get(built, HttpServer.HttpServer).address as HttpServer.TcpAddress
    return `http://127.0.0.1:${address.port}${path}`
  })

const main = Effect.gen(function* () {
  const company = yield* Effect.flatMap(Companies, (c) => c.create({ name: "Bench", environment: "test" }))
  const raised = { rate: 1_000_000, burst: 1_000_000 }
  yield* Effect.flatMap(Companies, (c) =>
    c.setRateLimits(company.companyId, { global: raised, "authentication:read": raised })
  )
  const { key } = yield* Effect.flatMap(KeyStore, (k) => k.authenticate(company.apiKey))
  const policy = yield* CompanyPolicy
  const authenticated = yield* listen(apiKeyAuthLayers(Api))
  const open = yield* listen(
    apiKeyAuthLayers(Api, {
      bypass: {
        key,
        account: Option.none(),
        scope: policy.scopeOf(key, Option.none()),
        requestSource: null,
        readModes: readModesOf(key.permissions)
      }
    })
  )
  const headers = { "x-api-key": company.apiKey }
  const run = (url: string, seconds: number) =>
    Effect.promise(() => autocannon({ url, connections, duration: seconds, headers })).pipe(
      Effect.tap((r) =>
        r.non2xx + r.errors > 0 ? Effect.dieMessage(`${r.non2xx} non-2xx, ${r.errors} errors from ${url}`) : Effect.void
      ),
      Effect.map((r) => r.requests.total / r.duration)
    )
  yield* run(authenticated, 1)
  yield* run(open, 1)
  const results = { authenticated: [] as Array<number>, open: [] as Array<number> }
  for (let round = 0; round < rounds; round++) {
    results.open.push(yield* run(open, duration))
    results.authenticated.push(yield* run(authenticated, duration))
  }
  const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
  const [a, o] = [mean(results.authenticated), mean(results.open)]
  yield* Console.log(
    `store: ${Option.isSome(redisUrl) ? "redis" : "memory"}; ${connections} connections, ${rounds} × ${duration} s`
  )
  yield* Console.log(
    `auth + rate limits: ${a.toFixed(0)} req/s   (rounds: ${results.authenticated.map((x) => x.toFixed(0)).join(", ")})`
  )
  yield* Console.log(
    `switched off:       ${o.toFixed(0)} req/s   (rounds: ${results.open.map((x) => x.toFixed(0)).join(", ")})`
  )
  yield* Console.log(`ratio: ${(a / o).toFixed(2)} (target ≥ ${Option.isSome(redisUrl) ? "0.6" : "0.8"})`)
}).pipe(Effect.scoped, Effect.provide(Services), Effect.provide(Layer.setTracerEnabled(false)))

NodeRuntime.runMain(main)
