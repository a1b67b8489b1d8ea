import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import {
  browserSuiteSkipped,
  expectSoundPage,
  focusedId,
  focusedText,
  launchChromium,
  tabUntil
} from "../../support/browser.js"
import { placeOrder } from "../../support/companyOrders.js"
import { newEmail, strongPassword } from "../../support/dashboard.js"
import { signedUpIdsOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"

/**
 * The orders pages in a real browser at 390 px wide: the list, an order, and its cancel confirm step with the
 * keyboard only; then a second order simulated to delivered, its timeline showing each status. Every page is checked
 * with axe (no serious or critical violation) and for sideways scrolling, and written to test-output/dashboard-orders*.png.
 */

const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

describe.skipIf(browserSuiteSkipped)("dashboard orders in chromium", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 120_000 })((it) => {
    it.effect(
      "at 390 px: lists orders, cancels one with the keyboard only, simulates another to delivered",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const email = newEmail("orders")
          const browser = yield* Effect.acquireRelease(
            Effect.promise(() => launchChromium()),
            (chromium) => Effect.promise(() => chromium.close())
          )
          const context = yield* Effect.promise(() =>
            browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true })
          )
          const page = yield* Effect.promise(() => context.newPage())
          yield* Effect.promise(async () => {
            await page.goto(`${baseUrl}/dashboard/sign-up`)
            await tabUntil(page, focusedId("email"), "the e-mail")
            await page.keyboard.type(email)
            await tabUntil(page, focusedId("password"), "the password")
            await page.keyboard.type(strongPassword)
            await tabUntil(page, focusedId("companyName"), "the company name")
            await page.keyboard.type("Ordering Gifts")
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard`)
          })
          const ids = yield* signedUpIdsOf(email)
          const delivered = yield* placeOrder(ids, "to-deliver", {
            firstName: "Grace",
            lastName: "Hopper",
            email: "grace@example.com"
          })
          const cancelled = yield* placeOrder(ids, "to-cancel", {
            firstName: "Ada",
            lastName: "Lovelace",
            email: "ada@example.com"
          })

          yield* Effect.promise(async () => {
            await tabUntil(page, focusedText("Orders"), "the Orders link")
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/orders`)
            expect(await page.locator("h1").textContent()).toBe("Orders")
            expect(await page.locator("tbody tr").count()).toBe(2)
            await expectSound(page, "orders")

            // The newest order, cancelled with the keyboard alone through the confirm step.
            await tabUntil(page, focusedText(cancelled), "the newest order's link")
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/orders/${cancelled}`)
            await expectSound(page, "orders-order")
            await tabUntil(page, focusedText("Cancel order"), "the cancel link")
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/orders/${cancelled}/cancel`)
            expect(await page.locator(".confirm").textContent()).toContain("is credited back to Test funds")
            await expectSound(page, "orders-cancel")
            await tabUntil(page, focusedId("reason"), "the reason")
            await page.keyboard.type("Ordered twice")
            await tabUntil(page, focusedText("Cancel the order"), "the confirm button")
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/orders/${cancelled}`)
            expect(await page.getByRole("status").textContent()).toMatch(
              /^Order cancelled: [\d.,]+ USD credited back to Test funds\.$/
            )
            expect(await page.locator("ol.timeline li").last().textContent()).toContain("Ordered twice")

            // The other order, moved to delivered by the sandbox's button.
            await page.goto(`${baseUrl}/dashboard/orders/${delivered}`)
            await page.getByRole("button", { name: "Move to Delivered" }).click()
            await page.waitForURL(`${baseUrl}/dashboard/orders/${delivered}`)
            await expect.poll(() => page.getByRole("status").textContent()).toBe("The shipment is now Delivered.")
            expect(await page.locator("ol.timeline li strong").allTextContents()).toEqual([
              "Placed",
              "Processing",
              "In transit",
              "Out for delivery",
              "Delivered"
            ])
            await expectSound(page, "orders-delivered")
          })
        }).pipe(Effect.scoped),
      90_000
    )
  })
})
