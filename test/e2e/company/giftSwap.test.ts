import { FetchHttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  browserSuiteSkipped,
  expectSoundPage,
  focusedId,
  focusedText,
  launchChromium,
  tabUntil
} from "../../support/browser.js"
import { makeCheckoutRealPortServer } from "../../support/checkout.js"
import { productGiftFor } from "../../support/giftLinks.js"

/**
 * Swapping a gift within its budget in a real browser (Debian's chromium), keyboard only, on a phone's width (390
 * px), against the seeded server on a real loopback port (docs/decisions/0072-swapping-a-gift-within-budget.md): the
 * recipient opens the link, sees the sender's product, follows "See other gifts", chooses another product, fills
 * the address and claims; the claimed page names the product picked, and the v2 gift says what it was swapped
 * from. Every page is sound (no serious or critical axe-core finding, no sideways scroll) and its screenshot goes to
 * test-output/gift-swap-*.png. Skipped as `browserSuiteSkipped` says.
 */

/** A marketplace product with one variant shipping to GB with stock, its item at 10 to 40 USD. */
const originalProduct = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [product] = yield* sql<{ id: string; title: string }>`
    SELECT p.id, p.title FROM products p JOIN variants v ON v.product_id = p.id
      JOIN variant_locations l ON l.variant_id = v.id
    WHERE p.catalog = 'marketplace' AND v.price_usd BETWEEN 1000 AND 4000 AND NOT v.is_digital AND l.stock > 100
      AND 'GB' = ANY (l.ships_to) AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
    ORDER BY p.id DESC LIMIT 1`
  return product!
})

/** Tabs to the field with this id and types `text` into it. */
const typeInto = async (page: import("playwright-core").Page, id: string, text: string) => {
  await tabUntil(page, focusedId(id), id)
  await page.keyboard.type(text)
}

describe.skipIf(browserSuiteSkipped)("swapping a gift in chromium", () => {
  it.layer(makeCheckoutRealPortServer(), { timeout: 180_000 })((it) => {
    it.effect("See other gifts, another chosen and claimed with the keyboard only, at 390 px", () =>
      Effect.gen(function* () {
        const original = yield* originalProduct
        const { link, giftId, read, campaign } = yield* productGiftFor(original.id, { key: "swap", budgetMax: 150 })
        expect(campaign.customization.giftProperties.swap).toBe("within_budget")

        const seen = yield* Effect.promise(async () => {
          const browser = await launchChromium()
          try {
            // A browser in English for the United Kingdom: the country starts at GB.
            const context = await browser.newContext({
              javaScriptEnabled: false,
              locale: "en-GB",
              viewport: { width: 390, height: 844 }
            })
            const page = await context.newPage()
            await page.goto(link)
            await expectSoundPage(page, "gift-swap-1-landing")
            expect(await page.getByLabel("Country").inputValue()).toBe("GB")
            await tabUntil(page, focusedText("See your gift options"), "See your gift options")
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/choices/)
            const sendersChoice = await page.locator(".choice h3").allTextContents()
            await expectSoundPage(page, "gift-swap-2-choices")

            await tabUntil(page, focusedId("other-gifts"), "See other gifts")
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/others/)
            const others = await page.locator(".choice h3").allTextContents()
            await expectSoundPage(page, "gift-swap-3-other-gifts")
            const picked = others[0]!
            await tabUntil(
              page,
              `document.activeElement && document.activeElement.getAttribute("aria-label") === ${JSON.stringify(`Choose ${picked}`)}`,
              `Choose ${picked}`
            )
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/choose/)
            const formHeading = await page.locator("h2").textContent()
            await expectSoundPage(page, "gift-swap-4-claim-form")

            // Name and e-mail come filled from the recipient; the rest is typed.
            await typeInto(page, "phone", "+44 20 7946 0958")
            await typeInto(page, "address1", "10 Downing Street")
            await typeInto(page, "city", "London")
            await typeInto(page, "zipcode", "SW1A 2AA")
            await tabUntil(page, focusedText("Claim gift"), "Claim gift")
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/claim/)
            const heading = await page.locator("h1").textContent()
            const item = await page.locator("#claimed-item").textContent()
            await expectSoundPage(page, "gift-swap-5-claimed")
            return { sendersChoice, others, picked, formHeading, heading, item }
          } finally {
            await browser.close()
          }
        })
        expect(seen.sendersChoice).toEqual([original.title])
        expect(seen.others.length).toBeGreaterThan(0)
        expect(seen.others).not.toContain(original.title)
        expect(seen.formHeading).toBe(seen.picked)
        expect(seen.heading).toBe("Your gift is claimed")
        expect(seen.item?.startsWith(`${seen.picked} — `)).toBe(true)

        const gift = yield* read(`/public-api/v2/gifts/${giftId}?expand[]=orders`)
        expect(gift.body.status).toBe("claimed")
        expect(gift.body.swappedFrom).toEqual({ productId: original.id, title: original.title })
        expect(gift.body.orders[0].lineItems[0].title.startsWith(`${seen.picked} — `)).toBe(true)
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )
  })
})
