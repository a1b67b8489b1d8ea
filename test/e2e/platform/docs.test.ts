import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, RealPortServer } from "../../support/auth.js"
import { browserSuiteSkipped, checkAccessibility, launchChromium } from "../../support/browser.js"

/**
 * The API reference at `/docs` in a real browser (Debian's chromium), under the page's own
 * Content-Security-Policy: Scalar's bundle is served inline with the page and compiles WebAssembly, so a
 * policy without `'wasm-unsafe-eval'` leaves the page blank. Nothing is fetched from elsewhere; axe-core finds
 * nothing but Scalar's own (listed below). A screenshot goes to test-output/e2e/. Skipped as
 * `browserSuiteSkipped` says (no chromium, or the run on a Postgres server).
 */

const output = new URL("../../../test-output/e2e/", import.meta.url)

/**
 * What axe-core finds in Scalar's own markup, which no setting of its configuration changes short of hiding its
 * sidebar, search and client examples: each rule with its impact and why. Anything else fails the test (its
 * colours, which it did break, are set by our `customCss` in src/layers/Server.ts).
 * - aria-allowed-attr (critical): the sidebar's entries are buttons carrying `aria-selected`, which only options,
 *   tabs and grid cells may carry;
 * - aria-required-children (critical): the client-libraries `tablist` holds plain buttons, not `tab`s;
 * - button-name (critical): the sidebar's search opener (`role="search"` on a button) has no accessible name;
 * - html-has-lang (serious): the page around Scalar is @effect/platform's HttpApiScalar shell, `<html>` without `lang`;
 * - label-content-name-mismatch (serious): "Show more" buttons labelled "Show all … endpoints";
 * - list and listitem (serious): the sidebar's `ul`s hold `div` wrappers around their `li`s;
 * - scrollable-region-focusable (serious): a tag's scrolled list of endpoints takes no keyboard focus.
 */
const scalarFindings: Record<string, string> = {
  "aria-allowed-attr": "critical",
  "aria-required-children": "critical",
  "button-name": "critical",
  "html-has-lang": "serious",
  "label-content-name-mismatch": "serious",
  list: "serious",
  listitem: "serious",
  "scrollable-region-focusable": "serious"
}

describe.skipIf(browserSuiteSkipped)("the API reference in chromium", () => {
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
              const findings = await checkAccessibility(page)
              const unexplained = findings.filter((v) => scalarFindings[v.id] !== v.impact)
              expect(unexplained, "axe findings on /docs beyond Scalar's own").toEqual([])
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
