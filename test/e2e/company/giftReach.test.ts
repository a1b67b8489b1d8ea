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
 * A gift that reaches any country, in a real browser (Debian's chromium) at a phone's width (390 px), with the
 * keyboard only (docs/decisions/0073-gifts-that-reach-any-country.md): the recipient lives in Brazil, where nothing
 * the campaign allows ships; the page starts on Brazil, offers digital gifts instead, and the recipient tabs to one,
 * gives a phone number (no address) and claims it. Every page is sound (`expectSoundPage`: no serious or critical
 * axe-core finding, no sideways scroll); screenshots go to test-output/gift-reach-*.png.
 */

/** A product with one physical variant that does not ship to BR. */
const physicalProduct = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [product] = yield* sql<{ id: string }>`
    SELECT p.id FROM products p JOIN variants v ON v.product_id = p.id JOIN variant_locations l ON l.variant_id = v.id
    WHERE v.price_usd IS NOT NULL AND NOT v.is_digital AND NOT 'BR' = ANY (l.ships_to)
      AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
    ORDER BY p.id LIMIT 1`
  return product!.id
}).pipe(Effect.orDie)

describe.skipIf(browserSuiteSkipped)("a gift that reaches any country, in chromium", () => {
  it.layer(makeCheckoutRealPortServer(), { timeout: 180_000 })((it) => {
    it.effect("a digital gift chosen and claimed with the keyboard only, at 390 px", () =>
      Effect.gen(function* () {
        const productId = yield* physicalProduct
        const { link, giftId, read } = yield* productGiftFor(productId, { budgetMax: 200, recipientCountry: "BR" })

        const seen = yield* Effect.promise(async () => {
          const browser = await launchChromium()
          try {
            const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
            const page = await context.newPage()
            await page.goto(link)
            await expectSoundPage(page, "gift-reach-landing")
            const expiry = await page.locator("#gift-expiry").textContent()
            // The country starts on the recipient's own.
            const country = await page.locator("#country").inputValue()
            await tabUntil(page, focusedText("See your gift options"), "the options button")
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/choices/)
            await expectSoundPage(page, "gift-reach-digital-choices")
            const offer = await page.locator("#digital-offer").textContent()
            const offered = await page.locator(".choice h3").allTextContents()
            await tabUntil(
              page,
              `document.activeElement && (document.activeElement.getAttribute("aria-label") || "").startsWith("Choose ")`,
              "the first Choose button"
            )
            const chosen = await page.evaluate(`document.activeElement.getAttribute("aria-label")`)
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/choose/)
            await expectSoundPage(page, "gift-reach-digital-form")
            const addressFields = await page.locator("#address1").count()
            await tabUntil(page, focusedId("phone"), "the phone field")
            await page.keyboard.type("+44 20 7946 0958")
            await tabUntil(page, focusedText("Claim gift"), "the claim button")
            await page.keyboard.press("Enter")
            await page.waitForSelector("#order-status")
            await expectSoundPage(page, "gift-reach-claimed")
            return {
              expiry,
              country,
              offer,
              offered,
              chosen,
              addressFields,
              heading: await page.locator("h1").textContent(),
              sentTo: await page.locator("#claimed-address").textContent()
            }
          } finally {
            await browser.close()
          }
        })
        expect(seen.expiry).toMatch(/^This gift expires on [A-Z][a-z]+ \d{1,2}, \d{4}\.$/)
        expect(seen.country).toBe("BR")
        expect(seen.offer).toContain("cannot be shipped to Brazil")
        expect(seen.offered.length).toBeGreaterThan(0)
        expect(seen.chosen).toBe(`Choose ${seen.offered[0]}`)
        expect(seen.addressFields).toBe(0)
        expect(seen.heading).toBe("Your gift is claimed")
        expect(seen.sentTo).toContain("grace@example.com")
        const gift = yield* read(`/public-api/v2/gifts/${giftId}`)
        expect(gift.body).toMatchObject({ status: "claimed", deliveryDetails: { countryCode: "BR" } })
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )
  })
})
