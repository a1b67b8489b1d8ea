import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { BaseUrl, makeRealPortServer } from "../../support/auth.js"
import { browserSuiteSkipped, expectSoundPage, launchChromium } from "../../support/browser.js"
import { newEmail, strongPassword } from "../../support/dashboard.js"

/**
 * The dashboard in a real browser (Debian's chromium): sign up, see the company as a sandbox, sign out and in
 * again; the sign-up once more with the keyboard only (Tab, typing, Enter); every page visited checked with
 * axe-core (no serious or critical violation) and, at 390 px wide, for sideways scrolling. Screenshots go to
 * test-output/dashboard-*.png. Skipped as `browserSuiteSkipped` says (no chromium, or the run on a Postgres server).
 */

/** axe's serious and critical findings on the page, and whether it scrolls sideways: none and no. */
const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

/** Tabs forward until the element with `id` has the focus (at most 20 presses). */
const tabTo = async (page: Page, id: string) => {
  for (let i = 0; i < 20; i++) {
    if ((await page.evaluate("document.activeElement && document.activeElement.id")) === id) return
    await page.keyboard.press("Tab")
  }
  throw new Error(`Tab never reached #${id}`)
}

describe.skipIf(browserSuiteSkipped)("dashboard in chromium", () => {
  it.layer(makeRealPortServer(), { timeout: 180_000 })((it) => {
    it.effect("signs up, sees the sandbox company, signs out and in again; every page passes axe", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const email = newEmail("browser")
        yield* Effect.promise(async () => {
          const browser = await launchChromium()
          try {
            const context = await browser.newContext({ viewport: { width: 1200, height: 900 } })
            const page = await context.newPage()
            const errors: Array<string> = []
            page.on("console", (message) => {
              // Statuses the test asks for (400, 404) are logged as failed loads; anything else (a CSP refusal) counts.
              if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
                errors.push(message.text())
              }
            })

            await page.goto(`${baseUrl}/dashboard`)
            expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in")
            await page.getByRole("link", { name: "Create your company" }).click()
            await expectSound(page, "sign-up")

            // A weak password first: the page says why, beside the field.
            await page.getByLabel("Email").fill(email)
            await page.getByLabel("Password").fill("password")
            await page.getByLabel("Company name").fill("Browser Gifts")
            await page.getByRole("button", { name: "Create company" }).click()
            await expect.poll(() => page.locator("#password-error").textContent()).toContain("Too common")
            await expectSound(page, "sign-up-error")

            await page.getByLabel("Password").fill(strongPassword)
            await page.getByRole("button", { name: "Create company" }).click()
            await page.waitForURL(`${baseUrl}/dashboard`)
            await expect.poll(() => page.locator("h1").textContent()).toBe("Browser Gifts")
            expect(await page.locator("header .badge").textContent()).toBe("Sandbox")
            expect(await page.getByRole("table").textContent()).toContain("Test (sandbox)")
            await expectSound(page, "home")

            await page.getByRole("button", { name: "Sign out" }).click()
            await page.waitForURL(`${baseUrl}/dashboard/sign-in`)
            expect(await page.getByRole("status").textContent()).toContain("You are signed out.")
            await expectSound(page, "sign-in")

            await page.getByLabel("Email").fill(email)
            await page.getByLabel("Password").fill(strongPassword)
            await page.getByRole("button", { name: "Sign in" }).click()
            await page.waitForURL(`${baseUrl}/dashboard`)
            expect(await page.locator("h1").textContent()).toBe("Browser Gifts")

            await page.goto(`${baseUrl}/dashboard/no-such-page`)
            await expectSound(page, "not-found")
            expect(errors).toEqual([])
          } finally {
            await browser.close()
          }
        })
      })
    )

    it.effect("at 390 px wide, with the keyboard only: signs up and reaches home", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        yield* Effect.promise(async () => {
          const browser = await launchChromium()
          try {
            const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true })
            const page = await context.newPage()
            await page.goto(`${baseUrl}/dashboard/sign-up`)
            await expectSound(page, "sign-up-390")

            await tabTo(page, "email")
            await page.keyboard.type(newEmail("keyboard"))
            await tabTo(page, "password")
            await page.keyboard.type(strongPassword)
            await tabTo(page, "companyName")
            await page.keyboard.type("Keyboard Gifts with a rather long company name")
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard`)
            expect(await page.locator("h1").textContent()).toBe("Keyboard Gifts with a rather long company name")
            await expectSound(page, "home-390")

            // The navigation and the sign-out button are reachable by Tab, and Enter signs out.
            const sections: Array<string> = []
            for (let i = 0; i < 20; i++) {
              await page.keyboard.press("Tab")
              sections.push(String(await page.evaluate("document.activeElement.textContent.trim()")))
            }
            expect(sections).toEqual(
              expect.arrayContaining([
                "Skip to content",
                "Sign out",
                "Home",
                "Send gifts",
                "Orders",
                "API keys",
                "Members",
                "Audit log"
              ])
            )
            while ((await page.evaluate("document.activeElement.textContent.trim()")) !== "Sign out") {
              await page.keyboard.press("Shift+Tab")
            }
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/sign-in`)
          } finally {
            await browser.close()
          }
        })
      })
    )
  })
})
