import { FetchHttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Page } from "playwright-core"
import { Webhook } from "standardwebhooks"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import {
  browserSuiteSkipped,
  expectSoundPage,
  focusedId,
  focusedText,
  launchChromium,
  tabUntil
} from "../../support/browser.js"
import { makeCheckoutRealPortServer } from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { productGiftFor } from "../../support/giftLinks.js"
import { certificate, type HttpsReceiver, httpsReceiver } from "../../support/receiver.js"
import { signatureHeaders } from "../../support/webhooks.js"

/**
 * The thank-you note in a real browser (Debian's chromium) at a phone's width (390 px), with JavaScript turned off and
 * the keyboard only (docs/decisions/0070-gift-thank-you-notes.md): on the claimed gift's page the recipient tabs to
 * the note's field, sends a blank note and gets the error summary and the field marked invalid, then writes the note
 * and sends it; the page comes back showing it, and the company's endpoint at a loopback HTTPS receiver gets
 * `gift-thank-you-note-added`, verified with the `standardwebhooks` package. Every page has no serious or critical axe-core finding and no sideways
 * scroll; screenshots go to test-output/thank-you-note-*.png. Skipped as `browserSuiteSkipped` says.
 */

/** A product with one variant that ships to GB with stock. */
const giftable = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [found] = yield* sql<{ productId: string; variantId: string }>`
    SELECT p.id AS product_id, v.id AS variant_id FROM products p JOIN variants v ON v.product_id = p.id
      JOIN variant_locations l ON l.variant_id = v.id
    WHERE v.price_usd IS NOT NULL AND NOT v.is_digital AND l.stock > 100 AND 'GB' = ANY (l.ships_to)
      AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
    ORDER BY p.id LIMIT 1`
  return found!
}).pipe(Effect.orDie)

/**
 * A company's gift to Grace, claimed through the API, the company's endpoint for `gift-thank-you-note-added` at
 * `receiver` registered first: the gift's link, a reader of the company's v2 gift, and the endpoint's secret.
 */
const claimedGift = (receiver: HttpsReceiver) =>
  Effect.gen(function* () {
    const { productId, variantId } = yield* giftable
    const gift = yield* productGiftFor(productId)
    const endpoint = yield* gift.post("/public-api/v3/webhooks", {
      url: receiver.url("/hooks/notes"),
      eventTypes: ["gift-thank-you-note-added"]
    })
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201)
    const claim = yield* gift.post(`/public-api/v2/gifts/${gift.giftId}/claim`, {
      variantId,
      orderRecipient: {
        firstName: "Grace",
        lastName: "Hopper",
        email: "grace@example.com",
        phone: "+44 20 7946 0958",
        country: "GB",
        address: { addressLine1: "10 Downing Street", city: "London", zipcode: "SW1A 2AA" }
      }
    })
    expect(claim.status, JSON.stringify(claim.body)).toBe(200)
    return {
      link: gift.link,
      read: gift.read(`/public-api/v2/gifts/${gift.giftId}`),
      secret: endpoint.body.data.secret as string
    }
  })

/** The attributes that tie the note's field to its hint and error. */
const fieldState = (page: Page) =>
  page.locator("#thank-you-message").evaluate((field) => ({
    invalid: field.getAttribute("aria-invalid"),
    describedBy: field.getAttribute("aria-describedby")
  }))

/** The server's outbound calls may reach the test's HTTPS receiver on loopback, under its own certificate. */
const receiverAllowed = Layer.mergeAll(
  FulfillmentSettings.Default,
  OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })
)

const note = "Thank you, Ribbon team!\nThe tea arrived just in time for the holidays."

describe.skipIf(browserSuiteSkipped)("the thank-you note in chromium", () => {
  it.layer(makeCheckoutRealPortServer(receiverAllowed), { timeout: 180_000 })((it) => {
    it.scoped(
      "written with the keyboard only at 390 px, without JavaScript: refused when blank, then sent, shown, and told to the company's endpoint, signed",
      () =>
        Effect.gen(function* () {
          const receiver = yield* httpsReceiver()
          const { link, read, secret } = yield* claimedGift(receiver)

          const seen = yield* Effect.promise(async () => {
            const browser = await launchChromium()
            try {
              const context = await browser.newContext({
                javaScriptEnabled: false,
                viewport: { width: 390, height: 844 }
              })
              const page = await context.newPage()
              await page.goto(link)
              await expectSoundPage(page, "thank-you-note-form")
              const heading = await page.locator("h1").textContent()

              // A blank note, with the keyboard: refused beside its field, announced by the summary.
              await tabUntil(page, focusedId("thank-you-message"), "the note's field")
              await page.keyboard.type("   ")
              await tabUntil(page, focusedText("Send note"), "the Send note button")
              await Promise.all([page.waitForURL(/\/thank-you$/), page.keyboard.press("Enter")])
              await expectSoundPage(page, "thank-you-note-refused")
              const alert = await page.getByRole("alert").textContent()
              const refused = await fieldState(page)
              const fieldError = await page.locator("#thank-you-error").textContent()

              // The note, with the keyboard: the field again, its blank draft replaced, then Send note.
              await tabUntil(page, focusedId("thank-you-message"), "the note's field again")
              await page.keyboard.press("Control+A")
              await page.keyboard.press("Delete")
              const [first, second] = note.split("\n")
              await page.keyboard.type(first!)
              await page.keyboard.press("Enter")
              await page.keyboard.type(second!)
              await tabUntil(page, focusedText("Send note"), "the Send note button again")
              await Promise.all([page.waitForURL(/\?note=sent#thank-you$/), page.keyboard.press("Enter")])
              await expectSoundPage(page, "thank-you-note-sent")
              return {
                heading,
                alert,
                refused,
                fieldError,
                status: await page.getByRole("status").last().textContent(),
                shown: await page.locator("#thank-you-note").textContent(),
                sent: await fieldState(page),
                button: await page.locator("#thank-you-section button").textContent()
              }
            } finally {
              await browser.close()
            }
          })

          expect(seen.heading).toBe("Your gift is claimed")
          expect(seen.alert).toContain("Your note was not sent.")
          expect(seen.alert).toContain("Write a note of at least 1 character.")
          expect(seen.refused).toEqual({ invalid: "true", describedBy: "thank-you-hint thank-you-error" })
          expect(seen.fieldError).toBe("Error: Write a note of at least 1 character.")
          expect(seen.status).toMatch(/^Your note was sent to Company \d+/)
          expect(seen.shown).toBe(note)
          // The form stays for changes within 24 hours, no longer invalid.
          expect(seen.sent).toEqual({ invalid: null, describedBy: "thank-you-hint" })
          expect(seen.button).toBe("Save changes")

          const gift = yield* read
          expect(gift.body.thankYouNote).toEqual({ message: note, createdAt: expect.any(String) })

          // The company's endpoint is told, signed: verified with the standardwebhooks package.
          const delivered = yield* eventually(
            Effect.sync(() => receiver.received.filter((request) => request.path === "/hooks/notes")),
            (requests) => requests.length >= 1,
            "the note's webhook"
          )
          const verified = new Webhook(secret).verify(delivered[0]!.body, signatureHeaders(delivered[0]!)) as {
            readonly webhookData: { readonly eventType: string }
            readonly eventData: { readonly message: string; readonly edited: boolean }
          }
          expect(verified.webhookData.eventType).toBe("gift-thank-you-note-added")
          expect(verified.eventData).toMatchObject({ message: note, edited: false })
        }).pipe(Effect.provide(FetchHttpClient.layer))
    )
  })
})
