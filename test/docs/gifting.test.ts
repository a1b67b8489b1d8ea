import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { onPostgresRun, serve, tempDataDir, withNode } from "../support/cli.js"
import { missingTools, walkDocs } from "../support/docsWalk.js"

/**
 * docs/gifting.md, walked (test/support/docsWalk.ts) against `ribbon serve` on a free port. The page's
 * endpoint, `https://example.com/…`, needs DNS, which a test machine may lack: the walk points it at a
 * loopback address the server is told to allow, since registering only screens the address. Skipped
 * without bash, curl and jq, and on the Postgres run (the server runs on an embedded DATA_DIR either way).
 */

describe.skipIf(onPostgresRun || missingTools())("docs/gifting.md, walked", () => {
  it.scopedLive(
    "every command runs as written: a campaign, the endpoint, a gift, its claim, the refused cancel, the order moved to inTransit",
    () =>
      withNode(
        Effect.gen(function* () {
          const dataDir = yield* tempDataDir
          const server = yield* serve(dataDir, { WEBHOOKS_ALLOW_LOOPBACK: "true" })
          const walk = yield* walkDocs({
            page: "docs/gifting.md",
            replacements: [
              ["http://localhost:3000", server.url],
              ["https://example.com/hooks/ribbon", "https://127.0.0.1:9/hooks/ribbon"]
            ],
            env: { DATA_DIR: dataDir }
          })
          expect(walk.code, `${walk.stdout}\n${walk.stderr}`).toBe(0)
          expect(JSON.parse(Fs.readFileSync(Path.join(walk.scratch, "claim.json"), "utf8"))).toMatchObject({
            orderId: expect.stringMatching(/^[0-9a-f]{24}$/),
            status: "active"
          })
          expect(walk.stdout).toMatch(/"secret":\s*"whsec_/)
          // A `tee`d body ends without a newline, so the next command's output can share its line.
          expect(walk.stdout).toMatch(/UNPROCESSABLE_ENTITY$/m)
          const lines = walk.stdout.split("\n")
          expect(lines.filter((line) => line === "processing" || line === "inTransit")).toEqual([
            "processing",
            "inTransit"
          ])
          expect(walk.stdout).toContain('"status": "inTransit"')
          expect(walk.stdout).not.toMatch(/^null$/m)
        })
      ),
    180_000
  )
})
