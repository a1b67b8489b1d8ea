/**
 * `npm run bench:orders`: what placing a company order over HTTP costs, against the floor of its SQL run
 * directly, on PostgreSQL, with the server run from its bundle as `npm start` runs it.
 *
 *   npm run bench:orders -- [--orders 500] [--concurrency 20] [--rounds 2] [--warmup 20] [--steady 2000]
 *                           [--variants 4] [--database ribbon_bench_orders] [--cpu-prof DIR] [--trace]
 *
 * 1. Creates the database (on the server named by DATABASE_URL, default the local one) unless it exists; if
 *    it does, empties the tables a run fills (companies and everything of theirs, the supplier's orders,
 *    jobs), keeping the catalog and the migrations.
 * 2. Starts the server (NODE_ENV=production, LOG_LEVEL=Warn, a supplier that answers at once and never
 *    fails); it migrates and seeds the demo catalog on its first start.
 * 3. Five `test` companies through the Companies service the CLI uses, one for HTTP and one for each
 *    floor, with rate limits raised so the limiter runs but never refuses and a spending limit the run
 *    cannot exhaust; `--variants` physical variants that ship to GB, their tracked stock topped up with SQL.
 * 4. `--warmup` orders each way, then `--orders` orders each way in `--rounds` rounds that alternate
 *    between the five, so that a change in the machine's load falls on each alike:
 *    - HTTP: `POST /public-api/v3/orders`, each with its own idempotency key, round-robin over the
 *      variants, to the London address, `--concurrency` in flight;
 *    - the whole floor (the goal's): every statement the service runs for an order, its reads before the
 *      transaction and the transaction, straight from this process over its own pg pool (`--concurrency`
 *      connections and in flight), writing what the server wrote;
 *    - the whole floor as it was while the service looked the idempotency key up before anything else (one
 *      read more), kept so that its figures can be set beside the earlier runs';
 *    - the floor: the order's transaction alone, as the service runs it now (the goal's floor until the
 *      whole one), alike;
 *    - the earlier floor: the transaction as it was before the debit became one statement, kept so that
 *      its figures can be set beside the earlier runs' (see `directOrder` for both).
 *    These rounds meet a server whose JIT is still compiling the order path (20 orders in): they are the
 *    measurement every run before the steady one printed, and are printed first, as they were.
 * 4b. The steady server: `--steady` more orders over HTTP, unmeasured, then VACUUM ANALYZE of the tables the
 *    orders write, then the same rounds again (new keys). The goals are judged on these rounds: the cost
 *    per order of a server that has been up a while, not of its first seconds.
 * 5. Checks in SQL: one order per idempotency key, one supplier booking per company order and none
 *    without one, and for each billing method, debits minus credits = the `charged` of its active and
 *    completed orders. Exits non-zero when a check or a request fails.
 *
 * Prints orders/s (orders ÷ the time from each round's first request to its last answer, summed over the
 * rounds), p50/p95/p99 of each
 * request (each transaction, for the floor), the server's CPU per order (its CPU time over the window ÷
 * orders, from /proc/<pid>/stat), what the server's Postgres connections were doing (sampled every 50 ms
 * from `pg_stat_activity`), and the ratio HTTP ÷ whole floor orders/s against the goals (ratio ≥ 0.5, HTTP
 * p95 ≤ 150 ms), with the ratios to the transaction alone and to the earlier floor beside it; once for the
 * rounds after the warm-up and once for the steady server. `--cpu-prof DIR` runs the server with `node --cpu-prof`. `--trace` points the server's
 * OTLP exporter at a sink in this process and prints where an order's time goes, span by span and
 * statement by statement, the statements per order, and how long the billing method's row was waited for
 * and held; the tracing costs time of its own, so its run's figures are not the headline.
 */
import type { ChildProcess } from "node:child_process"
import { createHash } from "node:crypto"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import pg from "pg"
import { makeId } from "../src/domain/platform/Ids.js"
import { postgres } from "../src/layers/Database.js"
import { Companies } from "../src/services/company/Companies.js"
import { KeyStore } from "../src/services/company/KeyStore.js"
import { benchDatabase, cpuMillisOf, freePort, host, option, percentile, pool, startServer } from "./support.js"

const orderCount = Number(option("orders", "500"))
const concurrency = Number(option("concurrency", "20"))
const warmupCount = Number(option("warmup", "20"))
const steadyCount = Number(option("steady", "2000"))
const rounds = Number(option("rounds", "2"))
const variantCount = Number(option("variants", "4"))
const databaseName = option("database", "ribbon_bench_orders")
const cpuProfileDir = option("cpu-prof", "")
const tracing = process.argv.includes("--trace")
const goals = { ratio: 0.5, p95: 150 }
/** The floors' connections, told apart from the server's (and each other's) in `pg_stat_activity`. */
const floorNames: Record<Floor, string> = {
  whole: "bench:orders direct whole",
  lookup: "bench:orders direct whole lookup",
  now: "bench:orders direct",
  earlier: "bench:orders direct earlier"
}
const country = "GB"

// The warm-up orders are the floor's templates: each variant needs one.
if (warmupCount < variantCount) throw new Error("--warmup: at least one order per variant (--variants)")

const { serverUrl, databaseUrl } = benchDatabase(databaseName)

const recipient = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+44 20 7946 0958" }
const address = { countryCode: "GB", address1: "10 Downing Street", city: "London", postalCode: "SW1A 2AA" }

// ---------------------------------------------------------------------------------------------------------
// 1. The database

const prepareDatabase = async () => {
  const admin = new pg.Client({ connectionString: serverUrl.toString() })
  await admin.connect()
  const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [databaseName])
  if (rowCount === 0) await admin.query(`CREATE DATABASE ${databaseName}`)
  await admin.end()
  if (rowCount === 0) return "created"
  const db = new pg.Client({ connectionString: databaseUrl.toString() })
  await db.connect()
  const { rows } = await db.query<{ migrated: string | null }>(
    "SELECT to_regclass('public.company_orders')::text AS migrated"
  )
  // CASCADE reaches every table that refers to these: accounts, keys, billing methods and entries, orders.
  if (rows[0]!.migrated !== null) await db.query("TRUNCATE companies, orders, jobs CASCADE")
  await db.end()
  return "emptied"
}

// ---------------------------------------------------------------------------------------------------------
// 2. The server and its requests

interface Answer {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

const agent = new Http.Agent({ keepAlive: true, maxSockets: concurrency })
let port = 0

const post = (path: string, apiKey: string, json: unknown) =>
  new Promise<Answer>((resolve, reject) => {
    const payload = JSON.stringify(json)
    const headers = { "x-api-key": apiKey, "content-type": "application/json" }
    const req = Http.request({ host, port, path, method: "POST", agent, headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString() })
      )
      response.on("error", reject)
    })
    req.on("error", reject)
    req.end(payload)
  })

const startRibbon = (publicUrl: string, otlp: string | undefined) =>
  startServer(
    port,
    {
      DATABASE_URL: databaseUrl.toString(),
      PUBLIC_URL: publicUrl,
      NODE_ENV: "production",
      FULFILLMENT_LATENCY: "0 millis",
      FULFILLMENT_FAILURE_RATE: "0",
      FULFILLMENT_PROGRESS_EVERY: "1 hour",
      ...(otlp === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: otlp })
    },
    cpuProfileDir === "" ? [] : ["--cpu-prof", "--cpu-prof-dir", Path.resolve(cpuProfileDir)]
  )

// ---------------------------------------------------------------------------------------------------------
// 3. The companies and the variants

interface BenchCompany {
  readonly companyId: string
  readonly accountId: string
  readonly apiKey: string
}

/** Limits that never bite, on every scope an order passes. */
const raised = { rate: 1_000_000, burst: 1_000_000 }

const createCompanies = () =>
  Effect.gen(function* () {
    const companies = yield* Companies
    const make = (name: string) =>
      Effect.gen(function* () {
        const company = yield* companies.create({ name: `${name} ${Date.now().toString(36)}`, environment: "test" })
        yield* companies.setRateLimits(company.companyId, {
          global: raised,
          "marketplace:read": raised,
          "marketplace:write": raised
        })
        return company
      })
    return {
      http: yield* make("bench:orders http"),
      direct: yield* make("bench:orders direct"),
      earlier: yield* make("bench:orders direct earlier"),
      whole: yield* make("bench:orders direct whole"),
      lookup: yield* make("bench:orders direct whole lookup")
    }
  }).pipe(
    Effect.provide(
      Companies.Default.pipe(
        Layer.provideMerge(KeyStore.Default),
        Layer.provide(postgres(Redacted.make(databaseUrl.toString()), { maxConnections: 2 })),
        Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
      )
    ),
    Effect.scoped,
    Effect.runPromise
  )

/** Physical variants for sale that ship to GB with stock, their tracked stock raised beyond what a run takes. */
const pickVariants = async (db: pg.Client) => {
  const { rows } = await db.query<{ id: string }>(
    `SELECT v.id FROM variants v JOIN variant_locations l ON l.variant_id = v.id
     WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND $1 = ANY (l.ships_to) AND (l.stock IS NULL OR l.stock > 0)
     ORDER BY md5(v.id) LIMIT $2`,
    [country, variantCount]
  )
  if (rows.length < variantCount) throw new Error(`only ${rows.length} variants ship to ${country}`)
  const ids = rows.map((row) => row.id)
  const needed = (orderCount + warmupCount) * 2 * 10
  await db.query("UPDATE variant_locations SET stock = $2 WHERE variant_id = ANY ($1) AND stock < $2", [ids, needed])
  return ids
}

// ---------------------------------------------------------------------------------------------------------
// 4. HTTP

const orderBody = (variantId: string, idempotencyKey: string) => ({
  variantId,
  recipient,
  shippingAddress: address,
  idempotencyKey
})

const placeOverHttp = async (company: BenchCompany, variantId: string, key: string) => {
  const answer = await post("/public-api/v3/orders", company.apiKey, orderBody(variantId, key))
  if (answer.status !== 201 || answer.headers["idempotent-replayed"] !== undefined) {
    throw new Error(`order ${key}: ${answer.status}: ${answer.body.slice(0, 500)}`)
  }
}

// ---------------------------------------------------------------------------------------------------------
// 5. The floor

/** What one variant's order writes, taken from an order the server placed (prices, titles, the address). */
interface Template {
  readonly order: Record<string, unknown>
  readonly productTitle: string
  readonly variantTitle: string
}

const templatesOf = async (db: pg.Client, companyId: string) => {
  const { rows } = await db.query<Record<string, unknown>>(
    `SELECT DISTINCT ON (c.variant_id) c.*, o.product_title AS booking_product_title,
       o.variant_title AS booking_variant_title
     FROM company_orders c JOIN orders o ON o.id = c.supplier_order_id
     WHERE c.company_id = $1 ORDER BY c.variant_id, c.created_at`,
    [companyId]
  )
  return new Map<string, Template>(
    rows.map((row) => [
      row.variant_id as string,
      {
        order: row,
        productTitle: row.booking_product_title as string,
        variantTitle: row.booking_variant_title as string
      }
    ])
  )
}

/** `Billing`'s view of a method with its remaining funds, as it was read from the ledger (the earlier floor). */
const remainingSql = `SELECT m.id, m.account_id, a.environment, a.company_id, m.name, m.type, m.status, m.is_default,
    m.currency, m.spending_limit::int AS spending_limit, m.created_at,
    (m.spending_limit - COALESCE((
      SELECT sum(CASE e.kind WHEN 'debit' THEN e.amount ELSE -e.amount END)
      FROM billing_entries e WHERE e.billing_method_id = m.id), 0))::int AS remaining
  FROM billing_methods m JOIN accounts a ON a.id = m.account_id WHERE m.id = $1`

const newId = () => Effect.runSync(makeId)

/**
 * Which floor: `whole`, every statement `CompanyOrders.place` runs for an order (its reads, then its
 * transaction: the goal's floor, "the same work's SQL"); `lookup`, the same with the order looked up by its
 * idempotency key first, as `withIdempotency` did before it ran `make` first; `now`, the transaction alone
 * (the floor before the whole one); or `earlier`, the transaction it ran before the debit was one statement.
 */
type Floor = "whole" | "lookup" | "now" | "earlier"

/** The statements of one order, on `client` inside its transaction, as the floor `shape` runs them. */
const floorStatements = async (
  client: pg.PoolClient,
  shape: "now" | "earlier",
  company: BenchCompany,
  methodId: string,
  template: Template,
  key: string
) => {
  const t = template.order
  const id = newId()
  const now = new Date()
  const charged = Number(t.charged)
  await client.query("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 1)) AS locked", [
    `company:${company.companyId}:test:${key}`
  ])
  if (shape === "earlier") {
    // `Billing.debit` as it was: the method's row locked, its remaining read from the ledger, the entry inserted.
    await client.query("SELECT 1 FROM billing_methods WHERE id = $1 FOR UPDATE", [methodId])
    const { rows } = await client.query<{ remaining: number | null }>(remainingSql, [methodId])
    if (rows[0]!.remaining !== null && rows[0]!.remaining < charged) throw new Error("insufficient funds")
    await client.query(
      // (The entry's balance, which the ledger then summed when read, is summed here: the column is required now.)
      `INSERT INTO billing_entries (billing_method_id, kind, amount, subject_type, subject_id, reason, created_at,
         spent_to_date)
       VALUES ($1, 'debit', $2, 'order', $3, 'order placed', $4, $2 + (SELECT COALESCE(SUM(CASE kind WHEN 'debit'
         THEN amount ELSE -amount END), 0) FROM billing_entries WHERE billing_method_id = $1))`,
      [methodId, charged, id, now]
    )
  }
  const bookingKey = `company-order:${id}`
  if (shape === "earlier") {
    // `Fulfillment.book`'s lookup by key and its nested transaction.
    await client.query("SELECT * FROM orders WHERE idempotency_key = $1", [bookingKey])
    await client.query("SAVEPOINT effect_sql_1")
  }
  const bookingId = newId()
  const booking = [
    bookingId,
    bookingKey,
    t.variant_id,
    t.product_id,
    template.productTitle,
    template.variantTitle,
    t.unit_price,
    t.currency,
    t.country_code,
    now
  ]
  if (shape === "earlier") {
    await client.query(
      `INSERT INTO orders (id, idempotency_key, user_id, checkout_id, item_index, variant_id, product_id,
         product_title, variant_title, quantity, amount, currency, country_code, status, created_at, updated_at)
       VALUES ($1, $2, NULL, NULL, NULL, $3, $4, $5, $6, 1, $7, $8, $9, 'placed', $10, $10)
       ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
      booking
    )
    const taken = await client.query(
      `UPDATE variant_locations SET stock = stock - $3
       WHERE variant_id = $1 AND $2 = ANY (ships_to) AND (stock IS NULL OR stock >= $3) RETURNING variant_id`,
      [t.variant_id, t.country_code, 1]
    )
    if (taken.rowCount === 0) throw new Error(`variant ${t.variant_id} is out of stock`)
  } else {
    // `Fulfillment.bookNew`: the stock taken and the `orders` row written by one statement.
    const { rowCount } = await client.query(
      `WITH taken AS (
         UPDATE variant_locations SET stock = stock - 1
         WHERE variant_id = $3 AND $9 = ANY (ships_to) AND (stock IS NULL OR stock >= 1) RETURNING variant_id)
       INSERT INTO orders (id, idempotency_key, variant_id, product_id, product_title, variant_title, quantity,
         amount, currency, country_code, status, created_at, updated_at)
       SELECT $1, $2, taken.variant_id, $4, $5, $6, 1, $7::int, $8, $9, 'placed', $10::timestamptz, $10::timestamptz
       FROM taken RETURNING *`,
      booking
    )
    if (rowCount === 0) throw new Error(`variant ${t.variant_id} is out of stock`)
  }
  const fingerprint = createHash("sha256")
    .update(JSON.stringify(orderBody(t.variant_id as string, key)))
    .digest("hex")
  await client.query(
    `INSERT INTO company_orders (id, company_id, environment, account_id, billing_method_id, idempotency_key,
       fingerprint, status, shipment_status, supplier_order_id, variant_id, product_id, title, quantity,
       unit_price, total, currency, charged, recipient_first_name, recipient_last_name, recipient_email,
       recipient_phone, address1, address2, city, province_code, postal_code, country_code, tags, metadata,
       source, created_at, updated_at)
     VALUES ($1, $2, 'test', $3, $4, $5, $6, 'active', 'orderReceived', $7, $8, $9, $10, 1, $11, $11, $12, $13,
       $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, '[]', NULL, NULL, $24, $24)
     ON CONFLICT (company_id, environment, idempotency_key) DO NOTHING RETURNING *`,
    [
      id,
      company.companyId,
      company.accountId,
      methodId,
      key,
      fingerprint,
      bookingId,
      t.variant_id,
      t.product_id,
      t.title,
      t.unit_price,
      t.currency,
      charged,
      t.recipient_first_name,
      t.recipient_last_name,
      t.recipient_email,
      t.recipient_phone,
      t.address1,
      t.address2,
      t.city,
      t.province_code,
      t.postal_code,
      t.country_code,
      now
    ]
  )
  // `CompanyWebhooks.emit` of `order-created`: the company's endpoints (none here).
  await client.query(
    shape === "earlier"
      ? `SELECT * FROM company_webhook_endpoints WHERE company_id = $1 AND environment = 'test' AND deleted_at IS NULL
           AND event_types @> $2::jsonb ORDER BY created_at, id`
      : `SELECT * FROM company_webhook_endpoints WHERE company_id = $1 AND environment = 'test' AND deleted_at IS NULL
           AND event_types ?| $2::text[] ORDER BY created_at, id`,
    [company.companyId, shape === "earlier" ? JSON.stringify(["order-created"]) : ["order-created"]]
  )
  if (shape === "now") {
    // `Billing.debit`, last: one statement takes the row's lock, judges the funds on it and writes the entry.
    const { rowCount } = await client.query(
      `WITH moved AS (
         UPDATE billing_methods SET spent = spent + $2
         WHERE id = $1 AND status = 'active' AND (spending_limit IS NULL OR spending_limit - spent >= $2)
         RETURNING id, spent)
       INSERT INTO billing_entries (billing_method_id, kind, amount, subject_type, subject_id, reason, created_at,
         spent_to_date)
       SELECT id, 'debit', $2, 'order', $3, 'order placed', $4, spent FROM moved RETURNING id`,
      [methodId, charged, id, now]
    )
    if (rowCount === 0) throw new Error("insufficient funds")
  }
}

/**
 * The reads `CompanyOrders.place` makes before its transaction, as it makes them: the account with its
 * default billing method (`Accounts.withDefaultMethod`) and the variant with its product, titles, countries
 * and pricing facts (`variantFor`); for the `lookup` floor, first the order by idempotency key (the lookup
 * `withIdempotency` made before it ran `make` first). The landed price and the address are worked out in
 * memory.
 */
const floorReads = async (
  client: pg.PoolClient,
  shape: "whole" | "lookup",
  company: BenchCompany,
  template: Template,
  key: string
) => {
  if (shape === "lookup") {
    await client.query(
      "SELECT * FROM company_orders WHERE company_id = $1 AND environment = 'test' AND idempotency_key = $2",
      [company.companyId, key]
    )
  }
  await client.query(
    `SELECT a.id, a.company_id, a.environment, a.name, a.is_default, a.created_at,
       (SELECT row_to_json(m) FROM billing_methods m WHERE m.account_id = a.id AND m.is_default) AS default_method
     FROM accounts a WHERE a.company_id = $1 AND a.environment = 'test' ORDER BY a.is_default DESC, a.created_at LIMIT 2`,
    [company.companyId]
  )
  await client.query(
    `SELECT p.id AS product_id, p.title AS product_title, v.title AS variant_title, p.category_id, v.price_usd,
       v.is_digital, v.origin_warehouse, v.weight_class, l.stock, l.ships_to
     FROM variants v JOIN products p ON p.id = v.product_id LEFT JOIN variant_locations l ON l.variant_id = v.id
     WHERE v.id = $1`,
    [template.order.variant_id]
  )
}

/**
 * One order as a transaction of `CompanyOrders.place` writes it, statement for statement, then COMMIT:
 *
 * - `now` (the floor of the goal), the transaction the service runs: the key's advisory lock
 *   (`withIdempotency`'s claim), the booking (`orders` row, stock taken), the `company_orders` row, the read
 *   of the company's webhook endpoints for the change (`CompanyWebhooks.emit`; the bench registers none),
 *   and last `Billing.debit`, one statement that locks the method's row, judges the funds and writes the entry;
 * - `earlier`, kept so its figures can be set beside the earlier runs': the lock, `Billing.debit` first as
 *   it was (the method's row locked, its remaining read from the ledger, the entry inserted; it does not
 *   move `spent`, so it runs for a company of its own), `Fulfillment.book` with its lookup by key and its
 *   savepoint, the `company_orders` row and the endpoints read.
 *
 * Left out, since the floor is the transaction alone: HTTP and JSON, the API-key middleware
 * (authentication, policy, rate limiting), decoding and validating the body (the phone), and the reads
 * `place` makes before its transaction: the order by idempotency key, the account with its default billing
 * method, the variant (its product, titles, countries and landed price), the address validation.
 */
const directOrder = async (
  db: pg.Pool,
  shape: Floor,
  company: BenchCompany,
  methodId: string,
  template: Template,
  key: string
) => {
  const client = await db.connect()
  try {
    const whole = shape === "whole" || shape === "lookup"
    if (whole) await floorReads(client, shape, company, template, key)
    await client.query("BEGIN")
    await floorStatements(client, whole ? "now" : shape, company, methodId, template, key)
    await client.query("COMMIT")
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

// ---------------------------------------------------------------------------------------------------------
// 6. Measuring

/** One side's figures, summed over its rounds. */
interface Window {
  seconds: number
  readonly latencies: Array<number>
  cpuMillis: number
  /** What the side's Postgres connections did: how many were in each state, summed over the samples. */
  readonly states: Map<string, number>
  samples: number
}

const emptyWindow = (): Window => ({ seconds: 0, latencies: [], cpuMillis: 0, states: new Map(), samples: 0 })

/**
 * Orders `from` to `to` through `place`, `concurrency` in flight, added to `window` with the CPU `cpuOf`
 * counts and what the side's Postgres connections did meanwhile.
 */
const measure = async (
  db: pg.Client,
  window: Window,
  [from, to]: readonly [number, number],
  place: (index: number) => Promise<void>,
  cpuOf: () => number,
  /** The floor's connections (its `application_name`), or none for the server's. */
  whose: string | null
) => {
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await db.query<{ state: string; n: string }>(
        `SELECT coalesce(state, '?') || coalesce(' (' || wait_event_type || ': ' || wait_event || ')', '') AS state,
           count(*) AS n FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
           AND CASE WHEN $1::text IS NULL THEN application_name <> ALL ($2) ELSE application_name = $1 END
         GROUP BY 1`,
        [whose, Object.values(floorNames)]
      )
      window.samples++
      for (const r of rows) window.states.set(r.state, (window.states.get(r.state) ?? 0) + Number(r.n))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })()
  const cpuBefore = cpuOf()
  const start = performance.now()
  await pool(to - from, concurrency, async (offset) => {
    const t0 = performance.now()
    await place(from + offset)
    window.latencies.push(performance.now() - t0)
  })
  window.seconds += (performance.now() - start) / 1000
  window.cpuMillis += cpuOf() - cpuBefore
  sampling = false
  await sampler
}

// ---------------------------------------------------------------------------------------------------------
// 7. The checks

/** What the run left: `expected` orders for each of `companyIds`, each booked once and debited once. */
const check = async (db: pg.Client, companyIds: ReadonlyArray<string>, expected: (companyId: string) => number) => {
  const { rows: duplicates } = await db.query(
    `SELECT company_id, environment, idempotency_key FROM company_orders GROUP BY 1, 2, 3 HAVING count(*) > 1`
  )
  const { rows: counts } = await db.query<{ id: string; orders: number }>(
    `SELECT wanted.id, (SELECT count(*)::int FROM company_orders c WHERE c.company_id = wanted.id) AS orders
     FROM unnest($1::text[]) AS wanted (id)`,
    [companyIds]
  )
  const miscounted = counts.filter((row) => row.orders !== expected(row.id)).length
  const { rows: bookings } = await db.query<{ without: number; orphans: number; shared: number }>(
    `SELECT
       (SELECT count(*)::int FROM company_orders c WHERE NOT EXISTS (
          SELECT 1 FROM orders o WHERE o.id = c.supplier_order_id AND o.user_id IS NULL)) AS without,
       (SELECT count(*)::int FROM orders o WHERE o.user_id IS NULL AND NOT EXISTS (
          SELECT 1 FROM company_orders c WHERE c.supplier_order_id = o.id)) AS orphans,
       (SELECT count(*)::int FROM (SELECT supplier_order_id FROM company_orders GROUP BY 1 HAVING count(*) > 1) s)
         AS shared`
  )
  const { rows: ledger } = await db.query<{ id: string; net: string; charged: string }>(
    `SELECT m.id,
       COALESCE((SELECT sum(CASE e.kind WHEN 'debit' THEN e.amount ELSE -e.amount END)
                 FROM billing_entries e WHERE e.billing_method_id = m.id), 0) AS net,
       COALESCE((SELECT sum(c.charged) FROM company_orders c
                 WHERE c.billing_method_id = m.id AND c.status IN ('active', 'completed')), 0) AS charged
     FROM billing_methods m`
  )
  const unbalanced = ledger.filter((row) => row.net !== row.charged)
  const b = bookings[0]!
  return { duplicates: duplicates.length, miscounted, bookings: b, unbalanced, methods: ledger.length }
}

// ---------------------------------------------------------------------------------------------------------
// 8. `--trace`: where an order's time goes, from the server's spans

interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly name: string
  readonly start: number
  readonly end: number
  readonly statement: string | undefined
}

/** An OTLP/HTTP (JSON) sink keeping every span it receives. */
const otlpSink = async (spans: Array<Span>) => {
  const sinkPort = await freePort()
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      if (req.url === "/v1/traces") {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as {
          resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>
        }
        for (const raw of (body.resourceSpans ?? []).flatMap((r) => r.scopeSpans ?? []).flatMap((s) => s.spans ?? [])) {
          const attributes = (raw.attributes ?? []) as Array<{ key: string; value: { stringValue?: string } }>
          spans.push({
            traceId: raw.traceId as string,
            spanId: raw.spanId as string,
            parentSpanId: (raw.parentSpanId as string | undefined) ?? "",
            name: raw.name as string,
            start: Number(BigInt(raw.startTimeUnixNano as string) / 1000n) / 1000,
            end: Number(BigInt(raw.endTimeUnixNano as string) / 1000n) / 1000,
            statement: attributes.find((a) => a.key === "db.query.text")?.value.stringValue
          })
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(sinkPort, host, resolve))
  return { url: `http://${host}:${sinkPort}`, close: () => server.close() }
}

/** The first words of a statement, enough to tell it apart. */
const shortStatement = (text: string) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > 72 ? `${flat.slice(0, 71)}…` : flat
}

/** Per order placed over HTTP: each span (statements by their text) with its count and mean time. */
const traceSummary = (spans: ReadonlyArray<Span>, since: number) => {
  const roots = spans.filter(
    (s) => s.name === "POST /public-api/v3/orders" && s.parentSpanId === "" && s.start >= since
  )
  const traces = new Set(roots.map((s) => s.traceId))
  const mine = spans.filter((s) => traces.has(s.traceId))
  const byName = new Map<string, { count: number; total: number }>()
  for (const span of mine) {
    // A statement outside a transaction waits for a pool connection within its span; one inside does not.
    const where = transactionOf(mine, span) === undefined ? "sql" : "sql in transaction"
    const name = span.statement === undefined ? span.name : `${where}: ${shortStatement(span.statement)}`
    const entry = byName.get(name) ?? { count: 0, total: 0 }
    entry.count++
    entry.total += span.end - span.start
    byName.set(name, entry)
  }
  const orders = roots.length
  const lines = [...byName]
    .sort((a, b) => b[1].total - a[1].total)
    .map(
      ([name, { count, total }]) =>
        `| ${(count / orders).toFixed(2).padStart(5)} | ${(total / count).toFixed(2).padStart(7)} | ${(total / orders).toFixed(2).padStart(7)} | ${name}`
    )
  // The billing method's row is held from its lock (the debit, which takes it) to the end of the transaction.
  const held: Array<number> = []
  const waited: Array<number> = []
  for (const span of mine) {
    if (span.statement === undefined || !/^WITH moved AS \(\s*UPDATE billing_methods/.test(span.statement)) continue
    const transaction = transactionOf(mine, span)
    waited.push(span.end - span.start)
    if (transaction !== undefined) held.push(transaction.end - span.end)
  }
  // Statements per order: traced ones outside and inside a transaction, and those the transactions add
  // (BEGIN and COMMIT for each outer one, SAVEPOINT for each nested one), which are not traced.
  const count = (test: (span: Span) => boolean) => mine.filter(test).length / orders
  const statements = {
    before: count((span) => span.statement !== undefined && transactionOf(mine, span) === undefined),
    inside: count((span) => span.statement !== undefined && transactionOf(mine, span) !== undefined),
    transactions: count((span) => span.name === "sql.transaction" && transactionOf(mine, span) === undefined),
    savepoints: count((span) => span.name === "sql.transaction" && transactionOf(mine, span) !== undefined)
  }
  return { orders, lines, held, waited, statements }
}

const spansById = new WeakMap<ReadonlyArray<Span>, Map<string, Span>>()

/** The transaction a span ran in, if any. */
const transactionOf = (spans: ReadonlyArray<Span>, span: Span): Span | undefined => {
  let byId = spansById.get(spans)
  if (byId === undefined) {
    byId = new Map(spans.map((s) => [s.spanId, s]))
    spansById.set(spans, byId)
  }
  let current = byId.get(span.parentSpanId)
  while (current !== undefined && current.name !== "sql.transaction") current = byId.get(current.parentSpanId)
  return current
}

// ---------------------------------------------------------------------------------------------------------
// 9. The run

const ms = (n: number) => n.toFixed(1).padStart(7)
const row = (label: string, window: Window) =>
  `| ${label.padEnd(30)} | ${(window.latencies.length / window.seconds).toFixed(1).padStart(8)} | ${ms(percentile(window.latencies, 50))} | ${ms(percentile(window.latencies, 95))} | ${ms(percentile(window.latencies, 99))} | ${ms(Math.max(...window.latencies))} |`
const verdict = (ok: boolean) => (ok ? "met" : "NOT met")

/** The five sides' rows, the server's CPU, what the connections did, and the ratios; the goal's two figures. */
const report = (windows: Record<"http" | Exclude<Floor, "now"> | "floor", Window>, title: string) => {
  const { http, whole, lookup, floor, earlier } = windows
  const httpRate = orderCount / http.seconds
  const wholeRate = orderCount / whole.seconds
  const lookupRate = orderCount / lookup.seconds
  const floorRate = orderCount / floor.seconds
  const earlierRate = orderCount / earlier.seconds
  const ratio = httpRate / wholeRate
  const p95 = percentile(http.latencies, 95)
  console.log(title)
  console.log("\n|                                | orders/s |  p50 ms |  p95 ms |  p99 ms |  max ms |")
  console.log("|--------------------------------|----------|---------|---------|---------|---------|")
  console.log(row("HTTP POST /public-api/v3/orders", http))
  console.log(row("direct SQL, every statement (goal)", whole))
  console.log(row("… with the lookup by key (before)", lookup))
  console.log(row("direct SQL (the transaction alone)", floor))
  console.log(row("direct SQL (the earlier floor)", earlier))
  console.log(
    `\nserver CPU: ${(http.cpuMillis / orderCount).toFixed(2)} ms per order ` +
      `(${((http.cpuMillis / 1000 / http.seconds) * 100).toFixed(0)} % of one core over ${http.seconds.toFixed(2)} s); ` +
      `the floors' client: ${(floor.cpuMillis / orderCount).toFixed(2)} ms per order ` +
      `(the earlier floor's ${(earlier.cpuMillis / orderCount).toFixed(2)} ms)`
  )
  console.log(`the server's connections meanwhile: ${states(http)}`)
  console.log(`the whole floor's connections meanwhile: ${states(whole)}`)
  console.log(`the whole floor's with the lookup by key: ${states(lookup)}`)
  console.log(`the floor's connections meanwhile: ${states(floor)}`)
  console.log(`the earlier floor's connections meanwhile: ${states(earlier)}`)
  console.log(
    `\nratio HTTP ÷ direct, every statement: ${ratio.toFixed(2)} (${httpRate.toFixed(1)} ÷ ${wholeRate.toFixed(1)} ` +
      `orders/s; goal ≥ ${goals.ratio}): ${verdict(ratio >= goals.ratio)}; against the whole floor with the ` +
      `lookup by key ${(httpRate / lookupRate).toFixed(2)} (÷ ${lookupRate.toFixed(1)}), against the transaction alone ` +
      `${(httpRate / floorRate).toFixed(2)} (÷ ${floorRate.toFixed(1)}), against the earlier floor ` +
      `${(httpRate / earlierRate).toFixed(2)} (÷ ${earlierRate.toFixed(1)} orders/s)`
  )
  console.log(`HTTP p95 ${p95.toFixed(0)} ms (goal ≤ ${goals.p95}): ${verdict(p95 <= goals.p95)}`)
  return { ratio, p95 }
}
const loadAverage = () =>
  Os.loadavg()
    .map((n) => n.toFixed(1))
    .join(" ")
const states = (window: Window) =>
  [...window.states]
    .sort((a, b) => b[1] - a[1])
    .filter(([, n]) => n / window.samples >= 0.05)
    .map(([state, n]) => `${(n / window.samples).toFixed(1)} ${state}`)
    .join(", ")

const main = async () => {
  const state = await prepareDatabase()
  port = await freePort()
  const spans: Array<Span> = []
  const sink = tracing ? await otlpSink(spans) : undefined
  let server: ChildProcess | undefined
  const db = new pg.Client({ connectionString: databaseUrl.toString() })
  const floorPool = (shape: Floor) =>
    new pg.Pool({ connectionString: databaseUrl.toString(), max: concurrency, application_name: floorNames[shape] })
  const direct = floorPool("now")
  const directEarlier = floorPool("earlier")
  const directWhole = floorPool("whole")
  const directLookup = floorPool("lookup")
  try {
    const startedAt = performance.now()
    server = await startRibbon(`http://${host}:${port}`, sink?.url)
    const pid = server.pid!
    await db.connect()
    console.log(
      `database ${databaseName} (${state}); server up in ${((performance.now() - startedAt) / 1000).toFixed(1)} s; ` +
        `${Os.cpus().length} cores, load average ${loadAverage()}`
    )
    const companies = await createCompanies()
    const accountIds = [
      companies.http.accountId,
      companies.direct.accountId,
      companies.earlier.accountId,
      companies.whole.accountId,
      companies.lookup.accountId
    ]
    // A spending limit no run reaches (the test funds cover 100,000.00 USD; the columns are read as int).
    await db.query("UPDATE billing_methods SET spending_limit = 1000000000 WHERE account_id = ANY ($1)", [accountIds])
    const { rows: methods } = await db.query<{ account_id: string; id: string }>(
      "SELECT account_id, id FROM billing_methods WHERE account_id = ANY ($1) AND is_default",
      [accountIds]
    )
    const methodOf = (company: BenchCompany) => methods.find((m) => m.account_id === company.accountId)!.id
    const variants = await pickVariants(db)
    const variantOf = (index: number) => variants[index % variants.length]!
    const run = Date.now().toString(36)

    const httpPlace = (key: string, index: number) => placeOverHttp(companies.http, variantOf(index), key)
    // The floor writes what the server wrote for each variant: its warm-up orders are the templates.
    await pool(warmupCount, concurrency, (index) => httpPlace(`warmup-${run}-${index}`, index))
    const templates = await templatesOf(db, companies.http.companyId)
    const floorPlace = (db: pg.Pool, shape: Floor, company: BenchCompany) => (key: string, index: number) =>
      directOrder(db, shape, company, methodOf(company), templates.get(variantOf(index))!, key)
    const directPlace = floorPlace(direct, "now", companies.direct)
    const earlierPlace = floorPlace(directEarlier, "earlier", companies.earlier)
    const wholePlace = floorPlace(directWhole, "whole", companies.whole)
    const lookupPlace = floorPlace(directLookup, "lookup", companies.lookup)
    await pool(warmupCount, concurrency, (index) => wholePlace(`warmup-${run}-${index}`, index))
    await pool(warmupCount, concurrency, (index) => lookupPlace(`warmup-${run}-${index}`, index))
    await pool(warmupCount, concurrency, (index) => directPlace(`warmup-${run}-${index}`, index))
    await pool(warmupCount, concurrency, (index) => earlierPlace(`warmup-${run}-${index}`, index))

    const benchCpu = () => {
      const used = process.cpuUsage()
      return (used.user + used.system) / 1000
    }
    /** `--orders` each way in `--rounds` rounds that alternate, so that a change in the machine's load falls on each. */
    const alternatingRounds = async (prefix: string) => {
      const windows = {
        http: emptyWindow(),
        whole: emptyWindow(),
        lookup: emptyWindow(),
        floor: emptyWindow(),
        earlier: emptyWindow()
      }
      for (let round = 0; round < rounds; round++) {
        const part = [
          Math.floor((orderCount * round) / rounds),
          Math.floor((orderCount * (round + 1)) / rounds)
        ] as const
        const key = (index: number) => `${prefix}-${run}-${index}`
        await measure(
          db,
          windows.http,
          part,
          (i) => httpPlace(key(i), i),
          () => cpuMillisOf(pid),
          null
        )
        await measure(db, windows.whole, part, (i) => wholePlace(key(i), i), benchCpu, floorNames.whole)
        await measure(db, windows.lookup, part, (i) => lookupPlace(key(i), i), benchCpu, floorNames.lookup)
        await measure(db, windows.floor, part, (i) => directPlace(key(i), i), benchCpu, floorNames.now)
        await measure(db, windows.earlier, part, (i) => earlierPlace(key(i), i), benchCpu, floorNames.earlier)
      }
      return windows
    }

    const measuredFrom = Date.now()
    const cold = await alternatingRounds("bench")
    report(
      cold,
      `${orderCount} orders over ${variants.length} variants to ${country}, ${concurrency} in flight, in ${rounds} ` +
        `alternating rounds after ${warmupCount} warm-up orders each (the server still compiling its code: the ` +
        `earlier measurement); the server's pool ${process.env.DATABASE_POOL_SIZE ?? 10} connections, the ` +
        `floors' ${concurrency} each; load average ${loadAverage()}`
    )

    // The steady server: its order path compiled by the JIT, as a server that has been up a while runs it.
    // The tables are vacuumed after the extra orders (this machine's Postgres may run without autovacuum), so
    // the floors meet them as they met them before.
    await pool(steadyCount, concurrency, (index) => httpPlace(`steady-${run}-${index}`, index))
    await db.query("VACUUM ANALYZE company_orders, orders, variant_locations, billing_methods, billing_entries")
    const steady = await alternatingRounds("bench-steady")
    const { ratio, p95 } = report(
      steady,
      `\nthe same after ${steadyCount} more orders over HTTP, unmeasured (the steady server: the goal's figures); ` +
        `load average ${loadAverage()}`
    )
    console.log(
      `goals, on the steady server: ratio ${ratio.toFixed(2)} (goal ≥ ${goals.ratio}): ${verdict(ratio >= goals.ratio)}; ` +
        `HTTP p95 ${p95.toFixed(0)} ms (goal ≤ ${goals.p95}): ${verdict(p95 <= goals.p95)}`
    )

    const companyIds = [
      companies.http.companyId,
      companies.direct.companyId,
      companies.earlier.companyId,
      companies.whole.companyId,
      companies.lookup.companyId
    ]
    const placedEach = warmupCount + 2 * orderCount
    const checks = await check(db, companyIds, (id) => placedEach + (id === companies.http.companyId ? steadyCount : 0))
    const bookingsOk = checks.bookings.without === 0 && checks.bookings.orphans === 0 && checks.bookings.shared === 0
    const ok = checks.duplicates === 0 && checks.miscounted === 0 && bookingsOk && checks.unbalanced.length === 0
    console.log(
      `\nchecks: ${checks.duplicates} idempotency keys with more than one order, ${checks.miscounted} of ${companyIds.length} ` +
        `companies without exactly ${placedEach} orders (${placedEach + steadyCount} over HTTP); ${checks.bookings.without} orders ` +
        `without a booking, ${checks.bookings.orphans} bookings without an order, ${checks.bookings.shared} ` +
        `shared; ${checks.unbalanced.length} of ${checks.methods} billing methods whose ledger differs from ` +
        `their orders' charges: ${verdict(ok)}`
    )
    if (!ok) process.exitCode = 1

    if (sink !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, 3000))
      const summary = traceSummary(spans, measuredFrom)
      console.log(`\nper order placed over HTTP (${summary.orders} traced):`)
      console.log("| count |  mean ms | ms/order | span")
      for (const line of summary.lines) console.log(line)
      const { before, inside, transactions, savepoints } = summary.statements
      const total = before + inside + 2 * transactions + savepoints
      console.log(
        `statements per order: ${total.toFixed(1)}: ${before.toFixed(1)} outside a transaction, ${inside.toFixed(1)} ` +
          `in one, and ${(2 * transactions).toFixed(1)} BEGIN/COMMIT and ${savepoints.toFixed(1)} SAVEPOINT (not traced)`
      )
      console.log(
        `the billing method's lock: waited p50 ${percentile(summary.waited, 50).toFixed(2)} ms, ` +
          `p95 ${percentile(summary.waited, 95).toFixed(2)} ms; held (to the end of the transaction) p50 ` +
          `${percentile(summary.held, 50).toFixed(2)} ms, p95 ${percentile(summary.held, 95).toFixed(2)} ms, ` +
          `mean ${(summary.held.reduce((a, b) => a + b, 0) / summary.held.length).toFixed(2)} ms`
      )
    }
  } finally {
    agent.destroy()
    await direct.end().catch(() => undefined)
    await directEarlier.end().catch(() => undefined)
    await directWhole.end().catch(() => undefined)
    await directLookup.end().catch(() => undefined)
    await db.end().catch(() => undefined)
    server?.kill("SIGTERM")
    sink?.close()
  }
}

await main()
