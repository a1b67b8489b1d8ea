import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { Users } from "../../../src/services/identity/Users.js"
import { BaseUrl, makeRealPortServer } from "../../support/auth.js"
import { browserSuiteSkipped, checkAccessibility, expectSoundPage, launchChromium } from "../../support/browser.js"
import { keyHeaders } from "../../support/company.js"
import { ownerOf } from "../../support/dashboardMembers.js"
import { enrolOver } from "../../support/twoFactor.js"

/**
 * The audit log in a real browser (Debian's chromium): a company signed up in the dashboard, whose member (with
 * two-factor on) requires two-factor of every member and makes an API key there, the key then creating an account through the API; the Audit log page lists
 * each change with its actor (the member's name, the key's name), filters them with the keyboard only, names a bad
 * filter, and downloads the CSV. Every page of the log visited is checked with axe-core (no serious or critical
 * violation; with JavaScript off too) and at 390 px wide for sideways scrolling; screenshots go to
 * test-output/dashboard-audit-log*.png. Skipped as the other browser suites are (`browserSuiteSkipped`).
 */

const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

/** Tabs forward until the element with `id` (or, given `text`, the link or button saying it) has the focus. */
const tabTo = async (page: Page, target: { readonly id?: string; readonly text?: string }) => {
  for (let i = 0; i < 40; i++) {
    const focused = (await page.evaluate(
      "document.activeElement ? [document.activeElement.id, document.activeElement.textContent.trim()] : []"
    )) as ReadonlyArray<string>
    if (
      (target.id !== undefined && focused[0] === target.id) ||
      (target.text !== undefined && focused[1] === target.text)
    )
      return
    await page.keyboard.press("Tab")
  }
  throw new Error(`Tab never reached ${JSON.stringify(target)}`)
}

/** The table's rows as [actor cell, action cell]. */
const actorsAndActions = (page: Page) =>
  page
    .locator("tbody tr")
    .evaluateAll((rows) =>
      rows.map((row) =>
        [...row.querySelectorAll("td")].slice(1, 3).map((cell) => (cell.textContent ?? "").replace(/\s+/g, " ").trim())
      )
    )

describe.skipIf(browserSuiteSkipped)("dashboard audit log in chromium", () => {
  it.layer(makeRealPortServer(), { timeout: 180_000 })((it) => {
    it.scoped(
      "lists the member's and the key's changes with their actors; filters by keyboard; downloads CSV",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const browser = yield* Effect.promise(() => launchChromium())
          yield* Effect.addFinalizer(() => Effect.promise(() => browser.close()))
          const context = yield* Effect.promise(() => browser.newContext({ viewport: { width: 1200, height: 900 } }))
          const page = yield* Effect.promise(() => context.newPage())
          const errors: Array<string> = []
          page.on("console", (message) => {
            // A status the test asks for (400) is logged as a failed load; anything else (a CSP refusal) counts.
            if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
              errors.push(message.text())
            }
          })

          // Signed up, named, and with two-factor on (over HTTP); the browser takes the session's cookie.
          const { browser: http, userId } = yield* ownerOf(baseUrl, "Audited Gifts")
          yield* Effect.orDie(Effect.flatMap(Users, (users) => users.update(userId, { displayName: "Ada Owner" })))
          yield* enrolOver(http)
          const host = new URL(baseUrl).hostname
          yield* Effect.promise(() =>
            context.addCookies(
              [...http.cookies].map(([name, value]) => ({ name, value, domain: host, path: "/dashboard" }))
            )
          )

          const apiKey = yield* Effect.promise(async () => {
            // A setting changed in the dashboard: two-factor required of every member.
            await page.goto(`${baseUrl}/dashboard/account`)
            await page.getByLabel("Require two-factor for every member").selectOption("yes")
            await page.locator('form[action="/dashboard/account/company-security"] button').click()
            await expect.poll(() => page.getByRole("status").first().textContent()).toContain("now requires")
            // An API key made in the dashboard, which creates an account through the API.
            await page.goto(`${baseUrl}/dashboard/api-keys/new?environment=test`)
            await page.getByLabel("Name").fill("Fulfilment bot")
            await page.getByLabel(/^accounts:create: /).check()
            await page.getByRole("button", { name: "Create key" }).click()
            await expect.poll(() => page.locator("h1").textContent()).toBe("API key created")
            return page.locator("#api-key").inputValue()
          })
          const created = yield* Effect.promise(() =>
            fetch(`${baseUrl}/public-api/v3/accounts`, {
              method: "POST",
              headers: { ...keyHeaders(apiKey), "content-type": "application/json" },
              body: JSON.stringify({ name: "Warehouse" })
            })
          )
          expect(created.status).toBe(201)

          yield* Effect.promise(async () => {
            // Reached from the navigation.
            await page.getByRole("link", { name: "Audit log" }).click()
            await page.waitForURL(`${baseUrl}/dashboard/audit-log`)
            expect(await page.locator("h1").textContent()).toBe("Audit log")
            expect(await actorsAndActions(page)).toEqual([
              ["Fulfilment bot key", "account.created"],
              ["Ada Owner member", "api_key.created"],
              ["Ada Owner member", "company.two_factor_required"]
            ])
            await expectSound(page, "audit-log")

            // With the keyboard only: the action filter, then the Filter button.
            await page.evaluate("document.activeElement && document.activeElement.blur()")
            await tabTo(page, { id: "filter-action" })
            await page.keyboard.type("account.created")
            await tabTo(page, { text: "Filter" })
            await page.keyboard.press("Enter")
            await page.waitForURL((url) => url.searchParams.get("action") === "account.created")
            expect(await actorsAndActions(page)).toEqual([["Fulfilment bot key", "account.created"]])
            await expectSound(page, "audit-log-filtered")

            // The actor filter, by name: typed, then Enter in the field.
            await tabTo(page, { id: "filter-actor" })
            await page.keyboard.type("Ada")
            await page.keyboard.press("Shift+Tab")
            await page.keyboard.press("Tab")
            await page.keyboard.press("Enter")
            await page.waitForURL((url) => url.searchParams.get("actor") === "Ada")
            // Still the action filter: no change by Ada is an account's creation.
            expect(await page.getByText("No events match these filters.").count()).toBe(1)
            await expectSound(page, "audit-log-empty")

            // The download, by keyboard, with the page's filters.
            await page.goto(`${baseUrl}/dashboard/audit-log?actor=Ada`)
            await tabTo(page, { text: "Download these events as CSV" })
            const [download] = await Promise.all([page.waitForEvent("download"), page.keyboard.press("Enter")])
            const csv = Fs.readFileSync((await download.path())!, "utf8")
            const lines = csv.trim().split("\r\n")
            expect(lines).toHaveLength(3)
            expect(lines.slice(1).map((line) => line.split(",")[4])).toEqual([
              "api_key.created",
              "company.two_factor_required"
            ])
            expect(csv).toContain(",member,")
            expect(csv).toContain("Ada Owner")

            // A bad filter is named on the page.
            await page.goto(`${baseUrl}/dashboard/audit-log?from=2030-01-02&to=2030-01-01`)
            expect(await page.getByRole("alert").textContent()).toContain("From: must not be after To.")
            await expectSound(page, "audit-log-error")

            // At 390 px wide: the table scrolls on its own, the page does not.
            await page.setViewportSize({ width: 390, height: 844 })
            await page.goto(`${baseUrl}/dashboard/audit-log`)
            await expectSound(page, "audit-log-390")
            expect(errors).toEqual([])

            // With JavaScript off, the same page and its filters.
            const noScript = await browser.newContext({ javaScriptEnabled: false })
            await noScript.addCookies(await context.cookies())
            const plain = await noScript.newPage()
            await plain.goto(`${baseUrl}/dashboard/audit-log`)
            await plain.getByLabel("Action").selectOption("api_key.created")
            await plain.getByRole("button", { name: "Filter" }).click()
            await plain.waitForURL((url) => url.searchParams.get("action") === "api_key.created")
            expect(await actorsAndActions(plain)).toEqual([["Ada Owner member", "api_key.created"]])
            expect(await checkAccessibility(plain)).toEqual([])
            await noScript.close()
          })
        }),
      90_000
    )
  })
})
