/**
 * `npm run bench:export`: a catalog export of a 100k-product catalog in PostgreSQL, for one location, and
 * the server's memory while it runs.
 *
 *   npm run bench:export -- [--products 100000] [--location US] [--database ribbon_bench_catalog]
 *
 * 1. Seeds (or reuses) the catalog database `bench:products` uses, makes a test company whose limits never
 *    bite, and starts the server as `npm start` does.
 * 2. Baseline, in the same run: the same listing walked over HTTP, `GET /v3/products?filter[country]=…`
 *    pages of 300 one after another, as an integrator without exports would mirror the catalog.
 * 3. The export, twice: `POST /v3/products/exports` for the location, polled every 250 ms until completed,
 *    with the server's RSS sampled every 50 ms. Before each, 3.5 s of rest, whose median RSS is "at rest":
 *    the first shows what an export costs a server that has only served pages, the second whether a second
 *    one costs more (memory that grew with the catalog would).
 * 4. After another rest, the file downloaded from its signed URL (streamed, lines counted), sampled alike.
 *
 * `SERVER_NODE_FLAGS` passes flags to the server's node (GC settings, to compare).
 *
 * Prints wall time and lines/s of each against the walk, and each one's peak RSS against its rest: the goal
 * is peak ≤ rest + 50 MB.
 */

import * as Fs from "node:fs"
import * as Http from "node:http"
import { performance } from "node:perf_hooks"
import { seededCatalog } from "./catalog.js"
import { freePort, host, option, startServer } from "./support.js"

const products = Number(option("products", "100000"))
const location = option("location", "US")
const databaseName = option("database", "ribbon_bench_catalog")

const agent = new Http.Agent({ keepAlive: true, maxSockets: 4 })

interface Answer {
  readonly status: number
  readonly body: string
}

const request = (port: number, method: string, path: string, apiKey: string, body?: unknown) =>
  new Promise<Answer>((resolve, reject) => {
    const req = Http.request(
      {
        host,
        port,
        path,
        method,
        agent,
        headers: { "x-api-key": apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) }
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () =>
          resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString("utf8") })
        )
      }
    )
    req.on("error", reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })

const expectOk = async (answer: Promise<Answer>, status: number, what: string) => {
  const got = await answer
  if (got.status !== status) throw new Error(`${what}: ${got.status}: ${got.body.slice(0, 500)}`)
  return JSON.parse(got.body)
}

/** The server's resident set size, in MB. */
const rssOf = (pid: number) => {
  const line = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))!
  return Number(line.replace(/\D+/g, "")) / 1024
}

/** Samples the RSS every `everyMs` until `stop` is called; returns the samples. */
const sampling = (pid: number, everyMs: number) => {
  const samples: Array<number> = []
  const timer = setInterval(() => samples.push(rssOf(pid)), everyMs)
  samples.push(rssOf(pid))
  return {
    stop: () => {
      clearInterval(timer)
      samples.push(rssOf(pid))
      return samples
    }
  }
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** The whole listing for the location over HTTP, page after page; lines and seconds. */
const walk = async (port: number, apiKey: string) => {
  const started = performance.now()
  let lines = 0
  let next: string | null = `/public-api/v3/products?filter[country]=${location}&page[size]=300`
  while (next !== null) {
    const page: { data: Array<unknown>; links: { next: string | null } } = await expectOk(
      request(port, "GET", next, apiKey),
      200,
      "a product page"
    )
    lines += page.data.length
    next = page.links.next
  }
  return { lines, seconds: (performance.now() - started) / 1000 }
}

/** Downloads a file, counting lines and bytes without keeping it. */
const download = (url: string) =>
  new Promise<{ lines: number; bytes: number; seconds: number }>((resolve, reject) => {
    const started = performance.now()
    Http.get(url, { agent }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`download: ${response.statusCode}`))
        return
      }
      let lines = 0
      let bytes = 0
      response.on("data", (chunk: Buffer) => {
        bytes += chunk.length
        for (const byte of chunk) if (byte === 10) lines += 1
      })
      response.on("end", () => resolve({ lines, bytes, seconds: (performance.now() - started) / 1000 }))
    }).on("error", reject)
  })

const main = async () => {
  const { databaseUrl, apiKey, count } = await seededCatalog({
    database: databaseName,
    products,
    companyName: "bench:export",
    unlimited: ["global", "marketplace:read", "marketplace:write"]
  })
  const port = await freePort()
  const server = await startServer(
    port,
    { DATABASE_URL: databaseUrl.toString(), PUBLIC_URL: `http://${host}:${port}` },
    (process.env.SERVER_NODE_FLAGS ?? "").split(" ").filter(Boolean)
  )
  const pid = server.pid!
  try {
    const listed = await walk(port, apiKey)
    /** The RSS median over 3 s of rest, after half a second for the last work to settle. */
    const rest = async () => {
      await new Promise((resolve) => setTimeout(resolve, 500))
      const sampler = sampling(pid, 100)
      await new Promise((resolve) => setTimeout(resolve, 3000))
      return median(sampler.stop())
    }
    /** One export for the location, start → completed, with the RSS sampled every 50 ms. */
    const runExport = async () => {
      const sampler = sampling(pid, 50)
      const started = performance.now()
      const created = await expectOk(
        request(port, "POST", "/public-api/v3/products/exports", apiKey, { locations: [location] }),
        202,
        "starting the export"
      )
      let exported: { status: string; downloadUrls: Record<string, string> | null }
      do {
        await new Promise((resolve) => setTimeout(resolve, 250))
        exported = (
          await expectOk(
            request(port, "GET", `/public-api/v3/products/exports/${created.data.id}`, apiKey),
            200,
            "reading the export"
          )
        ).data
      } while (exported.status === "pending" || exported.status === "processing")
      const seconds = (performance.now() - started) / 1000
      if (exported.status !== "completed") throw new Error(`the export ended ${exported.status}`)
      return { seconds, peak: Math.max(...sampler.stop()), url: exported.downloadUrls![location]! }
    }

    const restBeforeFirst = await rest()
    const first = await runExport()
    const restBeforeSecond = await rest()
    const second = await runExport()
    const restBeforeDownload = await rest()
    const downloadSampler = sampling(pid, 50)
    const file = await download(second.url)
    const peakDownload = Math.max(...downloadSampler.stop())
    if (file.lines !== listed.lines) throw new Error(`the file has ${file.lines} lines, the listing ${listed.lines}`)

    const mb = (n: number) => `${n.toFixed(1)} MB`
    console.log(
      `catalog: ${count.toLocaleString("en-US")} products; ${listed.lines.toLocaleString("en-US")} in ${location}`
    )
    console.log("\n| what | lines | seconds | lines/s | RSS at rest before | peak | peak − rest |")
    console.log("|---|---|---|---|---|---|---|")
    const row = (what: string, seconds: number, before: number, peak: number) =>
      console.log(
        `| ${what} | ${file.lines} | ${seconds.toFixed(1)} | ${(file.lines / seconds).toFixed(0)} | ${mb(before)} | ${mb(peak)} | ${mb(peak - before)} |`
      )
    row("first export (start → completed)", first.seconds, restBeforeFirst, first.peak)
    row("second export", second.seconds, restBeforeSecond, second.peak)
    row(`download (${(file.bytes / 1024 / 1024).toFixed(1)} MB)`, file.seconds, restBeforeDownload, peakDownload)
    console.log(
      `| baseline: GET /v3/products pages of 300 | ${listed.lines} | ${listed.seconds.toFixed(1)} | ${(listed.lines / listed.seconds).toFixed(0)} | | | |`
    )
    console.log(
      `\nexport ÷ baseline, lines/s: first ${(listed.seconds / first.seconds).toFixed(2)}, second ${(listed.seconds / second.seconds).toFixed(2)}`
    )
    const deltas = [first.peak - restBeforeFirst, second.peak - restBeforeSecond, peakDownload - restBeforeDownload]
    console.log(
      `goal: peak ≤ rest + 50 MB: first export ${deltas[0]! <= 50 ? "met" : "NOT met"}, second ${deltas[1]! <= 50 ? "met" : "NOT met"}, download ${deltas[2]! <= 50 ? "met" : "NOT met"}`
    )
  } finally {
    agent.destroy()
    server.kill("SIGTERM")
  }
}

await main()
