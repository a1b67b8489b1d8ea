import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Command } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Fiber, Layer, Ref, Schedule, Stream } from "effect"

/**
 * The real `ribbon` CLI, run as child processes on a temporary DATA_DIR in embedded mode: the children
 * get an explicit environment, so DATABASE_URL never leaks in from the test run.
 */

const root = fileURLToPath(new URL("../..", import.meta.url))

/**
 * Whether this is the run against a Postgres server (DATABASE_URL set). The CLI's children never see it: they
 * run on an embedded DATA_DIR either way, so that run skips them rather than repeat the embedded run's.
 */
export const onPostgresRun = process.env.DATABASE_URL !== undefined

/**
 * `ribbon <args>` as `npm start` runs it: the bundle (dist/ribbon.mjs, brought up to date by the test run's global
 * setup), which starts in a fraction of the time the sources take through a TypeScript loader.
 */
export const ribbon = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Command.make(process.execPath, "dist/ribbon.mjs", ...args).pipe(
    Command.workingDirectory(root),
    Command.env({ LOG_LEVEL: "info", NO_COLOR: "1", ...env }, { extendEnv: false })
  )

export const tempDataDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-cli-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** A port nobody listens on right now (PORT=0 is not a valid PORT). */
export const freePort = Effect.async<number>((resume) => {
  const probe = Net.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as Net.AddressInfo
    probe.close(() => resume(Effect.succeed(port)))
  })
})

export interface Output {
  readonly stdout: Ref.Ref<string>
  readonly stderr: Ref.Ref<string>
}

export const text = (output: Output) =>
  Effect.map(Effect.all([Ref.get(output.stdout), Ref.get(output.stderr)]), ([out, err]) => `${out}${err}`)

/** Starts the command and keeps reading both pipes (so the child never blocks on a full pipe). */
export const start = (command: Command.Command) =>
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

/**
 * Runs a one-shot command to completion. The timeout only guards against a hang: on CI's two cores,
 * beside other test files, a start alone (tsx, initdb, migrations) has taken over 20 s.
 */
export const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const child = yield* start(ribbon(args, env))
      const code = yield* child.exitCode("3 minutes")
      return { code, stdout: yield* Ref.get(child.output.stdout), stderr: yield* Ref.get(child.output.stderr) }
    })
  )

/** `ribbon serve` on the data dir (and `env`), once it logs that it listens; killed when the scope closes. */
export const serve = (dataDir: string, env: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const port = yield* freePort
    const child = yield* start(ribbon(["serve"], { DATA_DIR: dataDir, PORT: String(port), ...env }))
    const listening = text(child.output).pipe(
      Effect.filterOrFail(
        (all) => all.includes("Listening on http://"),
        () => new Error("not listening yet")
      ),
      Effect.retry(Schedule.spaced("100 millis"))
    )
    const exited = Effect.flatMap(child.process.exitCode, (code) => Effect.fail(new Error(`exited with ${code}`)))
    yield* Effect.raceFirst(listening, exited).pipe(
      Effect.timeout("3 minutes"),
      Effect.catchAll((error) =>
        Effect.flatMap(text(child.output), (all) =>
          Effect.die(new Error(`ribbon serve did not start (${error}):\n${all}`))
        )
      )
    )
    return { ...child, url: `http://127.0.0.1:${port}` }
  })

/** A SQL client of the test's own on the server's Unix socket in DATA_DIR (what `psql -h DATA_DIR` would use). */
export const socketClient = (dataDir: string) =>
  Layer.build(PgClient.layer({ host: dataDir, port: 5432, username: "postgres", database: "postgres" })).pipe(
    Effect.map(Context.get(PgClient.PgClient)),
    Effect.orDie
  )

/** Provides what running child processes needs. */
export const withNode = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.provide(self, NodeContext.layer)
