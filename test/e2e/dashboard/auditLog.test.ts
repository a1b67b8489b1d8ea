import * as Fs from "node:fs"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import type { Page } from "playwright-core"
import { type Actor, memberActorName } from "../../../src/domain/company/Audit.js"
import { allAccounts, defaultExpirationInDays, permissions } from "../../../src/domain/company/Company.js"
import { withActor } from "../../../src/services/company/Audit.js"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
import { Members } from "../../../src/services/company/Members.js"
import { Users } from "../../../src/services/identity/Users.js"
import { BaseUrl, makeRealPortServer } from "../../support/auth.js"
import {
  checkAccessibility,
  launchChromium,
  noChromium,
  screenshot,
  scrollsHorizontally
} from "../../support/browser.js"
import { keyHeaders } from "../../support/company.js"
import { newEmail, strongPassword } from "../../support/dashboard.js"

/**
 * The audit log in a real browser (Debian's chromium): a company signed up in the dashboard, whose member invites a
 * person and makes an API key, which then creates an account through the API; the Audit log page lists each change
 * with its actor (the member's name, the key's name), filters them with the keyboard only, names a bad filter, and
 * downloads the CSV. Every page visited is checked with axe-core (no serious or critical violation) and at 390 px
 * wide for sideways scrolling; screenshots go to test-output/dashboard-audit-log*.png. Skipped without chromium.
 */

const expectSound = async (page: Page, name: string) => {
  expect(await checkAccessibility(page), `${name}: accessibility`).toEqual([])
  expect(await scrollsHorizontally(page), `${name}: scrolls sideways`).toBe(false)
  await screenshot(page, `dashboard-${name}`)
}

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

/** The member and company a sign-up made, by the person's e-mail. */
const idsOf = (email: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ userId: string; companyId: string }>`SELECT u.id AS user_id, m.company_id FROM users u
        JOIN company_members m ON m.user_id = u.id WHERE u.email = ${email}`,
      (rows) => rows[0]!
    )
  ).pipe(Effect.orDie)

describe.skipIf(noChromium)("dashboard audit log in chromium", () => {
  it.layer(makeRealPortServer(), { timeout: 180_000 })((it) => {
    it.scoped("lists the member's and the key's changes with their actors; filters by keyboard; downloads CSV", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const email = newEmail("auditor")
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

        // Sign up in the dashboard.
        yield* Effect.promise(async () => {
          await page.goto(`${baseUrl}/dashboard/sign-up`)
          await page.getByLabel("Email").fill(email)
          await page.getByLabel("Password").fill(strongPassword)
          await page.getByLabel("Company name").fill("Audited Gifts")
          await page.getByRole("button", { name: "Create company" }).click()
          await page.waitForURL(`${baseUrl}/dashboard`)
        })

        // The member, as their dashboard session names them, invites a person and makes an API key; the key
        // creates an account through the API. (The services the dashboard's pages call, on the wall clock.)
        const { userId, companyId } = yield* idsOf(email)
        const users = yield* Users
        yield* Effect.orDie(users.update(userId, { displayName: "Ada Owner" }))
        const member: Actor = {
          type: "member",
          id: userId,
          name: memberActorName("Ada Owner"),
          sourceAddress: "127.0.0.1",
          requestId: "00000000-0000-4000-8000-000000000000"
        }
        const asMember = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.orDie(Effect.withClock(withActor(member)(effect), Clock.make()))
        yield* asMember(
          Effect.flatMap(Members, (members) =>
            members.invite({ companyId, by: { userId }, email: newEmail("invitee"), role: "viewer" })
          )
        )
        const key = yield* asMember(
          Effect.flatMap(KeyStore, (keys) =>
            keys.create({
              companyId,
              environment: "test",
              name: "Fulfilment bot",
              expirationInDays: defaultExpirationInDays,
              enforceMtls: false,
              permissions: [...permissions],
              accountsAccess: allAccounts,
              requestSource: null
            })
          )
        )
        const created = yield* Effect.promise(() =>
          fetch(`${baseUrl}/public-api/v3/accounts`, {
            method: "POST",
            headers: { ...keyHeaders(key.apiKey), "content-type": "application/json" },
            body: JSON.stringify({ name: "Warehouse" })
          })
        )
        expect(created.status).toBe(201)

        yield* Effect.promise(async () => {
          // Reached from the navigation.
          await page.getByRole("link", { name: "Audit log" }).click()
          await page.waitForURL(`${baseUrl}/dashboard/audit-log`)
          expect(await page.locator("h1").textContent()).toBe("Audit log")
          expect((await actorsAndActions(page)).sort()).toEqual(
            [
              ["Ada Owner member", "member.invited"],
              ["Ada Owner member", "api_key.created"],
              ["Fulfilment bot key", "account.created"]
            ].sort()
          )
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
          expect(
            lines
              .slice(1)
              .map((line) => line.split(",")[4])
              .sort()
          ).toEqual(["api_key.created", "member.invited"])
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
        })
      })
    )
  })
})
