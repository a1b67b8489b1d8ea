import * as Fs from "node:fs"
import { chromium } from "playwright-core"

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
