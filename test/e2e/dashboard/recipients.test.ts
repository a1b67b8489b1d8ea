import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { browserSuiteSkipped, expectSoundPage, focusedText, launchChromium, tabUntil } from "../../support/browser.js"
import { newEmail, strongPassword } from "../../support/dashboard.js"
import { signedUpIdsOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"
import { alan, grace, seedRecipients } from "../../support/recipients.js"

/**
 * The recipients and catalog pages in a real browser at 390 px wide: a recipient erased with the keyboard only,
 * from the list through its page and the confirm step; the catalog priced for another country. Every page checked
 * with axe (no serious or critical violation) and for sideways scrolling, and written to
 * test-output/dashboard-recipients*.png and dashboard-catalog*.png.
 */

const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

describe.skipIf(browserSuiteSkipped)("dashboard recipients and catalog in chromium", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 120_000 })((it) => {
    it.effect(
      "at 390 px: erases a recipient with the keyboard only; prices the catalog for another country",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const email = newEmail("recipients")
          yield* Effect.acquireUseRelease(
            Effect.promise(() => launchChromium()),
            (browser) =>
              Effect.gen(function* () {
                const context = yield* Effect.promise(() =>
                  browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true })
                )
                const page = yield* Effect.promise(() => context.newPage())
                yield* Effect.promise(async () => {
                  await page.goto(`${baseUrl}/dashboard/sign-up`)
                  await page.getByLabel("Email").fill(email)
                  await page.getByLabel("Password").fill(strongPassword)
                  await page.getByLabel("Company name").fill("Recipient Gifts")
                  await page.getByRole("button", { name: "Create company" }).click()
                  await page.waitForURL(`${baseUrl}/dashboard`)
                })
                const { companyId, userId } = yield* signedUpIdsOf(email)
                yield* seedRecipients(companyId, userId, [grace, alan])

                yield* Effect.promise(async () => {
                  await page.goto(`${baseUrl}/dashboard/recipients`)
                  expect(await page.locator("h1").textContent()).toBe("Recipients")
                  await expectSound(page, "recipients")

                  // The keyboard only, from the list to the erasure.
                  await tabUntil(page, focusedText("Grace Hopper"), "the recipient's link")
                  await page.keyboard.press("Enter")
                  await page.waitForURL(/\/dashboard\/recipients\/[0-9a-f]+$/)
                  await expectSound(page, "recipient")
                  await tabUntil(page, focusedText("Erase recipient"), "the erase link")
                  await page.keyboard.press("Enter")
                  await page.waitForURL(/\/erase$/)
                  await expectSound(page, "recipient-erase")
                  await tabUntil(
                    page,
                    `${focusedText("Erase recipient")} && document.activeElement.tagName === "BUTTON"`,
                    "the confirm button"
                  )
                  await page.keyboard.press("Enter")
                  await page.waitForURL(`${baseUrl}/dashboard/recipients`)
                  await expect.poll(() => page.getByRole("status").textContent()).toContain("personal data is erased")
                  expect(await page.getByRole("link", { name: "Grace Hopper" }).count()).toBe(0)
                  expect(await page.getByRole("link", { name: "Alan Turing" }).count()).toBe(1)

                  // The catalog, priced for the United States, then for Japan.
                  await page.goto(`${baseUrl}/dashboard/catalog`)
                  expect(await page.locator("caption").textContent()).toBe(
                    "Products, priced for a gift sent to United States"
                  )
                  await expectSound(page, "catalog")
                  await page.getByLabel("Send to").selectOption("JP")
                  await page.getByRole("button", { name: "Filter" }).click()
                  await page.waitForURL(/country=JP/)
                  expect(await page.locator("caption").textContent()).toBe("Products, priced for a gift sent to Japan")
                  expect(await page.locator("td", { hasText: "JPY" }).count()).toBeGreaterThan(0)
                  await expectSound(page, "catalog-japan")
                })
              }),
            (browser) => Effect.promise(() => browser.close())
          )
        }),
      90_000
    )
  })
})
