import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { onPostgresRun, serve, tempDataDir, withNode } from "../support/cli.js"
import { missingTools, walkDocs } from "../support/docsWalk.js"

/**
 * docs/company-api.md's "The sandbox, step by step", walked (test/support/docsWalk.ts) against `ribbon serve`
 * on a free port. Skipped without bash, curl and jq, and on the Postgres run (the server runs on an embedded
 * DATA_DIR either way).
 */

describe.skipIf(onPostgresRun || missingTools())("docs/company-api.md's sandbox, walked", () => {
  it.scopedLive(
    "every command runs as written: a company, $VARIANT, an order in $ORDER moved to delivered, a second one cancelled, the refused cancel",
    () =>
      withNode(
        Effect.gen(function* () {
          const dataDir = yield* tempDataDir
          const server = yield* serve(dataDir)
          const walk = yield* walkDocs({
            page: "docs/company-api.md",
            section: "The sandbox, step by step",
            replacements: [["localhost:3000", server.url.replace("http://", "")]],
            env: { DATA_DIR: dataDir }
          })
          expect(walk.code, `${walk.stdout}\n${walk.stderr}`).toBe(0)
          const order = JSON.parse(Fs.readFileSync(Path.join(walk.scratch, "order.json"), "utf8"))
          expect(order.data).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]{24}$/), status: "active" })
          expect(walk.stdout).toMatch(/^HTTP\/1\.1 201/m)
          const lines = walk.stdout.split("\n")
          expect(lines.filter((line) => line.startsWith('["'))).toEqual([
            '["active","unfulfilled","processing"]',
            '["active","unfulfilled","inTransit"]',
            '["active","unfulfilled","outForDelivery"]',
            '["completed","fulfilled","delivered"]',
            '["cancelled","Wrong size"]'
          ])
          expect(lines.at(-2)).toBe("422_ORDS_002")
          expect(walk.stdout).not.toMatch(/^null$/m)
        })
      ),
    180_000
  )
})
