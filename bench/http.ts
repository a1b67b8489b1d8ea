/**
 * `npm run bench:http`: the HTTP overhead of the Ribbon server, against a bare `node:http` server that
 * sends the same bytes for the same route.
 *
 * Each server runs in a child process of its own (node with the tsx loader, as `npm run ribbon` runs),
 * listening on 127.0.0.1; autocannon runs in this process. Both servers get the same connections,
 * warm-up and measuring time, in alternating rounds so that a noisy neighbour hurts both alike. While
 * Ribbon is loaded we sample its RSS from /proc; each child also reports how busy its event loop was,
 * which tells a server that waits (loop idle) from one starved of CPU by other processes (loop busy,
 * CPU below 100 %).
 *
 *   npm run bench:http -- [--routes /health,/nope] [--duration 5] [--warmup 2] [--rounds 2]
 *                         [--connections 50] [--telemetry] [--compare-telemetry] [--sample RATIO]
 *                         [--postgres] [--cpu-prof DIR]
 *
 * Ribbon is the real server layer (`makeServerLive`: config, PGlite in a temporary DATA_DIR, migrations,
 * the demo catalog, the whole HttpApi).
 * --postgres   uses the Postgres named by DATABASE_URL instead of PGlite (it is migrated and seeded).
 * --telemetry  sets OTEL_EXPORTER_OTLP_ENDPOINT to an OTLP sink in this process, and counts the spans.
 * --compare-telemetry  keeps Ribbon's telemetry off and starts a second Ribbon, `ribbon+otel`, with it on
 *              (as --telemetry), measured in the same rounds: the cost of telemetry from one run.
 * --sample     with telemetry, keeps that share of new traces (OTEL_TRACES_SAMPLER=parentbased_traceidratio,
 *              OTEL_TRACES_SAMPLER_ARG=RATIO); every trace otherwise.
 * --cpu-prof   writes a V8 CPU profile of the Ribbon child into DIR and summarises the measured part.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import { createRequire } from "node:module"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { NodeRuntime } from "@effect/platform-node"
import { Config, ConfigProvider, Console, Duration, Effect, Fiber, Layer, Option, Ref, Schedule } from "effect"

const self = fileURLToPath(import.meta.url)
const host = "127.0.0.1"

// ---------------------------------------------------------------------------------------------------------
// Arguments

const argv = process.argv.slice(2)
const flag = (name: string) => argv.includes(`--${name}`)
const option = (name: string): string | undefined => {
  const index = argv.indexOf(`--${name}`)
  return index === -1 ? undefined : argv[index + 1]
}
const numberOption = (name: string, fallback: number) => {
  const value = option(name)
  return value === undefined ? fallback : Number(value)
}

// ---------------------------------------------------------------------------------------------------------
// Both children: answer the bench's questions over the IPC channel

interface ChildStats {
  /** Cumulative event loop utilisation: milliseconds active and idle. */
  readonly active: number
  readonly idle: number
  readonly maxRss: number
}

const answerStats = () =>
  process.on("message", (message) => {
    if (message !== "stats") return
    const { active, idle } = performance.eventLoopUtilization()
    process.send?.({ active, idle, maxRss: process.resourceUsage().maxRSS * 1024 } satisfies ChildStats)
  })

// ---------------------------------------------------------------------------------------------------------
// Child: the bare node:http server

interface Canned {
  readonly status: number
  readonly contentType: string
  readonly body: string
}

/**
 * The baseline: a plain `node:http` handler sending what Ribbon sends for each route (status,
 * content-type, content-length, a fresh x-request-id, the same body bytes).
 */
const serveBare = (port: number, routes: Record<string, Canned>) => {
  const prepared = new Map(
    Object.entries(routes).map(([path, canned]) => [path, { ...canned, body: Buffer.from(canned.body) }] as const)
  )
  const server = Http.createServer((request, response) => {
    const canned = prepared.get(request.url ?? "")
    if (canned === undefined) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(canned.status, {
      "content-type": canned.contentType,
      "content-length": canned.body.length,
      "x-request-id": crypto.randomUUID()
    })
    response.end(canned.body)
  })
  server.listen(port, host)
  answerStats()
  process.on("SIGINT", () => server.close(() => process.exit(0)))
}

// ---------------------------------------------------------------------------------------------------------
// Child: the Ribbon server

/**
 * The real server layer, configured from the arguments; with `postgres`, on the database named by
 * DATABASE_URL (migrated and seeded like `npm start` would) instead of PGlite.
 */
const serveRibbon = async (
  port: number,
  dataDir: string,
  otlp: string | undefined,
  sample: string | undefined,
  postgres: boolean
) => {
  const [{ makeServerLive }, { LoggingLive }] = await Promise.all([
    import("../src/layers/Server.js"),
    import("../src/layers/Logging.js")
  ])
  answerStats()
  Effect.gen(function* () {
    const databaseUrl = postgres ? Option.some(yield* Config.string("DATABASE_URL")) : Option.none()
    const config = new Map([
      ["PORT", String(port)],
      ["DATA_DIR", dataDir],
      ["SHUTDOWN_GRACE", "1 second"],
      ["LOG_LEVEL", "WARN"],
      ...Option.match(databaseUrl, { onNone: () => [], onSome: (url) => [["DATABASE_URL", url] as const] }),
      ...(otlp === undefined ? [] : [["OTEL_EXPORTER_OTLP_ENDPOINT", otlp] as const]),
      ...(sample === undefined
        ? []
        : [["OTEL_TRACES_SAMPLER", "parentbased_traceidratio"] as const, ["OTEL_TRACES_SAMPLER_ARG", sample] as const])
    ])
    return yield* Layer.launch(makeServerLive({ host })).pipe(
      Effect.provide(LoggingLive),
      Effect.withConfigProvider(ConfigProvider.fromMap(config))
    )
  }).pipe(NodeRuntime.runMain({ disablePrettyLogger: true }))
}

// ---------------------------------------------------------------------------------------------------------
// The load generator

interface Histogram {
  readonly p50: number
  readonly p99: number
}
interface CannonResult {
  readonly requests: { readonly total: number }
  readonly latency: Histogram
  readonly errors: number
  readonly timeouts: number
  readonly non2xx: number
  readonly duration: number
}
// autocannon ships no types; this is the part of its API used here.
const autocannon = createRequire(import.meta.url)("autocannon") as (options: {
  readonly url: string
  readonly connections: number
  readonly duration: number
  readonly pipelining: number
}) => Promise<CannonResult>

type ServerName = "ribbon" | "bare" | "ribbon+otel"

interface Sample {
  readonly server: ServerName
  readonly route: string
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  /** Requests that failed or answered another status than the route's. */
  readonly failures: number
  /** Share of one core the server process used while measured, in %. */
  readonly cpu: number
  /** Share of the time the server's event loop was busy, in %. */
  readonly loopBusy: number
  /** Server CPU time per response, in µs. */
  readonly cpuPerRequest: number
  /** Share of one core this process (autocannon) used, in %. */
  readonly loadCpu: number
}

interface Server {
  readonly name: ServerName
  readonly process: ChildProcess
  readonly pid: number
  readonly url: string
}

const freePort = Effect.async<number>((resume) => {
  const probe = Net.createServer()
  probe.listen(0, host, () => {
    const { port } = probe.address() as Net.AddressInfo
    probe.close(() => resume(Effect.succeed(port)))
  })
})

/** `/proc/<pid>/stat` counts CPU time in clock ticks: USER_HZ, 100 on Linux. */
const clockTicks = 100

const procStatus = (pid: number, field: "VmRSS" | "VmHWM") =>
  Effect.sync(() => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? 0 : Number(match[1]) * 1024
  }).pipe(Effect.orElseSucceed(() => 0))

/** CPU seconds (user + system, every thread) the process has used so far. */
const procCpuSeconds = (pid: number) =>
  Effect.sync(() => {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / clockTicks
  })

const stats = (server: Server) =>
  Effect.async<ChildStats>((resume) => {
    const onMessage = (message: unknown) => resume(Effect.succeed(message as ChildStats))
    server.process.once("message", onMessage)
    server.process.send("stats")
    return Effect.sync(() => server.process.off("message", onMessage))
  })

const request = (url: string) =>
  Effect.async<Canned, Error>((resume) => {
    const req = Http.get(url, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resume(
          Effect.succeed({
            status: response.statusCode ?? 0,
            contentType: response.headers["content-type"] ?? "",
            body: Buffer.concat(chunks).toString()
          })
        )
      )
    })
    req.on("error", (error) => resume(Effect.fail(error)))
  })

/** Runs this file as a server child; on release, SIGINT and wait for it to exit (SIGKILL after 10 s). */
const startChild = (name: ServerName, port: number, args: ReadonlyArray<string>, nodeFlags: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      spawn(
        process.execPath,
        [
          ...nodeFlags,
          "--import",
          "tsx",
          self,
          "--serve",
          name === "bare" ? "bare" : "ribbon",
          "--port",
          String(port),
          ...args
        ],
        { stdio: ["ignore", "inherit", "inherit", "ipc"] }
      )
    ),
    (child) =>
      Effect.async<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
        child.kill("SIGINT")
      }).pipe(
        Effect.timeoutTo({
          duration: "10 seconds",
          onSuccess: () => Effect.void,
          onTimeout: () => Effect.asVoid(Effect.sync(() => child.kill("SIGKILL")))
        }),
        Effect.flatten
      )
  ).pipe(
    Effect.map((child): Server => ({ name, process: child, pid: child.pid!, url: `http://${host}:${port}` })),
    // Wait until it answers; give up if it exits first.
    Effect.tap((server) =>
      request(`${server.url}/health`).pipe(
        Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("90 seconds"))),
        Effect.orDie,
        Effect.raceFirst(
          Effect.async<never>((resume) => {
            const onExit = (code: number | null) => resume(Effect.dieMessage(`${name} exited (${code}) on start`))
            server.process.once("exit", onExit)
            return Effect.sync(() => server.process.off("exit", onExit))
          })
        )
      )
    )
  )

/** An OTLP/HTTP sink counting the spans it receives. */
const otlpSink = (port: number, spans: Ref.Ref<number>) =>
  Effect.acquireRelease(
    Effect.async<Http.Server>((resume) => {
      const server = Http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          if (req.url === "/v1/traces") {
            try {
              const body = JSON.parse(Buffer.concat(chunks).toString()) as {
                resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<unknown> }> }>
              }
              const count = (body.resourceSpans ?? [])
                .flatMap((resource) => resource.scopeSpans ?? [])
                .reduce((n, scope) => n + (scope.spans?.length ?? 0), 0)
              Effect.runSync(Ref.update(spans, (n) => n + count))
            } catch {}
          }
          res.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      })
      server.listen(port, host, () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
  )

/** V8 stamps CPU profile samples with the same monotonic clock, in µs. */
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n)

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`

/** Loads one server on one route for `seconds`, measuring the server's CPU and event loop alongside. */
const measure = (server: Server, route: string, expected: number, connections: number, seconds: number) =>
  Effect.gen(function* () {
    const cpuBefore = yield* procCpuSeconds(server.pid)
    const loopBefore = yield* stats(server)
    const loadBefore = process.cpuUsage()
    const startedAt = performance.now()
    const result = yield* Effect.promise(() =>
      autocannon({ url: `${server.url}${route}`, connections, duration: seconds, pipelining: 1 })
    )
    const wall = (performance.now() - startedAt) / 1000
    const cpu = (yield* procCpuSeconds(server.pid)) - cpuBefore
    const loopAfter = yield* stats(server)
    const load = process.cpuUsage(loadBefore)
    const active = loopAfter.active - loopBefore.active
    const idle = loopAfter.idle - loopBefore.idle
    return {
      server: server.name,
      route,
      requestsPerSecond: result.requests.total / result.duration,
      p50: result.latency.p50,
      p99: result.latency.p99,
      failures: result.errors + result.timeouts + (expected < 300 ? result.non2xx : 0),
      cpu: (cpu / wall) * 100,
      loopBusy: (active / (active + idle)) * 100,
      cpuPerRequest: (cpu * 1e6) / Math.max(1, result.requests.total),
      loadCpu: ((load.user + load.system) / 1e6 / wall) * 100
    } satisfies Sample
  })

const orchestrate = (spans: Ref.Ref<number>) =>
  Effect.gen(function* () {
    const duration = numberOption("duration", 5)
    const warmup = numberOption("warmup", 2)
    const rounds = numberOption("rounds", 2)
    const connections = numberOption("connections", 50)
    const routes = (option("routes") ?? "/health,/nope").split(",")
    const cpuProfile = option("cpu-prof")

    const dataDir = yield* Effect.acquireRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-bench-"))),
      (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
    )
    const compare = flag("compare-telemetry")
    const sample = option("sample")
    let otlp: string | undefined
    if (flag("telemetry") || compare) {
      const sinkPort = yield* freePort
      yield* otlpSink(sinkPort, spans)
      otlp = `http://${host}:${sinkPort}`
    }

    const ribbonArgs = (dir: string, withTelemetry: boolean) => [
      "--data-dir",
      dir,
      ...(otlp === undefined || !withTelemetry ? [] : ["--otlp", otlp]),
      ...(sample === undefined ? [] : ["--sample", sample]),
      ...(flag("postgres") ? ["--postgres"] : [])
    ]
    const startedAt = performance.now()
    const ribbon = yield* startChild(
      "ribbon",
      yield* freePort,
      ribbonArgs(dataDir, !compare),
      cpuProfile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", Path.resolve(cpuProfile)]
    )
    yield* Console.log(
      `ribbon (pid ${ribbon.pid}) serving after ${((performance.now() - startedAt) / 1000).toFixed(1)} s`
    )
    // With --compare-telemetry, the same server with telemetry on, on a data directory of its own.
    const ribbons = [ribbon]
    if (compare) {
      const otelDir = yield* Effect.acquireRelease(
        Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-bench-"))),
        (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
      )
      const otel = yield* startChild("ribbon+otel", yield* freePort, ribbonArgs(otelDir, true), [])
      yield* Console.log(`ribbon+otel (pid ${otel.pid}) serving, telemetry on`)
      ribbons.push(otel)
    }
    const servers = (bare: Server) => [bare, ...ribbons]

    // The bare server answers each route with exactly what Ribbon answered.
    const canned: Record<string, Canned> = {}
    for (const route of ["/health", ...routes])
      canned[route] = yield* request(`${ribbon.url}${route}`).pipe(Effect.orDie)
    const bare = yield* startChild("bare", yield* freePort, ["--routes", JSON.stringify(canned)], [])

    const rssBeforeLoad = yield* procStatus(ribbon.pid, "VmRSS")
    const peakUnderLoad = yield* Ref.make(0)
    const sampler = yield* procStatus(ribbon.pid, "VmRSS").pipe(
      Effect.flatMap((rss) => Ref.update(peakUnderLoad, (peak) => Math.max(peak, rss))),
      Effect.repeat(Schedule.spaced("100 millis")),
      Effect.fork
    )

    /** When Ribbon was under measured load, to cut its CPU profile to those windows. */
    const windows: Array<readonly [number, number]> = []
    const samples: Array<Sample> = []
    for (const route of routes) {
      const expected = canned[route]!.status
      yield* Console.log(`${route} (answers ${expected}): ${warmup} s warm-up each, then ${rounds} × ${duration} s`)
      for (const server of servers(bare)) yield* measure(server, route, expected, connections, warmup)
      for (let round = 1; round <= rounds; round++) {
        for (const server of servers(bare)) {
          const from = monotonicMicros()
          const sample = yield* measure(server, route, expected, connections, duration)
          if (server === ribbon) windows.push([from, monotonicMicros()])
          samples.push(sample)
          yield* Console.log(
            `  ${server.name.padEnd(compare ? 11 : 6)} ${sample.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${sample.p50} ms  p99 ${sample.p99} ms  cpu ${sample.cpu.toFixed(0)} %  loop busy ${sample.loopBusy.toFixed(0)} %`
          )
        }
      }
    }
    yield* Fiber.interrupt(sampler)
    const peakLoadRss = yield* Ref.get(peakUnderLoad)
    const hwm = yield* procStatus(ribbon.pid, "VmHWM")

    const header = ["route", "server", "req/s", "p50 ms", "p99 ms", "cpu %", "loop busy %", "cpu µs/req", "failed"]
    const rows: Array<Array<string>> = [header]
    const ratios: Array<string> = []
    for (const route of routes) {
      const mean = (server: ServerName) => {
        const mine = samples.filter((s) => s.route === route && s.server === server)
        const avg = (f: (s: Sample) => number) => mine.reduce((n, s) => n + f(s), 0) / mine.length
        return {
          rps: avg((s) => s.requestsPerSecond),
          p50: avg((s) => s.p50),
          p99: avg((s) => s.p99),
          cpu: avg((s) => s.cpu),
          loopBusy: avg((s) => s.loopBusy),
          cpuPerRequest: avg((s) => s.cpuPerRequest),
          failed: mine.reduce((n, s) => n + s.failures, 0)
        }
      }
      for (const server of compare ? (["ribbon", "ribbon+otel", "bare"] as const) : (["ribbon", "bare"] as const)) {
        const m = mean(server)
        rows.push([
          route,
          server,
          m.rps.toFixed(0),
          m.p50.toFixed(1),
          m.p99.toFixed(1),
          m.cpu.toFixed(0),
          m.loopBusy.toFixed(0),
          m.cpuPerRequest.toFixed(0),
          String(m.failed)
        ])
      }
      ratios.push(`${route} ratio (ribbon/bare req/s): ${(mean("ribbon").rps / mean("bare").rps).toFixed(2)}`)
      if (compare)
        ratios.push(
          `${route} telemetry cost (ribbon+otel/ribbon cpu µs/req): ${(mean("ribbon+otel").cpuPerRequest / mean("ribbon").cpuPerRequest).toFixed(2)}`
        )
    }
    const widths = header.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
    const table = rows.map((row) =>
      row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ")
    )
    const loadCpu = samples.reduce((n, s) => Math.max(n, s.loadCpu), 0)
    yield* Console.log(
      [
        "",
        `${connections} connections, ${rounds} × ${duration} s per server and route after ${warmup} s warm-up; ` +
          `telemetry ${compare ? "off (ribbon) and on (ribbon+otel)" : otlp === undefined ? "off" : "on"}` +
          `${sample === undefined || otlp === undefined ? "" : `, sampling ${sample} of new traces`}; ${Os.cpus().length} cores, load average ${Os.loadavg()[0]!.toFixed(1)}`,
        "",
        ...table,
        "",
        ...ratios,
        `ribbon peak RSS under load: ${mb(peakLoadRss)} (${mb(rssBeforeLoad)} before load, ${mb(hwm)} peak since start); target ≤ 200 MB`,
        `autocannon (this process) used up to ${loadCpu.toFixed(0)} % of a core`
      ].join("\n")
    )
    return { windows, pid: ribbon.pid }
  })

// ---------------------------------------------------------------------------------------------------------
// The CPU profile, cut to the measured windows

interface ProfileNode {
  readonly id: number
  readonly children?: ReadonlyArray<number>
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** Where a frame's code lives: a package (and module), our source, node internals, or V8 (GC, idle). */
const origin = (node: ProfileNode) => {
  const { functionName, url } = node.callFrame
  if (url === "") return functionName
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg !== null) return pkg[1]!
  if (url.startsWith("node:")) return "node"
  return url.includes("/src/") ? "ribbon src" : url
}

const summarizeProfile = (dir: string, pid: number, windows: ReadonlyArray<readonly [number, number]>) =>
  Effect.gen(function* () {
    // The loader's worker thread writes a profile too: the main thread's is the largest.
    const file = Fs.readdirSync(dir)
      .filter((name) => name.endsWith(".cpuprofile") && name.includes(`.${pid}.`))
      .map((name) => Path.join(dir, name))
      .sort((a, b) => Fs.statSync(b).size - Fs.statSync(a).size)[0]
    if (file === undefined) return yield* Console.log(`no .cpuprofile for ${pid} in ${dir}`)
    // The measured windows beside the profile, to cut it again with other tools.
    Fs.writeFileSync(`${file}.windows.json`, JSON.stringify(windows))
    const profile = JSON.parse(Fs.readFileSync(file, "utf8")) as CpuProfile
    const byId = new Map(profile.nodes.map((node) => [node.id, node]))
    const parent = new Map(
      profile.nodes.flatMap((node) => (node.children ?? []).map((child) => [child, node.id] as const))
    )
    const label = (node: ProfileNode) => {
      const { functionName, url, lineNumber } = node.callFrame
      const where = url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(src|bench)\//, "$1/")
      return `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`
    }
    const times: Array<number> = []
    let time = profile.startTime
    for (const delta of profile.timeDeltas) {
      time += delta
      times.push(time)
    }
    const self = new Map<string, number>()
    const inclusive = new Map<string, number>()
    const origins = new Map<string, number>()
    const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us)
    let total = 0
    profile.samples.forEach((id, i) => {
      const at = times[i]!
      if (!windows.some(([from, to]) => at >= from && at < to)) return
      const us = profile.timeDeltas[i + 1] ?? 0
      const node = byId.get(id)!
      add(self, label(node), us)
      add(origins, origin(node), us)
      const seen = new Set<string>()
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) seen.add(label(byId.get(at)!))
      for (const key of seen) add(inclusive, key, us)
      total += us
    })
    const share = (entries: Map<string, number>, top: number) =>
      [...entries]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([name, us]) => `  ${((us / total) * 100).toFixed(1).padStart(5)} %  ${name}`)
    yield* Console.log(
      [
        "",
        `CPU profile ${file}: ${(total / 1e6).toFixed(1)} s sampled while Ribbon was measured`,
        "by origin (self time):",
        ...share(origins, 12),
        "top functions (self time):",
        ...share(self, 25),
        "top functions (inclusive time):",
        ...share(inclusive, 25)
      ].join("\n")
    )
  })

const main = Effect.gen(function* () {
  const spans = yield* Ref.make(0)
  const { windows, pid } = yield* Effect.scoped(orchestrate(spans))
  if (flag("telemetry") || flag("compare-telemetry"))
    yield* Console.log(`spans received by the OTLP sink: ${yield* Ref.get(spans)}`)
  const profileDir = option("cpu-prof")
  if (profileDir !== undefined) yield* summarizeProfile(profileDir, pid, windows)
})

// ---------------------------------------------------------------------------------------------------------

const serve = option("serve")
if (serve === "bare") {
  serveBare(Number(option("port")), JSON.parse(option("routes") ?? "{}") as Record<string, Canned>)
} else if (serve === "ribbon") {
  await serveRibbon(Number(option("port")), option("data-dir")!, option("otlp"), option("sample"), flag("postgres"))
} else {
  main.pipe(Effect.timeout(Duration.minutes(5)), NodeRuntime.runMain)
}
