import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Data, Duration, Effect, Layer, Option, Redacted, String as Str } from "effect"
import { Signals } from "../services/platform/Signals.js"
import { AppConfig } from "./Config.js"
import { initDbStartParams, initializeDataDir, startParams } from "./EmbeddedInit.js"

/**
 * `turn`, each name turned once: the names are the code's columns and fields, a few hundred, and every row
 * of every result turns each of its keys (1–2 % of a placed order's CPU, docs/performance.md). Past `limit`
 * names (never reached by the code's own) the rest are turned each time.
 */
const remembered = (turn: (name: string) => string, limit = 10_000) => {
  const turned = new Map<string, string>()
  return (name: string): string => {
    let out = turned.get(name)
    if (out === undefined) {
      out = turn(name)
      if (turned.size < limit) turned.set(name, out)
    }
    return out
  }
}

/**
 * camelCase in TypeScript, snake_case in SQL: column names are turned, the keys inside a json value are not.
 * A jsonb value comes back as it was stored (a company's `metadata` keys are its own: `order_ref` stays
 * `order_ref`); a statement that builds an object from columns names its keys itself (`jsonRecordOf`).
 */
const naming = {
  transformQueryNames: remembered(Str.camelToSnake),
  transformResultNames: remembered(Str.snakeToCamel),
  transformJson: false
} as const

/** The Unix socket a running embedded server exposes in DATA_DIR, named as libpq expects (`host=DATA_DIR`). */
export const embeddedSocketPath = (dataDir: string) => Path.join(Path.resolve(dataDir), ".s.PGSQL.5432")

/**
 * Settings every pooled connection starts with (the startup packet's `options`). JIT compilation is off:
 * our statements are short, and a plan whose estimated cost crosses `jit_above_cost` (100,000) pays
 * 300+ ms of compiling, as some search and catalog plans do at a million products (docs/performance.md).
 * A DATABASE_URL that sets its own `options` keeps them instead.
 */
const connectionOptions = "-c jit=off"

/** `url` with `connectionOptions`, unless it names its own. */
export const withConnectionOptions = (url: string) =>
  /[?&]options=/.test(url)
    ? url
    : `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(connectionOptions)}`

/** A PgClient on a real Postgres server. */
export const postgres = (url: Redacted.Redacted<string>, options: { readonly maxConnections?: number } = {}) =>
  PgClient.layer({
    url: Redacted.make(withConnectionOptions(Redacted.value(url))),
    maxConnections: options.maxConnections ?? 10,
    ...naming
  })

/**
 * Embedded Postgres: PGlite (WASM) served on a loopback port by `pglite-socket`, reached by the same
 * PgClient as real Postgres. `dataDir` none keeps the database in memory (tests); a new data directory
 * is made by `initializeDataDir` (src/layers/EmbeddedInit.ts, which also holds its settings). The socket server runs one query at a time and keeps a transaction on its own connection.
 */
export const embedded = (options: { readonly dataDir: Option.Option<string>; readonly exposeSocket: boolean }) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const dataDir = Option.getOrUndefined(options.dataDir)
      const pgdata = dataDir === undefined ? undefined : Path.join(dataDir, "pgdata")
      if (pgdata !== undefined) yield* initializeDataDir(pgdata)
      const db = yield* openPGlite(pgdata === undefined ? {} : { dataDir: pgdata })
      return yield* servePGlite(
        db,
        options.exposeSocket && dataDir !== undefined ? embeddedSocketPath(dataDir) : undefined
      )
    })
  )

/**
 * A PGlite instance with the embedded settings, closed with the scope: on `dataDir`, or in memory, from a
 * dump of a data directory (`loadDataDir`, as `PGlite.dumpDataDir` writes it) or else made by initdb.
 */
export const openPGlite = (options: { readonly dataDir?: string; readonly loadDataDir?: Blob }) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      PGlite.create({
        ...options,
        extensions: { pg_trgm },
        startParams: [...startParams],
        initDbStartParams: [...initDbStartParams]
      })
    ),
    (db) => Effect.promise(() => db.close())
  )

/**
 * A PgClient layer on `db`, served on a loopback port for the scope's life (and relayed from `socketPath`,
 * a Unix socket, when given).
 */
export const servePGlite = (db: PGlite, socketPath?: string) =>
  Effect.gen(function* () {
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 64 })
    yield* Effect.acquireRelease(
      Effect.promise(() => server.start()),
      () => Effect.promise(() => server.stop())
    )
    const port = Number(server.getServerConn().split(":").at(-1))
    if (socketPath !== undefined) yield* exposeOnSocket(socketPath, port)
    return PgClient.layer({
      host: "127.0.0.1",
      port,
      username: "postgres",
      database: "postgres",
      // One connection: pglite-socket serves every connection from one PGlite and does not keep their
      // extended-protocol messages apart, so concurrent queries on two connections can get each other's
      // rows (electric-sql/pglite#1046). Queries queue on the one connection instead.
      maxConnections: 1,
      idleTimeout: Duration.minutes(5),
      ...naming
    })
  })

/**
 * Relays a Unix socket inside DATA_DIR to the loopback port, so that CLI commands run beside `npm start`
 * reach the same database (PGlite allows one process per data directory).
 */
const exposeOnSocket = (socketPath: string, port: number) =>
  Effect.acquireRelease(
    Effect.async<{ readonly relay: Net.Server; readonly clients: Set<Net.Socket> }>((resume) => {
      Fs.rmSync(socketPath, { force: true })
      const clients = new Set<Net.Socket>()
      const relay = Net.createServer((client) => {
        clients.add(client)
        client.on("close", () => clients.delete(client))
        const upstream = Net.connect(port, "127.0.0.1")
        client.pipe(upstream).pipe(client)
        client.on("error", () => upstream.destroy())
        upstream.on("error", () => client.destroy())
      })
      relay.once("error", (error) => resume(Effect.die(error)))
      relay.listen(socketPath, () => resume(Effect.succeed({ relay, clients })))
    }),
    ({ relay, clients }) =>
      Effect.async<void>((resume) => {
        relay.close(() => resume(Effect.void))
        // close() waits for open connections: end the relayed ones (a CLI command, psql) so shutdown cannot hang.
        for (const client of clients) client.destroy()
      })
  )

/** Whether a running server answers on the DATA_DIR socket (a leftover file from a crash does not count). */
export const embeddedServerRunning = (dataDir: string) =>
  Effect.async<boolean>((resume) => {
    const socket = Net.connect(embeddedSocketPath(dataDir))
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  })

export class DataDirInUse extends Data.TaggedError("DataDirInUse")<{ readonly message: string }> {}

/**
 * The database a server uses: DATABASE_URL when set, embedded PGlite in DATA_DIR otherwise. PGlite must
 * not open one data directory twice, so a second server on the same DATA_DIR refuses to start.
 */
export const DatabaseLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl)) {
      return postgres(config.databaseUrl.value, { maxConnections: config.databasePoolSize })
    }
    if (yield* embeddedServerRunning(config.dataDir)) {
      return yield* new DataDirInUse({
        message: `Another Ribbon server is using DATA_DIR ${config.dataDir}; stop it or choose another DATA_DIR.`
      })
    }
    return embedded({ dataDir: Option.some(config.dataDir), exposeSocket: true })
  })
)

/**
 * The database a CLI command uses: DATABASE_URL when set; otherwise the running server's socket in
 * DATA_DIR, or the data directory itself when no server runs.
 */
export const CliDatabaseLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl)) return postgres(config.databaseUrl.value, { maxConnections: 4 })
    if (yield* embeddedServerRunning(config.dataDir)) {
      return PgClient.layer({
        host: Path.resolve(config.dataDir),
        port: 5432,
        username: "postgres",
        database: "postgres",
        // One connection, as the server's own pool (see `embedded`).
        maxConnections: 1,
        ...naming
      })
    }
    return embedded({ dataDir: Option.some(config.dataDir), exposeSocket: false })
  })
)

/**
 * Wake-ups between fibers and instances: Postgres LISTEN/NOTIFY, which every instance hears, with
 * DATABASE_URL; an in-process PubSub on embedded PGlite, whose socket server keeps notifications to one
 * connection.
 */
export const SignalsLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.isSome(config.databaseUrl) ? Signals.layerPostgres : Signals.layerInProcess
  )
)
