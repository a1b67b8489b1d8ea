import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { freePort, onPostgresRun, tempDataDir, withNode } from "../support/cli.js"
import { missingTools, walkDocs } from "../support/docsWalk.js"

/**
 * docs/webhooks.md's "Receiving webhooks locally", walked (test/support/docsWalk.ts): the certificate, the
 * receiver and `npm start` with `WEBHOOKS_ALLOW_LOOPBACK` and `NODE_EXTRA_CA_CERTS` (both left running, as
 * the page says), then a company, its endpoint on the receiver and an event, which the receiver prints.
 * The page's ports (3000, 8443) are pointed at free ones. Skipped without bash, curl, jq and openssl, and on
 * the Postgres run (the server runs on an embedded DATA_DIR either way).
 */

describe.skipIf(onPostgresRun || missingTools("openssl"))("docs/webhooks.md's local receiver, walked", () => {
  it.scopedLive(
    "the recipe works as written: the receiver prints the delivery of the event the sandbox triggered",
    () =>
      withNode(
        Effect.gen(function* () {
          const dataDir = yield* tempDataDir
          const port = yield* freePort
          const receiverPort = yield* freePort
          const walk = yield* walkDocs({
            page: "docs/webhooks.md",
            section: "Receiving webhooks locally",
            replacements: [
              ["localhost:3000", `127.0.0.1:${port}`],
              ["8443", String(receiverPort)]
            ],
            env: { DATA_DIR: dataDir, PORT: String(port) },
            // The delivery is on its way when the last command returns: the walk waits for the receiver to print it.
            awaited: [{ background: 1, shows: "POST /hooks/ribbon" }]
          })
          expect(walk.code, `${walk.stdout}\n${walk.stderr}`).toBe(0)
          expect(walk.stdout).toContain(`"url": "https://localhost:${receiverPort}/hooks/ribbon"`)
          expect(walk.stdout).toMatch(/"secret": "whsec_/)
          expect(walk.stdout).toMatch(/^[1-9]\d*$/m) // the changes the stock event carries
          const delivery = walk
            .backgroundLog(1)
            .split("\n")
            .find((line) => line.startsWith("POST /hooks/ribbon "))!
          const [, webhookId, body] = /^POST \/hooks\/ribbon (\S+) (.*)$/.exec(delivery)!
          expect(webhookId).toMatch(/^[0-9a-f]{24}$/)
          expect(JSON.parse(body!)).toMatchObject({
            webhookData: { id: webhookId, eventType: "stock-availability-updates" },
            eventData: { accountId: null }
          })
          const { changes } = JSON.parse(body!).eventData
          expect(changes.length).toBeGreaterThan(0)
          expect(changes).toContainEqual(expect.objectContaining({ countryCode: "GB", available: false }))
        })
      ),
    180_000
  )
})
