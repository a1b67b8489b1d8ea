/**
 * `npm run bench:products`: `GET /public-api/v3/products` cursor pages over HTTP on a 100k-product catalog in
 * PostgreSQL. Each walker follows `links.next` from a first page, as a catalog mirror does.
 *
 *   npm run bench:products -- [--products 100000] [--walks 140] [--pages 15] [--concurrency N]
 *                             [--database ribbon_bench_catalog] [--slowest 5] [--cpu-prof DIR]
 *
 * 1. Creates the database (on the server named by DATABASE_URL, default the local one) unless it exists,
 *    migrates it, and seeds the demo catalog plus `--products` synthetic ones (resumable).
 * 2. Creates a test company whose rate limits never bite, and starts the server as `npm start` does.
 * 3. Builds a fixed mix of `--walks` walks: every sort (default, `createdAt`, `minPrice`, `title`, each both
 *    ways) with no filter, a country, a price range in a non-USD currency, the swag catalog, a search word, a
 *    tag or the digital type, and `include`/`fields` now and then; page sizes 100 (the default) and 300.
 * 4. Warms up on a tenth of the mix, then runs it with `--concurrency` walks at a time (default one per
 *    core), each walk following `links.next` for up to `--pages` pages. Every answer must be a 200.
 *
 * Prints p50/p95/p99 per page overall, per sort and per filter, against the target p95 ≤ 30 ms, then the
 * slowest pages. `--cpu-prof DIR` runs the server with `node --cpu-prof` (written into DIR when it stops).
 */

import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { rngFor } from "../src/services/catalog/seed/random.js"
import { seededCatalog } from "./catalog.js"
import { freePort, host, option, percentile, startServer } from "./support.js"

const products = Number(option("products", "100000"))
const walkCount = Number(option("walks", "140"))
const pagesPerWalk = Number(option("pages", "15"))
// One request in flight per core: more only queue, which measures the queue rather than a page.
const concurrency = Number(option("concurrency", String(Os.availableParallelism())))
const databaseName = option("database", "ribbon_bench_catalog")
const slowest = Number(option("slowest", "5"))
const cpuProfileDir = option("cpu-prof", "")

const sorts = ["", "createdAt", "-createdAt", "minPrice", "-minPrice", "title", "-title"]

/** The fixed mix of first pages, one URL per walk. */
const makeMix = (tags: ReadonlyArray<string>, count: number) => {
  const rng = rngFor("bench:products")
  const filters: ReadonlyArray<readonly [string, () => ReadonlyArray<string>]> = [
    ["none", () => []],
    ["country", () => [`filter[country]=${rng.pick(["US", "JP", "GB", "DE", "CA"])}`]],
    [
      "price JPY",
      () => [
        "filter[country]=JP",
        `filter[price][gte]=${rng.int(10, 40) * 100}`,
        `filter[price][lte]=${rng.int(50, 150) * 100}`
      ]
    ],
    ["price GBP", () => ["filter[country]=GB", `filter[price][lte]=${rng.int(10, 60) * 100}`]],
    ["swag", () => ["filter[catalog]=swag"]],
    ["search", () => [`filter[search]=${rng.pick(["mug", "candle", "tote", "notebook", "coffee", "socks"])}`]],
    ["tagId", () => [`filter[tagId]=${rng.pick(tags)}`]],
    ["digital", () => ["filter[type]=digital"]]
  ]
  return Array.from({ length: count }, (_, i) => {
    const sort = sorts[i % sorts.length]!
    const [filter, filterParams] = rng.pick(filters)
    const params = [
      ...(sort === "" ? [] : [`sort=${sort}`]),
      ...filterParams(),
      ...(rng.chance(0.3) ? ["include=brand,tags"] : []),
      ...(rng.chance(0.3) ? ["fields=priceRange,variantsCount,options"] : []),
      ...(rng.chance(0.2) ? ["page[size]=300"] : [])
    ]
    return { sort: sort === "" ? "(default)" : sort, filter, url: `/public-api/v3/products?${params.join("&")}` }
  })
}

const agent = new Http.Agent({ keepAlive: true, maxSockets: concurrency })

/** One page: its latency and the next link. */
const getPage = (port: number, path: string, apiKey: string) =>
  new Promise<{ millis: number; next: string | null; items: number }>((resolve, reject) => {
    const t0 = performance.now()
    const request = Http.get({ host, port, path, agent, headers: { "x-api-key": apiKey } }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const millis = performance.now() - t0
        if (response.statusCode !== 200) {
          reject(new Error(`${path} answered ${response.statusCode}: ${Buffer.concat(chunks).toString()}`))
          return
        }
        const body = JSON.parse(Buffer.concat(chunks).toString()) as {
          data: Array<unknown>
          links: { next: string | null }
        }
        resolve({ millis, next: body.links.next, items: body.data.length })
      })
    })
    request.on("error", reject)
  })

interface Walk {
  readonly sort: string
  readonly filter: string
  readonly url: string
}

interface PageTiming extends Walk {
  readonly millis: number
}

/** Runs the walks, `concurrency` at a time; every page's latency. */
const run = async (port: number, apiKey: string, walks: ReadonlyArray<Walk>) => {
  const timings: Array<PageTiming> = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < walks.length) {
        const walk = walks[next++]!
        let url: string | null = walk.url
        for (let page = 0; page < pagesPerWalk && url !== null; page++) {
          const result: { millis: number; next: string | null } = await getPage(port, url, apiKey)
          timings.push({ ...walk, millis: result.millis, url })
          url = result.next
        }
      }
    })
  )
  return { timings, seconds: (performance.now() - started) / 1000 }
}

const main = async () => {
  const { databaseUrl, apiKey, tags, count } = await seededCatalog({
    database: databaseName,
    products,
    companyName: "bench:products",
    unlimited: ["global", "marketplace:read"]
  })
  const mix = makeMix(tags, walkCount)
  const port = await freePort()
  const server = await startServer(
    port,
    { DATABASE_URL: databaseUrl.toString(), PUBLIC_URL: `http://${host}:${port}` },
    cpuProfileDir === "" ? [] : ["--cpu-prof", "--cpu-prof-dir", Path.resolve(cpuProfileDir)]
  )
  try {
    await run(port, apiKey, mix.slice(0, Math.ceil(mix.length / 10)))
    const { timings, seconds } = await run(port, apiKey, mix)
    const ms = (n: number) => n.toFixed(2).padStart(7)
    const line = (label: string, values: ReadonlyArray<number>) =>
      `| ${label.padEnd(10)} | ${String(values.length).padStart(5)} | ${ms(percentile(values, 50))} | ${ms(percentile(values, 95))} | ${ms(percentile(values, 99))} |`
    console.log(
      `${mix.length} walks of up to ${pagesPerWalk} pages on ${count.toLocaleString("en-US")} products; ` +
        `${concurrency} in flight; ${(timings.length / seconds).toFixed(0)} pages/s`
    )
    const table = (title: string, key: "sort" | "filter", labels: ReadonlyArray<string>) => {
      console.log(`\n| ${title.padEnd(10)} | pages |  p50 ms |  p95 ms |  p99 ms |`)
      console.log("|------------|-------|---------|---------|---------|")
      console.log(
        line(
          "all",
          timings.map((t) => t.millis)
        )
      )
      for (const label of labels) {
        const values = timings.filter((t) => t[key] === label).map((t) => t.millis)
        if (values.length > 0) console.log(line(label, values))
      }
    }
    table("sort", "sort", ["(default)", ...sorts.slice(1)])
    table("filter", "filter", ["none", "country", "price JPY", "price GBP", "swag", "search", "tagId", "digital"])
    const p95 = percentile(
      timings.map((t) => t.millis),
      95
    )
    console.log(`\np95 per page ${p95.toFixed(1)} ms (target ≤ 30): ${p95 <= 30 ? "met" : "NOT met"}`)
    if (slowest > 0) {
      console.log("\nslowest pages:")
      for (const t of [...timings].sort((a, b) => b.millis - a.millis).slice(0, slowest)) {
        console.log(`${ms(t.millis)} ms  ${decodeURIComponent(t.url)}`)
      }
    }
  } finally {
    agent.destroy()
    server.kill("SIGTERM")
  }
}

await main()
