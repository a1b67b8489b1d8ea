/**
 * `npm run soak`: two instances on one Postgres and one Redis under a steady mix of traffic, while faults
 * are injected one after another; afterwards, checks in SQL that nothing was lost or duplicated, latency
 * percentiles per phase, and what each fault cost. Not part of `npm test`: it runs for minutes.
 *
 *   npm run soak -- [--duration 5m] [--agents 4] [--idle-streams 16] [--grace 10s] [--supplier-latency 400ms]
 *                   [--redis-db 9]
 *
 * Setup. A fresh database `ribbon_soak_<pid>` on the Postgres of DATABASE_URL (default the local one),
 * dropped at the end; Redis at REDIS_URL (default the local one), database `--redis-db`, whose
 * `ribbon:ratelimit:*` keys are deleted at the end. Both must be on loopback: every byte of the soak stays on
 * this machine. The service is bundled once (`scripts/build.mjs`, as `npm start` does) and the bundle copied
 * to dist/soak/, so every start and restart runs the same code. Three relays on loopback ports (bench/proxy.ts)
 * sit in the path: one in front of Postgres and one in front of Redis (a fault stops them accepting and cuts
 * what they carry, while the real servers, shared with others, keep running), and one in front of the two
 * instances, the load balancer (round robin per connection, skipping an instance that refuses). Instances A
 * and B run `ribbon serve` with NODE_ENV=production and LOG_LEVEL=Info, one PUBLIC_URL (the balancer's), the
 * supplier simulator answering after `--supplier-latency` (so placements are in flight when a fault lands)
 * and moving each order a step every 15 seconds (jobs all along), and SHUTDOWN_GRACE `--grace`. Their logs
 * are kept in dist/soak/. A company comes from `ribbon company create --json` (the same bundle), an access
 * token from the OAuth service, as in bench:checkout.
 *
 * Traffic, for `--duration`, all through the balancer unless said otherwise:
 * - `--agents` agents, each checking out again and again: two quotes, a checkout, its event stream opened
 *   (and subscribed) before paying on the hosted page, then the stream followed to the final status. A
 *   stream that is cut or ended reconnects with `Last-Event-ID` after the server's `retry:`; one in four
 *   also reconnects on purpose after `checkout.paid`. Failed steps are retried (the checkout with the same
 *   idempotency key, the payment as a person would submit the form again).
 * - Company-key traffic, four requests a second on one keep-alive connection: v3 key list, account list
 *   and read, billing-method list, and an account created every tenth request.
 * - `--idle-streams` event streams of unpaid checkouts, open the whole run, reconnecting whenever cut.
 *
 * Faults, at 1/6, 2/6 … 5/6 of the duration (each outage lasts 10 s, less when the duration leaves less room):
 * 1. kill -9 of instance B right after 8 payments were posted to it directly (checkouts made, and their
 *    streams opened, before the traffic starts), then B restarted;
 * 2. the LISTEN backends ended with `pg_terminate_backend` (application_name `ribbon-signals`, this
 *    database only);
 * 3. Postgres unreachable: its relay refuses connections and cuts the open ones, for 10 s;
 * 4. Redis unreachable the same way, for 10 s;
 * 5. SIGTERM to instance A right after 12 payments were posted to it directly, then A restarted.
 *
 * Then traffic stops, every paid checkout is waited for (at most 150 s), the job checks run while both
 * instances are up, both get SIGTERM, and the rest is checked in SQL: every paid checkout final, charges
 * and payments agree, one order per placed item and none for the others, events complete and in order
 * (and each stream got exactly them, across its reconnects), no job stuck, and the ledger (once
 * `billing_entries` exists). Goals: event-stream latency back under 100 ms within 5 s of the
 * LISTEN loss, a SIGTERMed instance's placements final within 5 s, every instance out within its grace.
 * Exits 1 when a check fails or a goal is not met.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import { Effect } from "effect"
import { Redis } from "ioredis"
import pg from "pg"
import { terminalEventTypes } from "../src/services/checkout/Events.js"
import { type Relay, relay } from "./proxy.js"
import { benchDatabase, freePort, host, issueToken, option, percentile, root } from "./support.js"

// ---------------------------------------------------------------------------------------------------------
// Options

const parseMillis = (text: string, name: string) => {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/.exec(text.trim())
  if (match === null) throw new Error(`--${name}: a duration such as 500ms, 60s or 5m`)
  const n = Number(match[1])
  return match[2] === "ms" ? n : match[2] === "m" ? n * 60_000 : n * 1000
}
const wholeNumber = (name: string, fallback: string) => {
  const n = Number(option(name, fallback))
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name}: a whole number`)
  return n
}

const durationMs = parseMillis(option("duration", "5m"), "duration")
const agentCount = wholeNumber("agents", "4")
const idleStreamCount = wholeNumber("idle-streams", "16")
const graceMs = parseMillis(option("grace", "10s"), "grace")
const supplierLatencyMs = parseMillis(option("supplier-latency", "400ms"), "supplier-latency")
const redisDb = wholeNumber("redis-db", "9")

/** Faults land at 1/6 … 5/6 of the run; an outage takes 10 s or 60 % of the room between two faults. */
const slotMs = durationMs / 6
const outageMs = Math.min(10_000, Math.round(slotMs * 0.6))
const killBurst = 8
const sigtermBurst = 12
const country = "GB"
const address = { countryCode: "GB", address1: "10 Downing Street", city: "London", postalCode: "SW1A 2AA" }
const recipient = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+44 20 7946 0958" }
const card = { number: "4242 4242 4242 4242", expiry: "12/34", cvc: "123", name: "Ada Lovelace" }
const finalStatuses = ["confirmed", "partially_confirmed", "failed", "refunded"]
/** The goals: recovery from a LISTEN loss, takeover after SIGTERM (exit within the grace is the third). */
const goals = { listenRecoveryMs: 5_000, eventLatencyMs: 100, takeoverMs: 5_000 }

const databaseName = `ribbon_soak_${process.pid}`
const { serverUrl, databaseUrl } = benchDatabase(databaseName)
const redisServer = new URL(process.env.REDIS_URL ?? "redis://127.0.0.1:6379")
const loopback = new Set(["127.0.0.1", "localhost", "[::1]"])
for (const url of [serverUrl, redisServer]) {
  if (!loopback.has(url.hostname)) throw new Error(`the soak stays on loopback; ${url.hostname} is not`)
}

/** REDIS_URL's server (its credentials, if any) at `hostAndPort`, database `--redis-db`. */
const redisUrlAt = (hostAndPort: string) => {
  const url = new URL(redisServer)
  url.host = hostAndPort
  url.pathname = `/${redisDb}`
  return url.toString()
}

const runDir = Path.join(root, "dist", "soak")
const bundle = Path.join(runDir, "ribbon.mjs")

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** `promise`, or a rejection after `ms`. */
const within = <A>(promise: Promise<A>, ms: number, what: string) =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms)
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      }
    )
  })

/** Polls `check` every `everyMs` until it is true or `ms` has passed; whether it became true. */
const poll = async (check: () => Promise<boolean>, ms: number, everyMs = 100) => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return true
    await sleep(everyMs)
  }
  return false
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))
const codeOf = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === "string" ? code : "error"
}

// ---------------------------------------------------------------------------------------------------------
// Processes: every child is killed when the soak ends, however it ends

const live = new Set<ChildProcess>()
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL")
})

interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly at: number
}

interface Instance {
  readonly name: string
  readonly port: number
  readonly logPath: string
  child: ChildProcess | undefined
  exit: Promise<Exit>
}

let balancer: Relay | undefined
let pgRelay: Relay | undefined
let redisRelay: Relay | undefined

const instanceEnv = (instance: Instance): Record<string, string> => {
  const database = new URL(databaseUrl)
  database.host = `${host}:${pgRelay!.port}`
  return {
    PATH: process.env.PATH ?? "",
    PORT: String(instance.port),
    PUBLIC_URL: `http://${host}:${balancer!.port}`,
    DATABASE_URL: database.toString(),
    REDIS_URL: redisUrlAt(`${host}:${redisRelay!.port}`),
    NODE_ENV: "production",
    LOG_LEVEL: "Info",
    SHUTDOWN_GRACE: `${graceMs} millis`,
    FULFILLMENT_LATENCY: `${supplierLatencyMs} millis`,
    FULFILLMENT_FAILURE_RATE: "0",
    FULFILLMENT_PROGRESS_EVERY: "15 seconds",
    ...Object.fromEntries(
      ["DATABASE_POOL_SIZE", "WORKER_CONCURRENCY", "PAYMENTS_IN_FLIGHT"].flatMap((name) =>
        process.env[name] === undefined ? [] : [[name, process.env[name]!]]
      )
    )
  }
}

const answersHealth = (port: number) =>
  new Promise<boolean>((resolve) => {
    const request = Http.get({ host, port, path: "/health", agent: false, timeout: 1000 }, (response) => {
      response.resume()
      response.on("end", () => resolve(response.statusCode === 200))
    })
    request.on("timeout", () => request.destroy())
    request.on("error", () => resolve(false))
  })

/** Starts the instance's process (its output appended to its log) and resolves once `/health` answers. */
const startInstance = async (instance: Instance) => {
  const log = Fs.openSync(instance.logPath, "a")
  const child = spawn(process.execPath, ["--enable-source-maps", bundle, "serve"], {
    cwd: root,
    stdio: ["ignore", log, log],
    env: instanceEnv(instance)
  })
  Fs.closeSync(log)
  live.add(child)
  instance.child = child
  instance.exit = new Promise<Exit>((resolve) =>
    child.once("exit", (code, signal) => {
      live.delete(child)
      resolve({ code, signal, at: Date.now() })
    })
  )
  const up = await poll(async () => {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`instance ${instance.name} exited while starting (see ${instance.logPath})`)
    }
    return answersHealth(instance.port)
  }, 180_000)
  if (!up) throw new Error(`instance ${instance.name} did not answer /health within 3 minutes`)
}

// ---------------------------------------------------------------------------------------------------------
// HTTP, with every request timed and recorded

interface Answer {
  readonly status: number
  readonly body: string
}

interface Send {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly json?: unknown
  readonly form?: Record<string, string>
  /** An instance's own port; the balancer's by default. */
  readonly port?: number | undefined
  readonly agent?: Http.Agent
}

/** A request and what came of it: `ok`, an unexpected HTTP status, or a network error's code. */
interface Sample {
  readonly at: number
  readonly kind: string
  readonly ms: number
  readonly outcome: string
}
const samples: Array<Sample> = []

/** One connection per request, so that the balancer spreads them (agents' traffic). */
const freshAgent = new Http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY })

const send = (path: string, options: Send) =>
  new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers }
    let payload: string | undefined
    if (options.json !== undefined) {
      payload = JSON.stringify(options.json)
      headers["content-type"] = "application/json"
    } else if (options.form !== undefined) {
      payload = new URLSearchParams(options.form).toString()
      headers["content-type"] = "application/x-www-form-urlencoded"
    }
    const request = Http.request(
      {
        host,
        port: options.port ?? balancer!.port,
        path,
        method: options.method ?? "GET",
        agent: options.agent ?? freshAgent,
        headers
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () =>
          resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString("utf8") })
        )
        response.on("error", reject)
        response.on("aborted", () => reject(Object.assign(new Error("response cut"), { code: "ECONNRESET" })))
      }
    )
    request.setTimeout(20_000, () => request.destroy(Object.assign(new Error("timed out"), { code: "TIMEOUT" })))
    request.on("error", reject)
    request.end(payload)
  })

/** `send`, recorded as a sample of `kind`; `expected` are the statuses that count as `ok`. */
const timed = async (kind: string, path: string, options: Send, expected: ReadonlyArray<number>) => {
  const at = Date.now()
  try {
    const answer = await send(path, options)
    const outcome = expected.includes(answer.status) ? "ok" : String(answer.status)
    samples.push({ at, kind, ms: Date.now() - at, outcome })
    return answer
  } catch (error) {
    samples.push({ at, kind, ms: Date.now() - at, outcome: codeOf(error) })
    throw error
  }
}

/**
 * `timed`, retried while it fails for a reason that may pass (a network error, a 5xx, a 429), from 250 ms
 * doubling to 2 s, for at most `budgetMs`; a request aimed at one instance goes through the balancer after
 * its first failure.
 */
const retrying = async (
  kind: string,
  path: string,
  options: Send,
  expected: ReadonlyArray<number>,
  budgetMs = 60_000
): Promise<Answer> => {
  const deadline = Date.now() + budgetMs
  let delay = 250
  let attempt = options
  for (;;) {
    let failure: string
    try {
      const answer = await timed(kind, path, attempt, expected)
      if (expected.includes(answer.status)) return answer
      failure = `${answer.status} ${answer.body.slice(0, 300)}`
      if (answer.status < 500 && answer.status !== 429) throw new Error(`${kind}: ${failure}`)
    } catch (error) {
      if (messageOf(error).startsWith(`${kind}:`)) throw error
      failure = messageOf(error)
    }
    if (Date.now() + delay > deadline) throw new Error(`${kind}: still failing after ${budgetMs / 1000} s: ${failure}`)
    await sleep(delay)
    delay = Math.min(delay * 2, 2000)
    attempt = { ...attempt, port: undefined }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Event streams

let token = ""

/** When an event reached its stream and how late, for events appended while the stream was connected. */
interface Delivery {
  readonly at: number
  readonly createdAt: number
  readonly ms: number
}
const deliveries: Array<Delivery> = []
/** Each time a stream's connection ended before its final event: `clean` when the response ended. */
const streamEnds: Array<{ readonly at: number; readonly clean: boolean }> = []

/** The `createdAt` of an event's JSON envelope, in epoch milliseconds (NaN when it has none). */
const createdAtOf = (data: string | undefined) => {
  try {
    return Date.parse((JSON.parse(data ?? "") as { createdAt?: string }).createdAt ?? "")
  } catch {
    return Number.NaN
  }
}

/** One socket per stream. */
const streamAgent = new Http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY })

interface Watch {
  readonly checkoutId: string
  /** Event ids received, in order, across reconnections. */
  readonly ids: Array<string>
  /** Events received a second time (an id not above the last one). */
  duplicates: number
  connects: number
  connected: boolean
  /** Resolves once `checkout.created` arrived: the server has subscribed the stream. */
  readonly opened: Promise<void>
  /** The final event's type (and when it arrived), or `gave up`. */
  readonly settled: Promise<{ readonly type: string; readonly at: number }>
  readonly close: () => void
}

/**
 * Follows a checkout's event stream through the balancer until its final event, reconnecting with
 * `Last-Event-ID` after the server's `retry:` whenever the connection ends or fails first, for at most
 * `giveUpMs`. With `reconnectOnPurpose`, it also drops and reopens the stream once after `checkout.paid`.
 */
const watchEvents = (checkoutId: string, options: { reconnectOnPurpose: boolean; giveUpMs: number }): Watch => {
  const startedAt = Date.now()
  let lastId = "0"
  let retryMs = 3000
  let done = false
  let reconnected = false
  let current: Http.ClientRequest | undefined
  let opened!: () => void
  let settle!: (value: { readonly type: string; readonly at: number }) => void
  const watch: Watch = {
    checkoutId,
    ids: [],
    duplicates: 0,
    connects: 0,
    connected: false,
    opened: new Promise<void>((resolve) => {
      opened = resolve
    }),
    settled: new Promise((resolve) => {
      settle = resolve
    }),
    close: () => finish("closed")
  }
  const finish = (type: string) => {
    if (done) return
    done = true
    watch.connected = false
    settle({ type, at: Date.now() })
    current?.destroy()
  }
  const connect = () => {
    if (done) return
    if (Date.now() - startedAt > options.giveUpMs) return finish("gave up")
    watch.connects++
    const connectedAt = Date.now()
    let over = false
    const ended = (clean: boolean) => {
      if (over) return
      over = true
      watch.connected = false
      if (done) return
      streamEnds.push({ at: Date.now(), clean })
      setTimeout(connect, retryMs)
    }
    const request = Http.get(
      {
        host,
        port: balancer!.port,
        path: `/v1/checkouts/${checkoutId}/events`,
        agent: streamAgent,
        headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", "last-event-id": lastId }
      },
      (response) => {
        if (response.statusCode === 204) {
          // Final, and nothing after lastId: the final event came before (the check compares with the table).
          response.resume()
          return finish("final before reconnecting")
        }
        if (response.statusCode !== 200) {
          response.resume()
          response.on("end", () => ended(false))
          return
        }
        watch.connected = true
        response.setEncoding("utf8")
        let buffer = ""
        response.on("data", (chunk: string) => {
          buffer += chunk
          let end = buffer.indexOf("\n\n")
          while (end !== -1 && !over) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            end = buffer.indexOf("\n\n")
            const field = (name: string) => new RegExp(`^${name}: ?(.*)$`, "m").exec(block)?.[1]
            const retry = field("retry")
            if (retry !== undefined && /^\d+$/.test(retry)) retryMs = Number(retry)
            const id = field("id")
            const type = field("event")
            if (id === undefined || type === undefined) continue
            if (!/^\d+$/.test(id)) {
              // Not an event id this client can resume from: drop the connection and count it as cut.
              request.destroy()
              return ended(false)
            }
            if (BigInt(id) <= BigInt(lastId)) {
              watch.duplicates++
              continue
            }
            lastId = id
            watch.ids.push(id)
            const now = Date.now()
            const createdAt = createdAtOf(field("data"))
            if (createdAt >= connectedAt) deliveries.push({ at: now, createdAt, ms: now - createdAt })
            if (type === "checkout.created") opened()
            if (terminalEventTypes.has(type)) return finish(type)
            if (options.reconnectOnPurpose && !reconnected && type === "checkout.paid") {
              reconnected = true
              over = true
              watch.connected = false
              request.destroy()
              setImmediate(connect)
            }
          }
        })
        response.on("end", () => ended(true))
        response.on("aborted", () => ended(false))
        response.on("error", () => ended(false))
      }
    )
    // Keep-alive comments come every 15 s: a silent connection is dead.
    request.setTimeout(45_000, () => request.destroy())
    request.on("error", () => ended(false))
    request.on("close", () => ended(false))
    current = request
  }
  connect()
  return watch
}

// ---------------------------------------------------------------------------------------------------------
// Checkouts

interface Flow {
  readonly label: "agent" | "burst" | "idle"
  readonly index: number
  checkoutId?: string
  payPath?: string
  payToken?: string
  watch?: Watch
  paySentAt?: number
  paidAt?: number
  final?: { readonly type: string; readonly at: number }
  error?: string
}

const flows: Array<Flow> = []
let variants: Array<string> = []
let stopping = false

/**
 * Two quotes, a checkout (retried with its idempotency key), and its stream open and subscribed. An agent's
 * stream gives up 5 minutes on; the idle and burst ones, made before the traffic starts, outlast the run.
 */
const prepare = async (flow: Flow) => {
  const quoteIds: Array<string> = []
  for (let item = 0; item < 2; item++) {
    const variantId = variants[(flow.index + item * 7) % variants.length]!
    const body = JSON.parse(
      (
        await retrying(
          "quote",
          "/v1/quotes",
          { method: "POST", json: { variantId, countryCode: country }, headers: bearer() },
          [201]
        )
      ).body
    ) as { id: string }
    quoteIds.push(body.id)
  }
  const checkout = JSON.parse(
    (
      await retrying(
        "checkout",
        "/v1/checkouts",
        {
          method: "POST",
          headers: bearer(),
          json: {
            items: quoteIds.map((quoteId) => ({ quoteId })),
            recipient,
            shippingAddress: address,
            idempotencyKey: `soak-${flow.index}`
          }
        },
        [201]
      )
    ).body
  ) as { id: string; paymentUrl: string }
  const url = new URL(checkout.paymentUrl)
  flow.checkoutId = checkout.id
  flow.payPath = url.pathname
  flow.payToken = url.searchParams.get("t")!
  flow.watch = watchEvents(checkout.id, {
    reconnectOnPurpose: flow.index % 4 === 0,
    giveUpMs: flow.label === "agent" ? 300_000 : durationMs + 600_000
  })
  await within(flow.watch.opened, 60_000, "the event stream's checkout.created")
}

/** The hosted page's form, posted (to `port`, or the balancer) until it answers 200, or 409 (paid before). */
const pay = async (flow: Flow, port?: number) => {
  flow.paySentAt = Date.now()
  await retrying(
    "pay",
    flow.payPath!,
    { method: "POST", form: { t: flow.payToken!, ...card }, ...(port === undefined ? {} : { port }) },
    [200, 409]
  )
  flow.paidAt = Date.now()
}

const settle = async (flow: Flow) => {
  flow.final = await flow.watch!.settled
}

const bearer = () => ({ authorization: `Bearer ${token}` })

let flowCount = 0
const newFlow = (label: Flow["label"]) => {
  const flow: Flow = { label, index: flowCount++ }
  flows.push(flow)
  return flow
}

const agentLoop = async () => {
  while (!stopping) {
    const flow = newFlow("agent")
    try {
      await prepare(flow)
      await pay(flow)
      await settle(flow)
    } catch (error) {
      flow.error = messageOf(error)
      await sleep(500)
    }
  }
}

/** Unpaid checkouts whose streams stay open the whole run (reconnecting whenever cut). */
const idleWatches: Array<Watch> = []
const openIdleStreams = async () => {
  for (let i = 0; i < idleStreamCount; i++) {
    const flow = newFlow("idle")
    await prepare(flow)
    idleWatches.push(flow.watch!)
  }
}

/** `size` checkouts with their streams open, ready to be paid at once. */
const prepareBurst = async (size: number) => {
  const burst = Array.from({ length: size }, () => newFlow("burst"))
  for (let i = 0; i < burst.length; i += 4) await Promise.all(burst.slice(i, i + 4).map(prepare))
  return burst
}

/**
 * Posts every payment of `burst` straight to `port` and follows each to its end in the background;
 * resolves once `answered` payments have answered (or after 3 s), when the fault should land.
 */
const payBurst = async (
  burst: ReadonlyArray<Flow>,
  port: number,
  answered: number,
  background: Array<Promise<void>>
) => {
  let count = 0
  let enough!: () => void
  const ready = new Promise<void>((resolve) => {
    enough = resolve
  })
  for (const flow of burst) {
    background.push(
      pay(flow, port)
        .then(() => {
          if (++count >= answered) enough()
          return settle(flow)
        })
        .catch((error: unknown) => {
          flow.error = messageOf(error)
        })
    )
  }
  await within(ready, 3000, "burst").catch(() => undefined)
}

// ---------------------------------------------------------------------------------------------------------
// Company-key traffic

interface Company {
  readonly companyId: string
  readonly accountId: string
  readonly apiKey: string
}

/** One keep-alive connection, as an integration would hold: it meets each instance's drain. */
const companyAgent = new Http.Agent({ keepAlive: true, maxSockets: 1 })

const companyLoop = async (company: Company) => {
  const headers = { "x-api-key": company.apiKey }
  let n = 0
  while (!stopping) {
    n++
    const get = (kind: string, path: string) => timed(kind, path, { headers, agent: companyAgent }, [200])
    const reads = [
      () => get("v3 api-keys list", "/public-api/v3/authentication/api-keys"),
      () => get("v3 accounts list", "/public-api/v3/accounts"),
      () => get("v3 account read", `/public-api/v3/accounts/${company.accountId}`),
      () => get("v3 billing-methods list", "/public-api/v3/billing-methods")
    ]
    await (n % 10 === 0
      ? timed(
          "v3 account create",
          "/public-api/v3/accounts",
          { method: "POST", headers, agent: companyAgent, json: { name: `Soak account ${n}` } },
          [201]
        )
      : reads[n % reads.length]!()
    ).catch(() => undefined)
    await sleep(250)
  }
}

// ---------------------------------------------------------------------------------------------------------
// Faults

interface Fault {
  readonly name: string
  /** The fault's own window ("during"), from when it lands to when it is over (or 5 s for an instant one). */
  start: number
  end: number
  readonly notes: Array<string>
  readonly goals: Array<{ readonly what: string; readonly ok: boolean }>
  /** Paid checkouts not final yet when the fault landed (placements in flight, on either instance). */
  placing: ReadonlyArray<string>
  /** Of those, the ones paid straight to the instance the fault hit, just before it. */
  burst?: ReadonlyArray<string>
}

const faults: Array<Fault> = []
const newFault = (name: string): Fault => {
  const fault: Fault = { name, start: Date.now(), end: Date.now(), notes: [], goals: [], placing: [] }
  faults.push(fault)
  return fault
}

let db: pg.Client
let instances: Array<Instance> = []

/** Paid checkouts whose placement has not ended. */
const placingNow = async () =>
  (
    await db.query<{ id: string }>(
      "SELECT id FROM checkouts WHERE paid_at IS NOT NULL AND status IN ('paid', 'placing')"
    )
  ).rows.map((row) => row.id)

const readyOf = async (instance: Instance) => {
  const answer = await send("/ready", { port: instance.port }).catch(() => undefined)
  if (answer === undefined) return { status: 0, rateLimits: undefined }
  const body = (() => {
    try {
      return JSON.parse(answer.body) as { rateLimits?: { status?: string; checksLetThrough?: number } }
    } catch {
      return {}
    }
  })()
  return { status: answer.status, rateLimits: body.rateLimits }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

/** What was placing when the fault landed, and which of it came from the burst. */
const snapshot = async (fault: Fault, burst: ReadonlyArray<Flow> = []) => {
  fault.placing = await placingNow()
  const ids = new Set(burst.map((flow) => flow.checkoutId))
  if (burst.length > 0) fault.burst = fault.placing.filter((id) => ids.has(id))
}

const killFault = async (burst: ReadonlyArray<Flow>, background: Array<Promise<void>>) => {
  const b = instances[1]!
  await payBurst(burst, b.port, killBurst / 2, background)
  const fault = newFault("kill -9 B")
  b.child!.kill("SIGKILL")
  await snapshot(fault, burst)
  await within(b.exit, 10_000, "B after kill -9")
  fault.notes.push(
    `${killBurst} payments posted to B, killed after ${killBurst / 2} answered; of those, ${fault.burst!.length} ` +
      "paid checkouts not final at the kill"
  )
  await startInstance(b)
  fault.end = Date.now()
  fault.notes.push(`B restarted and answering /health ${seconds(fault.end - fault.start)} after the kill`)
}

const listenFault = async () => {
  const listeners = async () =>
    (
      await db.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'ribbon-signals'",
        [databaseName]
      )
    ).rows.map((row) => row.pid)
  const before = await listeners()
  const fault = newFault("LISTEN backends terminated")
  await snapshot(fault)
  await db.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'ribbon-signals'",
    [databaseName]
  )
  let back = 0
  const reopened = await poll(
    async () => {
      back = (await listeners()).filter((pid) => !before.includes(pid)).length
      return back >= instances.length
    },
    30_000,
    20
  )
  fault.notes.push(
    `${before.length} LISTEN backends terminated; ` +
      (reopened
        ? `${instances.length} new ones in pg_stat_activity ${seconds(Date.now() - fault.start)} later`
        : `only ${back} new ones after 30 s`)
  )
  await sleep(Math.max(0, fault.start + 5000 - Date.now()))
  fault.end = Date.now()
}

const outageFault = async (name: string, through: Relay, what: "database" | "redis") => {
  const fault = newFault(name)
  await snapshot(fault)
  await through.refuse()
  await sleep(outageMs / 2)
  const midway = await Promise.all(instances.map(readyOf))
  fault.notes.push(
    `/ready midway: ${midway
      .map((ready, i) => {
        const limits = ready.rateLimits?.status === undefined ? "" : ` (rate limits ${ready.rateLimits.status})`
        return `${instances[i]!.name} ${ready.status}${limits}`
      })
      .join(", ")}`
  )
  await sleep(Math.max(0, fault.start + outageMs - Date.now()))
  await through.accept()
  fault.end = Date.now()
  fault.notes.push(`${what === "database" ? "Postgres" : "Redis"} unreachable for ${seconds(fault.end - fault.start)}`)
  const recovered = await Promise.all(
    instances.map(async (instance) => {
      const ok = await poll(async () => {
        const ready = await readyOf(instance)
        return (
          ready.status === 200 &&
          (what === "database" || ready.rateLimits === undefined || ready.rateLimits.status === "enforced")
        )
      }, 60_000)
      return `${instance.name} ${ok ? `after ${seconds(Date.now() - fault.end)}` : "not within 60 s"}`
    })
  )
  fault.notes.push(
    `${what === "database" ? "/ready 200 again" : "/ready with rate limits enforced again"}: ${recovered.join(", ")}`
  )
}

const sigtermFault = async (burst: ReadonlyArray<Flow>, background: Array<Promise<void>>) => {
  const a = instances[0]!
  await payBurst(burst, a.port, 8, background)
  const fault = newFault("SIGTERM A")
  a.child!.kill("SIGTERM")
  await snapshot(fault, burst)
  const exit = await within(a.exit, graceMs + 15_000, "A after SIGTERM").catch(() => undefined)
  if (exit === undefined) {
    a.child!.kill("SIGKILL")
    fault.notes.push(`A had not exited ${seconds(graceMs + 15_000)} after SIGTERM: killed`)
    fault.goals.push({ what: `A exits within its grace (${seconds(graceMs)})`, ok: false })
    await a.exit
  } else {
    const took = exit.at - fault.start
    fault.notes.push(
      `A exited ${seconds(took)} after SIGTERM (code ${exit.code ?? exit.signal}; grace ${seconds(graceMs)})`
    )
    fault.goals.push({ what: `A exits within its grace (${seconds(graceMs)})`, ok: took <= graceMs })
  }
  fault.notes.push(
    `${sigtermBurst} payments posted to A, SIGTERM after 8 answered; of those, ${fault.burst!.length} paid ` +
      "checkouts not final at SIGTERM"
  )
  await startInstance(a)
  fault.end = Date.now()
  fault.notes.push(`A restarted and answering /health ${seconds(fault.end - fault.start)} after SIGTERM`)
}

// ---------------------------------------------------------------------------------------------------------
// Checks in SQL

interface Check {
  readonly name: string
  readonly problems: ReadonlyArray<string>
}

const listed = (rows: ReadonlyArray<unknown>, max = 5) =>
  rows.slice(0, max).map((row) => JSON.stringify(row)) as ReadonlyArray<string>

const tableExists = async (name: string) =>
  (await db.query<{ found: string | null }>("SELECT to_regclass($1)::text AS found", [`public.${name}`])).rows[0]!
    .found !== null

const jobChecks = async (): Promise<Array<Check>> => {
  const { rows: expired } = await db.query(
    "SELECT id, kind, attempts, lease_expires_at FROM jobs WHERE status = 'running' AND lease_expires_at < now()"
  )
  const { rows: overdue } = await db.query(
    "SELECT id, kind, attempts, run_at FROM jobs WHERE status = 'pending' AND run_at < now() - interval '1 minute'"
  )
  return [
    { name: "no running job with an expired lease", problems: listed(expired) },
    { name: "no due pending job older than a minute", problems: listed(overdue) }
  ]
}

interface EventRow {
  readonly id: string
  readonly type: string
  readonly checkoutId: string
  readonly orderId: string | null
  readonly createdAt: number
}

/** What is wrong with one checkout's events (ordered by id), given its status, items and payment. */
const eventProblems = (
  events: ReadonlyArray<EventRow>,
  checkout: { readonly status: string; readonly paid: boolean },
  items: ReadonlyArray<{ readonly status: string; readonly orderId: string | null }>
) => {
  const problems: Array<string> = []
  const types = events.map((event) => event.type)
  const count = (type: string) => types.filter((t) => t === type).length
  const first = (type: string) => types.indexOf(type)
  if (types[0] !== "checkout.created" || count("checkout.created") !== 1)
    problems.push("not one checkout.created, first")
  for (let i = 1; i < events.length; i++) {
    if (events[i]!.createdAt < events[i - 1]!.createdAt)
      problems.push(`${events[i]!.type} stamped before ${types[i - 1]}`)
  }
  if (!checkout.paid) return problems
  if (count("checkout.paid") !== 1) problems.push(`${count("checkout.paid")} checkout.paid`)
  if (count("checkout.placing") !== 1 || first("checkout.placing") < first("checkout.paid")) {
    problems.push("not one checkout.placing after checkout.paid")
  }
  const itemEvents = events.filter((e) => e.type === "checkout.item_placed" || e.type === "checkout.item_failed")
  const placedItems = items.filter((item) => item.status === "placed" || item.status === "refunded").length
  if (count("checkout.item_placed") !== placedItems || itemEvents.length !== items.length) {
    problems.push(
      `${itemEvents.length} item events (${count("checkout.item_placed")} placed) for ${items.length} items`
    )
  }
  if (itemEvents.some((event) => types.indexOf(event.type) < first("checkout.placing"))) {
    problems.push("an item event before checkout.placing")
  }
  const settled = `checkout.${checkout.status === "refunded" ? "confirmed" : checkout.status}`
  const terminal = types.filter((type) => terminalEventTypes.has(type))
  if (terminal[0] !== settled || count(settled) !== 1) problems.push(`final events ${terminal.join(", ")}`)
  const lastItem = Math.max(...itemEvents.map((event) => events.indexOf(event)))
  if (first(settled) < lastItem) problems.push(`${settled} before the last item event`)
  // Each order's steps after its item_placed, in their order, each once.
  const steps = ["order.processing", "order.shipped", "order.delivered"]
  const byOrder = new Map<string, Array<number>>()
  events.forEach((event, index) => {
    if (event.orderId === null || !event.type.startsWith("order.")) return
    byOrder.set(event.orderId, [...(byOrder.get(event.orderId) ?? []), index])
  })
  for (const [orderId, indexes] of byOrder) {
    const placedAt = events.findIndex((e) => e.type === "checkout.item_placed" && e.orderId === orderId)
    const seen = indexes.map((index) => types[index]!).filter((type) => steps.includes(type))
    const inOrder = seen.every((type, i) => steps.indexOf(type) === i)
    if (placedAt === -1 || indexes.some((index) => index < placedAt) || !inOrder) {
      problems.push(`order ${orderId}: ${seen.join(", ")} (item_placed at ${placedAt})`)
    }
  }
  return problems
}

const dataChecks = async (): Promise<Array<Check>> => {
  const checks: Array<Check> = []
  const { rows: unsettled } = await db.query(
    `SELECT id, status FROM checkouts WHERE paid_at IS NOT NULL AND status <> ALL ($1)`,
    [finalStatuses]
  )
  checks.push({ name: "every paid checkout final", problems: listed(unsettled) })
  const { rows: charges } = await db.query(
    "SELECT id, status FROM checkouts WHERE (charge_id IS NULL) <> (paid_at IS NULL)"
  )
  checks.push({ name: "a charge exactly for each paid checkout", problems: listed(charges) })

  const { rows: duplicates } = await db.query(
    `SELECT checkout_id, item_index, count(*)::int AS orders FROM orders WHERE checkout_id IS NOT NULL
     GROUP BY 1, 2 HAVING count(*) > 1`
  )
  checks.push({ name: "no item with two orders", problems: listed(duplicates) })
  const { rows: itemOrders } = await db.query(
    `SELECT i.checkout_id, i.index, i.status, i.order_id, count(o.id)::int AS orders
     FROM checkout_items i LEFT JOIN orders o ON o.checkout_id = i.checkout_id AND o.item_index = i.index
     GROUP BY 1, 2, 3, 4
     HAVING (i.status IN ('placed', 'refunded') AND (count(o.id) <> 1 OR i.order_id IS NULL
               OR i.order_id <> min(o.id)))
         OR (i.status IN ('pending', 'failed') AND (count(o.id) <> 0 OR i.order_id IS NOT NULL))`
  )
  checks.push({ name: "one order per placed item, none for the others", problems: listed(itemOrders) })
  const { rows: orphans } = await db.query(
    `SELECT o.id, o.checkout_id, o.item_index FROM orders o
     LEFT JOIN checkout_items i ON i.checkout_id = o.checkout_id AND i.index = o.item_index AND i.order_id = o.id
     WHERE o.checkout_id IS NOT NULL AND i.checkout_id IS NULL`
  )
  checks.push({ name: "no orphan order", problems: listed(orphans) })

  const { rows: checkouts } = await db.query<{ id: string; status: string; paid: boolean }>(
    "SELECT id, status, paid_at IS NOT NULL AS paid FROM checkouts"
  )
  const { rows: items } = await db.query<{ checkoutId: string; status: string; orderId: string | null }>(
    `SELECT checkout_id AS "checkoutId", status, order_id AS "orderId" FROM checkout_items ORDER BY checkout_id, index`
  )
  const { rows: events } = await db.query<EventRow>(
    `SELECT id::text AS id, type, checkout_id AS "checkoutId", data #>> '{order,id}' AS "orderId",
       (extract(epoch FROM created_at) * 1000)::float8 AS "createdAt"
     FROM events ORDER BY events.id`
  )
  const group = <A extends { readonly checkoutId: string }>(rows: ReadonlyArray<A>) => {
    const by = new Map<string, Array<A>>()
    for (const row of rows) by.set(row.checkoutId, [...(by.get(row.checkoutId) ?? []), row])
    return by
  }
  const eventsOf = group(events)
  const itemsOf = group(items)
  const eventIssues: Array<string> = []
  for (const checkout of checkouts) {
    const problems = eventProblems(eventsOf.get(checkout.id) ?? [], checkout, itemsOf.get(checkout.id) ?? [])
    if (problems.length > 0) eventIssues.push(`${checkout.id} (${checkout.status}): ${problems.join("; ")}`)
  }
  checks.push({ name: "events complete and in order, per checkout", problems: eventIssues.slice(0, 5) })

  // Each followed stream received exactly the checkout's events up to its final one, once each, in order.
  const streamIssues: Array<string> = []
  for (const flow of flows) {
    const watch = flow.watch
    if (watch === undefined || flow.final === undefined || !terminalEventTypes.has(flow.final.type)) continue
    const stored = eventsOf.get(watch.checkoutId) ?? []
    const upTo = stored.findIndex((event) => terminalEventTypes.has(event.type))
    const expected = stored.slice(0, upTo + 1).map((event) => event.id)
    if (watch.duplicates > 0 || expected.join(",") !== watch.ids.join(",")) {
      streamIssues.push(
        `${watch.checkoutId}: received ${watch.ids.join(",")} (${watch.duplicates} again), stored ${expected.join(",")}`
      )
    }
  }
  checks.push({ name: "each stream got its events once, in order, across reconnects", problems: streamIssues })
  const unfinished = flows.filter(
    (flow) => flow.paidAt !== undefined && (flow.final === undefined || !terminalEventTypes.has(flow.final.type))
  )
  checks.push({
    name: "each paid checkout's stream reached its final event",
    problems: unfinished.map((flow) => `${flow.checkoutId}: ${flow.final?.type ?? "still waiting"}`).slice(0, 5)
  })

  if (await tableExists("billing_entries")) {
    const ordersSay = (await tableExists("company_orders"))
      ? `SELECT billing_method_id, sum(charged) AS said FROM company_orders
         WHERE status IN ('active', 'completed') GROUP BY 1`
      : "SELECT NULL::text AS billing_method_id, 0::numeric AS said WHERE false"
    const { rows: ledger } = await db.query(
      `WITH net AS (
         SELECT billing_method_id, sum(CASE kind WHEN 'debit' THEN amount ELSE -amount END) AS net
         FROM billing_entries WHERE subject_type = 'order' GROUP BY 1),
       said AS (${ordersSay})
       SELECT m.id, coalesce(net.net, 0)::bigint AS net, coalesce(said.said, 0)::bigint AS said
       FROM billing_methods m LEFT JOIN net ON net.billing_method_id = m.id
         LEFT JOIN said ON said.billing_method_id = m.id
       WHERE coalesce(net.net, 0) <> coalesce(said.said, 0)`
    )
    checks.push({ name: "each billing method's debits less credits = its orders' charges", problems: listed(ledger) })
  }
  return checks
}

// ---------------------------------------------------------------------------------------------------------
// The report

interface Phase {
  readonly name: string
  readonly from: number
  readonly to: number
}

const ms = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "-" : n.toFixed(0)).padStart(6)
const pct = (values: ReadonlyArray<number>, p: number) => (values.length === 0 ? undefined : percentile(values, p))
const maxOf = (values: ReadonlyArray<number>) => (values.length === 0 ? undefined : Math.max(...values))

const phasesOf = (startedAt: number, stoppedAt: number): Array<Phase> => {
  const phases: Array<Phase> = [{ name: "steady", from: startedAt, to: faults[0]?.start ?? stoppedAt }]
  faults.forEach((fault, i) => {
    phases.push({ name: `${fault.name}: during`, from: fault.start, to: fault.end })
    phases.push({ name: `${fault.name}: after`, from: fault.end, to: faults[i + 1]?.start ?? stoppedAt })
  })
  return phases
}

const printPhases = (phases: ReadonlyArray<Phase>) => {
  const inPhase = <A>(rows: ReadonlyArray<A>, at: (row: A) => number, phase: Phase) =>
    rows.filter((row) => at(row) >= phase.from && at(row) < phase.to)
  console.log(
    "\nRequests (ms; errors: neither the expected status nor 429; latency of the ok ones) and event streams " +
      "(ms from an event's append to its arrival, events appended while connected)"
  )
  console.log(
    "| phase                                 |  secs |  reqs | errs | 429 |    p50 |    p95 |    p99 |    max " +
      "| events |    p50 |    p95 |    max | cuts | ends | paid→final p50 |    p95 |"
  )
  console.log(
    `|${"-".repeat(39)}|------:|------:|-----:|----:|-------:|-------:|-------:|-------:|-------:|-------:|-------:|-------:|-----:|-----:|---------------:|-------:|`
  )
  for (const phase of phases) {
    const reqs = inPhase(samples, (s) => s.at, phase)
    const ok = reqs.filter((s) => s.outcome === "ok").map((s) => s.ms)
    const errors = reqs.filter((s) => s.outcome !== "ok" && s.outcome !== "429").length
    const limited = reqs.filter((s) => s.outcome === "429").length
    const events = inPhase(deliveries, (d) => d.at, phase).map((d) => d.ms)
    const ends = inPhase(streamEnds, (e) => e.at, phase)
    const placed = flows
      .filter(
        (f) =>
          f.label === "agent" && f.paidAt !== undefined && f.final !== undefined && terminalEventTypes.has(f.final.type)
      )
      .filter((f) => f.paidAt! >= phase.from && f.paidAt! < phase.to)
      .map((f) => f.final!.at - f.paidAt!)
    console.log(
      `| ${phase.name.padEnd(37)} | ${((phase.to - phase.from) / 1000).toFixed(0).padStart(5)} | ${String(reqs.length).padStart(5)} | ` +
        `${String(errors).padStart(4)} | ${String(limited).padStart(3)} | ${ms(pct(ok, 50))} | ${ms(pct(ok, 95))} | ` +
        `${ms(pct(ok, 99))} | ${ms(maxOf(ok))} | ${String(events.length).padStart(6)} | ${ms(pct(events, 50))} | ` +
        `${ms(pct(events, 95))} | ${ms(maxOf(events))} | ${String(ends.filter((e) => !e.clean).length).padStart(4)} | ` +
        `${String(ends.filter((e) => e.clean).length).padStart(4)} | ${ms(pct(placed, 50)).padStart(14)} | ${ms(pct(placed, 95))} |`
    )
  }
  console.log(
    "cuts: stream connections that failed or were reset before their final event; ends: ended cleanly by the " +
      "server before it (both reconnect with Last-Event-ID). paid→final: an agent's checkout, from the payment's answer to the final event."
  )
}

/**
 * From `from`, how long until event-stream latency was back under `threshold`: the start of the first 500 ms
 * of appends with at least 3 deliveries and a median under it.
 */
const latencyRecovery = (from: number, threshold: number) => {
  const after = deliveries.filter((d) => d.createdAt >= from)
  for (let start = 0; start < 60_000; start += 500) {
    const window = after.filter((d) => d.createdAt >= from + start && d.createdAt < from + start + 500).map((d) => d.ms)
    if (window.length >= 3 && percentile(window, 50) < threshold) return start
  }
  return undefined
}

/** The instance logs' warnings and errors by message, and the lines the operations guide names. */
const scanLogs = () => {
  const notable: Array<string> = []
  const counts = new Map<string, number>()
  for (const instance of instances) {
    if (!Fs.existsSync(instance.logPath)) continue
    for (const line of Fs.readFileSync(instance.logPath, "utf8").split("\n")) {
      if (line.trim() === "") continue
      let entry: { message?: unknown; logLevel?: string; annotations?: Record<string, unknown>; timestamp?: string }
      try {
        entry = JSON.parse(line)
      } catch {
        const key = `${instance.name} (not JSON) ${line.slice(0, 100)}`
        counts.set(key, (counts.get(key) ?? 0) + 1)
        continue
      }
      const message = Array.isArray(entry.message) ? entry.message.join(" ") : String(entry.message)
      if (
        /LISTEN connection|Redis|Rate-limit store|Shutting down|Shutdown:|running job|handing it back|hand the stopped/.test(
          message
        )
      ) {
        const annotations = Object.entries(entry.annotations ?? {})
          .filter(([key]) => ["downMillis", "failedAttempts", "count", "letThrough", "jobs"].includes(key))
          .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
        notable.push(
          `${entry.timestamp?.slice(11, 23)} ${instance.name} ${entry.logLevel} ${message} ${annotations.join(" ")}`
        )
      }
      if (entry.logLevel === "WARN" || entry.logLevel === "ERROR" || entry.logLevel === "FATAL") {
        const key = `${instance.name} ${entry.logLevel} ${message.slice(0, 110)}`
        counts.set(key, (counts.get(key) ?? 0) + 1)
      }
    }
  }
  return { notable, counts }
}

// ---------------------------------------------------------------------------------------------------------
// Setup and cleanup

const admin = async <A>(work: (client: pg.Client) => Promise<A>) => {
  const client = new pg.Client({ connectionString: serverUrl.toString() })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "inherit"], env })
    live.add(child)
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
    })
    child.once("exit", (code) => {
      live.delete(child)
      if (code === 0) resolve(out)
      else reject(new Error(`${args.join(" ")} exited with ${code}`))
    })
  })

/** Physical variants that ship to GB with stock, confirmed available over HTTP; their stock raised. */
const pickVariants = async () => {
  const { rows } = await db.query<{ id: string }>(
    `SELECT v.id FROM variants v JOIN variant_locations l ON l.variant_id = v.id
     WHERE v.shipping_required AND $1 = ANY (l.ships_to) AND (l.stock IS NULL OR l.stock > 0)
     ORDER BY md5(v.id) LIMIT 40`,
    [country]
  )
  const picked: Array<string> = []
  for (const { id } of rows) {
    if (picked.length >= 12) break
    const answer = await send(`/v1/variants/${id}/availability?countries=${country}`, { headers: bearer() })
    if (answer.status !== 200) continue
    if ((JSON.parse(answer.body) as { countries: Array<{ available: boolean }> }).countries[0]?.available)
      picked.push(id)
  }
  if (picked.length < 2) throw new Error(`only ${picked.length} variants are available in ${country}`)
  await db.query("UPDATE variant_locations SET stock = 1000000 WHERE variant_id = ANY ($1) AND stock IS NOT NULL", [
    picked
  ])
  return picked
}

let cleaned = false
const cleanup = async () => {
  if (cleaned) return
  cleaned = true
  stopping = true
  for (const watch of idleWatches) watch.close()
  for (const flow of flows) flow.watch?.close()
  for (const child of live) child.kill("SIGKILL")
  freshAgent.destroy()
  streamAgent.destroy()
  companyAgent.destroy()
  await Promise.all([balancer?.close(), pgRelay?.close(), redisRelay?.close()])
  await db?.end().catch(() => undefined)
  await admin((client) => client.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`)).catch((error) =>
    console.error(`could not drop ${databaseName}: ${messageOf(error)}`)
  )
  const redis = new Redis(redisUrlAt(redisServer.host), { lazyConnect: true })
  await redis
    .connect()
    .then(async () => {
      let cursor = "0"
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", "ribbon:ratelimit:*", "COUNT", 500)
        cursor = next
        if (keys.length > 0) await redis.del(...keys)
      } while (cursor !== "0")
    })
    .catch((error) => console.error(`could not clear the rate-limit keys: ${messageOf(error)}`))
    .finally(() => redis.disconnect())
  Fs.rmSync(bundle, { force: true })
  Fs.rmSync(`${bundle}.map`, { force: true })
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the soak`)
    void cleanup().finally(() => process.exit(130))
  })
}
process.on("uncaughtException", (error) => {
  console.error(`The soak stopped: ${error.stack ?? error.message}`)
  void cleanup().finally(() => process.exit(1))
})

// ---------------------------------------------------------------------------------------------------------
// The run

const main = async () => {
  Fs.mkdirSync(runDir, { recursive: true })
  await new Promise<void>((resolve, reject) =>
    spawn(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" }).on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error("the build failed"))
    )
  )
  Fs.copyFileSync(Path.join(root, "dist", "ribbon.mjs"), bundle)
  Fs.copyFileSync(Path.join(root, "dist", "ribbon.mjs.map"), `${bundle}.map`)

  await admin((client) => client.query(`CREATE DATABASE ${databaseName}`))
  db = new pg.Client({ connectionString: databaseUrl.toString() })
  await db.connect()
  pgRelay = await relay([{ host: serverUrl.hostname, port: Number(serverUrl.port || 5432) }])
  redisRelay = await relay([{ host: redisServer.hostname, port: Number(redisServer.port || 6379) }])
  const ports = [await freePort(), await freePort()]
  balancer = await relay(ports.map((port) => ({ host, port })))
  instances = ports.map((port, i) => {
    const name = i === 0 ? "A" : "B"
    const logPath = Path.join(runDir, `instance-${name}.log`)
    Fs.rmSync(logPath, { force: true })
    return { name, port, logPath, child: undefined, exit: Promise.resolve({ code: null, signal: null, at: 0 }) }
  })
  const setupStart = Date.now()
  // A first: it migrates and seeds the fresh database; then B.
  await startInstance(instances[0]!)
  await startInstance(instances[1]!)
  const publicUrl = `http://${host}:${balancer.port}`
  token = await Effect.runPromise(
    issueToken({
      publicUrl,
      databaseUrl,
      scope: "catalog:read orders:read orders:write",
      clientName: "soak",
      defaultCountry: country
    })
  )
  const company = JSON.parse(
    await run([bundle, "company", "create", "--name", "Soak", "--json"], {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: databaseUrl.toString(),
      NODE_ENV: "production",
      LOG_LEVEL: "Warn"
    })
  ) as Company
  variants = await pickVariants()
  await openIdleStreams()
  // The checkouts the instance faults will catch in flight, made (and their streams opened) beforehand.
  const killFlows = await prepareBurst(killBurst)
  const sigtermFlows = await prepareBurst(sigtermBurst)
  console.log(
    `database ${databaseName}, Redis db ${redisDb}; instances A :${ports[0]} and B :${ports[1]} behind :${balancer.port}; ` +
      `set up in ${seconds(Date.now() - setupStart)}`
  )
  console.log(
    `${seconds(durationMs)} of traffic: ${agentCount} agents, company-key traffic, ${idleStreamCount} idle streams; ` +
      `faults every ${seconds(slotMs)}, outages of ${seconds(outageMs)}; grace ${seconds(graceMs)}; logs in ${runDir}`
  )
  if (outageMs < 10_000) console.log(`(outages shortened from 10 s to fit --duration ${seconds(durationMs)})`)

  const startedAt = Date.now()
  const background: Array<Promise<void>> = []
  const traffic = [...Array.from({ length: agentCount }, agentLoop), companyLoop(company)]
  const at = (slot: number) => sleep(Math.max(0, startedAt + slot * slotMs - Date.now()))
  const steps: Array<[string, () => Promise<void>]> = [
    ["kill -9 B", () => killFault(killFlows, background)],
    ["LISTEN", listenFault],
    ["Postgres outage", () => outageFault("Postgres unreachable", pgRelay!, "database")],
    ["Redis outage", () => outageFault("Redis unreachable", redisRelay!, "redis")],
    ["SIGTERM A", () => sigtermFault(sigtermFlows, background)]
  ]
  for (const [i, [name, step]] of steps.entries()) {
    await at(i + 1)
    console.log(`${seconds(Date.now() - startedAt).padStart(9)}  ${name}`)
    await step()
  }
  await sleep(Math.max(0, startedAt + durationMs - Date.now()))
  stopping = true
  const stoppedAt = Date.now()
  console.log(`${seconds(stoppedAt - startedAt).padStart(9)}  traffic stops; waiting for every paid checkout`)
  // Idle streams cut by the last fault may be waiting out their `retry:`: give them a little longer.
  const idleWaitStart = Date.now()
  await poll(async () => idleWatches.every((watch) => watch.connected), 15_000)
  const idleOpen = idleWatches.filter((watch) => watch.connected).length
  const idleWait = Date.now() - idleWaitStart
  for (const watch of idleWatches) watch.close()
  await within(Promise.allSettled([...traffic, ...background]), 330_000, "the checkouts in flight").catch(
    (error: unknown) => console.log(messageOf(error))
  )
  const drained = await poll(
    async () => (await db.query("SELECT 1 FROM checkouts WHERE status IN ('paid', 'placing') LIMIT 1")).rowCount === 0,
    150_000,
    500
  )
  const checks = await jobChecks()

  // Both instances stopped as an orchestrator would, each timed against its grace.
  const shutdown = await Promise.all(
    instances.map(async (instance) => {
      const sentAt = Date.now()
      instance.child?.kill("SIGTERM")
      const exit = await within(instance.exit, graceMs + 15_000, `${instance.name} after SIGTERM`).catch(
        () => undefined
      )
      if (exit === undefined) instance.child?.kill("SIGKILL")
      return { name: instance.name, ms: exit === undefined ? undefined : exit.at - sentAt, exit }
    })
  )
  const { rows: stillRunning } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM jobs WHERE status = 'running'"
  )
  checks.push(...(await dataChecks()))

  // ---- the report
  console.log(`\nSoak of ${seconds(stoppedAt - startedAt)} on ${databaseName}`)
  printPhases(phasesOf(startedAt, stoppedAt))

  const { rows: placementTimes } = await db.query<{ id: string; at: number }>(
    `SELECT checkout_id AS id, (extract(epoch FROM min(created_at)) * 1000)::float8 AS at FROM events
     WHERE type IN ('checkout.confirmed', 'checkout.partially_confirmed', 'checkout.failed') GROUP BY 1`
  )
  const finalAt = new Map(placementTimes.map((row) => [row.id, Number(row.at)]))
  const goalList: Array<{ readonly what: string; readonly ok: boolean }> = []
  console.log("\nWhat each fault cost")
  for (const [i, fault] of faults.entries()) {
    const until = faults[i + 1]?.start ?? stoppedAt
    const failed = samples.filter(
      (s) => s.at >= fault.start && s.at < until && s.outcome !== "ok" && s.outcome !== "429"
    )
    const byOutcome = new Map<string, number>()
    for (const s of failed) byOutcome.set(`${s.kind} ${s.outcome}`, (byOutcome.get(`${s.kind} ${s.outcome}`) ?? 0) + 1)
    const ends = streamEnds.filter((e) => e.at >= fault.start && e.at < until)
    console.log(`\n${fault.name} (at ${seconds(fault.start - startedAt)})`)
    for (const note of fault.notes) console.log(`  ${note}`)
    console.log(
      `  requests that failed until the next fault: ${failed.length}` +
        (byOutcome.size === 0
          ? ""
          : ` (${[...byOutcome]
              .sort((a, b) => b[1] - a[1])
              .map(([what, n]) => `${n} ${what}`)
              .join(", ")})`)
    )
    console.log(
      `  stream connections ended early: ${ends.filter((e) => !e.clean).length} cut, ${ends.filter((e) => e.clean).length} ended by the server`
    )
    /** How long after the fault the last of `ids` was final, or undefined when one never was. */
    const lastFinal = (ids: ReadonlyArray<string>) => {
      const times = ids.map((id) => (finalAt.get(id) ?? Number.NaN) - fault.start)
      return times.some(Number.isNaN) ? undefined : Math.max(0, ...times)
    }
    // Placements still waiting since an earlier fault are that fault's cost, not this one's.
    const earlier = new Set(faults.slice(0, i).flatMap((f) => f.placing))
    const placing = fault.placing.filter((id) => !earlier.has(id))
    const worst = lastFinal(placing)
    console.log(
      `  placements in flight when it landed: ${placing.length}` +
        (placing.length === 0
          ? ""
          : `, the last final ${worst === undefined ? "NEVER" : `${seconds(worst)} after it`}`) +
        (placing.length < fault.placing.length
          ? ` (and ${fault.placing.length - placing.length} still in flight since an earlier fault)`
          : "")
    )
    if (fault.burst !== undefined) {
      const burstWorst = lastFinal(fault.burst)
      console.log(
        `  of those, paid straight to the instance: ${fault.burst.length}` +
          (fault.burst.length === 0
            ? ""
            : `, the last final ${burstWorst === undefined ? "NEVER" : `${seconds(burstWorst)} after it`}`)
      )
      if (fault.name.startsWith("SIGTERM")) {
        fault.goals.push({
          what: `the SIGTERMed instance's placements final within ${seconds(goals.takeoverMs)}`,
          ok: fault.burst.length > 0 && burstWorst !== undefined && burstWorst <= goals.takeoverMs
        })
      }
    }
    if (fault.name.startsWith("LISTEN")) {
      // The goal is 100 ms; on a machine so busy that the steady phase's own p95 is above it, that p95 is the
      // bar instead (said below), so that the figure measures the LISTEN loss and not the machine.
      const steady = deliveries.filter((d) => d.at >= startedAt && d.at < (faults[0]?.start ?? stoppedAt))
      const steadyP95 = pct(
        steady.map((d) => d.ms),
        95
      )
      const threshold = Math.max(goals.eventLatencyMs, steadyP95 ?? 0)
      const recovery = latencyRecovery(fault.start, threshold)
      const soon = deliveries
        .filter((d) => d.createdAt >= fault.start && d.createdAt < fault.start + 5000)
        .map((d) => d.ms)
      console.log(
        `  event-stream latency back under ${threshold.toFixed(0)} ms` +
          (threshold > goals.eventLatencyMs ? ` (the steady phase's p95, above ${goals.eventLatencyMs} ms)` : "") +
          ` (median of 500 ms of appends): ` +
          `${recovery === undefined ? "not within 60 s" : `${seconds(recovery)} after the loss`}; events appended in the ` +
          `5 s after it: ${soon.length}, p50 ${ms(pct(soon, 50)).trim()} ms, max ${ms(maxOf(soon)).trim()} ms`
      )
      fault.goals.push({
        what: `event-stream latency under ${threshold.toFixed(0)} ms within ${seconds(goals.listenRecoveryMs)} of the LISTEN loss`,
        ok: recovery !== undefined && recovery <= goals.listenRecoveryMs
      })
    }
    goalList.push(...fault.goals)
  }

  console.log("\nShutdown at the end (SIGTERM to both)")
  for (const stop of shutdown) {
    console.log(
      `  ${stop.name}: ${stop.ms === undefined ? `still running ${seconds(graceMs + 15_000)} later: killed` : `exited in ${seconds(stop.ms)} (code ${stop.exit!.code ?? stop.exit!.signal})`}; grace ${seconds(graceMs)}`
    )
    goalList.push({
      what: `${stop.name} exits within its grace at the end`,
      ok: stop.ms !== undefined && stop.ms <= graceMs
    })
  }
  console.log(`  jobs still marked running after both stopped: ${stillRunning[0]!.n}`)

  const agentFlows = flows.filter((flow) => flow.label !== "idle")
  const paid = agentFlows.filter((flow) => flow.paidAt !== undefined)
  const abandoned = agentFlows.filter((flow) => flow.error !== undefined)
  const { rows: tally } = await db.query<{ status: string; n: number }>(
    "SELECT status, count(*)::int AS n FROM checkouts GROUP BY 1 ORDER BY 2 DESC"
  )
  const { rows: orderCount } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM orders WHERE checkout_id IS NOT NULL"
  )
  const { rows: deadJobs } = await db.query<{ kind: string; n: number }>(
    "SELECT kind, count(*)::int AS n FROM jobs WHERE status = 'dead' GROUP BY 1"
  )
  console.log("\nTotals")
  console.log(
    `  checkouts: ${tally.map((row) => `${row.n} ${row.status}`).join(", ")}; ${orderCount[0]!.n} orders; ` +
      `${paid.length} paid by the agents and bursts`
  )
  console.log(
    `  flows given up by the client: ${abandoned.length}${abandoned.length === 0 ? "" : ` (${[...new Set(abandoned.map((f) => f.error!.slice(0, 80)))].slice(0, 3).join(" | ")})`}`
  )
  console.log(
    `  idle streams connected when traffic stopped: ${idleOpen}/${idleStreamCount} (after ${seconds(idleWait)}), ` +
      `${idleWatches.reduce((n, w) => n + w.connects, 0)} connections in all`
  )
  console.log(`  requests: ${samples.length}; events delivered live: ${deliveries.length}`)
  console.log(
    `  dead jobs: ${deadJobs.length === 0 ? "none" : deadJobs.map((row) => `${row.n} ${row.kind}`).join(", ")}`
  )
  if (!drained) console.log("  some paid checkouts were still placing 150 s after traffic stopped")

  const logs = scanLogs()
  console.log("\nInstance log lines about signals, Redis and shutdown")
  for (const line of logs.notable.slice(0, 40)) console.log(`  ${line}`)
  if (logs.notable.length > 40) console.log(`  … ${logs.notable.length - 40} more in ${runDir}`)
  console.log("Warnings and errors logged, by message")
  for (const [message, n] of [...logs.counts].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
    console.log(`  ${String(n).padStart(5)}  ${message}`)
  }

  console.log("\nChecks")
  for (const check of checks) {
    console.log(`  ${check.problems.length === 0 ? "ok  " : "FAIL"}  ${check.name}`)
    for (const problem of check.problems) console.log(`          ${problem}`)
  }
  console.log("Goals")
  for (const goal of goalList) console.log(`  ${goal.ok ? "met    " : "NOT met"}  ${goal.what}`)
  const failed = checks.some((check) => check.problems.length > 0) || goalList.some((goal) => !goal.ok)
  console.log(failed ? "\nThe soak FAILED." : "\nThe soak passed: nothing lost or duplicated, every goal met.")
  if (failed) process.exitCode = 1
}

try {
  await main()
} catch (error) {
  console.error(`The soak stopped: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  process.exitCode = 1
} finally {
  await cleanup()
}
