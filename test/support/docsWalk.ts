import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Command } from "@effect/platform"
import { Effect, Ref } from "effect"
import { start } from "./cli.js"

/**
 * A page of the docs, walked: its `sh` blocks (the whole page's, or one section's), in order, in one bash
 * with `set -euo pipefail`, in a scratch directory that is also `HOME` (a page's `~` stays inside it).
 * `npm` runs in the repository, as a reader running the commands from the repository would. `replacements`
 * point the page's fixed addresses (`localhost:3000`, a receiver's port) at the test's free ones.
 *
 * What a page's markdown may say to the walk, in an HTML comment on the line before a block (invisible
 * once rendered):
 *
 * - `<!-- walk: background until "some text" -->`: the block is a long-running process that a reader
 *   leaves running in a terminal of its own (a receiver, the server). The walk starts it in the background
 *   (in its own process group), waits until its output shows `some text` (60 s at most, and fails at once
 *   if the process exits first), goes on with the next blocks, and stops it, with its children, when the
 *   walk ends. Its output is kept: `backgroundLog(n)` reads the nth such block's (from 1, in page order),
 *   and `awaited` names what it is to show once every block has run (a delivery a receiver prints).
 *
 * A command whose HTTP call is meant to succeed is written `curl -sS --fail-with-body`, so a refusal stops
 * the walk (and shows the reader the error); a call the page shows being refused stays `curl -s` and
 * prints what the page says it answers, for the test to find in the output.
 */

export const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url))

const has = (tool: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** Whether the tools the docs use are all here (bash, curl, jq, and whatever else a page names). */
export const missingTools = (...more: ReadonlyArray<string>) => !["bash", "curl", "jq", ...more].every(has)

const backgroundMarker = /^<!-- walk: background until "([^"]+)" -->\n$/

export interface Block {
  readonly code: string
  /** For a block marked to run in the background: the text its output shows once it is ready. */
  readonly readyWhen: string | undefined
}

/**
 * The `sh` blocks of a page, in order; of the section under `section` (a heading's text, up to the next
 * heading of the same or a higher level) when it is given.
 */
export const shellBlocks = (markdown: string, section?: string): ReadonlyArray<Block> => {
  const text = section === undefined ? markdown : sectionOf(markdown, section)
  const blocks = [...text.matchAll(/^(<!-- walk:[^\n]*-->\n)?```sh\n([\s\S]*?)^```$/gm)].map((match) => {
    const marker = match[1]
    if (marker !== undefined && !backgroundMarker.test(marker)) throw new Error(`Unknown walk marker: ${marker}`)
    return { code: match[2]!, readyWhen: marker === undefined ? undefined : backgroundMarker.exec(marker)![1] }
  })
  if (blocks.length === 0) throw new Error(`No sh block${section === undefined ? "" : ` in "${section}"`}`)
  return blocks
}

/** The lines under a heading, up to the next heading of its level or a higher one (outside code blocks). */
const sectionOf = (markdown: string, section: string) => {
  const lines = markdown.split("\n")
  let fenced = false
  let level = 0
  const kept: Array<string> = []
  for (const line of lines) {
    if (line.startsWith("```")) fenced = !fenced
    const heading = fenced ? null : /^(#+) (.*)$/.exec(line)
    if (heading !== null && level > 0 && heading[1]!.length <= level) break
    if (level > 0) kept.push(line)
    if (heading !== null && level === 0 && heading[2] === section) level = heading[1]!.length
  }
  if (level === 0) throw new Error(`No section "${section}"`)
  return kept.join("\n")
}

/** Shell functions the walk script starts with: the background blocks' start, wait and stop. */
const prelude = (logs: string) => `set -euo pipefail
set -m # each background block in a process group of its own, stopped whole
npm() { (cd ${JSON.stringify(repositoryRoot)} && command npm "$@"); }
walk_pids=()
walk_stop() {
  for pid in "\${walk_pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap walk_stop EXIT
trap 'exit 143' TERM INT
walk_wait() { # pid, log, text
  local deadline=$((SECONDS + 60))
  until grep -qF -- "$3" "$2"; do
    if ! kill -0 "$1" 2>/dev/null; then
      echo "walk: a background block exited before showing \\"$3\\":" >&2; cat "$2" >&2; return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "walk: a background block did not show \\"$3\\" within 60 s:" >&2; cat "$2" >&2; return 1
    fi
    sleep 0.1
  done
}
WALK_LOGS=${JSON.stringify(logs)}
`

/** What a background block's output is to show once the blocks have run, before it is stopped. */
export interface Awaited {
  /** The nth background block, from 1. */
  readonly background: number
  readonly shows: string
}

const backgroundLog = (n: number) => `"$WALK_LOGS/background-${n}.log"`

/**
 * The script that runs the blocks: a foreground block as it is, a background one started and waited for;
 * then what `awaited` names is waited for, as a reader watches a receiver's terminal.
 */
export const walkScript = (blocks: ReadonlyArray<Block>, logs: string, awaited: ReadonlyArray<Awaited> = []) => {
  let background = 0
  const steps = blocks.map(({ code, readyWhen }) => {
    if (readyWhen === undefined) return code
    const log = backgroundLog(++background)
    return `(\n${code}) > ${log} 2>&1 &\nwalk_pids+=($!)\nwalk_wait $! ${log} ${JSON.stringify(readyWhen)}\n`
  })
  const waits = awaited.map(
    ({ background: n, shows }) => `walk_wait "\${walk_pids[${n - 1}]}" ${backgroundLog(n)} ${JSON.stringify(shows)}`
  )
  return `${prelude(logs)}${[...steps, ...waits].join("\n")}\n`
}

export interface WalkOptions {
  /** The page, from the repository's root. */
  readonly page: string
  readonly section?: string
  readonly replacements: ReadonlyArray<readonly [string, string]>
  readonly env: Record<string, string>
  /** Output to wait for from background blocks once every block has run (a delivery on its way). */
  readonly awaited?: ReadonlyArray<Awaited>
}

/**
 * Walks a page (see above); the walk's exit code and output, and its scratch directory and background logs
 * while the scope is open.
 */
export const walkDocs = ({ page, section, replacements, env, awaited }: WalkOptions) =>
  Effect.gen(function* () {
    const scratch = yield* Effect.acquireRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-walk-"))),
      (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
    )
    const logs = Path.join(scratch, ".walk")
    Fs.mkdirSync(logs)
    const markdown = Fs.readFileSync(Path.join(repositoryRoot, page), "utf8")
    const replaced = (text: string) => replacements.reduce((result, [from, to]) => result.replaceAll(from, to), text)
    const blocks = shellBlocks(markdown, section).map(({ code, readyWhen }) => ({
      code: replaced(code),
      readyWhen: readyWhen === undefined ? undefined : replaced(readyWhen)
    }))
    const script = walkScript(blocks, logs, awaited)
    const walk = yield* start(
      Command.make("bash", "-c", script).pipe(
        Command.workingDirectory(scratch),
        Command.env({ HOME: scratch, NO_COLOR: "1", npm_config_update_notifier: "false", ...env })
      )
    )
    const code = yield* walk.exitCode("2 minutes")
    return {
      code,
      stdout: yield* Ref.get(walk.output.stdout),
      stderr: yield* Ref.get(walk.output.stderr),
      scratch,
      backgroundLog: (n: number) => Fs.readFileSync(Path.join(logs, `background-${n}.log`), "utf8")
    }
  })
