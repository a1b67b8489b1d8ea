import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { freePort, healthy, option, root } from "./support.js"

/**
 * `npm run bench:memory`: the memory of `npm start` on its embedded default (PGlite in DATA_DIR, no
 * DATABASE_URL). Two starts on one new DATA_DIR: the first (initdb, migrations, demo catalog) and a
 * restart. For each: the kernel's high-water mark of the server's RSS (VmHWM, the true peak), the highest
 * RSS of the server and its child processes sampled every 100 ms (the same unless the server runs
 * children), and the RSS `--rest` seconds after /health first answers, split into anonymous memory and
 * mapped files. Each figure is also a ratio to a bare `node` process measured in the same run. RSS is
 * robust to the load on the machine; the time to /health is not, and the load is printed with it.
 *
 * The server runs the bundle with the environment variables and node flags of `npm start` (read from
 * package.json: `exec env NAME=value … node <flags> dist/ribbon.mjs serve`), or with `--env "NAME=value …"`
 * and `--node-flags "…"` (each may be ""); `--bundle` runs another build of the server than
 * dist/ribbon.mjs (which is rebuilt first, as `npm start` does, with its data-directory template). A
 * bundle uses the template beside it (`<its directory>/pgdata-template`) when there is one that matches,
 * and runs initdb in a child process otherwise, so a copy of dist/ribbon.mjs in a directory of its own
 * under the repository (for its node_modules) measures a first start without the template.
 *
 *   npm run bench:memory [-- --rest 20 --runs 1 --env "MALLOC_ARENA_MAX=2" --node-flags "--enable-source-maps" --bundle path/to/ribbon.mjs]
 */

const restSeconds = Number(option("rest", "20"))
const runs = Number(option("runs", "1"))

/** The environment variables (`env NAME=value …`) and node flags of package.json's start script. */
const startScript = (): { readonly env: string; readonly flags: string } => {
  const start: string = JSON.parse(Fs.readFileSync(Path.join(root, "package.json"), "utf8")).scripts.start
  const match = /(?:\benv\s+((?:\w+=\S*\s+)*))?\bnode\s+((?:-\S+\s+)*)dist\/ribbon\.mjs serve/.exec(start)
  if (match === null) throw new Error(`package.json: no "node … dist/ribbon.mjs serve" in the start script`)
  return { env: match[1] ?? "", flags: match[2] ?? "" }
}
/** The bundle to run: `npm start`'s, or another build to compare with (e.g. one of an earlier commit). */
const bundle = Path.resolve(root, option("bundle", "dist/ribbon.mjs"))
const words = (text: string) => text.split(/\s+/).filter((word) => word !== "")
const nodeFlags = words(option("node-flags", startScript().flags))
const startEnv: Record<string, string> = Object.fromEntries(
  words(option("env", startScript().env)).map((assignment) => {
    const at = assignment.indexOf("=")
    if (at < 1) throw new Error(`--env: "${assignment}" is not NAME=value`)
    return [assignment.slice(0, at), assignment.slice(at + 1)]
  })
)

interface Status {
  /** MB */
  readonly rss: number
  readonly hwm: number
  readonly anon: number
  readonly file: number
}

const status = (pid: number): Status | undefined => {
  try {
    const text = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
    const mb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0) / 1024
    return { rss: mb("VmRSS"), hwm: mb("VmHWM"), anon: mb("RssAnon"), file: mb("RssFile") }
  } catch {
    return undefined
  }
}

/** `pid` and its descendants. */
const tree = (pid: number): Array<number> => {
  const children: Array<number> = []
  try {
    for (const task of Fs.readdirSync(`/proc/${pid}/task`)) {
      const list = Fs.readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim()
      if (list !== "") children.push(...list.split(" ").map(Number))
    }
  } catch {
    // exited
  }
  return [pid, ...children.flatMap(tree)]
}

const treeRss = (pid: number) => tree(pid).reduce((sum, each) => sum + (status(each)?.rss ?? 0), 0)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const load = () =>
  Os.loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")

/** A bare node process, idle: the baseline of the ratios. */
const bareNode = async () => {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
  await sleep(1000)
  const rss = status(child.pid!)!.rss
  child.kill("SIGTERM")
  await new Promise((resolve) => child.once("exit", resolve))
  return rss
}

interface StartFigures {
  readonly healthMs: number
  /** VmHWM at rest: the server's peak over the whole run. */
  readonly peak: number
  /** The highest sampled RSS of the server and its children. */
  readonly treePeak: number
  readonly rest: Status
}

const measureStart = async (dataDir: string): Promise<StartFigures> => {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(process.execPath, [...nodeFlags, bundle, "serve"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    env: { PATH: process.env.PATH ?? "", PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "Warn", ...startEnv }
  })
  let treePeak = 0
  const sampler = setInterval(() => {
    treePeak = Math.max(treePeak, treeRss(child.pid!))
  }, 100)
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode})`)
      if (await healthy(port)) break
      if (performance.now() - started > 300_000) throw new Error("the server did not start within 5 minutes")
      await sleep(100)
    }
    const healthMs = performance.now() - started
    await sleep(restSeconds * 1000)
    const rest = status(child.pid!)!
    return { healthMs, peak: rest.hwm, treePeak: Math.max(treePeak, rest.hwm), rest }
  } finally {
    clearInterval(sampler)
    if (child.exitCode === null) {
      child.kill("SIGTERM")
      await new Promise((resolve) => child.once("exit", resolve))
    }
  }
}

const line = (label: string, f: StartFigures, bare: number) =>
  console.log(
    `${label.padEnd(12)} /health ${(f.healthMs / 1000).toFixed(1).padStart(5)} s | ` +
      `peak ${f.peak.toFixed(0).padStart(4)} MB (${(f.peak / bare).toFixed(1)}x node; with children ${f.treePeak.toFixed(0)}) | ` +
      `rest ${f.rest.rss.toFixed(0).padStart(4)} MB (${(f.rest.rss / bare).toFixed(1)}x node; ` +
      `anon ${f.rest.anon.toFixed(0)}, files ${f.rest.file.toFixed(0)}) | load ${load()}`
  )

await new Promise<void>((resolve, reject) =>
  spawn(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" }).on("exit", (code) =>
    code === 0 ? resolve() : reject(new Error("build failed"))
  )
)

for (let run = 1; run <= runs; run++) {
  const bare = await bareNode()
  const env = Object.entries(startEnv).map(([name, value]) => `${name}=${value} `)
  const template = Fs.existsSync(Path.join(Path.dirname(bundle), "pgdata-template")) ? "" : " (no template beside it)"
  console.log(
    `run ${run}: ${env.join("")}${["node", ...nodeFlags, Path.relative(root, bundle)].join(" ")} serve${template} | bare node ${bare.toFixed(0)} MB | ` +
      `rest = ${restSeconds} s after /health`
  )
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-memory-"))
  try {
    line("first start", await measureStart(dataDir), bare)
    line("restart", await measureStart(dataDir), bare)
  } finally {
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }
}
