import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Command, FetchHttpClient, HttpClient } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Fiber, Layer, Ref, Schedule, Stream } from "effect"
import { latestMigrationId } from "../../src/layers/Migrations.js"

/**
 * The real `ribbon` CLI, run as child processes on a temporary DATA_DIR in embedded mode: the children
 * get an explicit environment, so DATABASE_URL never leaks in from the test run.
 */

const root = fileURLToPath(new URL("../..", import.meta.url))

const ribbon = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Command.make(process.execPath, "--import", "tsx", "src/layers/cli.ts", ...args).pipe(
    Command.workingDirectory(root),
    Command.env({ LOG_LEVEL: "info", NO_COLOR: "1", ...env }, { extendEnv: false })
  )

const tempDataDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-cli-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** A port nobody listens on right now (PORT=0 is not a valid PORT). */
const freePort = Effect.async<number>((resume) => {
  const probe = Net.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as Net.AddressInfo
    probe.close(() => resume(Effect.succeed(port)))
  })
})

interface Output {
  readonly stdout: Ref.Ref<string>
  readonly stderr: Ref.Ref<string>
}

const text = (output: Output) =>
  Effect.map(Effect.all([Ref.get(output.stdout), Ref.get(output.stderr)]), ([out, err]) => `${out}${err}`)

/** Starts the command and keeps reading both pipes (so the child never blocks on a full pipe). */
const start = (command: Command.Command) =>
  Effect.gen(function* () {
    const proc = yield* Command.start(command)
    // Never leave a child behind: SIGTERM, then SIGKILL if it has not exited within 5 s.
    yield* Effect.addFinalizer(() =>
      Effect.whenEffect(
        proc.kill("SIGTERM").pipe(
          Effect.timeout("5 seconds"),
          Effect.catchAll(() => proc.kill("SIGKILL")),
          Effect.ignore
        ),
        proc.isRunning.pipe(Effect.orElseSucceed(() => false))
      )
    )
    const output: Output = { stdout: yield* Ref.make(""), stderr: yield* Ref.make("") }
    const drain = (stream: Stream.Stream<Uint8Array, unknown>, into: Ref.Ref<string>) =>
      stream.pipe(
        Stream.decodeText(),
        Stream.runForEach((chunk) => Ref.update(into, (all) => all + chunk)),
        Effect.ignore,
        Effect.forkScoped
      )
    const readers = [yield* drain(proc.stdout, output.stdout), yield* drain(proc.stderr, output.stderr)]
    /** The exit code, once the process has exited and its output has been read to the end. */
    const exitCode = (timeout: Duration.DurationInput) =>
      proc.exitCode.pipe(
        Effect.zipLeft(Fiber.joinAll(readers)),
        Effect.timeout(timeout),
        Effect.catchTag("TimeoutException", () =>
          Effect.flatMap(text(output), (all) =>
            Effect.die(new Error(`ribbon did not exit within ${Duration.format(timeout)}:\n${all}`))
          )
        )
      )
    return { process: proc, output, exitCode }
  })

/** Runs a one-shot command to completion. */
const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const child = yield* start(ribbon(args, env))
      const code = yield* child.exitCode("60 seconds")
      return { code, stdout: yield* Ref.get(child.output.stdout), stderr: yield* Ref.get(child.output.stderr) }
    })
  )

/** `ribbon serve` on the data dir, once it logs that it listens; killed when the scope closes. */
const serve = (dataDir: string) =>
  Effect.gen(function* () {
    const port = yield* freePort
    const child = yield* start(ribbon(["serve"], { DATA_DIR: dataDir, PORT: String(port) }))
    const listening = text(child.output).pipe(
      Effect.filterOrFail(
        (all) => all.includes("Listening on http://"),
        () => new Error("not listening yet")
      ),
      Effect.retry(Schedule.spaced("100 millis"))
    )
    const exited = Effect.flatMap(child.process.exitCode, (code) => Effect.fail(new Error(`exited with ${code}`)))
    yield* Effect.raceFirst(listening, exited).pipe(
      Effect.timeout("60 seconds"),
      Effect.catchAll((error) =>
        Effect.flatMap(text(child.output), (all) =>
          Effect.die(new Error(`ribbon serve did not start (${error}):\n${all}`))
        )
      )
    )
    return { ...child, url: `http://127.0.0.1:${port}` }
  })

/** A SQL client of the test's own on the server's Unix socket in DATA_DIR (what `psql -h DATA_DIR` would use). */
const socketClient = (dataDir: string) =>
  Layer.build(PgClient.layer({ host: dataDir, port: 5432, username: "postgres", database: "postgres" })).pipe(
    Effect.map(Context.get(PgClient.PgClient)),
    Effect.orDie
  )

const ready = (url: string) =>
  HttpClient.get(`${url}/ready`).pipe(
    Effect.flatMap((response) => Effect.map(response.json, (body) => ({ status: response.status, body }))),
    Effect.provide(FetchHttpClient.layer)
  )

const withNode = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.provide(self, NodeContext.layer)

// Concurrent: the children are mostly single-threaded, so the short tests run beside the long one.
describe.concurrent("ribbon CLI", () => {
  it.live("--help lists the commands, --version prints the package version", () =>
    withNode(
      Effect.gen(function* () {
        const [help, version] = yield* Effect.all([run(["--help"], {}), run(["--version"], {})], {
          concurrency: 2
        })
        expect(help.code).toBe(0)
        expect(help.stdout).toMatch(/serve\s+Run the HTTP server/)
        expect(help.stdout).toMatch(/migrate\s+Apply pending database migrations/)
        expect(version.code).toBe(0)
        expect(version.stdout.trim()).toBe("0.1.0")
      })
    )
  )

  it.scopedLive("invalid configuration fails with one line naming the variable", () =>
    withNode(
      Effect.gen(function* () {
        const dataDir = yield* tempDataDir
        const results = yield* Effect.all(
          [run(["migrate"], { DATA_DIR: dataDir, PORT: "notaport" }), run(["serve"], { PORT: "notaport" })],
          { concurrency: 2 }
        )
        for (const result of results) {
          expect(result.code).toBe(1)
          expect(result.stdout).toBe("")
          expect(result.stderr.trim().split("\n")).toEqual([
            'Invalid configuration: PORT: Expected a network port value but received "notaport"'
          ])
        }
      })
    )
  )

  it.scopedLive(
    "seed writes the demo catalog once, then generates products with a progress bar, resuming where it stopped",
    () =>
      withNode(
        Effect.gen(function* () {
          const env = { DATA_DIR: yield* tempDataDir }
          const first = yield* run(["seed", "--products", "1200"], env)
          expect(first.code, first.stderr).toBe(0)
          expect(first.stdout).toMatch(/Seeded the demo catalog in \d+ ms\./)
          expect(first.stdout).toMatch(/Generated 1,200 products in [\d.]+ s \(1,200 synthetic in all\)\./)
          expect(first.stderr).toMatch(/\[#{30}\] 100% {2}1,200\/1,200 products/)
          expect(first.stdout).toMatch(/Catalog: 1536 products, \d+ variants, 32 collections, 59 tags, 25 countries\./)

          const more = yield* run(["seed", "--products", "1500"], env)
          expect(more.code, more.stderr).toBe(0)
          expect(more.stdout).toContain("The demo catalog was already seeded.")
          expect(more.stdout).toMatch(/Generated 300 products in [\d.]+ s \(1,500 synthetic in all\)\./)
          expect(more.stdout).toContain("Catalog: 1836 products")

          const negative = yield* run(["seed", "--products", "-1"], env)
          expect(negative.code).not.toBe(0)
          expect(negative.stderr + negative.stdout).toContain("--products must be a whole number of at least 0")
        })
      ),
    120_000
  )

  it.scopedLive(
    "migrate applies pending migrations, then through a running server's socket; the server survives and restarts",
    () =>
      withNode(
        Effect.gen(function* () {
          const dataDir = yield* tempDataDir
          const env = { DATA_DIR: dataDir }

          const first = yield* run(["migrate"], env)
          expect(first.code, first.stderr).toBe(0)
          expect(first.stdout).toContain(`Database: the embedded database in ${dataDir}`)
          expect(first.stdout).toContain("Applied 0001_extensions")
          expect(first.stdout).toContain("Applied 0002_jobs")
          const again = yield* run(["migrate"], env)
          expect(again.code, again.stderr).toBe(0)
          expect(again.stdout).toContain("No pending migrations.")
          expect(again.stdout).not.toContain("Applied")

          // A server owns the data dir now: migrate must go through its socket, not open PGlite a second time.
          yield* Effect.scoped(
            Effect.gen(function* () {
              const server = yield* serve(dataDir)
              expect(Fs.existsSync(Path.join(dataDir, ".s.PGSQL.5432"))).toBe(true)
              const during = yield* run(["migrate"], env)
              expect(during.code, during.stderr).toBe(0)
              expect(during.stdout).toContain(
                `Database: the running server's socket ${Path.join(dataDir, ".s.PGSQL.5432")}`
              )
              expect(during.stdout).toContain("No pending migrations.")
              expect(yield* ready(server.url)).toEqual({
                status: 200,
                body: { status: "ready", migration: latestMigrationId }
              })
              // Something to find after a restart, written through the same socket by a client that stays
              // connected: a session left open on the socket (psql, a CLI command) must not hold up shutdown.
              const sql = yield* socketClient(dataDir)
              yield* sql`CREATE TABLE cli_test_marker AS SELECT 'kept' AS value`

              // Graceful shutdown: SIGTERM ends it with exit code 0, and the socket is gone.
              yield* Effect.orDie(server.process.kill("SIGTERM").pipe(Effect.timeout("10 seconds")))
              expect(yield* server.exitCode("1 second")).toBe(0)
              expect(Fs.existsSync(Path.join(dataDir, ".s.PGSQL.5432"))).toBe(false)
              expect(yield* text(server.output)).toContain("Shutting down")
            })
          )

          // A restart finds the same database.
          yield* Effect.scoped(
            Effect.gen(function* () {
              const server = yield* serve(dataDir)
              expect(yield* ready(server.url)).toEqual({
                status: 200,
                body: { status: "ready", migration: latestMigrationId }
              })
              const rows = yield* Effect.scoped(
                Effect.flatMap(socketClient(dataDir), (sql) => sql`SELECT value FROM cli_test_marker`)
              )
              expect(rows).toEqual([{ value: "kept" }])
              yield* Effect.orDie(server.process.kill("SIGTERM").pipe(Effect.timeout("10 seconds")))
              expect(yield* server.exitCode("1 second")).toBe(0)
            })
          )
        })
      ),
    120_000
  )
})
