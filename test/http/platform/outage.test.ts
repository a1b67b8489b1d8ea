import * as Net from "node:net"
import { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { PGlite } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Context, Effect, Layer, Logger, Redacted } from "effect"
import { postgres } from "../../../src/layers/Database.js"
import { MigrationsLive } from "../../../src/layers/Migrations.js"
import { get, raw, serveRibbon } from "../../support/http.js"

/**
 * A TCP relay in front of the database that can be cut (connections dropped, new ones refused), made to
 * refuse as Postgres does (connections dropped, new ones answered with a FATAL error carrying `sqlstate`),
 * and restored.
 */
class Relay extends Context.Tag("test/Relay")<
  Relay,
  {
    readonly port: number
    readonly cut: Effect.Effect<void>
    readonly refuse: (sqlstate: string, message: string) => Effect.Effect<void>
    readonly restore: Effect.Effect<void>
  }
>() {}

/** A PostgreSQL ErrorResponse message (severity FATAL), as the server sends one instead of accepting a connection. */
const fatalError = (sqlstate: string, message: string) => {
  const fields = Buffer.from(
    `${[`SFATAL`, `VFATAL`, `C${sqlstate}`, `M${message}`].map((field) => `${field}\0`).join("")}\0`
  )
  const header = Buffer.alloc(5)
  header.write("E", 0)
  header.writeInt32BE(fields.length + 4, 1)
  return Buffer.concat([header, fields])
}

const RelayLive = Layer.scoped(
  Relay,
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => PGlite.create({ extensions: { pg_trgm } })),
      (db) => Effect.promise(() => db.close())
    )
    const upstream = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 64 })
    yield* Effect.acquireRelease(
      Effect.promise(() => upstream.start()),
      () => Effect.promise(() => upstream.stop())
    )
    const upstreamPort = Number(upstream.getServerConn().split(":").at(-1))
    const sockets = new Set<Net.Socket>()
    let relay: Net.Server | undefined
    let refusal: Buffer | undefined
    const listen = (port: number) =>
      Effect.async<number>((resume) => {
        relay = Net.createServer((client) => {
          if (refusal !== undefined) {
            // Answers the client's startup message with the error, and hangs up.
            const answer = refusal
            client.once("data", () => client.end(answer))
            client.on("error", () => client.destroy())
            return
          }
          const server = Net.connect(upstreamPort, "127.0.0.1")
          for (const socket of [client, server]) {
            sockets.add(socket)
            socket.on("close", () => sockets.delete(socket))
            socket.on("error", () => {
              client.destroy()
              server.destroy()
            })
          }
          client.pipe(server).pipe(client)
        })
        relay.listen(port, "127.0.0.1", () => resume(Effect.succeed((relay!.address() as Net.AddressInfo).port)))
      })
    const cut = Effect.async<void>((resume) => {
      relay!.close(() => resume(Effect.void))
      for (const socket of sockets) socket.destroy()
    })
    const dropConnections = Effect.sync(() => {
      for (const socket of sockets) socket.destroy()
    })
    const refuse = (sqlstate: string, message: string) =>
      Effect.zipRight(
        Effect.sync(() => {
          refusal = fatalError(sqlstate, message)
        }),
        dropConnections
      )
    const port = yield* listen(0)
    yield* Effect.addFinalizer(() => cut)
    const restore = Effect.suspend(() => {
      refusal = undefined
      return relay!.listening ? Effect.void : Effect.asVoid(listen(port))
    })
    return { port, cut, refuse, restore }
  })
)

const logged: Array<string> = []
const captureLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ message }) => logged.push(String(message)))
)

const DatabaseThroughRelay = Layer.unwrapEffect(
  Effect.map(Relay, ({ port }) =>
    postgres(Redacted.make(`postgres://postgres@127.0.0.1:${port}/postgres`), { maxConnections: 1 })
  )
).pipe((db) => Layer.provideMerge(MigrationsLive, db), Layer.provideMerge(RelayLive))

const tokenRequest = (refreshToken = "x") =>
  HttpClientRequest.post("/oauth/token").pipe(
    HttpClientRequest.bodyUrlParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: "c" })
  )

describe("a database outage", () => {
  it.layer(serveRibbon(DatabaseThroughRelay).pipe(Layer.provide(captureLogs)))((it) => {
    it.effect("answers 503 with Retry-After in each line's format, logs once, and recovers by itself", () =>
      Effect.gen(function* () {
        const relay = yield* Relay
        expect((yield* get("/ready")).status).toBe(200)
        yield* relay.cut

        const v1 = yield* get("/v1/me", { authorization: "Bearer not-a-token" })
        expect(v1.status).toBe(503)
        expect(v1.headers["retry-after"]).toBe("5")
        expect(v1.headers["content-type"]).toBe("application/problem+json")
        expect(v1.body).toMatchObject({ status: 503, code: "service_unavailable" })

        const oauth = yield* raw(tokenRequest())
        expect(oauth.status).toBe(503)
        expect(oauth.headers["retry-after"]).toBe("5")
        expect(oauth.body).toEqual({ error: "temporarily_unavailable", error_description: expect.any(String) })

        const v3 = yield* get("/public-api/v3/authentication/api-keys", { "x-api-key": "0123456789abcdef01234567" })
        expect(v3.status).toBe(503)
        expect(v3.body).toEqual({ status: 503, errorCode: "503_PBLC_001", message: expect.any(String) })

        const v2 = yield* get("/public-api/v2/authentication/apiKeys", { "x-api-key": "0123456789abcdef01234567" })
        expect(v2.status).toBe(503)
        expect(v2.body).toEqual({ status: 503, errorCode: "SERVICE_UNAVAILABLE", message: expect.any(String) })
        expect((yield* get("/ready")).status).toBe(503)

        const outageLogs = logged.filter((message) => message.startsWith("Database unavailable"))
        expect(outageLogs.length).toBeGreaterThanOrEqual(1)
        expect(outageLogs.length).toBeLessThanOrEqual(2) // at most one per kind: refused, and lost mid-query
        expect(logged.filter((message) => message === "Request failed")).toEqual([])

        yield* relay.restore
        expect((yield* get("/ready")).status).toBe(200)
        // Credentials looked up during the outage are asked for again, not answered from the cache.
        expect((yield* get("/v1/me", { authorization: "Bearer not-a-token" })).status).toBe(401)
        expect(
          (yield* get("/public-api/v3/authentication/api-keys", { "x-api-key": "0123456789abcdef01234567" })).status
        ).toBe(401)
      })
    )

    it.effect(
      "answers 503 in each line's format while Postgres refuses connections (not accepting, terminated by an administrator or a crash, starting up, shutting down, too many), and recovers",
      () =>
        Effect.gen(function* () {
          const relay = yield* Relay
          const from = logged.length
          const refusals = [
            ["55000", 'database "ribbon" is not currently accepting connections'],
            ["57P01", "terminating connection due to administrator command"],
            ["57P02", "terminating connection because of crash of another server process"],
            ["57P03", "the database system is starting up"],
            ["57P03", "the database system is shutting down"],
            ["53300", "sorry, too many clients already"],
            ["08004", "the server rejected the connection"]
          ] as const
          for (const [index, [sqlstate, message]] of refusals.entries()) {
            // Credentials of their own: a miss found while the database answers is kept (the clock stands still).
            const apiKey = { "x-api-key": `0123456789abcdef0123456${index}` }
            const bearer = { authorization: `Bearer not-a-token-${index}` }
            yield* relay.refuse(sqlstate, message)
            const v3 = yield* get("/public-api/v3/authentication/api-keys", apiKey)
            expect({ sqlstate, status: v3.status, body: v3.body }).toEqual({
              sqlstate,
              status: 503,
              body: { status: 503, errorCode: "503_PBLC_001", message: expect.any(String) }
            })
            expect(v3.headers["retry-after"]).toBe("5")
            const v1 = yield* get("/v1/me", bearer)
            expect({ sqlstate, status: v1.status, body: v1.body }).toMatchObject({
              sqlstate,
              status: 503,
              body: { status: 503, code: "service_unavailable" }
            })
            expect(v1.headers["retry-after"]).toBe("5")
            const v2 = yield* get("/public-api/v2/authentication/apiKeys", apiKey)
            expect(v2.body).toEqual({ status: 503, errorCode: "SERVICE_UNAVAILABLE", message: expect.any(String) })
            const oauth = yield* raw(tokenRequest(`refresh-${index}`))
            expect({ sqlstate, status: oauth.status, body: oauth.body }).toEqual({
              sqlstate,
              status: 503,
              body: { error: "temporarily_unavailable", error_description: expect.any(String) }
            })
            expect(oauth.headers["retry-after"]).toBe("5")

            yield* relay.restore
            expect((yield* get("/v1/me", bearer)).status).toBe(401)
            expect((yield* get("/public-api/v3/authentication/api-keys", apiKey)).status).toBe(401)
            // The unknown client "c" is refused once the database answers again.
            expect((yield* raw(tokenRequest(`refresh-${index}`))).body).toMatchObject({ error: "invalid_client" })
          }
          const since = logged.slice(from)
          expect(since.filter((message) => message === "Request failed")).toEqual([])
          expect(since).toContain("Database unavailable (55000): answering 503 for a minute without logging each")
        })
    )
  })
})
