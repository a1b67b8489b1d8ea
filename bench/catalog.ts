import { SqlClient } from "@effect/sql"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import pg from "pg"
import type { RateScope } from "../src/domain/company/Company.js"
import { postgres } from "../src/layers/Database.js"
import { MigrationsLive } from "../src/layers/Migrations.js"
import { PublicUrl } from "../src/services/catalog/Catalog.js"
import { Seed } from "../src/services/catalog/Seed.js"
import { Companies } from "../src/services/company/Companies.js"
import { benchDatabase } from "./support.js"

/**
 * The large catalog the catalog benchmarks share (`bench:products`, `bench:export`): a Postgres database
 * with the demo catalog plus `products` synthetic ones (resumable, so a second bench reuses it), and a new
 * test company whose rate limits never bite.
 */

const ensureDatabase = async (serverUrl: URL, name: string) => {
  const admin = new pg.Client({ connectionString: serverUrl.toString() })
  await admin.connect()
  const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])
  if (rowCount === 0) await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
}

const progress = (done: number, total: number) =>
  Effect.sync(() => process.stderr.write(`\rseeding: ${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")}`))

/** The seeded database's URL, a key of a new company, the catalog's tags and product count. */
export const seededCatalog = async (options: {
  readonly database: string
  readonly products: number
  readonly companyName: string
  readonly unlimited: ReadonlyArray<RateScope>
}) => {
  const { serverUrl, databaseUrl } = benchDatabase(options.database)
  await ensureDatabase(serverUrl, options.database)
  const live = Layer.mergeAll(Seed.Default, Companies.Default).pipe(
    Layer.provide(Layer.succeed(PublicUrl, "http://bench.invalid")),
    Layer.provideMerge(MigrationsLive.pipe(Layer.provideMerge(postgres(Redacted.make(databaseUrl.toString()))))),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )
  const prepare = Effect.gen(function* () {
    yield* (yield* Seed).generate(options.products, progress)
    process.stderr.write("\n")
    const sql = yield* SqlClient.SqlClient
    // As autovacuum would after a bulk load (it may be off on a bench server): statistics, and the visibility
    // map that lets index-only scans skip the heap.
    yield* sql`VACUUM ANALYZE products, product_tags, variants, variant_locations`
    const companies = yield* Companies
    const company = yield* companies.create({ name: `${options.companyName} ${Date.now()}`, environment: "test" })
    const unlimited = { rate: 1_000_000, burst: 1_000_000 }
    yield* companies.setRateLimits(
      company.companyId,
      Object.fromEntries(options.unlimited.map((scope) => [scope, unlimited]))
    )
    const tags = (yield* sql<{ id: string }>`SELECT id FROM tags ORDER BY id`).map((r) => r.id)
    const [{ count }] = (yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM products`) as [
      { count: number }
    ]
    return { databaseUrl, apiKey: company.apiKey, tags, count }
  })
  return Effect.runPromise(prepare.pipe(Effect.provide(live), Effect.scoped))
}
