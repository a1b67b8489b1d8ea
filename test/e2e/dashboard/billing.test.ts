import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { BaseUrl, makeRealPortServer } from "../../support/auth.js"
import {
  browserSuiteSkipped,
  expectSoundPage,
  focusedId,
  focusedText,
  launchChromium,
  tabUntil
} from "../../support/browser.js"
import { newEmail, strongPassword } from "../../support/dashboard.js"

/**
 * The billing pages in a real browser, at 390 px wide and with the keyboard only: from the methods to the test
 * method's ledger, adding test funds; every page checked with axe (no serious or critical violation) and for
 * sideways scrolling, and written to test-output/dashboard-billing*.png.
 */

const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

describe.skipIf(browserSuiteSkipped)("dashboard billing in chromium", () => {
  it.layer(makeRealPortServer(), { timeout: 90_000 })((it) => {
    it.effect("at 390 px, with the keyboard only: opens the test method's ledger and adds test funds", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        yield* Effect.promise(async () => {
          const browser = await launchChromium()
          try {
            const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true })
            const page = await context.newPage()
            await page.goto(`${baseUrl}/dashboard/sign-up`)
            await tabUntil(page, focusedId("email"), "the e-mail")
            await page.keyboard.type(newEmail("billing"))
            await tabUntil(page, focusedId("password"), "the password")
            await page.keyboard.type(strongPassword)
            await tabUntil(page, focusedId("companyName"), "the company name")
            await page.keyboard.type("Billing Gifts")
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard`)

            await tabUntil(page, focusedText("Billing"), "the Billing link")
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/billing`)
            expect(await page.locator("h1").textContent()).toBe("Billing")
            await expectSound(page, "billing")

            await tabUntil(page, focusedText("Test funds"), "the method's link")
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/dashboard\/billing\/[^/]+$/)
            expect(await page.getByText("No entries yet.").count()).toBe(1)
            await expectSound(page, "billing-ledger")

            await tabUntil(page, focusedId("amount"), "the amount")
            await page.keyboard.type("25")
            await page.keyboard.press("Enter")
            await expect
              .poll(() => page.getByRole("status").textContent())
              .toContain("Added test funds: 100,025.00 USD remain.")
            await expectSound(page, "billing-test-funds")
          } finally {
            await browser.close()
          }
        })
      })
    )
  })
})
