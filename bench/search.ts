/**
 * `npm run bench:search`: `GET /v1/search` over HTTP on a 100k-product catalog in PostgreSQL, against the
 * same SQL sent straight through `pg` (the floor: what the database alone costs).
 *
 *   npm run bench:search -- [--products 100000] [--queries 2000] [--concurrency N] [--rounds 2]
 *                           [--database ribbon_bench_search] [--slowest 5] [--cpu-prof DIR]
 *
 * 1. Creates the database (on the server named by DATABASE_URL, default the local one) unless it exists,
 *    migrates it, and seeds the demo catalog plus `--products` synthetic ones (resumable: a second run
 *    reuses them).
 * 2. Builds a fixed, seeded mix of `--queries` searches: words, typos, budgets in prose and in several
 *    currencies, collection and tag filters, price bounds, every sort, and later pages by cursor.
 * 3. Runs each search once in this process through the real Search service, recording the SQL it sends
 *    (after a warm-up, so the reference-data cache is as warm as the server's). That list of statements,
 *    replayed through a `pg` pool as large as the server's, is the floor.
 * 4. Starts the server as `npm start` does (the esbuild bundle) on that database, and alternates rounds:
 *    the mix over HTTP (keep-alive, `--concurrency` in flight, signed in with a `catalog:read` token of a
 *    new user), then the mix's SQL through `pg` at the same concurrency. Every HTTP answer must be a 200.
 *    The server's RSS is sampled every 50 ms.
 *
 * Prints p50/p95/p99 latency and requests per second for both, the ratio of throughputs, the server's CPU
 * per search (its CPU time over the HTTP rounds, from /proc/<pid>/stat), and the peak RSS, against the
 * targets: p95 ≤ 25 ms over HTTP, HTTP/direct throughput ≥ 0.6, RSS ≤ 300 MB; then the `--slowest` searches
 * of the HTTP rounds, to say where the time goes. `--cpu-prof DIR` runs the server with `node --cpu-prof`, its
 * profile written to DIR when it stops.
 */

import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { SqlClient, Statement } from "@effect/sql"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import pg from "pg"
import type { SearchSort } from "../src/domain/catalog/Search.js"
import { postgres } from "../src/layers/Database.js"
import { MigrationsLive } from "../src/layers/Migrations.js"
import { PublicUrl } from "../src/services/catalog/Catalog.js"
import { Search, type SearchParams } from "../src/services/catalog/Search.js"
import { Seed } from "../src/services/catalog/Seed.js"
import { rngFor } from "../src/services/catalog/seed/random.js"
import { benchDatabase, cpuMillisOf, freePort, host, issueToken, option, percentile, startServer } from "./support.js"

const products = Number(option("products", "100000"))
const queryCount = Number(option("queries", "2000"))
// One request in flight per core by default: more only queue (the throughput stays the same, and by
// Little's law the latency grows with the queue), which measures the queue rather than a search.
const concurrency = Number(option("concurrency", String(Os.availableParallelism())))
const rounds = Number(option("rounds", "2"))
const databaseName = option("database", "ribbon_bench_search")
const slowest = Number(option("slowest", "5"))
const cpuProfileDir = option("cpu-prof", "")
/** The server's pool size on Postgres (`postgres()` in src/layers/Database.ts); the floor gets the same. */
const serverPoolSize = 10

const { serverUrl, databaseUrl } = benchDatabase(databaseName)

// ---------------------------------------------------------------------------------------------------------
// 1. The database

const ensureDatabase = async () => {
  const admin = new pg.Client({ connectionString: serverUrl.toString() })
  await admin.connect()
  const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [databaseName])
  if (rowCount === 0) await admin.query(`CREATE DATABASE ${databaseName}`)
  await admin.end()
}

const progress = (done: number, total: number) =>
  Effect.sync(() => process.stderr.write(`\rseeding: ${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")}`))

const DatabaseLive = MigrationsLive.pipe(Layer.provideMerge(postgres(Redacted.make(databaseUrl.toString()))))
const BenchLive = Layer.mergeAll(Seed.Default, Search.Default).pipe(
  Layer.provide(Layer.succeed(PublicUrl, "http://bench.invalid")),
  Layer.provideMerge(DatabaseLive),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

// ---------------------------------------------------------------------------------------------------------
// 2. The mix

interface Vocabulary {
  readonly words: ReadonlyArray<string>
  readonly phrases: ReadonlyArray<string>
  readonly collections: ReadonlyArray<string>
  readonly tags: ReadonlyArray<string>
  readonly countries: ReadonlyArray<string>
}

const vocabulary = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const titles = yield* sql<{ title: string }>`SELECT title FROM products WHERE id IN (
    SELECT id FROM products ORDER BY md5(id) LIMIT 400)`
  const words = [...new Set(titles.flatMap((t) => t.title.toLowerCase().match(/[a-z]{4,}/g) ?? []))].sort()
  const phrases = titles.map((t) => t.title.toLowerCase().split(/\s+/).slice(0, 2).join(" ")).sort()
  const collections = (yield* sql<{ id: string }>`SELECT id FROM collections ORDER BY id`).map((r) => r.id)
  const tags = (yield* sql<{ id: string }>`SELECT id FROM tags ORDER BY id`).map((r) => r.id)
  const countries = (yield* sql<{ code: string }>`SELECT code FROM countries ORDER BY code`).map((r) => r.code)
  return { words, phrases, collections, tags, countries } satisfies Vocabulary
})

const budgets = [
  "under $40",
  "between 20 and 50",
  "around 30 EUR",
  "less than £25",
  "up to 5000 yen",
  "$15-$30",
  "at least 100",
  "about 60 dollars"
]

/** A typo: one letter dropped, doubled or swapped with its neighbour. */
const typo = (word: string, at: number, kind: number) => {
  const i = 1 + (at % (word.length - 2))
  if (kind === 0) return word.slice(0, i) + word.slice(i + 1)
  if (kind === 1) return word.slice(0, i) + word[i] + word.slice(i)
  return word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2)
}

/** The fixed mix (without later pages, which need the cursors the first pages return). */
const makeMix = (v: Vocabulary, count: number): Array<SearchParams> => {
  const rng = rngFor("bench:search")
  const country = () => (rng.chance(0.5) ? "US" : rng.pick(v.countries))
  const sorts: ReadonlyArray<SearchSort> = ["price_asc", "price_desc", "newest"]
  return Array.from({ length: count }, (): SearchParams => {
    const roll = rng.next()
    if (roll < 0.3) return { q: rng.chance(0.6) ? rng.pick(v.words) : rng.pick(v.phrases), country: country() }
    if (roll < 0.38) return { q: typo(rng.pick(v.words), rng.int(0, 99), rng.int(0, 2)), country: country() }
    if (roll < 0.53) {
      return { budget: rng.pick(budgets), country: country(), ...(rng.chance(0.5) ? { q: rng.pick(v.words) } : {}) }
    }
    if (roll < 0.65) {
      return {
        country: country(),
        ...(rng.chance(0.6) ? { collectionId: rng.pick(v.collections) } : { tagIds: [rng.pick(v.tags)] }),
        ...(rng.chance(0.3) ? { q: rng.pick(v.words) } : {}),
        ...(rng.chance(0.3) ? { maxPrice: rng.int(20, 200) * 100 } : {})
      }
    }
    if (roll < 0.85) {
      return {
        sort: rng.pick(sorts),
        country: country(),
        ...(rng.chance(0.4) ? { q: rng.pick(v.words) } : {}),
        ...(rng.chance(0.4) ? { minPrice: rng.int(0, 50) * 100, maxPrice: rng.int(60, 300) * 100 } : {})
      }
    }
    return { country: country(), limit: rng.pick([10, 20, 50]) }
  })
}

const urlOf = (params: SearchParams) => {
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) query.set(key, Array.isArray(value) ? value.join(",") : String(value))
  }
  return `/v1/search?${query}`
}

// ---------------------------------------------------------------------------------------------------------
// 3. The SQL each search sends

interface Recorded {
  readonly url: string
  readonly statements: ReadonlyArray<readonly [string, ReadonlyArray<unknown>]>
}

const record = (params: SearchParams) =>
  Effect.gen(function* () {
    const search = yield* Search
    const statements: Array<readonly [string, ReadonlyArray<unknown>]> = []
    const result = yield* search.search(params).pipe(
      Statement.withTransformer((statement) =>
        Effect.sync(() => {
          statements.push(statement.compile())
          return statement
        })
      )
    )
    return { recorded: { url: urlOf(params), statements } satisfies Recorded, nextCursor: result.nextCursor }
  })

/** Records the mix; every fifth search that has a next page is followed by its second page. */
const recordMix = (mix: ReadonlyArray<SearchParams>) =>
  Effect.gen(function* () {
    yield* record(mix[0]!) // warm the reference-data cache, as the server's is
    const out: Array<Recorded> = []
    for (const [i, params] of mix.entries()) {
      const { recorded, nextCursor } = yield* record(params)
      out.push(recorded)
      if (i % 5 === 0 && nextCursor !== null) out.push((yield* record({ ...params, cursor: nextCursor })).recorded)
    }
    return out.slice(0, mix.length)
  })

// ---------------------------------------------------------------------------------------------------------
// 4. Load

interface RoundResult {
  readonly latencies: Array<number>
  /** The slowest of this round: milliseconds and item index. */
  readonly slowest: Array<readonly [number, number]>
  readonly seconds: number
}

/** Runs `work` over every item with `concurrency` in flight; the latency of each, and the wall time. */
const drive = async <A>(items: ReadonlyArray<A>, work: (item: A) => Promise<void>): Promise<RoundResult> => {
  const latencies: Array<number> = []
  const each: Array<readonly [number, number]> = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++
        const t0 = performance.now()
        await work(items[index]!)
        latencies.push(performance.now() - t0)
        each.push([performance.now() - t0, index])
      }
    })
  )
  const slowestItems = each.sort((a, b) => b[0] - a[0]).slice(0, slowest)
  return { latencies, slowest: slowestItems, seconds: (performance.now() - started) / 1000 }
}

const agent = new Http.Agent({ keepAlive: true, maxSockets: concurrency })

const httpGet = (port: number, path: string, token?: string) =>
  new Promise<void>((resolve, reject) => {
    const headers = token === undefined ? {} : { authorization: `Bearer ${token}` }
    const request = Http.get({ host, port, path, agent, headers }, (response) => {
      response.resume()
      response.on("end", () =>
        response.statusCode === 200 ? resolve() : reject(new Error(`${path} answered ${response.statusCode}`))
      )
    })
    request.on("error", reject)
  })

const rssOf = (pid: number) => {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))
  return match === null ? 0 : Number(match[1]) * 1024
}

const summarize = (results: ReadonlyArray<RoundResult>) => {
  const latencies = results.flatMap((r) => r.latencies)
  const seconds = results.reduce((sum, r) => sum + r.seconds, 0)
  return {
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    rps: latencies.length / seconds
  }
}

const main = async () => {
  await ensureDatabase()
  const port = await freePort()
  const publicUrl = `http://${host}:${port}`
  const { recorded, token } = await Effect.runPromise(
    Effect.gen(function* () {
      const seed = yield* Seed
      yield* seed.generate(products, progress)
      process.stderr.write("\n")
      const mix = makeMix(yield* vocabulary, queryCount)
      const token = yield* issueToken({
        publicUrl,
        databaseUrl,
        scope: "catalog:read",
        clientName: "bench:search",
        defaultCountry: "US"
      })
      return { recorded: yield* recordMix(mix), token }
    }).pipe(Effect.provide(BenchLive), Effect.scoped)
  )
  const statements = recorded.reduce((sum, r) => sum + r.statements.length, 0)
  console.log(
    `${recorded.length} searches on ${products.toLocaleString("en-US")} + curated products, ` +
      `${(statements / recorded.length).toFixed(1)} statements each; ${concurrency} in flight`
  )

  const server = await startServer(
    port,
    { DATABASE_URL: databaseUrl.toString(), PUBLIC_URL: publicUrl },
    cpuProfileDir === "" ? [] : ["--cpu-prof", "--cpu-prof-dir", Path.resolve(cpuProfileDir)]
  )
  const pool = new pg.Pool({ connectionString: databaseUrl.toString(), max: serverPoolSize })
  let peakRss = 0
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssOf(server.pid!))
  }, 50)
  try {
    const overHttp = (item: Recorded) => httpGet(port, item.url, token)
    const direct = async (item: Recorded) => {
      for (const [text, values] of item.statements) await pool.query(text, values as Array<unknown>)
    }
    // Warm both (plans, caches, connections) on a tenth of the mix.
    const warm = recorded.slice(0, Math.ceil(recorded.length / 10))
    await drive(warm, overHttp)
    await drive(warm, direct)
    const http: Array<RoundResult> = []
    const floor: Array<RoundResult> = []
    let serverCpuMillis = 0
    for (let round = 0; round < rounds; round++) {
      const cpuBefore = cpuMillisOf(server.pid!)
      http.push(await drive(recorded, overHttp))
      serverCpuMillis += cpuMillisOf(server.pid!) - cpuBefore
      floor.push(await drive(recorded, direct))
    }
    const h = summarize(http)
    const d = summarize(floor)
    const ms = (n: number) => n.toFixed(2).padStart(7)
    console.log("\n|            |  p50 ms |  p95 ms |  p99 ms |   req/s |")
    console.log("|------------|---------|---------|---------|---------|")
    console.log(`| HTTP       | ${ms(h.p50)} | ${ms(h.p95)} | ${ms(h.p99)} | ${h.rps.toFixed(0).padStart(7)} |`)
    console.log(`| direct SQL | ${ms(d.p50)} | ${ms(d.p95)} | ${ms(d.p99)} | ${d.rps.toFixed(0).padStart(7)} |`)
    console.log(`\nserver CPU: ${(serverCpuMillis / (rounds * recorded.length)).toFixed(2)} ms per search over HTTP`)
    const ratio = h.rps / d.rps
    const rssMb = peakRss / 1024 / 1024
    const verdict = (ok: boolean) => (ok ? "met" : "NOT met")
    console.log(`\nHTTP p95 ${h.p95.toFixed(1)} ms (target ≤ 25): ${verdict(h.p95 <= 25)}`)
    console.log(`HTTP/direct throughput ${ratio.toFixed(2)} (target ≥ 0.6): ${verdict(ratio >= 0.6)}`)
    console.log(`server peak RSS ${rssMb.toFixed(0)} MB (target ≤ 300): ${verdict(rssMb <= 300)}`)
    if (slowest > 0) {
      console.log("\nslowest over HTTP:")
      const worst = http.flatMap((r) => r.slowest).sort((a, b) => b[0] - a[0])
      for (const [millis, index] of worst.slice(0, slowest)) console.log(`${ms(millis)} ms  ${recorded[index]!.url}`)
    }
  } finally {
    clearInterval(sampler)
    agent.destroy()
    await pool.end()
    server.kill("SIGTERM")
  }
}

await main()
