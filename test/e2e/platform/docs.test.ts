import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, RealPortServer } from "../../support/auth.js"
import { launchChromium, noChromium } from "../../support/browser.js"

/**
 * The API reference at `/docs` in a real browser (Debian's chromium), under the page's own
 * Content-Security-Policy: Scalar's bundle is served inline with the page and compiles WebAssembly, so a
 * policy without `'wasm-unsafe-eval'` leaves the page blank. Nothing is fetched from elsewhere. A screenshot
 * goes to test-output/e2e/. Skipped when /usr/bin/chromium is absent.
 */

const output = new URL("../../../test-output/e2e/", import.meta.url)

describe.skipIf(noChromium)("the API reference in chromium", () => {
  it.layer(RealPortServer, { timeout: 180_000 })((it) => {
    it.effect(
      "renders the operations under its Content-Security-Policy, from this server alone",
      () =>
        Effect.flatMap(BaseUrl, (baseUrl) =>
          Effect.promise(async () => {
            Fs.mkdirSync(output, { recursive: true })
            const browser = await launchChromium()
            try {
              const page = await browser.newPage()
              const violations: Array<string> = []
              page.on("console", (message) => {
                if (message.text().includes("Content Security Policy")) violations.push(message.text())
              })
              page.on("pageerror", (error) => violations.push(error.message))
              const elsewhere: Array<string> = []
              await page.route("**/*", (route) => {
                const url = route.request().url()
                if (url.startsWith(baseUrl) || url.startsWith("data:")) return route.continue()
                elsewhere.push(url)
                return route.abort()
              })
              const response = await page.goto(`${baseUrl}/docs`)
              expect(response?.headers()["content-security-policy"]).toContain("'wasm-unsafe-eval'")
              // An operation's summary in the sidebar, shown once the reference has rendered.
              await page
                .getByText("Liveness: the process serves requests")
                .first()
                .waitFor({ state: "visible", timeout: 120_000 })
              await page.screenshot({ path: new URL("docs.png", output).pathname })
              expect(violations).toEqual([])
              expect(elsewhere).toEqual([])
            } finally {
              await browser.close()
            }
          })
        ),
      180_000
    )
  })
})
