import * as Fs from "node:fs"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, issueTestToken } from "../../support/auth.js"
import { browserSuiteSkipped, checkAccessibility, launchChromium } from "../../support/browser.js"
import { availableVariants, londonAddress, makeCheckoutRealPortServer, recipient } from "../../support/checkout.js"
import { ribbonClient } from "../../support/http.js"

/**
 * The hosted payment page in a real browser (Debian's chromium), against the seeded server with its
 * background worker on a real loopback port: a declined card first, then the test card, and the status
 * page's live region following the checkout's SSE stream to `confirmed`; each page with no serious or critical
 * axe-core finding. The confirmed page's screenshot goes to test-output/pay-confirmed.png (the declined form's to
 * pay-declined.png). Skipped as `browserSuiteSkipped` says (no chromium, or the run on a Postgres server).
 */

const output = new URL("../../../test-output/", import.meta.url)

/** "£1,234.56" → 123456 (two-decimal currencies). */
const minorUnits = (display: string) => Number(display.replace(/[^\d]/g, ""))

describe.skipIf(browserSuiteSkipped)("payment page in chromium", () => {
  it.layer(makeCheckoutRealPortServer(), { timeout: 180_000 })((it) => {
    it.effect("shows the checkout, survives a declined card, pays, and follows the live status to confirmed", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const user = yield* issueTestToken({ defaultCountry: "GB" }, baseUrl)
        const authorization = `Bearer ${user.accessToken}`
        // The derived client over real HTTP to the server's port, with the user's bearer token.
        const http = (yield* HttpClient.HttpClient).pipe(
          HttpClient.mapRequest((request) =>
            request.pipe(HttpClientRequest.prependUrl(baseUrl), HttpClientRequest.bearerToken(user.accessToken))
          )
        )
        const { checkout, q1, q2 } = yield* Effect.gen(function* () {
          const client = yield* ribbonClient
          const [first, second] = yield* availableVariants("GB", "mug")
          expect(first).toBeDefined()
          expect(second).toBeDefined()
          const q1 = yield* client.quotes.createQuote({ payload: { variantId: first!, countryCode: "GB" } })
          const q2 = yield* client.quotes.createQuote({ payload: { variantId: second! } })
          const checkout = yield* client.checkouts.createCheckout({
            payload: {
              items: [{ quoteId: q1.id, quantity: 2 }, { quoteId: q2.id }],
              recipient,
              shippingAddress: londonAddress
            }
          })
          return { checkout, q1, q2 }
        }).pipe(Effect.provideService(HttpClient.HttpClient, http))
        expect(checkout.status).toBe("pending_payment")
        expect(checkout.paymentUrl?.startsWith(`${baseUrl}/pay/${checkout.id}?t=`)).toBe(true)
        const { totalDisplay } = checkout

        yield* Effect.promise(async () => {
          Fs.mkdirSync(output, { recursive: true })
          const browser = await launchChromium()
          try {
            const page = await browser.newPage({ viewport: { width: 900, height: 900 } })
            const problems: Array<string> = []
            page.on("console", (message) => {
              if (message.type() !== "error") return
              const at = new URL(message.location().url || "about:blank")
              // Chromium logs every error response: the declined card's 402 is the expected answer, and the
              // browser's own /favicon.ico request (the site has none) is not the page's doing.
              const expected =
                (/status of 402/.test(message.text()) && at.pathname === `/pay/${checkout.id}`) ||
                (/status of 404/.test(message.text()) && at.pathname === "/favicon.ico")
              if (!expected) problems.push(`console: ${message.text()} at ${at.href}`)
            })
            page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
            // CSP violations, reported from every document the page loads.
            await page.exposeBinding("__reportViolation", (_source, text: string) => {
              problems.push(`csp: ${text}`)
            })
            await page.addInitScript({
              content: `document.addEventListener("securitypolicyviolation", function (e) {
                window.__reportViolation(e.violatedDirective + " blocked " + e.blockedURI)
              })`
            })
            // The status page's EventSource requests.
            const streams: Array<string> = []
            page.on("request", (request) => {
              if (new URL(request.url()).pathname === `/pay/${checkout.id}/events`) streams.push(request.url())
            })
            // The 402 of the declined attempt is expected; any other failed response is a problem.
            page.on("response", (response) => {
              if (response.status() >= 400 && response.status() !== 402) {
                problems.push(`http ${response.status()} ${response.url()}`)
              }
            })

            const response = await page.goto(checkout.paymentUrl!)
            expect(response?.status()).toBe(200)
            await expect(page.title()).resolves.toBe(`Pay ${totalDisplay} · Ribbon`)
            const payButton = page.getByRole("button", { name: `Pay ${totalDisplay}`, exact: true })
            await payButton.waitFor()
            expect(await checkAccessibility(page), "the payment form: accessibility").toEqual([])

            // The items: titles, variants, quantities and line amounts.
            const lines = page.locator("ul.items li")
            await expect(lines.count()).resolves.toBe(2)
            for (const [i, item] of checkout.items.entries()) {
              const text = (await lines.nth(i).textContent()) ?? ""
              expect(text).toContain(item.productTitle)
              expect(text).toContain(item.variantTitle)
              expect(text).toContain(`Quantity ${i === 0 ? 2 : 1}`)
              expect(text).toContain(item.amountDisplay)
            }
            expect(checkout.items.map((i) => i.amount)).toEqual([2 * q1.totalAmount, q2.totalAmount])

            // The breakdown: each part, summing to the total.
            const terms = await page.locator("dl.breakdown dt").allTextContents()
            expect(terms).toEqual(["Items", "Shipping", "Duties and taxes", "Service fee", "Total"])
            const amounts = await page.locator("dl.breakdown dd").allTextContents()
            const [items, shipping, duties, fee, total] = amounts.map(minorUnits)
            expect(amounts[4]).toBe(totalDisplay)
            expect(items).toBe(2 * q1.itemAmount + q2.itemAmount)
            expect(shipping).toBe(2 * q1.shippingAmount + q2.shippingAmount)
            expect(duties).toBe(2 * q1.dutiesAmount + q2.dutiesAmount)
            expect(fee).toBe(2 * q1.serviceFeeAmount + q2.serviceFeeAmount)
            expect(items! + shipping! + duties! + fee!).toBe(total)
            expect(total).toBe(checkout.totalAmount)

            // The recipient and the address.
            const main = (await page.locator("main").textContent()) ?? ""
            expect(main).toContain(`${recipient.firstName} ${recipient.lastName}`)
            expect(main).toContain(recipient.email)
            // The phone as people write it, from its stored E.164 form.
            expect(main).toContain("+44 20 7946 0958")
            const address = (await page.locator("address").innerHTML()).split("<br>")
            expect(address).toEqual([
              londonAddress.address1,
              `${londonAddress.city} ${londonAddress.postalCode}`,
              "United Kingdom"
            ])

            // A declined card: the alert says so, the form comes back without the card number.
            const expiry = `12/${String((new Date().getUTCFullYear() + 2) % 100).padStart(2, "0")}`
            await page.getByLabel("Card number").fill("4000 0000 0000 0002")
            await page.getByLabel("Expiry (MM/YY)").fill(expiry)
            await page.getByLabel("CVC").fill("123")
            await page.getByLabel("Name on card").fill("Ada Lovelace")
            const [declined] = await Promise.all([
              page.waitForResponse((r) => r.request().method() === "POST" && r.url().includes(`/pay/${checkout.id}`)),
              payButton.click()
            ])
            expect(declined.status()).toBe(402)
            await page.waitForLoadState("load")
            const alert = page.getByRole("alert")
            await alert.waitFor()
            expect(await alert.textContent()).toMatch(/declined/i)
            await expect(page.getByLabel("Card number").inputValue()).resolves.toBe("")
            await expect(page.getByLabel("CVC").inputValue()).resolves.toBe("")
            await expect(page.getByLabel("Name on card").inputValue()).resolves.toBe("Ada Lovelace")
            await expect(page.getByLabel("Expiry (MM/YY)").inputValue()).resolves.toBe(expiry)
            await expect(payButton.isVisible()).resolves.toBe(true)
            expect(await page.content()).not.toContain("4000 0000 0000 0002")
            expect(await checkAccessibility(page), "the declined form: accessibility").toEqual([])
            await page.screenshot({ path: new URL("pay-declined.png", output).pathname, fullPage: true })

            // The test card: paid, then the live region follows the stream to confirmed.
            await page.getByLabel("Card number").fill("4242 4242 4242 4242")
            await page.getByLabel("Expiry (MM/YY)").fill(expiry)
            await page.getByLabel("CVC").fill("123")
            await page.getByLabel("Name on card").fill("Ada Lovelace")
            const [paid] = await Promise.all([
              page.waitForResponse((r) => r.request().method() === "POST" && r.url().includes(`/pay/${checkout.id}`)),
              payButton.click()
            ])
            expect(paid.status()).toBe(200)
            // The page is rendered before placement, so `confirmed` can only come from the stream.
            expect(await paid.text()).toContain('data-status="paid"')
            await page.getByRole("heading", { level: 1, name: "Payment received" }).waitFor()
            const status = page.locator("#checkout-status")
            await expect
              .poll(() => status.getAttribute("data-status"), { timeout: 60_000, interval: 100 })
              .toBe("confirmed")
            await expect(status.textContent()).resolves.toBe("Confirmed — everything has been ordered")
            await expect(page.getByRole("status").getAttribute("id")).resolves.toBe("checkout-status")
            expect(await page.locator("ul.items li").count()).toBe(2)
            expect(await checkAccessibility(page), "the confirmed page: accessibility").toEqual([])

            // The live region's stream: same origin, with the payment token.
            expect(streams.length).toBeGreaterThan(0)
            expect(new URL(streams[0]!).searchParams.get("t")).toBe(new URL(checkout.paymentUrl!).searchParams.get("t"))
            await page.screenshot({ path: new URL("pay-confirmed.png", output).pathname, fullPage: true })
            expect(problems).toEqual([])
          } finally {
            await browser.close()
          }
        })
        expect(Fs.statSync(new URL("pay-confirmed.png", output)).size).toBeGreaterThan(1000)

        // The API agrees: confirmed, one order per item.
        const final: any = yield* Effect.promise(() =>
          fetch(`${baseUrl}/v1/checkouts/${checkout.id}`, { headers: { authorization } }).then(async (r) => {
            expect(r.status).toBe(200)
            return r.json()
          })
        )
        expect(final.status).toBe("confirmed")
        expect(final.orderIds).toHaveLength(2)
        expect(final.paymentUrl).toBeNull()
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )
  })
})
