import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { Page } from "playwright-core"
import type { AccountScope } from "../../../src/domain/company/Company.js"
import { Campaigns } from "../../../src/services/company/Campaigns.js"
import { Gifts } from "../../../src/services/company/Gifts.js"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import {
  browserSuiteSkipped,
  expectSoundPage,
  focusedId,
  focusedText,
  launchChromium,
  tabUntil
} from "../../support/browser.js"
import { newEmail, strongPassword } from "../../support/dashboard.js"
import { signedUpIdsOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"

/**
 * The gifts and campaigns pages in a real browser, at 390 px wide and with the keyboard only: from the gift list to a
 * gift, cancelling it through its confirm step; then the campaigns and a campaign. Every page is checked with axe (no
 * serious or critical violation) and for sideways scrolling, and written to test-output/dashboard-gift*.png and
 * dashboard-campaign*.png.
 */

const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

/** A campaign of the company's test account with a gift by e-mail to Ada Lovelace. */
const giftFor = (companyId: string) =>
  Effect.gen(function* () {
    const scope = { companyId, environment: "test", accountIds: "all" } as AccountScope
    const caller = { scope, account: Option.none(), source: null }
    const campaigns = yield* Campaigns
    const gifts = yield* Gifts
    const sql = yield* Effect.orDie(SqlClient.SqlClient)
    const [product] = yield* Effect.orDie(sql<{ id: string }>`SELECT id FROM products WHERE min_price_usd IS NOT NULL
      ORDER BY id LIMIT 1`)
    const campaign = yield* Effect.orDie(
      campaigns.create(caller, {
        name: "Spring thanks",
        status: "active",
        giftProperties: {
          selectedGiftType: "product",
          productId: product!.id,
          budget: { min: 10, max: 50 },
          expiration: { daysFromSend: 30 }
        },
        notificationPolicy: { sendingChannels: ["email"], disableReminders: false },
        message: "Thank you for a great year."
      })
    )
    yield* Effect.orDie(
      gifts.create(caller, {
        campaignId: campaign.id,
        sendingMethod: "email",
        recipients: [
          { firstname: "Ada", lastname: "Lovelace", email: "ada@example.com", phone: null, externalId: null, key: "a" }
        ]
      })
    )
  })

describe.skipIf(browserSuiteSkipped)("dashboard gifts in chromium", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 120_000 })((it) => {
    it.effect(
      "at 390 px, with the keyboard only: opens a gift from the list and cancels it through its confirm step",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const email = newEmail("gifts")
          const browser = yield* Effect.promise(() => launchChromium())
          try {
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
              await page.keyboard.type("Gifting Co")
              await page.keyboard.press("Enter")
              await page.waitForURL(`${baseUrl}/dashboard`)
            })
            const { companyId } = yield* signedUpIdsOf(email)
            yield* giftFor(companyId)
            yield* Effect.promise(async () => {
              await tabUntil(page, focusedText("Gifts"), "the Gifts link")
              await page.keyboard.press("Enter")
              await page.waitForURL(`${baseUrl}/dashboard/gifts`)
              expect(await page.locator("h1").textContent()).toBe("Gifts")
              await expectSound(page, "gifts")

              await tabUntil(page, focusedText("Ada Lovelace"), "the gift's link")
              await page.keyboard.press("Enter")
              await page.waitForURL(/\/dashboard\/gifts\/[0-9a-f]+$/)
              expect(await page.locator("h1").textContent()).toBe("Gift to Ada Lovelace")
              await expectSound(page, "gift")

              await tabUntil(page, focusedText("Cancel this gift…"), "the cancel link")
              await page.keyboard.press("Enter")
              await page.waitForURL(/\/cancel$/)
              await expectSound(page, "gift-cancel")
              await tabUntil(page, focusedText("Cancel the gift"), "the confirm button")
              await page.keyboard.press("Enter")
              await expect
                .poll(() => page.getByRole("status").textContent())
                .toContain("The gift is cancelled: 50.00 USD is credited back to its billing method.")
              await expectSound(page, "gift-cancelled")

              await page.goto(`${baseUrl}/dashboard/campaigns`)
              await expectSound(page, "campaigns")
              await tabUntil(page, focusedText("Spring thanks"), "the campaign's link")
              await page.keyboard.press("Enter")
              await page.waitForURL(/\/dashboard\/campaigns\/[0-9a-f]+$/)
              await expectSound(page, "campaign")
            })
          } finally {
            yield* Effect.promise(() => browser.close())
          }
        }),
      { timeout: 120_000 }
    )
  })
})
