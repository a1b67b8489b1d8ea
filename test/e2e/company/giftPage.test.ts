import * as Fs from "node:fs"
import { FetchHttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl } from "../../support/auth.js"
import { browserSuiteSkipped, checkAccessibility, launchChromium } from "../../support/browser.js"
import { makeCheckoutRealPortServer } from "../../support/checkout.js"
import { productGiftFor } from "../../support/giftLinks.js"

/**
 * The gift page in a real browser (Debian's chromium) with JavaScript turned off, against the seeded server
 * with its background worker on a real loopback port: the recipient opens the link, picks the country, sees
 * the choices, chooses a product, picks one of its options by its label, fills the address by the labels
 * docs/decisions/0048-gift-page-and-claims.md names and claims; the page then says the gift is claimed and shows the
 * order's status. Every page it visits has no serious or critical axe-core finding. The claimed page's screenshot
 * goes to test-output/gift-claimed.png. Skipped as `browserSuiteSkipped` says (no chromium, or the run on a
 * Postgres server).
 */

const output = new URL("../../../test-output/", import.meta.url)

/** A product whose variants (two or more) all ship to GB with stock, and its variants in order. */
const giftableProduct = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [product] = yield* sql<{ id: string; title: string }>`
    SELECT p.id, p.title FROM products p WHERE p.min_price_usd IS NOT NULL
      AND (SELECT count(*) FROM variants v WHERE v.product_id = p.id) >= 2
      AND NOT EXISTS (SELECT 1 FROM variants v LEFT JOIN variant_locations l ON l.variant_id = v.id
        WHERE v.product_id = p.id AND (v.is_digital OR l.stock IS NULL OR l.stock < 50
          OR NOT 'GB' = ANY (l.ships_to) OR v.price_usd IS NULL))
    ORDER BY p.id LIMIT 1`
  const variants = yield* sql<{ id: string; title: string }>`SELECT id, title FROM variants
    WHERE product_id = ${product!.id} ORDER BY position`
  return { product: product!, variants }
})

/** axe-core's serious and critical findings on the page as it is: none. */
const expectAccessible = async (page: import("playwright-core").Page, name: string) =>
  expect(await checkAccessibility(page), `${name}: accessibility`).toEqual([])

/** In `page` at the claim form: the address filled by its labels. */
const fillAddress = async (page: import("playwright-core").Page) => {
  await page.getByLabel("First name").fill("Grace")
  await page.getByLabel("Last name").fill("Hopper")
  await page.getByLabel("Email").fill("grace@example.com")
  await page.getByLabel("Phone").fill("+44 20 7946 0958")
  await page.getByLabel("Address line 1").fill("10 Downing Street")
  await page.getByLabel("City").fill("London")
  await page.getByLabel("Postal code").fill("SW1A 2AA")
  await page.getByLabel("Country").selectOption("GB")
}

describe.skipIf(browserSuiteSkipped)("gift page in chromium", () => {
  it.layer(makeCheckoutRealPortServer(), { timeout: 180_000 })((it) => {
    it.effect("opens, chooses an option, fills the address and claims, without JavaScript", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { product, variants } = yield* giftableProduct
        const { link, giftId, read } = yield* productGiftFor(product.id, { key: "grace" })
        expect(link.startsWith(`${baseUrl}/g/`)).toBe(true)

        const seen = yield* Effect.promise(async () => {
          Fs.mkdirSync(output, { recursive: true })
          const browser = await launchChromium()
          try {
            const context = await browser.newContext({
              javaScriptEnabled: false,
              viewport: { width: 800, height: 1000 }
            })
            const page = await context.newPage()
            await page.goto(link)
            await expectAccessible(page, "the gift's first page")
            const greeting = await page.locator("h1").textContent()
            const note = await page.locator(".note").textContent()
            await page.getByLabel("Country").selectOption("GB")
            await page.getByRole("button", { name: "See your gift options" }).click()
            const offered = await page.locator(".choice h3").allTextContents()
            await expectAccessible(page, "the choices")
            await page.getByRole("button", { name: `Choose ${product.title}` }).click()
            // The second option, picked by its label.
            await expectAccessible(page, "the claim form")
            await page.getByLabel(variants[1]!.title, { exact: true }).check()
            await fillAddress(page)
            await page.getByRole("button", { name: "Claim gift" }).click()
            await expectAccessible(page, "the claimed page")
            const heading = await page.locator("h1").textContent()
            const status = await page.locator("#order-status").textContent()
            await page.screenshot({ path: new URL("gift-claimed.png", output).pathname, fullPage: true })
            return { greeting, note, offered, heading, status }
          } finally {
            await browser.close()
          }
        })
        expect(seen.greeting).toBe("Grace, you have a gift")
        expect(seen.note).toBe("Welcome to the team!")
        expect(seen.offered).toEqual([product.title])
        expect(seen.heading).toBe("Your gift is claimed")
        expect(seen.status).toBe("Order received")

        const gift = yield* read(`/public-api/v2/gifts/${giftId}?expand[]=orders`)
        expect(gift.body.status).toBe("claimed")
        expect(gift.body.orders[0].lineItems[0].variantId).toBe(variants[1]!.id)
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )

    it.effect(
      "the country starts at the recipient's, else the browser's; optional fields say so; the claimed page names the item and the address; /favicon.ico is an icon",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const { product, variants } = yield* giftableProduct
          const unknown = yield* productGiftFor(product.id, { key: "where" })
          const inFrance = yield* productGiftFor(product.id, { key: "france", recipientCountry: "FR" })
          const seen = yield* Effect.promise(async () => {
            const browser = await launchChromium()
            try {
              // A browser in German for Germany: Accept-Language de-DE (the page is in German: "Land").
              const german = await browser.newContext({ javaScriptEnabled: false, locale: "de-DE" })
              const inGerman = await german.newPage()
              await inGerman.goto(unknown.link)
              const browsers = await inGerman.getByLabel("Land").inputValue()
              await expectAccessible(inGerman, "the first page in German")
              await inGerman.goto(inFrance.link)
              const recipients = await inGerman.getByLabel("Land").inputValue()

              const context = await browser.newContext({ javaScriptEnabled: false, locale: "en-US" })
              const page = await context.newPage()
              await page.goto(`${unknown.link}/choose?productId=${product.id}&country=GB`)
              const labels = await page
                .locator("form label[for]")
                .evaluateAll((found) =>
                  found.map((label) => [label.getAttribute("for"), label.textContent?.replace(/\s+/g, " ").trim()])
                )
              await page.getByLabel(variants[0]!.title, { exact: true }).check()
              await fillAddress(page)
              await page.getByLabel("Address line 2").fill("Flat 1")
              await page.getByRole("button", { name: "Claim gift" }).click()
              await expectAccessible(page, "the claimed page with the address's second line")
              const item = await page.locator("#claimed-item").textContent()
              const address = await page.locator("#claimed-address").innerHTML()

              const icon = await page.request.get(`${baseUrl}/favicon.ico`)
              return {
                browsers,
                recipients,
                labels: Object.fromEntries(labels),
                item,
                address,
                icon: { status: icon.status(), headers: icon.headers(), body: await icon.text() }
              }
            } finally {
              await browser.close()
            }
          })
          expect(seen.browsers).toBe("DE")
          expect(seen.recipients).toBe("FR")
          expect(seen.labels).toMatchObject({
            firstName: "First name",
            lastName: "Last name",
            email: "Email",
            phone: "Phone",
            address1: "Address line 1",
            address2: "Address line 2 (optional)",
            city: "City",
            state: "State or province (optional)",
            zipcode: "Postal code (optional)",
            country: "Country"
          })
          expect(seen.item).toBe(`${product.title} — ${variants[0]!.title}`)
          expect(seen.address.split("<br>")).toEqual([
            "Grace Hopper",
            "10 Downing Street",
            "Flat 1",
            "London SW1A 2AA",
            "United Kingdom"
          ])
          expect(seen.icon.status).toBe(200)
          expect(seen.icon.headers["content-type"]).toBe("image/svg+xml")
          expect(seen.icon.headers["cache-control"]).toBe("public, max-age=86400")
          expect(seen.icon.body).toContain("<svg")
        }).pipe(Effect.provide(FetchHttpClient.layer))
    )

    it.effect("the same gift claimed from two browsers at once places one order; both show it claimed", () =>
      Effect.gen(function* () {
        const { product } = yield* giftableProduct
        const { link, giftId, read } = yield* productGiftFor(product.id, { key: "twice" })
        const form = `${link}/choose?productId=${product.id}&country=GB`
        const headings = yield* Effect.promise(async () => {
          const browser = await launchChromium()
          try {
            const pages = await Promise.all(
              [0, 1].map(async () => {
                const context = await browser.newContext({ javaScriptEnabled: false })
                const page = await context.newPage()
                await page.goto(form)
                await fillAddress(page)
                return page
              })
            )
            await Promise.all(pages.map((page) => page.getByRole("button", { name: "Claim gift" }).click()))
            await pages[1]!.screenshot({ path: new URL("gift-claimed-twice.png", output).pathname, fullPage: true })
            for (const page of pages) await expectAccessible(page, "a claimed page claimed twice")
            return await Promise.all(pages.map((page) => page.locator("h1").textContent()))
          } finally {
            await browser.close()
          }
        })
        expect(headings).toEqual(["Your gift is claimed", "Your gift is claimed"])
        const sql = yield* SqlClient.SqlClient
        const orders = yield* sql<{ id: string }>`SELECT id FROM company_orders WHERE gift_id = ${giftId}`
        expect(orders).toHaveLength(1)
        const gift = yield* read(`/public-api/v2/gifts/${giftId}`)
        expect(gift.body).toMatchObject({ status: "claimed", orderId: orders[0]!.id })
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )

    it.effect("with JavaScript, the claimed page follows the order's delivery live", () =>
      Effect.gen(function* () {
        const { product } = yield* giftableProduct
        const { link, giftId, read, post } = yield* productGiftFor(product.id, { key: "live" })
        const browser = yield* Effect.promise(() => launchChromium())
        try {
          const page = yield* Effect.promise(async () => {
            const context = await browser.newContext({ javaScriptEnabled: true })
            const opened = await context.newPage()
            await opened.goto(`${link}/choose?productId=${product.id}&country=GB`)
            await fillAddress(opened)
            await opened.getByRole("button", { name: "Claim gift" }).click()
            await expectAccessible(opened, "the claimed page with JavaScript")
            return opened
          })
          expect(yield* Effect.promise(() => page.locator("#order-status").textContent())).toBe("Order received")
          const gift = yield* read(`/public-api/v2/gifts/${giftId}`)
          const moved = yield* post(`/public-api/v3/orders/${gift.body.orderId}/simulate`, {
            fulfillmentStatus: "processing"
          })
          expect(moved.status).toBe(200)
          // The page asks every 10 seconds: within 15 it shows the move, without a reload.
          yield* Effect.promise(() =>
            page.locator("#order-status", { hasText: "Being prepared" }).waitFor({ timeout: 15_000 })
          )
        } finally {
          yield* Effect.promise(() => browser.close())
        }
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )
  })
})
