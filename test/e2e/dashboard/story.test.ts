import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { browserSuiteSkipped, expectSoundPage, launchChromium } from "../../support/browser.js"
import { csrfOf, signedInContext } from "../../support/dashboard.js"
import { ownerOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"

/**
 * A sender's day in a real browser (Debian's chromium), from the dashboard to the recipient and back: two gifts sent
 * from the send page; each gift's link read off the outbox and claimed on the gift page; the two orders on the
 * orders page, one simulated to delivered and the other cancelled; the home page's funnel and spend chart moved by
 * it, and the cancellation's credit in the billing ledger. Each page passes axe-core (no serious or critical
 * violation); screenshots go to test-output/dashboard-story-*.png.
 */

const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-story-${name}`)

const recipients = [
  { firstName: "Grace", lastName: "Hopper", email: "grace@example.com" },
  { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" }
] as const

describe.skipIf(browserSuiteSkipped)("a sender's story in chromium", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 240_000 })((it) => {
    it.scoped(
      "send two gifts, claim both from the outbox's links, deliver one and cancel the other: home and billing follow",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const { browser: http } = yield* ownerOf(baseUrl, "Story Gifts")
          const form = yield* Effect.promise(() => http.get("/dashboard/send/campaigns/new?environment=test"))
          const created = yield* Effect.promise(() =>
            http.post("/dashboard/send/campaigns", {
              csrf: csrfOf(form.text, "/dashboard/send/campaigns"),
              environment: "test",
              name: "Welcome",
              budgetMin: "1",
              budgetMax: "100",
              giftType: "collection",
              collectionId: /<option value="([0-9a-f]{24})"/.exec(form.text)![1]!,
              expiryDays: "30",
              message: "Welcome to the team!",
              reminders: "on"
            })
          )
          expect(created.status).toBe(303)
          const chromium = yield* Effect.acquireRelease(Effect.promise(launchChromium), (b) =>
            Effect.promise(() => b.close())
          )
          const page = yield* Effect.promise(() =>
            signedInContext(chromium, http, { viewport: { width: 1200, height: 900 } }).then((c) => c.newPage())
          )
          /** The home page's two chart summaries, in words. */
          const charts = async () => {
            await page.goto(`${baseUrl}/dashboard`)
            const funnel = await page.locator("#funnel-summary").textContent()
            return { funnel, spend: await page.locator("#spend-usd-summary").textContent() }
          }

          yield* Effect.promise(async () => {
            // Two gifts from the send page's one-recipient form.
            await page.goto(`${baseUrl}${created.location!}`)
            const country = /ships to: [A-Z, ]*\bGB\b/.test(await page.content()) ? "GB" : "US"
            for (const person of recipients) {
              const form = page.getByRole("form", { name: "One recipient" })
              await form.getByLabel("First name").fill(person.firstName)
              await form.getByLabel("Last name").fill(person.lastName)
              await form.getByLabel("E-mail").fill(person.email)
              await form.getByLabel("Country").fill(country)
              await form.getByRole("button", { name: "Send the gift" }).click()
              await expect
                .poll(() => page.getByRole("status").textContent())
                .toContain(`Gift sent to ${person.firstName} ${person.lastName}: ${baseUrl}/g/`)
            }
            await expectSound(page, "sent")
          })
          const before = yield* Effect.promise(charts)
          // Each gift holds its largest budget on the test funds while it is open.
          expect(before.spend).toMatch(/^200\.00 USD spent /)
          expect(before.funnel).toBe(
            "Of 2 gifts sent in the last 30 days, 0 opened, 0 claimed and 0 delivered; 0 expired and 0 cancelled."
          )

          // Each gift's link, from its e-mail in the outbox, claimed on the gift page.
          yield* Effect.promise(async () => {
            for (const person of recipients) {
              await page.goto(`${baseUrl}/dashboard/outbox`)
              const message = page.locator("article", { hasText: person.email })
              await message.locator(`a[href^="${baseUrl}/g/"]`).click()
              await page.waitForURL(/\/g\/[\w-]+$/)
              expect(await page.locator("h1").textContent()).toBe(`${person.firstName}, you have a gift`)
              await expectSound(page, "gift")
              await page.getByRole("button", { name: "See your gift options" }).click()
              await page
                .getByRole("button", { name: /^Choose / })
                .first()
                .click()
              await page.getByLabel("First name").fill(person.firstName)
              await page.getByLabel("Last name").fill(person.lastName)
              await page.getByLabel("Email").fill(person.email)
              await page.getByLabel("Phone").fill("+44 20 7946 0958")
              await page.getByLabel("Address line 1").fill("10 Downing Street")
              await page.getByLabel("City").fill("London")
              await page.getByLabel("Postal code").fill("SW1A 2AA")
              await expectSound(page, "claim")
              await page.getByRole("button", { name: "Claim gift" }).click()
              expect(await page.locator("h1").textContent()).toBe("Your gift is claimed")
            }
          })

          // The two orders: the first simulated to delivered, the second cancelled through its confirm step.
          const credited = yield* Effect.promise(async () => {
            await page.goto(`${baseUrl}/dashboard/orders`)
            const orderIds = await page.locator("tbody tr td:first-child a").allTextContents()
            expect(orderIds).toHaveLength(2)
            await expectSound(page, "orders")
            const [delivered, cancelled] = orderIds.map((id) => id.trim())
            await page.goto(`${baseUrl}/dashboard/orders/${delivered}`)
            await page.getByRole("button", { name: "Move to Delivered" }).click()
            await expect.poll(() => page.getByRole("status").textContent()).toBe("The shipment is now Delivered.")
            await page.goto(`${baseUrl}/dashboard/orders/${cancelled}`)
            await page.getByRole("link", { name: "Cancel order" }).click()
            await page.getByRole("button", { name: "Cancel the order" }).click()
            const status = (await page.getByRole("status").textContent()) ?? ""
            const amount = /^Order cancelled: ([\d.,]+) USD credited back to Test funds\.$/.exec(status)?.[1]
            expect(amount, status).toBeDefined()
            return { orderId: cancelled!, amount: amount! }
          })

          const after = yield* Effect.promise(charts)
          expect(after.funnel).toBe(
            "Of 2 gifts sent in the last 30 days, 2 opened, 2 claimed and 1 delivered; 0 expired and 0 cancelled."
          )
          // The claims released both budgets and placed two orders of the same item; the cancelled one was credited
          // back: what is left spent is one order.
          expect(after.spend).toMatch(new RegExp(`^${credited.amount.replace(".", "\\.")} USD spent `))
          yield* Effect.promise(() => expectSound(page, "home"))

          // The cancellation's credit in the ledger, naming the order.
          yield* Effect.promise(async () => {
            await page.goto(`${baseUrl}/dashboard/billing`)
            await page.getByRole("link", { name: "Test funds" }).click()
            const ledger = page.getByRole("table", { name: "Ledger of Test funds" })
            const credit = ledger.locator("tbody tr", { hasText: credited.orderId }).filter({ hasText: "credit" })
            expect(await credit.count()).toBe(1)
            expect(await credit.textContent()).toContain(credited.amount)
            await expectSound(page, "ledger")
          })
        }),
      240_000
    )
  })
})
