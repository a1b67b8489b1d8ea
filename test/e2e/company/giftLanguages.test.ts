import { FetchHttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { type GiftLanguage, giftLanguages, languageCookie } from "../../../src/domain/company/GiftLanguages.js"
import { BaseUrl } from "../../support/auth.js"
import {
  browserSuiteSkipped,
  expectSoundPage,
  focusedId,
  focusedLabel,
  focusedText,
  launchChromium,
  tabUntil
} from "../../support/browser.js"
import { makeCheckoutRealPortServer } from "../../support/checkout.js"
import { productGiftFor } from "../../support/giftLinks.js"

/**
 * The gift page in the recipient's language, in a real browser (Debian's chromium) at a phone's width (390 px)
 * (docs/decisions/0074-gift-page-languages.md): a browser asking for French (`Accept-Language: fr-FR`) gets the page
 * in French and claims with the keyboard alone; an English browser switches to Japanese with the page's switcher, by
 * keyboard, and claims in Japanese. Then every step of the page in every language — landing, choices, other gifts,
 * the claim form, its refusal, the claimed page, the thank-you note, digital gifts, a country nothing reaches, an
 * expired link, an unknown one — each sound (`expectSoundPage`: no serious or critical axe-core finding, no sideways
 * scroll) and screenshotted to test-output/gift-page/<language>/.
 */

/** A marketplace product with one variant at 10 to 40 USD shipping to FR, US and GB (so others fit its budget). */
const sharedProduct = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [product] = yield* sql<{ id: string; title: string }>`
    SELECT p.id, p.title FROM products p JOIN variants v ON v.product_id = p.id
      JOIN variant_locations l ON l.variant_id = v.id
    WHERE p.catalog = 'marketplace' AND v.price_usd BETWEEN 1000 AND 4000 AND NOT v.is_digital AND l.stock > 100
      AND l.ships_to @> ARRAY['FR', 'US', 'GB'] AND NOT 'BR' = ANY (l.ships_to)
      AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
    ORDER BY p.id LIMIT 1`
  return product!
}).pipe(Effect.orDie)

/** Tabs to the field with this id and types `text` into it. */
const typeInto = async (page: Page, id: string, text: string) => {
  await tabUntil(page, focusedId(id), id)
  await page.keyboard.type(text)
}

/** Tabs to the button whose accessible name starts with `prefix` (the first "Choose …") and presses it. */
const chooseFirst = async (page: Page, prefix: string) => {
  await tabUntil(
    page,
    `document.activeElement && (document.activeElement.getAttribute("aria-label") || "").startsWith(${JSON.stringify(prefix)})`,
    `the first ${prefix}…`
  )
  await page.keyboard.press("Enter")
}

const phone = { width: 390, height: 844 }

describe.skipIf(browserSuiteSkipped)("the gift page in the recipient's language, in chromium", () => {
  it.layer(makeCheckoutRealPortServer(), { timeout: 240_000 })((it) => {
    it.effect(
      "in French for Accept-Language fr-FR, and in Japanese after the switcher, claimed with the keyboard",
      () =>
        Effect.gen(function* () {
          const product = yield* sharedProduct
          const french = yield* productGiftFor(product.id, { key: "fr" })
          const japanese = yield* productGiftFor(product.id, { key: "ja" })

          const seen = yield* Effect.promise(async () => {
            const browser = await launchChromium()
            try {
              // French: the browser asks for it; the country starts at France.
              const fr = await (
                await browser.newContext({ javaScriptEnabled: false, locale: "fr-FR", viewport: phone })
              ).newPage()
              await fr.goto(french.link)
              await expectSoundPage(fr, "gift-page/keyboard/fr-1-landing")
              const frLanding = {
                lang: await fr.getAttribute("html", "lang"),
                heading: await fr.locator("h1").textContent(),
                expiry: await fr.locator("#gift-expiry").textContent(),
                country: await fr.getByLabel("Pays").inputValue()
              }
              await tabUntil(fr, focusedText("Voir vos cadeaux possibles"), "Voir vos cadeaux possibles")
              await fr.keyboard.press("Enter")
              await fr.waitForURL(/\/choices/)
              await expectSoundPage(fr, "gift-page/keyboard/fr-2-choices")
              await chooseFirst(fr, "Choisir ")
              await fr.waitForURL(/\/choose/)
              await expectSoundPage(fr, "gift-page/keyboard/fr-3-form")
              await typeInto(fr, "phone", "+33 6 12 34 56 78")
              await typeInto(fr, "address1", "10 Rue de Rivoli")
              await typeInto(fr, "city", "Paris")
              await typeInto(fr, "zipcode", "75001")
              await tabUntil(fr, focusedText("Recevoir le cadeau"), "Recevoir le cadeau")
              await fr.keyboard.press("Enter")
              await fr.waitForSelector("#order-status")
              await expectSoundPage(fr, "gift-page/keyboard/fr-4-claimed")
              const frClaimed = {
                heading: await fr.locator("h1").textContent(),
                status: await fr.locator("#order-status").textContent(),
                address: await fr.locator("#claimed-address").textContent()
              }

              // Japanese: an English browser, switched with the page's own switcher, by keyboard.
              const ja = await (
                await browser.newContext({ javaScriptEnabled: false, locale: "en-US", viewport: phone })
              ).newPage()
              await ja.goto(japanese.link)
              const before = await ja.getAttribute("html", "lang")
              await tabUntil(ja, focusedId("language"), "the language select")
              // 日本語 is the last of the six.
              for (let i = 0; i < giftLanguages.length; i++) await ja.keyboard.press("ArrowDown")
              await tabUntil(ja, focusedText("Change language"), "Change language")
              await ja.keyboard.press("Enter")
              await ja.waitForSelector('html[lang="ja"]')
              await expectSoundPage(ja, "gift-page/keyboard/ja-1-landing")
              const jaLanding = {
                heading: await ja.locator("h1").textContent(),
                expiry: await ja.locator("#gift-expiry").textContent(),
                country: await ja.getByLabel("国", { exact: true }).inputValue(),
                cookie: (await ja.context().cookies()).find((c) => c.name === languageCookie)
              }
              await tabUntil(ja, focusedText("ギフトの選択肢を見る"), "ギフトの選択肢を見る")
              await ja.keyboard.press("Enter")
              await ja.waitForURL(/\/choices/)
              await expectSoundPage(ja, "gift-page/keyboard/ja-2-choices")
              await tabUntil(ja, focusedLabel(`${product.title}を選ぶ`), `${product.title}を選ぶ`)
              await ja.keyboard.press("Enter")
              await ja.waitForURL(/\/choose/)
              await expectSoundPage(ja, "gift-page/keyboard/ja-3-form")
              await typeInto(ja, "phone", "+1 202 456 1111")
              await typeInto(ja, "address1", "1600 Pennsylvania Avenue NW")
              await typeInto(ja, "city", "Washington")
              await typeInto(ja, "state", "DC")
              await typeInto(ja, "zipcode", "20500")
              await tabUntil(ja, focusedText("ギフトを受け取る"), "ギフトを受け取る")
              await ja.keyboard.press("Enter")
              await ja.waitForSelector("#order-status")
              await expectSoundPage(ja, "gift-page/keyboard/ja-4-claimed")
              const jaClaimed = {
                heading: await ja.locator("h1").textContent(),
                status: await ja.locator("#order-status").textContent(),
                address: await ja.locator("#claimed-address").textContent()
              }
              return { frLanding, frClaimed, before, jaLanding, jaClaimed }
            } finally {
              await browser.close()
            }
          })
          expect(seen.frLanding).toMatchObject({ lang: "fr", heading: "Grace, vous avez un cadeau", country: "FR" })
          expect(seen.frLanding.expiry).toMatch(/^Ce cadeau expire le \d{1,2} [a-zéû]+ \d{4}\.$/)
          expect(seen.frClaimed).toMatchObject({ heading: "Votre cadeau est demandé", status: "Commande reçue" })
          expect(seen.frClaimed.address).toContain("France")

          expect(seen.before).toBe("en")
          expect(seen.jaLanding).toMatchObject({ heading: "Graceさん、ギフトが届いています", country: "US" })
          expect(seen.jaLanding.expiry).toMatch(/^このギフトの有効期限は\d{4}年\d{1,2}月\d{1,2}日です。$/)
          expect(seen.jaLanding.cookie).toMatchObject({ value: "ja", path: "/g", httpOnly: true, sameSite: "Lax" })
          expect(seen.jaClaimed).toMatchObject({ heading: "ギフトを受け取りました", status: "注文を受け付けました" })
          expect(seen.jaClaimed.address).toContain("アメリカ合衆国")
          // The reminders of the gift switched follow it.
          const sql = yield* SqlClient.SqlClient
          const [picked] = yield* sql<{ language: string }>`SELECT language FROM gifts WHERE id = ${japanese.giftId}`
          expect(picked!.language).toBe("ja")
        }).pipe(Effect.provide(FetchHttpClient.layer))
    )

    it.effect(
      "every step in every language is sound at 390 px, and screenshotted",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const product = yield* sharedProduct
          const perLanguage = yield* Effect.forEach(giftLanguages, (language) =>
            productGiftFor(product.id, { key: `every-${language}`, budgetMax: 150 })
          )
          // Nothing the campaign allows ships to Brazil: digital gifts instead; at 1 USD, not even those.
          const digital = yield* productGiftFor(product.id, { key: "digital", budgetMax: 200, recipientCountry: "BR" })
          const nowhere = yield* productGiftFor(product.id, { key: "nowhere", budgetMax: 1, recipientCountry: "BR" })
          const expired = yield* productGiftFor(product.id, { key: "expired" })
          expect((yield* expired.post(`/public-api/v2/gifts/${expired.giftId}/expire`, {})).status).toBe(200)

          const headings = yield* Effect.promise(async () => {
            const browser = await launchChromium()
            const seen: Record<string, Array<string>> = {}
            /** One language's walk through every step, in a context of its own (its cookie set as the switcher does). */
            const walk = async (language: GiftLanguage, link: string) => {
              const context = await browser.newContext({ javaScriptEnabled: false, viewport: phone, locale: "en-US" })
              await context.addCookies([{ name: languageCookie, value: language, url: `${baseUrl}/g/` }])
              const page = await context.newPage()
              const shot = (step: string) => expectSoundPage(page, `gift-page/${language}/${step}`)
              const heading = async () => (await page.locator("h1").textContent()) ?? ""
              const h1s: Array<string> = []
              seen[language] = h1s

              await page.goto(link)
              await shot("01-landing")
              h1s.push(await heading())
              await page.goto(`${link}/choices?country=US`)
              await shot("02-choices")
              await page.goto(`${link}/others?country=US`)
              await shot("03-other-gifts")
              await page.goto(`${link}/choose?productId=${product.id}&country=US`)
              await shot("04-claim-form")
              // A phone the browser takes and the claim refuses: the problem beside its field.
              await page.fill("#phone", "not a phone")
              await page.fill("#address1", "1600 Pennsylvania Avenue NW")
              await page.fill("#city", "Washington")
              await page.fill("#state", "DC")
              await page.fill("#zipcode", "20500")
              await page.locator('form[action$="/claim"] button[type="submit"]').click()
              await page.waitForSelector("#claim-problem")
              await shot("05-claim-refused")
              await page.fill("#phone", "+1 202 456 1111")
              await page.locator('form[action$="/claim"] button[type="submit"]').click()
              await page.waitForSelector("#order-status")
              await shot("06-claimed")
              h1s.push(await heading())
              await page.fill("#thank-you-message", "Merci ! ありがとう！ Thank you!")
              await page.locator('form[action$="/thank-you"] button[type="submit"]').click()
              await page.waitForSelector("#thank-you-note")
              await shot("07-thank-you-sent")
              await page.goto(`${digital.link}/choices`)
              await shot("08-digital-choices")
              await page.locator(".choice button").first().click()
              await page.waitForURL(/\/choose/)
              await shot("09-digital-claim-form")
              await page.goto(`${nowhere.link}/choices`)
              await shot("10-undeliverable")
              await page.goto(expired.link)
              await shot("11-expired")
              h1s.push(await heading())
              await page.goto(`${baseUrl}/g/no-such-gift`)
              await shot("12-unknown-link")
              await context.close()
            }
            try {
              // Two languages at a time: the machine's two cores.
              for (let i = 0; i < giftLanguages.length; i += 2) {
                await Promise.all(
                  giftLanguages.slice(i, i + 2).map((language, j) => walk(language, perLanguage[i + j]!.link))
                )
              }
            } finally {
              await browser.close()
            }
            return seen
          })
          // Each language its own words: six different headings on each page compared.
          for (const step of [0, 1, 2]) {
            expect(new Set(giftLanguages.map((language) => headings[language]![step])).size).toBe(giftLanguages.length)
          }
          expect(headings.es).toEqual([
            "Grace, tienes un regalo",
            "Tu regalo está solicitado",
            "Este regalo no está disponible"
          ])
        }).pipe(Effect.provide(FetchHttpClient.layer)),
      180_000
    )
  })
})
