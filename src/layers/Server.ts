import { createServer } from "node:http"
import type { HttpApi } from "@effect/platform"
import { HttpApiBuilder, HttpApiScalar, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Api } from "../http/Api.js"
import { HealthLive } from "../http/handlers/HealthLive.js"
import { ribbonMiddleware } from "../http/Middleware.js"
import { MigrationTarget, Readiness } from "../services/Readiness.js"
import { AppConfig } from "./Config.js"
import { DatabaseLive } from "./Database.js"
import { latestMigrationId, MigrationsLive } from "./Migrations.js"
import { TelemetryLive } from "./Telemetry.js"

const untraced = new Set(["/health", "/ready"])

/**
 * Serves an HttpApi with everything every Ribbon route gets: `/openapi.json`, `/docs`, request ids,
 * the body limit and error rendering per API line. Tests serve their own fixture APIs through it.
 */
export const serveApi = <E, R>(apiLive: Layer.Layer<HttpApi.Api, E, R>, options: { readonly maxBodyBytes: number }) =>
  HttpApiBuilder.serve().pipe(
    HttpMiddleware.withTracerDisabledWhen((request) => untraced.has(request.url)),
    Layer.provide([
      HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
      HttpApiScalar.layer({ path: "/docs" }),
      ribbonMiddleware(options)
    ]),
    Layer.provide(apiLive)
  )

/** Every service the routes call. */
export const ServicesLive = Readiness.Default.pipe(Layer.provide(Layer.succeed(MigrationTarget, latestMigrationId)))

/** The Ribbon API with its handlers; needs the services. */
export const ApiLive = HttpApiBuilder.api(Api).pipe(Layer.provide(HealthLive))

/** The migrated database, and the services on it. */
export const AppLive = ServicesLive.pipe(Layer.provideMerge(MigrationsLive), Layer.provideMerge(DatabaseLive))

/**
 * On shutdown, stop accepting and give in-flight requests `shutdownGrace` to finish before their
 * connections are cut; the HTTP server's own finalizer then waits for them.
 */
const drainOnShutdown = (server: ReturnType<typeof createServer>) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const { shutdownGrace } = yield* AppConfig
      yield* Effect.addFinalizer(() =>
        Effect.gen(function* () {
          yield* Effect.logInfo("Shutting down: draining in-flight requests")
          server.closeIdleConnections()
          yield* Effect.sleep(shutdownGrace).pipe(
            Effect.zipRight(Effect.sync(() => server.closeAllConnections())),
            Effect.forkDaemon
          )
        })
      )
    })
  )

/** The whole server: config, telemetry, database, migrations, services and HTTP on PORT. */
export const ServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const server = createServer()
    return serveApi(ApiLive, config).pipe(
      HttpServer.withLogAddress,
      Layer.provide(drainOnShutdown(server)),
      Layer.provide(NodeHttpServer.layer(() => server, { port: config.port })),
      Layer.provide(AppLive)
    )
  })
).pipe(Layer.provide(TelemetryLive), Layer.provide(AppConfig.Default))
