import * as Fs from "node:fs"
import * as Path from "node:path"
import { FetchHttpClient, HttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { permissions } from "../../src/domain/company/Company.js"
import { latestMigrationId } from "../../src/layers/Migrations.js"
import { onPostgresRun, run, serve, socketClient, tempDataDir, text, withNode } from "../support/cli.js"

/** The real `ribbon` CLI, run as child processes (test/support/cli.ts). */

const ready = (url: string) =>
  HttpClient.get(`${url}/ready`).pipe(
    Effect.flatMap((response) => Effect.map(response.json, (body) => ({ status: response.status, body }))),
    Effect.provide(FetchHttpClient.layer)
  )

// Concurrent: the children are mostly single-threaded, so the short tests run beside the long one.
describe.skipIf(onPostgresRun)("ribbon CLI", { concurrent: true }, () => {
  it.live(
    "--help lists the commands, --version prints the package version",
    () =>
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
      ),
    120_000
  )

  it.live(
    "help and usage errors read by a pipe are plain text; `keys create --help` names every permission",
    () =>
      withNode(
        Effect.gen(function* () {
          // NO_COLOR empty counts as unset (no-color.org): what strips the colours here is the pipe.
          const [help, usage] = yield* Effect.all(
            [run(["keys", "create", "--help"], { NO_COLOR: "" }), run(["keys", "create"], { NO_COLOR: "" })],
            { concurrency: 2 }
          )
          expect(help.code).toBe(0)
          expect(help.stdout).not.toContain("\x1b[")
          expect(help.stdout).toMatch(/^--permissions text$/m)
          for (const permission of permissions) expect(help.stdout).toContain(permission)
          expect(usage.code).toBe(1)
          expect(usage.stderr).toContain("--company")
          expect(usage.stdout + usage.stderr).not.toContain("\x1b[")
        })
      ),
    120_000
  )

  it.scopedLive(
    "invalid configuration fails with one line naming the variable",
    () =>
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
      ),
    120_000
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
          expect(first.stdout).toMatch(/Catalog: 1556 products, \d+ variants, 32 collections, 59 tags, 25 countries\./)

          const more = yield* run(["seed", "--products", "1500"], env)
          expect(more.code, more.stderr).toBe(0)
          expect(more.stdout).toContain("The demo catalog was already seeded.")
          expect(more.stdout).toMatch(/Generated 300 products in [\d.]+ s \(1,500 synthetic in all\)\./)
          expect(more.stdout).toContain("Catalog: 1856 products")

          const negative = yield* run(["seed", "--products", "-1"], env)
          expect(negative.code).not.toBe(0)
          expect(negative.stderr + negative.stdout).toContain("--products must be a whole number of at least 0")
        })
      ),
    420_000
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
                body: { status: "ready", migration: latestMigrationId, rateLimits: { status: "enforced" } }
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
                body: { status: "ready", migration: latestMigrationId, rateLimits: { status: "enforced" } }
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
    300_000
  )
})
