/**
 * `npm run bench:checkout`: how long a paid checkout takes to be placed (paid → `confirmed`) when many are
 * paid at once, on PostgreSQL, with the server run from its bundle as `npm start` runs it.
 *
 *   npm run bench:checkout -- [--checkouts 200] [--concurrency 200] [--database ribbon_bench_checkout]
 *                             [--country GB] [--variants 20] [--watch sse|sql] [--cpu-prof DIR]
 *                             [--instances 1] [--steady 0] [--timeout 300] [--source-maps]
 *
 * 1. Creates the database (on the server named by DATABASE_URL, default the local one) unless it exists; if
 *    it does, empties the tables of the order flow (quotes, checkouts, orders, events, notifications, jobs,
 *    callbacks) so every run starts alike and no job of an earlier run is left to compete. The catalog and
 *    the migrations are kept.
 * 2. Starts the server (the esbuild bundle) on it: NODE_ENV=production, LOG_LEVEL=Warn, FULFILLMENT_LATENCY=0,
 *    FULFILLMENT_PROGRESS_EVERY=1 hour (so the orders' later steps stay out of the measured window). The
 *    server migrates and seeds the demo catalog on its first start. Like `npm start`, it runs without
 *    source maps; `--source-maps` adds `--enable-source-maps`, as every run before that change did.
 * 3. A new user with an access token (`catalog:read orders:read orders:write`), issued through the OAuth
 *    and Users services; `--variants` physical variants that ship to `--country`, each confirmed available
 *    over HTTP, their tracked stock topped up with SQL so it never runs out.
 * 4. `--checkouts` checkouts of 2 quotes each over HTTP (16 requests in flight).
 * 5. The baseline: `GET /v1/checkouts/{id}` of every checkout, one at a time, on the otherwise idle server.
 * 6. Opens each checkout's event stream (`GET /v1/checkouts/{id}/events`, SSE) and waits until each has
 *    replayed `checkout.created`, so the server has subscribed it; then posts every hosted payment form
 *    (`POST /pay/{id}`), `--concurrency` at a time. A checkout's placement latency is the time from its
 *    payment POST's response to the arrival of its `checkout.confirmed` event. (The streams were chosen over
 *    polling `statusUrl`: 200 pollers every 20 ms would ask 10,000 requests a second of the server whose
 *    placement is being measured, while a stream costs one read per event and one every 2 seconds.)
 *    `--watch sql` instead polls the `checkouts` table from the bench (every 20 ms, its own connection): no
 *    streams open, so no load from the observer on the server (see docs/performance.md for how much 200
 *    open streams cost).
 * 7. Checks in SQL that no checkout item has two orders and every checkout has exactly 2.
 *
 * Prints paid→confirmed p50/p95/p99 against the targets (p50 ≤ 250 ms, p95 ≤ 1 s, zero duplicates), as a
 * ratio to the baseline GET's p50; the payment POST's own latency and the whole wait (payment POST sent →
 * confirmed), since an instance holds at most PAYMENTS_IN_FLIGHT checkouts from payment to placed and
 * further payments wait in their POST (docs/checkout.md); checkouts per second (checkouts ÷ the time from
 * the first payment POST to the last confirmation), and where the time went, from the events' own
 * timestamps: from payment to the start of placement (`checkout.paid` → `checkout.placing`) and placing (`checkout.placing` → `checkout.confirmed`); the
 * server's CPU use over the measured window, and what its Postgres connections were doing (sampled every
 * 50 ms from `pg_stat_activity`). `--cpu-prof DIR` runs the server with `node --cpu-prof` (the profile is
 * written when the bench stops it). DATABASE_POOL_SIZE, WORKER_CONCURRENCY and PAYMENTS_IN_FLIGHT, when
 * set in the bench's environment, are passed to the server.
 *
 * `--instances N` (N > 1) then measures N servers on the same database in the same run: after the
 * one-instance measurement above, it starts the further instances from the same bundle, one at a time and
 * each once the one before answers `/health` (the first has migrated and seeded), all with the same
 * PUBLIC_URL (the token's audience), as behind one load balancer. It makes `--checkouts` fresh checkouts
 * and measures them as above, with the payments posted to the instances in turn and each checkout's event
 * stream opened on the instance that takes its payment for 1 in N of them and on another for the rest
 * (those are woken through Postgres LISTEN/NOTIFY). It prints the same rows, the server CPU summed over
 * the N processes, and one instance against N side by side (checkouts/s and CPU per checkout).
 *
 * `--steady N` (N > 0) then pays N more batches of `--checkouts` fresh checkouts on the first instance, each
 * measured as above, and sets the first batch beside the last: the first meets a server whose JIT is still
 * compiling the checkout path, the last one that has been up a while.
 *
 * A checkout without a final status `--timeout` seconds after the last payment POST answered is lost.
 * The bench exits 1 on a lost or unconfirmed checkout, a duplicate order or a checkout without exactly 2
 * orders, in any of its measurements.
 */
import type { ChildProcess } from "node:child_process"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { Effect } from "effect"
import pg from "pg"
import { terminalEventTypes } from "../src/services/checkout/Events.js"
import {
  benchDatabase,
  cpuMillisOf,
  freePort,
  host,
  issueToken,
  loadAverage,
  option,
  percentile,
  pool,
  startServer
} from "./support.js"

const checkoutCount = Number(option("checkouts", "200"))
const concurrency = Number(option("concurrency", "200"))
const databaseName = option("database", "ribbon_bench_checkout")
const country = option("country", "GB")
const variantCount = Number(option("variants", "20"))
const cpuProfileDir = option("cpu-prof", "")
const sourceMaps = process.argv.includes("--source-maps")
/** `sse`: each checkout's event stream over HTTP; `sql`: the bench polls the table itself (no load on the server). */
const watchMode = option("watch", "sse")
if (watchMode !== "sse" && watchMode !== "sql") throw new Error("--watch: sse or sql")
/** Server processes on the one database in the second measurement (1: only the first measurement). */
const instanceCount = Number(option("instances", "1"))
if (!Number.isInteger(instanceCount) || instanceCount < 1) throw new Error("--instances: a whole number ≥ 1")
/** Seconds after the last payment POST answered within which every checkout must reach a final status. */
const timeoutSeconds = Number(option("timeout", "300"))
const steadyBatches = Number(option("steady", "0"))
if (!Number.isInteger(steadyBatches) || steadyBatches < 0) throw new Error("--steady: a whole number ≥ 0")
/** Requests in flight while setting up (quotes, checkouts). */
const setupConcurrency = 16
const itemsPerCheckout = 2
const targets = { p50: 250, p95: 1000 }

const { serverUrl, databaseUrl } = benchDatabase(databaseName)

/** A GB address the address validation verifies (as in the tests); other countries need their own. */
const addresses: Record<string, Record<string, string>> = {
  GB: { countryCode: "GB", address1: "10 Downing Street", city: "London", postalCode: "SW1A 2AA" },
  US: {
    countryCode: "US",
    address1: "1600 Pennsylvania Avenue NW",
    city: "Washington",
    provinceCode: "DC",
    postalCode: "20500"
  }
}
const recipient = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+44 20 7946 0958" }

// ---------------------------------------------------------------------------------------------------------
// 1. The database

/** The tables one run fills; emptied before the next so that every run starts from the same state. */
const runTables = [
  "webhook_attempts",
  "webhook_deliveries",
  "notifications",
  "events",
  "orders",
  "checkout_items",
  "checkouts",
  "quotes",
  "jobs"
]

const prepareDatabase = async () => {
  const admin = new pg.Client({ connectionString: serverUrl.toString() })
  await admin.connect()
  const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [databaseName])
  await admin.end()
  if (rowCount === 0) {
    const creator = new pg.Client({ connectionString: serverUrl.toString() })
    await creator.connect()
    await creator.query(`CREATE DATABASE ${databaseName}`)
    await creator.end()
    return "created"
  }
  const db = new pg.Client({ connectionString: databaseUrl.toString() })
  await db.connect()
  const { rows } = await db.query<{ migrated: string | null }>("SELECT to_regclass('public.jobs')::text AS migrated")
  if (rows[0]!.migrated !== null) await db.query(`TRUNCATE ${runTables.join(", ")} CASCADE`)
  await db.end()
  return "reset"
}

// ---------------------------------------------------------------------------------------------------------
// 2. The server

interface Answer {
  readonly status: number
  readonly body: string
}

/** Keep-alive sockets for the setup and the payment posts. */
const agent = new Http.Agent({ keepAlive: true, maxSockets: Math.max(concurrency, setupConcurrency) })

/** The port of the first instance: setup requests go there unless they name another. */
let port = 0
let token = ""
/** Requests sent again after the server closed their kept-alive socket (see `request`). */
let resends = 0

/**
 * One request and its whole answer. A request sent on a kept-alive socket that the server closed as idle
 * at that moment (ECONNRESET before any answer: the server had not read it) is sent again, once, on a new
 * socket; other failures name the request.
 */
const request = (
  method: string,
  path: string,
  body?: { readonly json: unknown } | { readonly form: string },
  to: number = port,
  resent = false
): Promise<Answer> =>
  new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string> = token === "" ? {} : { authorization: `Bearer ${token}` }
    let payload: string | undefined
    if (body !== undefined && "json" in body) {
      payload = JSON.stringify(body.json)
      headers["content-type"] = "application/json"
    } else if (body !== undefined) {
      payload = body.form
      headers["content-type"] = "application/x-www-form-urlencoded"
    }
    let answered = false
    const req = Http.request({ host, port: to, path, method, agent, headers }, (response) => {
      answered = true
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString("utf8") }))
      response.on("error", reject)
    })
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (!resent && !answered && req.reusedSocket && error.code === "ECONNRESET") {
        resends++
        resolve(request(method, path, body, to, true))
      } else {
        reject(new Error(`${method} ${path} on port ${to}: ${error.message}`, { cause: error }))
      }
    })
    req.end(payload)
  })

const expectStatus = async (answer: Promise<Answer>, status: number, what: string) => {
  const { status: got, body } = await answer
  if (got !== status) throw new Error(`${what}: ${got} (expected ${status}): ${body.slice(0, 500)}`)
  return body
}

/**
 * The server as `npm start` runs it, on the bench database, with a simulator that answers at once; every
 * instance has the first one's PUBLIC_URL, as behind one load balancer (it is also the tokens' audience).
 */
const startRibbon = (publicUrl: string, on: number, build: boolean) =>
  startServer(
    on,
    {
      DATABASE_URL: databaseUrl.toString(),
      PUBLIC_URL: publicUrl,
      NODE_ENV: "production",
      FULFILLMENT_LATENCY: "0 millis",
      FULFILLMENT_FAILURE_RATE: "0",
      FULFILLMENT_PROGRESS_EVERY: "1 hour"
    },
    [
      ...(cpuProfileDir === "" ? [] : ["--cpu-prof", "--cpu-prof-dir", Path.resolve(cpuProfileDir)]),
      ...(sourceMaps ? ["--enable-source-maps"] : [])
    ],
    { build }
  )

// ---------------------------------------------------------------------------------------------------------
// 3. The buyer and the variants

/**
 * Physical variants that ship to the country with stock (tracked or not), each confirmed available over
 * HTTP (as an agent would check); their tracked stock is then raised so the run cannot exhaust it.
 */
const pickVariants = async (db: pg.Client) => {
  const { rows } = await db.query<{ id: string }>(
    `SELECT v.id FROM variants v JOIN variant_locations l ON l.variant_id = v.id
     WHERE v.shipping_required AND $1 = ANY (l.ships_to) AND (l.stock IS NULL OR l.stock > 0)
     ORDER BY md5(v.id) LIMIT $2`,
    [country, variantCount * 3]
  )
  const picked: Array<string> = []
  for (const { id } of rows) {
    if (picked.length >= variantCount) break
    const body = await expectStatus(
      request("GET", `/v1/variants/${id}/availability?countries=${country}`),
      200,
      "availability"
    )
    const entry = (JSON.parse(body) as { countries: Array<{ available: boolean }> }).countries[0]
    if (entry?.available === true) picked.push(id)
  }
  if (picked.length < itemsPerCheckout) throw new Error(`only ${picked.length} variants are available in ${country}`)
  const needed = checkoutCount * itemsPerCheckout * 10
  await db.query("UPDATE variant_locations SET stock = $2 WHERE variant_id = ANY ($1) AND stock < $2", [picked, needed])
  return picked
}

// ---------------------------------------------------------------------------------------------------------
// 4. Checkouts

interface Created {
  readonly id: string
  /** Path and query of the hosted page. */
  readonly payPath: string
  readonly payToken: string
}

/** A checkout over HTTP on the instance at `to`; `keyPrefix` keeps the idempotency keys of each measurement apart. */
const createCheckout = async (
  variants: ReadonlyArray<string>,
  index: number,
  to: number = port,
  keyPrefix = "bench"
): Promise<Created> => {
  const quoteIds: Array<string> = []
  for (let item = 0; item < itemsPerCheckout; item++) {
    const variantId = variants[(index + item) % variants.length]!
    const body = await expectStatus(
      request("POST", "/v1/quotes", { json: { variantId, countryCode: country } }, to),
      201,
      "quote"
    )
    quoteIds.push((JSON.parse(body) as { id: string }).id)
  }
  const body = await expectStatus(
    request(
      "POST",
      "/v1/checkouts",
      {
        json: {
          items: quoteIds.map((quoteId) => ({ quoteId })),
          recipient,
          shippingAddress: addresses[country] ?? { countryCode: country },
          idempotencyKey: `${keyPrefix}-${index}`
        }
      },
      to
    ),
    201,
    "checkout"
  )
  const checkout = JSON.parse(body) as { id: string; paymentUrl: string }
  const url = new URL(checkout.paymentUrl)
  return { id: checkout.id, payPath: url.pathname, payToken: url.searchParams.get("t")! }
}

// ---------------------------------------------------------------------------------------------------------
// 5. The event streams

interface Watched {
  /** When each event type first arrived (performance.now()). */
  readonly arrived: Map<string, number>
  /** Resolves once `checkout.created` has been replayed: the stream is subscribed. */
  readonly open: Promise<void>
  /** Resolves at the first terminal event, with its type, or with why the stream failed (it never rejects). */
  readonly settled: Promise<string>
  readonly close: () => void
}

/** One socket per stream: they stay open for the whole run. */
const streamAgent = new Http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY })

const watch = (checkoutId: string, on: number = port): Watched => {
  const arrived = new Map<string, number>()
  let opened!: () => void
  let settle!: (type: string) => void
  const open = new Promise<void>((resolve) => {
    opened = resolve
  })
  const settled = new Promise<string>((resolve) => {
    settle = resolve
  })
  // A failed stream settles too (after which `open` is moot), so that the run reports it rather than hangs.
  const fail = (error: Error) => {
    settle(`stream failed: ${error.message}`)
    opened()
  }
  const req = Http.get(
    {
      host,
      port: on,
      path: `/v1/checkouts/${checkoutId}/events`,
      agent: streamAgent,
      headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", "last-event-id": "0" }
    },
    (response) => {
      if (response.statusCode !== 200) {
        fail(new Error(`events of ${checkoutId}: ${response.statusCode}`))
        response.resume()
        return
      }
      response.setEncoding("utf8")
      let buffer = ""
      response.on("data", (chunk: string) => {
        const now = performance.now()
        buffer += chunk
        let end = buffer.indexOf("\n\n")
        while (end !== -1) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          end = buffer.indexOf("\n\n")
          const type = /^event: (.+)$/m.exec(block)?.[1]
          if (type === undefined) continue
          if (!arrived.has(type)) arrived.set(type, now)
          if (type === "checkout.created") opened()
          if (terminalEventTypes.has(type)) settle(type)
        }
      })
      response.on("end", () => fail(new Error(`events of ${checkoutId} ended without a final status`)))
    }
  )
  req.on("error", (error) => fail(error))
  return { arrived, open, settled, close: () => req.destroy() }
}

/** A checkout watched by `pollTable` instead of its stream. */
const pollWatch = (checkoutId: string): Watched & { readonly id: string; readonly done: (type: string) => void } => {
  const arrived = new Map<string, number>()
  let settle!: (type: string) => void
  const settled = new Promise<string>((resolve) => {
    settle = resolve
  })
  return {
    id: checkoutId,
    arrived,
    open: Promise.resolve(),
    settled,
    close: () => undefined,
    done: (type) => {
      arrived.set(type, performance.now())
      settle(type)
    }
  }
}

/** `--watch sql`: the statuses straight from the table every 20 ms, until every checkout is final or `stopped()`. */
const pollTable = async (db: pg.Client, watched: ReadonlyArray<Watched>, stopped: () => boolean) => {
  const pending = new Map(
    watched.map((w) => [(w as ReturnType<typeof pollWatch>).id, w as ReturnType<typeof pollWatch>])
  )
  while (pending.size > 0 && !stopped()) {
    const { rows } = await db.query<{ id: string; status: string }>(
      `SELECT id, status FROM checkouts WHERE id = ANY ($1)
       AND status NOT IN ('pending_payment', 'paid', 'placing')`,
      [[...pending.keys()]]
    )
    for (const { id, status } of rows) {
      pending.get(id)?.done(`checkout.${status}`)
      pending.delete(id)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

// ---------------------------------------------------------------------------------------------------------
// 6. Figures

/** The `p`-th percentile, or NaN of no values (every checkout lost). */
const at = (values: ReadonlyArray<number>, p: number) => (values.length === 0 ? Number.NaN : percentile(values, p))
const ms = (n: number) => n.toFixed(1).padStart(8)
const row = (label: string, values: ReadonlyArray<number>) =>
  `| ${label.padEnd(34)} | ${ms(at(values, 0))} | ${ms(at(values, 50))} | ${ms(at(values, 95))} | ${ms(at(values, 99))} | ${ms(at(values, 100))} |`
const verdict = (ok: boolean) => (ok ? "met" : "NOT met")

/** A server process and the port it answers on. */
interface Instance {
  readonly port: number
  readonly process: ChildProcess
}

/** What one measurement found, for setting one instance beside several. */
interface Measured {
  readonly instances: number
  readonly checkoutsPerSecond: number
  /** Server CPU over the window, summed over the instances, in cores. */
  readonly serverCpu: number
  /** Server CPU time over the window, summed over the instances, per checkout, in milliseconds. */
  readonly cpuPerCheckout: number
  readonly placement: ReadonlyArray<number>
  readonly endToEnd: ReadonlyArray<number>
  readonly loadBefore: string
  readonly loadAfter: string
  /** Every checkout confirmed, with exactly its orders, and no duplicate order. */
  readonly ok: boolean
}

/** Checkout `index` of a measurement pays on instance `index mod N`. */
const payingInstance = (instances: ReadonlyArray<Instance>, index: number) => instances[index % instances.length]!

/**
 * Its stream opens on the paying instance for 1 in N checkouts and on each other instance for 1 in N
 * (with N = 2: pay A stream A, pay B stream B, pay A stream B, pay B stream A, …).
 */
const streamingInstance = (instances: ReadonlyArray<Instance>, index: number) =>
  instances[(index + Math.floor(index / instances.length)) % instances.length]!

/** `--checkouts` fresh checkouts, made on the instances in turn. */
const makeCheckouts = async (
  instances: ReadonlyArray<Instance>,
  variants: ReadonlyArray<string>,
  keyPrefix: string
) => {
  const setupStart = performance.now()
  const checkouts = await pool(checkoutCount, setupConcurrency, (index) =>
    createCheckout(variants, index, payingInstance(instances, index).port, keyPrefix)
  )
  const streamsElsewhere = checkouts.filter(
    (_, index) => streamingInstance(instances, index) !== payingInstance(instances, index)
  ).length
  console.log(
    `${checkoutCount} checkouts of ${itemsPerCheckout} quotes over ${variants.length} variants in ${country}, ` +
      `made in ${((performance.now() - setupStart) / 1000).toFixed(1)} s; payments ${concurrency} in flight` +
      (instances.length === 1
        ? ""
        : `, posted to the ${instances.length} instances in turn; event streams: ` +
          `${checkoutCount - streamsElsewhere} on the paying instance, ${streamsElsewhere} on another`)
  )
  return checkouts
}

/**
 * The baseline GET, then every checkout's payment on `instances` (each watched to its final status) and
 * the figures of it, printed; the checks of the orders made.
 */
const measure = async (
  db: pg.Client,
  instances: ReadonlyArray<Instance>,
  checkouts: ReadonlyArray<Created>
): Promise<Measured> => {
  const several = instances.length > 1
  const watched: Array<Watched> = []
  try {
    // The baseline: the plain round trip of the status URL, one at a time, after a warm-up.
    const getOne = (checkout: Created, index: number) =>
      expectStatus(
        request("GET", `/v1/checkouts/${checkout.id}`, undefined, payingInstance(instances, index).port),
        200,
        "get checkout"
      )
    for (const [index, checkout] of checkouts.slice(0, 20).entries()) await getOne(checkout, index)
    const baseline: Array<number> = []
    for (const [index, checkout] of checkouts.entries()) {
      const t0 = performance.now()
      await getOne(checkout, index)
      baseline.push(performance.now() - t0)
    }

    // Every stream open and subscribed before the first payment.
    if (watchMode === "sse") {
      for (const [index, checkout] of checkouts.entries()) {
        watched.push(watch(checkout.id, streamingInstance(instances, index).port))
      }
      await Promise.all(watched.map((w) => w.open))
    } else {
      for (const checkout of checkouts) watched.push(pollWatch(checkout.id))
    }

    const loadBefore = loadAverage()
    const sentAt = new Array<number>(checkoutCount)
    const paidAt = new Array<number>(checkoutCount)
    const payLatency = new Array<number>(checkoutCount)
    const firstPay = performance.now()
    const cpuBefore = instances.map((instance) => cpuMillisOf(instance.process.pid!))
    // What the servers' connections do meanwhile, sampled every 50 ms (this client excluded).
    const backendStates = new Map<string, number>()
    let samples = 0
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await db.query<{ state: string; n: string }>(
          `SELECT coalesce(state, '?') || coalesce(' (' || wait_event_type || ': ' || wait_event || ')', '') AS state,
             count(*) AS n FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
           GROUP BY 1`
        )
        samples++
        for (const r of rows) backendStates.set(r.state, (backendStates.get(r.state) ?? 0) + Number(r.n))
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })()
    let stopPolling = false
    const polling = watchMode === "sql" ? pollTable(db, watched, () => stopPolling) : Promise.resolve()
    await pool(checkoutCount, concurrency, async (index) => {
      const checkout = checkouts[index]!
      const form = new URLSearchParams({
        t: checkout.payToken,
        number: "4242 4242 4242 4242",
        expiry: "12/34",
        cvc: "123",
        name: "Ada Lovelace"
      })
      sentAt[index] = performance.now()
      await expectStatus(
        request("POST", checkout.payPath, { form: form.toString() }, payingInstance(instances, index).port),
        200,
        "pay"
      )
      paidAt[index] = performance.now()
      payLatency[index] = paidAt[index] - sentAt[index]
    })
    // A checkout without a final status by the deadline is lost.
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`lost (no final status within ${timeoutSeconds} s)`), timeoutSeconds * 1000)
    })
    const outcomes = await Promise.all(watched.map((w) => Promise.race([w.settled, deadline])))
    clearTimeout(timer)
    stopPolling = true
    await polling
    const notConfirmed = outcomes.filter((type) => type !== "checkout.confirmed").length
    // Only confirmations within the deadline count (a lost checkout may be confirmed since).
    const confirmedAt = watched.map((w, index) =>
      outcomes[index] === "checkout.confirmed" ? (w.arrived.get("checkout.confirmed") ?? Number.NaN) : Number.NaN
    )
    const lastConfirmed = Math.max(...confirmedAt.filter((t) => !Number.isNaN(t)))
    const placementOf = confirmedAt.map((t, index) => t - paidAt[index]!)
    const placement = placementOf.filter((t) => !Number.isNaN(t))
    const endToEnd = confirmedAt.map((t, index) => t - sentAt[index]!).filter((t) => !Number.isNaN(t))
    const wallSeconds = (lastConfirmed - firstPay) / 1000
    const windowMillis = performance.now() - firstPay
    const cpuUsed = instances.map((instance, n) => cpuMillisOf(instance.process.pid!) - cpuBefore[n]!)
    const cpuTotal = cpuUsed.reduce((a, b) => a + b, 0)
    const serverCpu = cpuTotal / windowMillis
    const loadAfter = loadAverage()
    sampling = false
    await sampler

    // Server-side: the events' own timestamps (the server's clock, milliseconds).
    const ids = checkouts.map((c) => c.id)
    const { rows: stamps } = await db.query<{ checkout_id: string; type: string; at: string }>(
      `SELECT checkout_id, type, (extract(epoch FROM created_at) * 1000)::float8 AS at FROM events
       WHERE checkout_id = ANY ($1) AND type IN ('checkout.paid', 'checkout.placing', 'checkout.confirmed')`,
      [ids]
    )
    const byCheckout = new Map<string, Record<string, number>>()
    for (const stamp of stamps) {
      const entry = byCheckout.get(stamp.checkout_id) ?? {}
      entry[stamp.type] = Number(stamp.at)
      byCheckout.set(stamp.checkout_id, entry)
    }
    const waited: Array<number> = []
    const placing: Array<number> = []
    for (const entry of byCheckout.values()) {
      const paid = entry["checkout.paid"]
      const started = entry["checkout.placing"]
      const done = entry["checkout.confirmed"]
      if (paid !== undefined && started !== undefined) waited.push(started - paid)
      if (started !== undefined && done !== undefined) placing.push(done - started)
    }
    const { rows: placeJobs } = await db.query<{ attempts: number; status: string }>(
      "SELECT attempts, status FROM jobs WHERE kind = 'checkout.place' AND payload->>'checkoutId' = ANY ($1)",
      [ids]
    )
    const retried = placeJobs.filter((job) => job.attempts > 1).length

    // Duplicates: none (over every order of the database), and exactly two orders per checkout.
    const { rows: duplicates } = await db.query(
      "SELECT checkout_id, item_index, count(*) FROM orders GROUP BY 1, 2 HAVING count(*) > 1"
    )
    const { rows: counts } = await db.query<{ id: string; orders: string }>(
      `SELECT c.id, count(o.id) AS orders FROM checkouts c LEFT JOIN orders o ON o.checkout_id = c.id
       WHERE c.id = ANY ($1) GROUP BY c.id`,
      [ids]
    )
    const wrongCount = counts.filter((c) => Number(c.orders) !== itemsPerCheckout).length + (ids.length - counts.length)

    const p50 = at(placement, 50)
    const p95 = at(placement, 95)
    const base = at(baseline, 50)
    console.log("\n|                                    |   min ms |   p50 ms |   p95 ms |   p99 ms |   max ms |")
    console.log("|------------------------------------|----------|----------|----------|----------|----------|")
    console.log(row("paid → confirmed (client)", placement))
    if (several) {
      const split = (elsewhere: boolean) =>
        placementOf.filter(
          (t, index) =>
            !Number.isNaN(t) && (streamingInstance(instances, index) !== payingInstance(instances, index)) === elsewhere
        )
      const same = split(false)
      const other = split(true)
      if (same.length > 0) console.log(row("  stream on the paying instance", same))
      if (other.length > 0) console.log(row("  stream on another (NOTIFY)", other))
    }
    console.log(row("payment POST", payLatency))
    console.log(row("payment POST sent → confirmed", endToEnd))
    console.log(row("  paid → placing (server)", waited))
    console.log(row("  placing → confirmed (server)", placing))
    console.log(row("baseline: GET /v1/checkouts/{id}", baseline))
    console.log(
      `\npaid → confirmed p50 ${p50.toFixed(0)} ms = ${(p50 / base).toFixed(1)}× the baseline GET's p50 ` +
        `(${base.toFixed(2)} ms); p95 ${(p95 / base).toFixed(1)}×`
    )
    console.log(
      `throughput: ${checkoutCount} checkouts in ${wallSeconds.toFixed(2)} s from the first payment POST to the ` +
        `last confirmation = ${(checkoutCount / wallSeconds).toFixed(1)} checkouts/s`
    )
    console.log(
      `server CPU while paying and placing: ${(serverCpu * 100).toFixed(0)} % of one core` +
        (several
          ? ` (summed over the ${instances.length} processes: ` +
            `${cpuUsed.map((used) => `${((used / windowMillis) * 100).toFixed(0)} %`).join(" + ")})`
          : "")
    )
    console.log(
      `server CPU per checkout: ${(cpuTotal / checkoutCount).toFixed(1)} ms` +
        (several ? ` (summed over the ${instances.length} processes)` : "") +
        ` over ${(windowMillis / 1000).toFixed(2)} s`
    )
    console.log(
      `the server${several ? "s'" : "'s"} Postgres connections meanwhile (${several ? `${instances.length} instances, ` : ""}mean of ${samples} samples): ${[
        ...backendStates
      ]
        .sort((a, b) => b[1] - a[1])
        .map(([state, n]) => `${(n / samples).toFixed(1)} ${state}`)
        .join(", ")}`
    )
    console.log(
      `outcomes: ${checkoutCount - notConfirmed} confirmed, ${notConfirmed} not; placement jobs retried: ${retried}`
    )
    if (notConfirmed > 0) {
      const reasons = new Map<string, number>()
      for (const outcome of outcomes) {
        if (outcome !== "checkout.confirmed") reasons.set(outcome, (reasons.get(outcome) ?? 0) + 1)
      }
      const missing = ids.filter((_, index) => outcomes[index] !== "checkout.confirmed")
      const { rows: statuses } = await db.query<{ status: string; n: string }>(
        "SELECT status, count(*) AS n FROM checkouts WHERE id = ANY ($1) GROUP BY 1 ORDER BY 2 DESC",
        [missing]
      )
      console.log(
        `not confirmed: ${[...reasons].map(([reason, n]) => `${n} ${reason}`).join(", ")}; ` +
          `their status in the table now: ${statuses.map((s) => `${s.n} ${s.status}`).join(", ")}`
      )
    }
    console.log(
      `load average (1, 5, 15 min): ${loadBefore} before the first payment, ${loadAfter} after the last confirmation`
    )
    console.log(`\np50 ${p50.toFixed(0)} ms (target ≤ ${targets.p50}): ${verdict(p50 <= targets.p50)}`)
    console.log(`p95 ${p95.toFixed(0)} ms (target ≤ ${targets.p95}): ${verdict(p95 <= targets.p95)}`)
    console.log(
      `duplicates: ${duplicates.length} items with more than one order, ${wrongCount} checkouts without exactly ` +
        `${itemsPerCheckout} orders (target 0): ${verdict(duplicates.length === 0 && wrongCount === 0)}`
    )
    return {
      instances: instances.length,
      checkoutsPerSecond: checkoutCount / wallSeconds,
      serverCpu,
      cpuPerCheckout: cpuTotal / checkoutCount,
      placement,
      endToEnd,
      loadBefore,
      loadAfter,
      ok: notConfirmed === 0 && duplicates.length === 0 && wrongCount === 0
    }
  } finally {
    for (const w of watched) w.close()
  }
}

/** Two measurements of the same run side by side, under `title`, each row headed by its label. */
const compare = (
  title: string,
  before: readonly [label: string, Measured],
  after: readonly [label: string, Measured]
) => {
  const p = (values: ReadonlyArray<number>, n: number) => at(values, n).toFixed(0)
  const line = ([label, m]: readonly [string, Measured]) =>
    `| ${label.padStart(11)} | ${m.checkoutsPerSecond.toFixed(1).padStart(11)} | ` +
    `${`${p(m.endToEnd, 50)} ms`.padStart(17)} | ${`${p(m.placement, 50)} / ${p(m.placement, 95)} ms`.padStart(17)} | ` +
    `${`${(m.serverCpu * 100).toFixed(0)} %`.padStart(10)} | ${`${m.cpuPerCheckout.toFixed(1)} ms`.padStart(16)} | ` +
    `${m.loadBefore} → ${m.loadAfter} |`
  console.log(`\n${title}:`)
  console.log(
    "\n|             | checkouts/s | sent → confirmed  | paid → confirmed  | server CPU | CPU per checkout | load average before → after |"
  )
  console.log(
    "|-------------|-------------|-------------------|-------------------|------------|------------------|-----------------------------|"
  )
  console.log(line(before))
  console.log(line(after))
  const [[, first], [label, last]] = [before, after]
  console.log(
    `\n${label.trim()}: ${(last.checkoutsPerSecond / first.checkoutsPerSecond).toFixed(2)}× the checkouts/s of ` +
      `the first row, ${(last.cpuPerCheckout / first.cpuPerCheckout).toFixed(2)}× its server CPU per checkout ` +
      `(on ${Os.availableParallelism()} cores shared with Postgres and the bench)`
  )
}

const main = async () => {
  const state = await prepareDatabase()
  port = await freePort()
  const publicUrl = `http://${host}:${port}`
  const instances: Array<Instance> = []
  const db = new pg.Client({ connectionString: databaseUrl.toString() })
  const results: Array<Measured> = []
  try {
    const startedAt = performance.now()
    instances.push({ port, process: await startRibbon(publicUrl, port, true) })
    console.log(
      `database ${databaseName} (${state}); server up in ${((performance.now() - startedAt) / 1000).toFixed(1)} s` +
        (sourceMaps ? " (with --enable-source-maps)" : "")
    )
    await db.connect()
    token = await Effect.runPromise(
      issueToken({
        publicUrl,
        databaseUrl,
        scope: "catalog:read orders:read orders:write",
        clientName: "bench:checkout",
        defaultCountry: country
      })
    )
    const variants = await pickVariants(db)
    if (instanceCount > 1) console.log("\n## 1 instance")
    const first = await measure(db, instances, await makeCheckouts(instances, variants, "bench"))
    results.push(first)

    // The one-instance figures the several instances are set against: the last batch's.
    let last = first
    if (steadyBatches > 0) {
      for (let batch = 2; batch <= steadyBatches + 1; batch++) {
        console.log(`\n## batch ${batch} on the same instance (the steady server)`)
        last = await measure(db, instances, await makeCheckouts(instances, variants, `bench-batch${batch}`))
        results.push(last)
      }
      compare(
        "the first batch against the last, on one instance, measured in the same run on fresh checkouts each",
        ["batch 1", first],
        [`batch ${steadyBatches + 1}`, last]
      )
    }

    if (instanceCount > 1) {
      console.log(`\n## ${instanceCount} instances on the same database`)
      // One at a time, each once the one before answers: the first has migrated and seeded the database.
      while (instances.length < instanceCount) {
        const startedAt = performance.now()
        const on = await freePort()
        instances.push({ port: on, process: await startRibbon(publicUrl, on, false) })
        console.log(
          `instance ${instances.length} up in ${((performance.now() - startedAt) / 1000).toFixed(1)} s ` +
            `(the same bundle and PUBLIC_URL)`
        )
      }
      const many = await measure(db, instances, await makeCheckouts(instances, variants, `bench-${instanceCount}i`))
      results.push(many)
      compare(
        `one instance against ${instanceCount}, measured in the same run on fresh checkouts each`,
        ["1 instance", last],
        [`${instanceCount} instances`, many]
      )
    }
    if (resends > 0) console.log(`\nrequests sent again after their kept-alive socket was closed: ${resends}`)
    if (!results.every((result) => result.ok)) process.exitCode = 1
  } finally {
    agent.destroy()
    streamAgent.destroy()
    await db.end().catch(() => undefined)
    for (const instance of instances) instance.process.kill("SIGTERM")
  }
}

await main()
