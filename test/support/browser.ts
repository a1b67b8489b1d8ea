import * as Fs from "node:fs"
import { chromium, type Page } from "playwright-core"

/**
 * A real browser for end-to-end tests: Debian's chromium, headless. Suites are skipped with
 * `describe.skipIf(noChromium)` when it is absent, so `npm test` passes on a machine without a browser.
 */

export const chromiumPath = "/usr/bin/chromium"

/** Headless, no sandbox (containers), and none of chromium's own background traffic. */
export const chromiumArgs: ReadonlyArray<string> = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** True when chromium is not installed: skip the suite. */
export const noChromium = !Fs.existsSync(chromiumPath)

/** Launches chromium; close the browser when done. */
export const launchChromium = () => chromium.launch({ executablePath: chromiumPath, args: [...chromiumArgs] })

const axeSource = Fs.readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8")

/** One accessibility rule a page breaks, as axe-core reports it. */
export interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly targets: ReadonlyArray<string>
}

/**
 * The serious and critical violations axe-core finds on the page as it is now (WCAG 2.x A and AA, and axe's best
 * practices). axe is run through the DevTools protocol (`page.evaluate`), which the page's Content-Security-Policy
 * does not govern, so the pages are checked under their real policy, without `bypassCSP`.
 */
export const checkAccessibility = async (page: Page): Promise<ReadonlyArray<AxeViolation>> => {
  const loaded = await page.evaluate("typeof window.axe !== 'undefined'")
  if (loaded !== true) await page.evaluate(axeSource)
  const violations = (await page.evaluate(`window.axe.run(document, { resultTypes: ["violations"] })
    .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      targets: v.nodes.map((n) => String(n.target)) })))`)) as ReadonlyArray<AxeViolation>
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical")
}

const screenshots = new URL("../../test-output/", import.meta.url)

/** A full-page screenshot at `test-output/<name>.png`. */
export const screenshot = async (page: Page, name: string) => {
  Fs.mkdirSync(screenshots, { recursive: true })
  await page.screenshot({ path: new URL(`${name}.png`, screenshots).pathname, fullPage: true })
}

/** Whether the page scrolls sideways at its current viewport (it should not: content wraps or scrolls in place). */
export const scrollsHorizontally = (page: Page) =>
  page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth") as Promise<boolean>
