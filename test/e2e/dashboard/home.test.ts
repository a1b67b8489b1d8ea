import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { Billing } from "../../../src/services/company/Billing.js"
import { BaseUrl, makeRealPortServer } from "../../support/auth.js"
import {
  browserSuiteSkipped,
  expectSoundPage,
  focusedLabel,
  focusedText,
  launchChromium,
  tabUntil
} from "../../support/browser.js"
import { DashboardBrowser } from "../../support/dashboard.js"
import { signedUpIdsOf } from "../../support/dashboardMembers.js"

/**
 * The home page's charts in a real browser (Debian's chromium): a company with a few weeks of ledger entries
 * and gifts at every open and closed stage; the page checked with axe-core (no serious or critical violation)
 * at 1200 and at 390 px wide (no sideways scrolling), screenshots to test-output/dashboard-home-*.png; with the
 * keyboard only, each chart's data table is opened and reached.
 */

const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

/** Ledger entries over the last three weeks (a credit alone on one day) and gifts at each stage short of a claim. */
const seed = (ids: { companyId: string; accountId: string; methodId: string }) =>
  Effect.gen(function* () {
    const billing = yield* Billing
    const sql = yield* SqlClient.SqlClient
    const entries: ReadonlyArray<readonly [number, "debit" | "credit", number]> = [
      [20, "debit", 120_00],
      [14, "debit", 45_50],
      [9, "debit", 210_00],
      [6, "credit", 60_00],
      [3, "debit", 80_25],
      [0, "debit", 150_00]
    ]
    for (const [n, [daysAgo, kind, amount]] of entries.entries()) {
      const subject = { type: "order" as const, id: `ord-${n}`, reason: kind === "debit" ? "order placed" : "refund" }
      yield* kind === "debit"
        ? billing.debit(ids.methodId, amount, subject)
        : billing.credit(ids.methodId, amount, subject)
      yield* sql`UPDATE billing_entries SET created_at = now() - ${`${daysAgo} days`}::interval
        WHERE billing_method_id = ${ids.methodId} AND subject_id = ${`ord-${n}`}`
    }
    const campaign = `c${ids.accountId.slice(1)}`
    const recipient = `r${ids.accountId.slice(1)}`
    yield* sql`INSERT INTO campaigns (id, company_id, environment, account_id, billing_method_id, name, status,
        gift_type, product_id, swap, budget_min, budget_max, currency, expiration_days, sending_channels, created_at,
        updated_at)
      VALUES (${campaign}, ${ids.companyId}, 'test', ${ids.accountId}, ${ids.methodId}, 'Welcome', 'active',
        'product', 'p1', 'within_budget', 1000, 5000, 'USD', 30, ARRAY['email'], now(), now())`
    yield* sql`INSERT INTO recipients (id, company_id, environment, account_ids, first_name, last_name, email,
        created_at, updated_at)
      VALUES (${recipient}, ${ids.companyId}, 'test', ARRAY[${ids.accountId}], 'Ada', 'Lovelace',
        'ada@example.com', now(), now())`
    const statuses = ["unopened", "unopened", "opened", "opened", "unwrapped", "expired", "cancelled"] as const
    for (const [n, status] of statuses.entries()) {
      const opened = status === "opened" || status === "unwrapped" ? sql`now()` : sql`NULL`
      yield* sql`INSERT INTO gifts (id, company_id, environment, campaign_id, account_id, billing_method_id,
          recipient_id, key, status, token, budget_min, budget_max, currency, reserved, sending_method, expires_at,
          created_at, updated_at, opened_at)
        VALUES (${`g${n}${ids.accountId.slice(2)}`}, ${ids.companyId}, 'test', ${campaign}, ${ids.accountId},
          ${ids.methodId}, ${recipient}, ${`k${n}`}, ${status}, ${`t${n}${ids.accountId}`}, 1000, 5000, 'USD', 0,
          'email', now() + interval '20 days', now() - ${`${n} days`}::interval, now(), ${opened})`
    }
  }).pipe(Effect.orDie)

describe.skipIf(browserSuiteSkipped)("dashboard home in chromium", () => {
  it.layer(makeRealPortServer(), { timeout: 120_000 })((it) => {
    it.scoped(
      "shows the charts, sound at 1200 and 390 px; the keyboard opens and reaches their data tables",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const http = new DashboardBrowser(baseUrl)
          const { email } = yield* Effect.promise(() => http.signUp("Charted Gifts"))
          yield* seed(yield* signedUpIdsOf(email))

          const browser = yield* Effect.promise(() => launchChromium())
          yield* Effect.addFinalizer(() => Effect.promise(() => browser.close()))
          const context = yield* Effect.promise(() => browser.newContext({ viewport: { width: 1200, height: 900 } }))
          const host = new URL(baseUrl).hostname
          yield* Effect.promise(() =>
            context.addCookies(
              [...http.cookies].map(([name, value]) => ({ name, value, domain: host, path: "/dashboard" }))
            )
          )
          const page = yield* Effect.promise(() => context.newPage())
          const errors: Array<string> = []
          page.on("console", (message) => {
            if (message.type() === "error") errors.push(message.text())
          })

          yield* Effect.promise(async () => {
            await page.goto(`${baseUrl}/dashboard`)
            expect(await page.locator("svg[role=img]").count()).toBe(2)
            expect(await page.locator("#funnel-summary").textContent()).toBe(
              "Of 7 gifts sent in the last 30 days, 3 opened, 0 claimed and 0 delivered; 1 expired and 1 cancelled."
            )
            await expectSound(page, "home-charts")
            const charts = page.locator("#spend-heading").locator("xpath=..")
            await charts.screenshot({
              path: new URL("../../../test-output/dashboard-home-spend.png", import.meta.url).pathname
            })
            await page
              .locator("#funnel-heading")
              .locator("xpath=..")
              .screenshot({
                path: new URL("../../../test-output/dashboard-home-funnel.png", import.meta.url).pathname
              })

            // With the keyboard only: each chart's table opens and its scrollable region takes the focus.
            for (const [summary, caption] of [
              ["Spend per day in USD as a table", "Spend per day, USD"],
              ["The gift funnel as a table", "Gift funnel"]
            ] as const) {
              await tabUntil(page, focusedText(summary), summary)
              await page.keyboard.press("Enter")
              await page.keyboard.press("Tab")
              expect(await page.evaluate(focusedLabel(caption)), caption).toBe(true)
            }
            expect(await page.locator("details[open]").count()).toBe(2)
            expect(await page.getByRole("table", { name: "Gift funnel" }).isVisible()).toBe(true)

            await page.setViewportSize({ width: 390, height: 844 })
            await expectSound(page, "home-charts-390")
            expect(errors).toEqual([])
          })
        }),
      120_000
    )
  })
})
