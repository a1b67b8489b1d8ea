/**
 * `npm run bench:dashboard`: how long each company dashboard page takes to serve for a company with 10,000
 * rows of each kind, against the company API's list of the same rows.
 *
 *   npm run bench:dashboard -- [--rows 10000] [--orders 100000] [--gifts 100000] [--requests 200] [--warmup 20]
 *     [--database ribbon_bench_dashboard]
 *
 * 1. The database: embedded PGlite in memory by default (as `npm start` without DATABASE_URL); with
 *    DATABASE_URL, a database of its own on that server (created unless it exists, its companies emptied if it
 *    does). The server runs in this process on a loopback port, telemetry off, as bench:auth runs it.
 * 2. One company, signed up as the dashboard's sign-up makes it (its owner, a sandbox account), and a session
 *    of the owner's. Through the services: the most active API keys a company may hold (`maxActiveKeys`).
 *    Through SQL: `--rows` revoked keys, one webhook endpoint with `--rows` deliveries (one attempt each), and
 *    `--rows` audit events; `--orders` orders, each with its supplier booking and its ledger debit (every tenth
 *    cancelled and credited back), spread over the last 35 days; one product campaign with `--gifts` gifts, each
 *    to a recipient of its own, in every status (every fifth claimed, with one of the orders); then VACUUM ANALYZE.
 * 3. The pages: every GET route under /dashboard in `Api` (read off the definition, as src/http/Reflection.ts
 *    does), with the path parameters it can fill with real ids (the endpoint, a delivery, a key, the owner);
 *    routes with others are listed as skipped. The baselines, in the same rounds: `/health`, and the v3 list of
 *    the endpoint's deliveries with one of the keys.
 * 4. `--warmup` requests to each, then `--requests` to each, one at a time over one keep-alive connection,
 *    round-robin over the routes so that a change in the machine's load falls on all alike. The time of a
 *    request is from sending it to its body's last byte on loopback: the server's time plus the loopback and
 *    this client's reading (well under a millisecond), since both run in this process, one request at a time.
 *
 * 5. The send page's CSV check: a file of 1 row (the baseline, 5 times), then one of 5,000 rows (3 times), posted
 *    as the upload form posts it, each timed to its preview's redirect (every row parsed, judged and stored), with
 *    the growth of this process's RSS over it (the server's and the client's; the file itself is 0.3 MB).
 *
 * Prints p50/p95/p99 per page with its status and size, each page's p95 ÷ the v3 list's p95, and the goal:
 * every page's p95 ≤ 50 ms (downloads, such as the audit log's CSV, are printed but are files, not pages); then
 * the CSV check's times and RSS growth against its goal (≤ 5 s, ≤ 50 MB) and as a ratio to the 1-row file. Exits
 * non-zero when a request answers with an error status.
 */

import * as Http from "node:http"
import { createServer } from "node:http"
import * as Os from "node:os"
import { performance } from "node:perf_hooks"
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient, type Statement } from "@effect/sql"
import { Config, Console, Context, Effect, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import pg from "pg"
import type { AuditAction } from "../src/domain/company/Audit.js"
import { allAccounts, permissions } from "../src/domain/company/Company.js"
import { maxUploadRows } from "../src/domain/company/GiftUploads.js"
import { Api } from "../src/http/Api.js"
import { endpointsOf } from "../src/http/Reflection.js"
import { embedded, postgres } from "../src/layers/Database.js"
import { MigrationsLive } from "../src/layers/Migrations.js"
import { RateLimiterMemoryLive } from "../src/layers/Redis.js"
import { makeHandlersLive, ServicesLive, SimulatorsLive, serveApi } from "../src/layers/Server.js"
import { PublicUrl } from "../src/services/catalog/Catalog.js"
import { Seed } from "../src/services/catalog/Seed.js"
import { Companies } from "../src/services/company/Companies.js"
import { DashboardAccounts } from "../src/services/company/DashboardAccounts.js"
import { DashboardSessions } from "../src/services/company/DashboardSessions.js"
import { KeyStore, maxActiveKeys } from "../src/services/company/KeyStore.js"
import { OutboundPolicy } from "../src/services/platform/OutboundHttp.js"
import { RateLimits } from "../src/services/platform/RateLimits.js"
import { Signals } from "../src/services/platform/Signals.js"
import { FulfillmentSettings } from "../src/services/simulators/FulfillmentSimulator.js"
import { benchDatabase, host, option, percentile } from "./support.js"

const rows = Number(option("rows", "10000"))
const orderRows = Number(option("orders", "100000"))
const giftRows = Number(option("gifts", "100000"))
const requestCount = Number(option("requests", "200"))
const warmupCount = Number(option("warmup", "20"))
const databaseName = option("database", "ribbon_bench_dashboard")
const goalMillis = 50

const databaseUrl = Effect.runSync(Config.option(Config.string("DATABASE_URL")))

/** With DATABASE_URL: the bench's own database on that server, created if absent, its companies emptied if not. */
const preparePostgres = async () => {
  const { serverUrl, databaseUrl } = benchDatabase(databaseName)
  const admin = new pg.Client({ connectionString: serverUrl.toString() })
  await admin.connect()
  const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [databaseName])
  if (rowCount === 0) await admin.query(`CREATE DATABASE ${databaseName}`)
  await admin.end()
  if (rowCount !== 0) {
    const db = new pg.Client({ connectionString: databaseUrl.toString() })
    await db.connect()
    const { rows } = await db.query("SELECT to_regclass('public.companies')::text AS migrated")
    // CASCADE reaches every table that refers to a company: keys, endpoints and their deliveries, members, audit.
    if (rows[0].migrated !== null) await db.query("TRUNCATE companies CASCADE")
    await db.end()
  }
  return databaseUrl
}

const databaseLayer = Option.isNone(databaseUrl)
  ? embedded({ dataDir: Option.none(), exposeSocket: false })
  : Layer.unwrapEffect(
      Effect.map(
        Effect.promise(() => preparePostgres()),
        (url) => postgres(Redacted.make(url.toString()), { maxConnections: 10 })
      )
    )

const Services = Layer.mergeAll(
  ServicesLive,
  Seed.Default,
  RateLimits.Default.pipe(Layer.provideMerge(RateLimiterMemoryLive))
).pipe(
  Layer.provideMerge(Layer.succeed(PublicUrl, "http://localhost")),
  Layer.provide([
    Signals.layerInProcess,
    SimulatorsLive.pipe(Layer.provide(FulfillmentSettings.Default)),
    OutboundPolicy.Default
  ]),
  Layer.provideMerge(Layer.provideMerge(MigrationsLive, databaseLayer))
)

/** The whole API on a loopback port, as the server serves it (telemetry off); its port. */
const listen = Effect.gen(function* () {
  const services = yield* Effect.context<Layer.Layer.Success<typeof Services>>()
  const api = HttpApiBuilder.api(Api).pipe(Layer.provide(makeHandlersLive()))
  const built = yield* Layer.build(
    serveApi(api, { maxBodyBytes: 1024 * 1024, telemetry: false }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host })),
      Layer.provide(Layer.succeedContext(services))
    )
  )
  return (Context.get(built, HttpServer.HttpServer).address as HttpServer.TcpAddress).port
})

// ---------------------------------------------------------------------------------------------------------
// The company and its rows

interface Seeded {
  readonly companyId: string
  readonly userId: string
  readonly cookie: string
  readonly apiKey: string
  readonly keyId: string
  readonly endpointId: string
  readonly deliveryId: string
  readonly auditRows: number
  readonly orderId: string
  readonly giftId: string
  readonly campaignId: string
  readonly recipientId: string
  readonly methodId: string
}

const seed = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const signedUp = yield* Effect.flatMap(DashboardAccounts, (accounts) =>
    accounts.signUp({
      email: `bench-${Date.now().toString(36)}@example.com`,
      password: "velvet-harbor-lantern-42",
      companyName: "Bench Dashboard"
    })
  )
  const companyId = signedUp.companyId
  const userId = signedUp.user.id
  const cookie = yield* Effect.flatMap(DashboardSessions, (sessions) =>
    sessions.create({ userId, companyId, sourceAddress: host })
  )
  // The v3 baseline's key is limited as any key is: raised so the limiter runs but never refuses.
  const raised = { rate: 1_000_000, burst: 1_000_000 }
  yield* Effect.flatMap(Companies, (companies) =>
    companies.setRateLimits(companyId, { global: raised, "administration:read": raised })
  )
  const keys = yield* Effect.forEach(
    Array.from({ length: maxActiveKeys }, (_, i) => i),
    (i) =>
      Effect.flatMap(KeyStore, (store) =>
        store.create({
          companyId,
          environment: "test",
          name: `Active key ${i + 1}`,
          expirationInDays: 365,
          enforceMtls: false,
          permissions,
          accountsAccess: allAccounts,
          requestSource: null
        })
      )
  )
  const first = keys[0]!
  // Ids as makeId makes them: 4 bytes of seconds, 8 random bytes, in hex.
  const newId = sql.literal(
    "lpad(to_hex(extract(epoch FROM at)::bigint), 8, '0') || substr(md5(random()::text || i::text), 1, 16)"
  )
  yield* sql`
    INSERT INTO api_keys (id, company_id, environment, name, key_hash, permissions, accounts_access, created_at,
      expires_at, revoked_at)
    SELECT ${newId}, ${companyId}::text, 'test', 'Revoked key ' || i, encode(sha256(convert_to(i::text || random()::text, 'UTF8')), 'hex'),
      ${JSON.stringify(permissions)}::jsonb, ${JSON.stringify(allAccounts)}::jsonb, at, at + interval '365 days',
      at + interval '1 hour'
    FROM generate_series(1, ${rows}::int) AS i, LATERAL (SELECT now() - i * interval '10 minutes' AS at) AS t`
  const endpointId = first.record.id.slice(0, 8) + "e".repeat(16)
  const url = "https://hooks.example.com/ribbon"
  yield* sql`
    INSERT INTO company_webhook_endpoints (id, company_id, environment, url, event_types, secret, created_at)
    VALUES (${endpointId}, ${companyId}, 'test', ${url}, '["order-created", "order-status-changed"]',
      ${`whsec_${"A".repeat(43)}=`}, now() - interval '90 days')`
  // Most delivered at the first attempt; every tenth failed, every hundredth still pending.
  yield* sql`
    INSERT INTO webhook_deliveries (id, url, event_id, event_type, payload, status, attempts, next_attempt_at,
      last_status_code, last_error, created_at, updated_at, delivered_at, endpoint_id, signing_secret)
    SELECT id, ${url}::text, id, 'order-created',
      jsonb_build_object('webhookData', jsonb_build_object('id', id, 'eventType', 'order-created', 'target', ${url}::text,
        'triggeredAt', at), 'eventData', jsonb_build_object('companyId', ${companyId}::text, 'orderId', md5(id))),
      CASE WHEN i % 100 = 0 THEN 'pending' WHEN i % 10 = 0 THEN 'failed' ELSE 'delivered' END,
      1, CASE WHEN i % 100 = 0 THEN at + interval '1 minute' END,
      CASE WHEN i % 10 = 0 THEN 500 ELSE 200 END, CASE WHEN i % 10 = 0 THEN 'HTTP 500' END,
      at, at, CASE WHEN i % 10 <> 0 THEN at END, ${endpointId}::text, ${`whsec_${"A".repeat(43)}=`}::text
    FROM generate_series(1, ${rows}::int) AS i,
      LATERAL (SELECT now() - i * interval '4 minutes' AS at) AS t,
      LATERAL (SELECT ${newId} AS id) AS d`
  yield* sql`
    INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
    SELECT id, 1, created_at, 120, last_status_code, last_error, 'ok'
    FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`
  const [newest] = yield* sql<{ id: string }>`
    SELECT id FROM webhook_deliveries WHERE endpoint_id = ${endpointId} ORDER BY created_at DESC, id DESC LIMIT 1`
  // The audit log's rows as a member's changes would write them, with actions of the domain's list.
  const actions: ReadonlyArray<AuditAction> = [
    "api_key.created",
    "api_key.revoked",
    "webhook_endpoint.disabled",
    "order.created"
  ]
  const actionArray = sql.literal(`ARRAY[${actions.map((action) => `'${action}'`).join(", ")}]`)
  yield* sql`
    INSERT INTO audit_events (id, company_id, occurred_at, actor_type, actor_id, actor_name, action, target_type,
      target_id, account_id, environment, source_address, request_id)
    SELECT ${newId}, ${companyId}::text, at, 'member', ${userId}::text, 'Bench owner',
      (${actionArray})[1 + i % 4], split_part((${actionArray})[1 + i % 4], '.', 1),
      md5(i::text), ${signedUp.accountId}::text, 'test', '127.0.0.1', md5(random()::text)
    FROM generate_series(1, ${rows}::int) AS i, LATERAL (SELECT now() - i * interval '3 minutes' AS at) AS t`
  yield* Effect.flatMap(Seed, (catalog) => catalog.ensureDemoCatalog())
  const sales = yield* seedOrdersAndGifts(companyId, signedUp.accountId, newId)
  yield* sql`VACUUM ANALYZE api_keys`
  yield* sql`VACUUM ANALYZE company_webhook_endpoints`
  yield* sql`VACUUM ANALYZE webhook_deliveries`
  yield* sql`VACUUM ANALYZE webhook_attempts`
  yield* sql`VACUUM ANALYZE audit_events`
  for (const table of ["orders", "company_orders", "billing_entries", "campaigns", "recipients", "gifts"]) {
    yield* sql`VACUUM ANALYZE ${sql(table)}`
  }
  return {
    companyId,
    userId,
    cookie,
    apiKey: first.apiKey,
    keyId: first.record.id,
    endpointId,
    deliveryId: newest!.id,
    auditRows: rows,
    ...sales
  } satisfies Seeded
})

/**
 * `--orders` orders of one variant to the US, as `CompanyOrders.place` writes them (the supplier booking, the company
 * order, the ledger's debit; every tenth cancelled with its credit, the others in the shipment statuses in turn), one
 * every 30 seconds back from now; and one product campaign's `--gifts` gifts, each to a recipient of its own, in
 * every status, every fifth claimed with the order of the same number. Returns the ids the pages need.
 */
const seedOrdersAndGifts = (companyId: string, accountId: string, newId: Statement.Fragment) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [variant] = yield* sql<{ variantId: string; productId: string; productTitle: string; variantTitle: string }>`
      SELECT v.id AS variant_id, v.product_id, p.title AS product_title, v.title AS variant_title
      FROM variants v JOIN products p ON p.id = v.product_id WHERE p.catalog = 'marketplace' ORDER BY v.id LIMIT 1`
    const [method] = yield* sql<{ id: string }>`
      SELECT id FROM billing_methods WHERE account_id = ${accountId} AND is_default`
    const { variantId, productId, productTitle, variantTitle } = variant!
    const methodId = method!.id
    const shipment = sql.literal(
      "(ARRAY['orderReceived', 'processing', 'inTransit', 'outForDelivery', 'delivered', 'failed'])[1 + i % 6]"
    )
    // One transaction (below): the temporary tables live on its connection.
    yield* sql`
      CREATE TEMPORARY TABLE bench_orders AS
      SELECT i, ${newId} AS id, substr(md5('supplier' || i), 1, 24) AS supplier_id, at,
        CASE WHEN i % 10 = 0 THEN 'cancelled' ELSE ${shipment} END AS shipment_status
      FROM generate_series(1, ${orderRows}::int) AS i, LATERAL (SELECT now() - i * interval '30 seconds' AS at) AS t`
    yield* sql`
            INSERT INTO orders (id, idempotency_key, variant_id, product_id, product_title, variant_title, quantity,
              amount, currency, country_code, status, created_at, updated_at, cancelled_at)
            SELECT supplier_id, 'company-order:' || id, ${variantId}, ${productId}, ${productTitle}, ${variantTitle}, 1,
              2500, 'USD', 'US', CASE WHEN shipment_status = 'cancelled' THEN 'cancelled' ELSE 'placed' END, at, at,
              CASE WHEN shipment_status = 'cancelled' THEN at + interval '5 minutes' END
            FROM bench_orders`
    yield* sql`
            INSERT INTO company_orders (id, company_id, environment, account_id, billing_method_id, idempotency_key,
              fingerprint, status, shipment_status, supplier_order_id, variant_id, product_id, title, quantity,
              unit_price, total, currency, charged, recipient_first_name, recipient_last_name, recipient_email,
              recipient_phone, address1, city, province_code, postal_code, country_code, created_at, updated_at,
              cancelled_at)
            SELECT id, ${companyId}, 'test', ${accountId}, ${methodId}, 'bench-order-' || i, md5(i::text),
              CASE WHEN shipment_status = 'cancelled' THEN 'cancelled' WHEN shipment_status = 'delivered' THEN 'completed'
                ELSE 'active' END,
              shipment_status, supplier_id, ${variantId}, ${productId}, ${productTitle}, 1, 2500, 2500, 'USD', 3125,
              'Ada' || i, 'Lovelace', 'ada' || i || '@example.com', '+15555550100', '1 Main Street', 'Springfield', 'IL',
              '62701', 'US', at, at, CASE WHEN shipment_status = 'cancelled' THEN at + interval '5 minutes' END
            FROM bench_orders`
    yield* sql`
            INSERT INTO billing_entries (billing_method_id, kind, amount, subject_type, subject_id, reason, created_at,
              spent_to_date)
            SELECT ${methodId}, kind, 3125, 'order', id, reason, at,
              SUM(CASE kind WHEN 'debit' THEN 3125 ELSE -3125 END) OVER (ORDER BY at, kind DESC, id)
            FROM (
              SELECT id, 'debit' AS kind, 'order placed' AS reason, at FROM bench_orders
              UNION ALL
              SELECT id, 'credit', 'order cancelled', at + interval '5 minutes' FROM bench_orders
              WHERE shipment_status = 'cancelled'
            ) AS entries`
    const campaignId = `${"b".repeat(8)}${"c".repeat(16)}`
    yield* sql`
      INSERT INTO campaigns (id, company_id, environment, account_id, billing_method_id, name, status, gift_type,
        product_id, swap, budget_min, budget_max, currency, expiration_days, sending_channels, created_at, updated_at)
      VALUES (${campaignId}, ${companyId}, 'test', ${accountId}, ${methodId}, 'Bench thank-yous', 'active', 'product',
        ${productId}, 'within_budget', 1000, 5000, 'USD', 30, ARRAY['email'], now() - interval '40 days', now() - interval '40 days')`
    const giftStatus = sql.literal(
      "CASE WHEN i % 5 = 0 AND i <= " +
        String(orderRows) +
        " THEN 'claimed' ELSE (ARRAY['unopened', 'opened', 'unwrapped', 'expired', 'cancelled'])[1 + i % 5] END"
    )
    yield* sql`
      CREATE TEMPORARY TABLE bench_gifts AS
      SELECT i, ${newId} AS id, ${newId} AS recipient_id, at, ${giftStatus} AS status
      FROM generate_series(1, ${giftRows}::int) AS i, LATERAL (SELECT now() - i * interval '30 seconds' AS at) AS t`
    yield* sql`
            INSERT INTO recipients (id, company_id, environment, account_ids, first_name, last_name, email, country,
              external_id, created_at, updated_at)
            SELECT recipient_id, ${companyId}, 'test', ARRAY[${accountId}], 'Grace' || i, 'Hopper',
              'grace' || i || '@example.com', 'US', 'employee-' || i, at, at
            FROM bench_gifts`
    yield* sql`
            INSERT INTO gifts (id, company_id, environment, campaign_id, account_id, billing_method_id, recipient_id, key,
              status, token, budget_min, budget_max, currency, reserved, sending_method, order_id, expires_at,
              created_at, updated_at, opened_at, unwrapped_at, claimed_at, closed_at)
            SELECT g.id, ${companyId}, 'test', ${campaignId}, ${accountId}, ${methodId}, g.recipient_id, 'employee-' || g.i,
              g.status, md5('token' || g.i) || md5(g.id), 1000, 5000, 'USD',
              CASE WHEN g.status IN ('unopened', 'opened', 'unwrapped') THEN 5000 ELSE 0 END, 'email', o.id,
              g.at + interval '30 days', g.at, g.at,
              CASE WHEN g.status NOT IN ('unopened', 'expired', 'cancelled') THEN g.at + interval '1 hour' END,
              CASE WHEN g.status IN ('unwrapped', 'claimed') THEN g.at + interval '2 hours' END,
              CASE WHEN g.status = 'claimed' THEN g.at + interval '3 hours' END,
              CASE WHEN g.status IN ('expired', 'cancelled') THEN g.at + interval '1 day' END
            FROM bench_gifts g LEFT JOIN bench_orders o ON g.status = 'claimed' AND o.i = g.i`
    yield* sql`DROP TABLE bench_orders, bench_gifts`
    const [order] = yield* sql<{ id: string }>`
      SELECT id FROM company_orders WHERE company_id = ${companyId} ORDER BY created_at DESC, id DESC LIMIT 1`
    const [gift] = yield* sql<{ id: string; recipientId: string }>`
      SELECT id, recipient_id FROM gifts WHERE campaign_id = ${campaignId} ORDER BY created_at DESC, id DESC LIMIT 1`
    return { orderId: order!.id, giftId: gift!.id, recipientId: gift!.recipientId, campaignId, methodId }
  }).pipe((seeding) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(seeding)))

// ---------------------------------------------------------------------------------------------------------
// The routes

interface Route {
  readonly label: string
  readonly path: string
  readonly headers: Record<string, string>
}

/** Every GET page under /dashboard with the ids it needs filled in; those needing ids the bench has not, skipped. */
const dashboardRoutes = (seeded: Seeded) => {
  const ids: Record<string, string> = {
    webhookId: seeded.endpointId,
    endpointId: seeded.endpointId,
    deliveryId: seeded.deliveryId,
    apiKeyId: seeded.keyId,
    keyId: seeded.keyId,
    userId: seeded.userId,
    memberId: seeded.userId,
    orderId: seeded.orderId,
    giftId: seeded.giftId,
    campaignId: seeded.campaignId,
    recipientId: seeded.recipientId,
    billingMethodId: seeded.methodId
  }
  const headers = { cookie: `ribbon_dashboard=${seeded.cookie}` }
  const pages: Array<Route> = []
  const skipped: Array<string> = []
  for (const { endpoint } of endpointsOf(Api)) {
    // The catch-all is the 404 page, not a page of its own.
    if (endpoint.method !== "GET" || !endpoint.path.startsWith("/dashboard") || endpoint.path.includes("*")) continue
    const params = [...endpoint.path.matchAll(/:(\w+)/g)].map((m) => m[1]!)
    const missing = params.filter((name) => ids[name] === undefined)
    if (missing.length > 0) {
      skipped.push(`${endpoint.path} (no ${missing.join(", ")})`)
      continue
    }
    const path = endpoint.path.replace(/:(\w+)/g, (_, name: string) => ids[name]!)
    pages.push({ label: endpoint.path, path, headers })
  }
  return { pages, skipped }
}

const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })

interface Answer {
  readonly millis: number
  readonly status: number
  readonly bytes: number
}

const get = (port: number, route: Route) =>
  new Promise<Answer>((resolve, reject) => {
    const t0 = performance.now()
    const request = Http.get({ host, port, path: route.path, agent, headers: route.headers }, (response) => {
      let bytes = 0
      response.on("data", (chunk: Buffer) => {
        bytes += chunk.length
      })
      response.on("end", () => resolve({ millis: performance.now() - t0, status: response.statusCode!, bytes }))
    })
    request.on("error", reject)
  })

interface UploadTiming {
  readonly millis: number
  readonly rssGrowth: number
  readonly bytes: number
}

/**
 * `times` uploads of a `count`-row CSV through the send page's form (multipart, with its CSRF token), each timed
 * from sending to the preview's redirect, with the growth of this process's RSS (sampled every 5 ms) over it.
 */
const timeUploads = (port: number, seeded: Seeded, count: number, times: number) =>
  Effect.promise(async () => {
    const base = `http://${host}:${port}`
    const cookie = `ribbon_dashboard=${seeded.cookie}`
    const sendPage = await fetch(`${base}/dashboard/send?environment=test&campaignId=${seeded.campaignId}`, {
      headers: { cookie }
    }).then((response) => response.text())
    const form = sendPage.slice(sendPage.indexOf('action="/dashboard/send/uploads"'))
    const csrf = /name="csrf" value="([^"]+)"/.exec(form)![1]!
    const country = /ships to: ([A-Z]{2})/.exec(sendPage)![1]!
    const csv = [
      "firstName,lastName,email,phone,externalId,country",
      ...Array.from(
        { length: count },
        (_, n) => `Person${n},"Tester, Jr",person${n}@example.com,,bench-${n},${country}`
      )
    ].join("\r\n")
    const timings: Array<UploadTiming> = []
    for (let i = 0; i < times; i++) {
      const body = new FormData()
      body.set("csrf", csrf)
      body.set("campaignId", seeded.campaignId)
      body.set("environment", "test")
      body.set("sendingMethod", "email")
      body.set("file", new Blob([csv], { type: "text/csv" }), `bench-${count}.csv`)
      const before = process.memoryUsage.rss()
      let peak = before
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage.rss())
      }, 5)
      const t0 = performance.now()
      const response = await fetch(`${base}/dashboard/send/uploads`, {
        method: "POST",
        body,
        headers: { cookie },
        redirect: "manual"
      })
      await response.arrayBuffer()
      const millis = performance.now() - t0
      clearInterval(sampler)
      if (response.status !== 303) throw new Error(`upload of ${count} rows: ${response.status}`)
      timings.push({ millis, rssGrowth: Math.max(peak, process.memoryUsage.rss()) - before, bytes: csv.length })
    }
    return timings
  })

const loadAverage = () =>
  Os.loadavg()
    .map((n) => n.toFixed(1))
    .join(" ")

const main = Effect.gen(function* () {
  const seedStarted = performance.now()
  const seeded = yield* seed
  const seedSeconds = (performance.now() - seedStarted) / 1000
  const port = yield* listen
  const { pages, skipped } = dashboardRoutes(seeded)
  const v3List: Route = {
    label: "v3 list of the same deliveries",
    path: `/public-api/v3/webhooks/${seeded.endpointId}/deliveries`,
    headers: { "x-api-key": seeded.apiKey }
  }
  const health: Route = { label: "/health", path: "/health", headers: {} }
  const routes = [...pages, v3List, health]

  const timings = new Map(routes.map((route) => [route, [] as Array<number>]))
  const last = new Map<Route, Answer>()
  const failures: Array<string> = []
  const round = (count: number, record: boolean) =>
    Effect.promise(async () => {
      for (let i = 0; i < count; i++) {
        for (const route of routes) {
          const answer = await get(port, route)
          if (answer.status >= 400) failures.push(`${route.path}: ${answer.status}`)
          last.set(route, answer)
          if (record) timings.get(route)!.push(answer.millis)
        }
      }
    })
  yield* round(warmupCount, false)
  const loadBefore = loadAverage()
  yield* round(requestCount, true)

  const ms = (n: number) => n.toFixed(2).padStart(7)
  const v3p95 = percentile(timings.get(v3List)!, 95)
  yield* Console.log(
    `${Option.isNone(databaseUrl) ? "embedded PGlite" : `PostgreSQL, database ${databaseName}`}; one company with ` +
      `${maxActiveKeys} active and ${rows.toLocaleString("en-US")} revoked keys, one endpoint with ` +
      `${rows.toLocaleString("en-US")} deliveries, ${seeded.auditRows.toLocaleString("en-US")} audit events, ` +
      `${orderRows.toLocaleString("en-US")} orders and ${giftRows.toLocaleString("en-US")} gifts ` +
      `(seeded in ${seedSeconds.toFixed(1)} s); ${warmupCount} warm-up and ${requestCount} measured requests per ` +
      `route, one at a time; ${Os.cpus().length} cores, load average ${loadBefore} before, ${loadAverage()} after`
  )
  yield* Console.log(
    "\n| route                                              | status |     KB |  p50 ms |  p95 ms |  p99 ms | p95 ÷ v3 |"
  )
  yield* Console.log(
    "|----------------------------------------------------|--------|--------|---------|---------|---------|----------|"
  )
  for (const route of routes) {
    const values = timings.get(route)!
    const answer = last.get(route)!
    yield* Console.log(
      `| ${route.label.padEnd(50)} | ${String(answer.status).padStart(6)} | ${(answer.bytes / 1024).toFixed(1).padStart(6)} ` +
        `| ${ms(percentile(values, 50))} | ${ms(percentile(values, 95))} | ${ms(percentile(values, 99))} ` +
        `| ${(percentile(values, 95) / v3p95).toFixed(2).padStart(8)} |`
    )
  }
  if (skipped.length > 0) yield* Console.log(`\nskipped (path parameters the bench cannot fill): ${skipped.join("; ")}`)

  // The send page's CSV check: a 1-row file as the baseline, then the largest file allowed, each timed to its
  // preview (the 303 after every row is parsed, judged and stored) with this process's peak RSS meanwhile.
  const baseline = yield* timeUploads(port, seeded, 1, 5)
  const largest = yield* timeUploads(port, seeded, maxUploadRows, 3)
  const slowest = Math.max(...largest.map((u) => u.millis))
  const mostMemory = Math.max(...largest.map((u) => u.rssGrowth))
  const baselineMillis = percentile(
    baseline.map((u) => u.millis),
    50
  )
  yield* Console.log(
    `\nCSV check, ${maxUploadRows.toLocaleString("en-US")} rows (${(largest[0]!.bytes / 1024).toFixed(0)} KB): ` +
      largest
        .map((u) => `${(u.millis / 1000).toFixed(2)} s, RSS +${(u.rssGrowth / 2 ** 20).toFixed(1)} MB`)
        .join("; ") +
      `; ÷ a 1-row file (${baselineMillis.toFixed(1)} ms): ${(slowest / baselineMillis).toFixed(0)}×` +
      `\n${maxUploadRows.toLocaleString("en-US")} rows checked in ≤ 5 s with RSS growth ≤ 50 MB: ` +
      (slowest <= 5000 && mostMemory <= 50 * 2 ** 20 ? "met" : "NOT met")
  )
  // A download (the audit log's CSV, up to 10,000 rows) is a file, not a page: shown above, outside the goal.
  const missed = pages.filter((page) => !page.label.endsWith(".csv") && percentile(timings.get(page)!, 95) > goalMillis)
  yield* Console.log(
    `\nevery page's p95 ≤ ${goalMillis} ms: ${missed.length === 0 ? "met" : `NOT met (${missed.map((p) => p.label).join(", ")})`}`
  )
  if (failures.length > 0) {
    yield* Console.log(`\n${failures.length} requests answered with an error status, first: ${failures[0]}`)
    process.exitCode = 1
  }
  agent.destroy()
}).pipe(
  Effect.scoped,
  Effect.provide(Services),
  Effect.provide(Layer.setTracerEnabled(false)),
  Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

NodeRuntime.runMain(main)
