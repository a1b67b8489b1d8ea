import * as Fs from "node:fs"
import { expect } from "@effect/vitest"
import { chromium, type Page } from "playwright-core"
import { onPostgresRun } from "./cli.js"

/**
 * A real browser for end-to-end tests: Debian's chromium, headless. Every suite in test/e2e is declared
 * `describe.skipIf(browserSuiteSkipped)`: skipped when chromium is absent, so `npm test` passes on a machine
 * without a browser, and on the run against a Postgres server (docs/decisions/0061-browser-tests-run-once.md).
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

/** True when chromium is not installed. */
export const noChromium = !Fs.existsSync(chromiumPath)

/**
 * Whether this run skips the browser suites: without chromium, and on the run against a Postgres server, since
 * the pages call the same services the HTTP tests cover on both databases (the browser suites run once, on the
 * embedded database).
 */
export const browserSuiteSkipped = noChromium || onPostgresRun

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

/** Whether the page's timers fire: they do not where the page's context has JavaScript turned off. */
const timersFire = new WeakMap<Page, boolean>()

const probeTimers = async (page: Page): Promise<boolean> => {
  const known = timersFire.get(page)
  if (known !== undefined) return known
  const fired = page.evaluate("new Promise((resolve) => setTimeout(() => resolve(true), 0))").catch(() => false)
  const fires = (await Promise.race([fired, new Promise((resolve) => setTimeout(() => resolve(false), 2000))])) === true
  timersFire.set(page, fires)
  return fires
}

/**
 * The serious and critical violations axe-core finds on the page as it is now (WCAG 2.x A and AA, and axe's best
 * practices). axe is run through the DevTools protocol (`page.evaluate`), which the page's Content-Security-Policy
 * does not govern, so the pages are checked under their real policy, without `bypassCSP`. With JavaScript off, the
 * page's timers never fire and axe, which yields with zero-delay timers, would never finish: for the run, those
 * become microtasks (longer ones, axe's timeouts for frames, never fire, as on such a page anyway).
 */
export const checkAccessibility = async (page: Page): Promise<ReadonlyArray<AxeViolation>> => {
  const loaded = await page.evaluate("typeof window.axe !== 'undefined'")
  if (loaded !== true) await page.evaluate(axeSource)
  const shimTimers = !(await probeTimers(page))
  const violations = (await page.evaluate(`(async (shimTimers) => {
    const setTimeout = window.setTimeout
    if (shimTimers) window.setTimeout = (run, delay, ...args) => {
      if (!delay) Promise.resolve().then(() => run(...args))
      return 0
    }
    try {
      const result = await window.axe.run(document, { resultTypes: ["violations"] })
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
        targets: v.nodes.map((n) => String(n.target)) }))
    } finally {
      window.setTimeout = setTimeout
    }
  })(${shimTimers})`)) as ReadonlyArray<AxeViolation>
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical")
}

const screenshots = new URL("../../test-output/", import.meta.url)

/** A full-page screenshot at `test-output/<name>.png` (`name` may name folders: `gift-page/fr/landing`). */
export const screenshot = async (page: Page, name: string) => {
  const path = new URL(`${name}.png`, screenshots).pathname
  Fs.mkdirSync(new URL(".", new URL(`${name}.png`, screenshots)), { recursive: true })
  await page.screenshot({ path, fullPage: true })
}

/** Whether the page scrolls sideways at its current viewport (it should not: content wraps or scrolls in place). */
export const scrollsHorizontally = (page: Page) =>
  page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth") as Promise<boolean>

/**
 * What every page a browser test visits must be: no serious or critical axe-core violation, no sideways scroll at
 * its viewport; its screenshot goes to `test-output/<name>.png`.
 */
export const expectSoundPage = async (page: Page, name: string) => {
  expect(await checkAccessibility(page), `${name}: accessibility`).toEqual([])
  expect(await scrollsHorizontally(page), `${name}: scrolls sideways`).toBe(false)
  await screenshot(page, name)
}

/** Presses Tab until `script` (evaluated in the page) holds of the focused element; fails after `presses`. */
export const tabUntil = async (page: Page, script: string, what: string, presses = 80) => {
  for (let i = 0; i < presses; i++) {
    if (await page.evaluate(script)) return
    await page.keyboard.press("Tab")
  }
  throw new Error(`Tab never reached ${what}`)
}

/** Scripts for `tabUntil`: the focused element has this id, this text, or this accessible label. */
export const focusedId = (id: string) => `document.activeElement && document.activeElement.id === ${JSON.stringify(id)}`
export const focusedText = (text: string) =>
  `document.activeElement && document.activeElement.textContent.trim() === ${JSON.stringify(text)}`
export const focusedLabel = (label: string) =>
  `document.activeElement && document.activeElement.getAttribute("aria-label") === ${JSON.stringify(label)}`
