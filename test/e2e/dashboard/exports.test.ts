import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { BaseUrl } from "../../support/auth.js"
import { browserSuiteSkipped, expectSoundPage, launchChromium } from "../../support/browser.js"
import { makeCheckoutRealPortServer } from "../../support/checkout.js"
import { DashboardBrowser } from "../../support/dashboard.js"

/**
 * The exports pages in a real browser (Debian's chromium), against the served API with its own worker, at 390 px
 * wide and with the keyboard only: from the navigation to the exports page, a products export started with a
 * search filter, its page followed until it says completed, and its file downloaded from there. Every page passes
 * axe-core and does not scroll sideways; screenshots go to test-output/dashboard-exports*.png. Skipped as the other
 * browser suites are.
 */

const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

const focused = (page: Page) =>
  page.evaluate(
    "document.activeElement ? (document.activeElement.id || document.activeElement.textContent.trim()) : ''"
  ) as Promise<string>

/** Tabs forward until the focused element's id or text is `target` (at most 80 presses). */
const tabTo = async (page: Page, target: string) => {
  for (let i = 0; i < 80; i++) {
    if ((await focused(page)) === target) return
    await page.keyboard.press("Tab")
  }
  throw new Error(`Tab never reached ${target}`)
}

describe.skipIf(browserSuiteSkipped)("dashboard exports in chromium", () => {
  it.layer(makeCheckoutRealPortServer(), { timeout: 180_000 })((it) => {
    it.scoped(
      "at 390 px, with the keyboard only: starts a products export, follows it, downloads its file",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const browser = yield* Effect.acquireRelease(Effect.promise(launchChromium), (b) =>
            Effect.promise(() => b.close())
          )
          const http = new DashboardBrowser(baseUrl)
          yield* Effect.promise(() => http.signUp("Exports in Chromium"))
          yield* Effect.promise(async () => {
            const context = await browser.newContext({
              viewport: { width: 390, height: 844 },
              isMobile: true,
              acceptDownloads: true
            })
            await context.addCookies([
              {
                name: "ribbon_dashboard",
                value: http.cookies.get("ribbon_dashboard")!,
                url: `${baseUrl}/dashboard`,
                httpOnly: true,
                sameSite: "Lax"
              }
            ])
            const page = await context.newPage()
            await page.goto(`${baseUrl}/dashboard`)

            await tabTo(page, "Exports")
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/exports`)
            expect(await page.locator("h1").textContent()).toBe("Exports")
            await expectSound(page, "exports")

            await tabTo(page, "products-search")
            await page.keyboard.type("mug")
            await tabTo(page, "products-include-brand")
            await page.keyboard.press("Space")
            await tabTo(page, "Start products export")
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/dashboard\/exports\/[0-9a-f]{24}$/)
            expect(await page.locator("h1").textContent()).toBe("Products export")
            await expectSound(page, "exports-export")

            // The page follows the export by itself where JavaScript runs (no reload here).
            await expect
              .poll(() => page.locator("#export-status .badge").textContent(), { timeout: 30_000, interval: 250 })
              .toBe("completed")
            await expectSound(page, "exports-completed")

            await tabTo(page, "Download the US file (NDJSON)")
            const [download] = await Promise.all([page.waitForEvent("download"), page.keyboard.press("Enter")])
            expect(download.suggestedFilename()).toMatch(/^export-[0-9a-f]{24}-US\.ndjson$/)
            const path = await download.path()
            const lines = (await import("node:fs")).readFileSync(path, "utf8").trim().split("\n")
            expect(lines.length).toBeGreaterThan(0)
            expect(JSON.parse(lines[0]!).brand).toBeDefined()
            await context.close()
          })
        }),
      150_000
    )
  })
})
