import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Command } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { onPostgresRun, serve, start, tempDataDir, withNode } from "../support/cli.js"

/**
 * docs/gifting.md, walked: every `sh` block of the page, in order, in one bash with `set -e`, in a scratch
 * directory, against `ribbon serve` on a free port (the page's `localhost:3000` pointed there). `npm`
 * runs in the repository, as a reader running the commands from the repository would. Skipped without
 * bash, curl and jq, and on the Postgres run (the server runs on an embedded DATA_DIR either way).
 */

const root = fileURLToPath(new URL("../..", import.meta.url))

const has = (tool: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}
const missingTools = !["bash", "curl", "jq"].every(has)

/** The page's `sh` blocks, in order. */
export const shellBlocks = (markdown: string) => [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)

describe.skipIf(onPostgresRun || missingTools)("docs/gifting.md, walked", () => {
  it.scopedLive(
    "every command runs as written: a campaign, a gift, its claim, the refused cancel, the order moved to inTransit",
    () =>
      withNode(
        Effect.gen(function* () {
          const dataDir = yield* tempDataDir
          const server = yield* serve(dataDir)
          const scratch = yield* Effect.acquireRelease(
            Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-walk-"))),
            (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
          )
          const markdown = Fs.readFileSync(Path.join(root, "docs/gifting.md"), "utf8")
          const script = [
            "set -euo pipefail",
            `npm() { (cd ${JSON.stringify(root)} && command npm "$@"); }`,
            ...shellBlocks(markdown)
          ]
            .join("\n")
            .replaceAll("http://localhost:3000", server.url)
          const walk = yield* start(
            Command.make("bash", "-c", script).pipe(
              Command.workingDirectory(scratch),
              Command.env({ DATA_DIR: dataDir, NO_COLOR: "1" })
            )
          )
          const code = yield* walk.exitCode("4 minutes")
          const stdout = yield* Ref.get(walk.output.stdout)
          const stderr = yield* Ref.get(walk.output.stderr)
          expect(code, `${stdout}\n${stderr}`).toBe(0)
          expect(JSON.parse(Fs.readFileSync(Path.join(scratch, "claim.json"), "utf8"))).toMatchObject({
            orderId: expect.stringMatching(/^[0-9a-f]{24}$/),
            status: "active"
          })
          // A `tee`d body ends without a newline, so the next command's output can share its line.
          expect(stdout).toMatch(/UNPROCESSABLE_ENTITY$/m)
          const lines = stdout.split("\n")
          expect(lines.filter((line) => line === "processing" || line === "inTransit")).toEqual([
            "processing",
            "inTransit"
          ])
          expect(stdout).toContain('"status": "inTransit"')
          expect(stdout).not.toMatch(/^null$/m)
        })
      ),
    360_000
  )
})
