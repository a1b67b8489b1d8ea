import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { BaseUrl, makeRealPortServer } from "../../support/auth.js"
import { browserSuiteSkipped, expectSoundPage, launchChromium } from "../../support/browser.js"
import { DashboardBrowser, newEmail } from "../../support/dashboard.js"
import { invitationPathFor } from "../../support/invitations.js"

/**
 * The outbox in a real browser (Debian's chromium): a sandbox company's owner invites a person, then with the
 * keyboard only reaches the Outbox from the navigation and follows the invitation's link from its e-mail. The
 * outbox is checked with axe-core (no serious or critical violation) and at 390 px wide for sideways scrolling;
 * screenshots go to test-output/dashboard-outbox*.png. Skipped as the other browser suites are.
 */

const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

/** Tabs forward until the link or button whose text (or href) is `target` has the focus. */
const tabTo = async (page: Page, target: { readonly text?: string; readonly href?: string }) => {
  for (let i = 0; i < 60; i++) {
    const focused = (await page.evaluate(
      "document.activeElement ? [document.activeElement.textContent.trim(), document.activeElement.getAttribute('href') || ''] : []"
    )) as ReadonlyArray<string>
    if (
      (target.text !== undefined && focused[0] === target.text) ||
      (target.href !== undefined && focused[1] === target.href)
    )
      return
    await page.keyboard.press("Tab")
  }
  throw new Error(`Tab never reached ${JSON.stringify(target)}`)
}

describe.skipIf(browserSuiteSkipped)("dashboard outbox in chromium", () => {
  it.layer(makeRealPortServer(), { timeout: 120_000 })((it) => {
    it.scoped("reaches the outbox and follows an invitation's link with the keyboard only, at 1200 and 390 px", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const browser = yield* Effect.promise(() => launchChromium())
        yield* Effect.addFinalizer(() => Effect.promise(() => browser.close()))
        const context = yield* Effect.promise(() => browser.newContext({ viewport: { width: 1200, height: 900 } }))
        const page = yield* Effect.promise(() => context.newPage())
        const errors: Array<string> = []
        page.on("console", (message) => {
          if (message.type() === "error") errors.push(message.text())
        })

        // Signed up and an invitation sent over HTTP; the browser takes the session's cookie.
        const http = new DashboardBrowser(baseUrl)
        yield* Effect.promise(() => http.signUp("Outbox Gifts"))
        const invited = newEmail("invited")
        const sent = yield* Effect.promise(() =>
          http.submit(
            "/dashboard/members",
            { email: invited, role: "viewer", accounts: "all" },
            "/dashboard/members/invitations"
          )
        )
        expect(sent.status).toBe(303)
        const link = `${baseUrl}${yield* invitationPathFor(invited)}`
        const host = new URL(baseUrl).hostname
        yield* Effect.promise(() =>
          context.addCookies(
            [...http.cookies].map(([name, value]) => ({ name, value, domain: host, path: "/dashboard" }))
          )
        )

        yield* Effect.promise(async () => {
          await page.goto(`${baseUrl}/dashboard`)
          await tabTo(page, { text: "Outbox" })
          await page.keyboard.press("Enter")
          await page.waitForURL(`${baseUrl}/dashboard/outbox`)
          expect(await page.locator("h1").textContent()).toBe("Outbox")
          expect(await page.locator("article h2").first().textContent()).toContain("invites you to Outbox Gifts")
          await expectSound(page, "outbox")

          await page.setViewportSize({ width: 390, height: 844 })
          await expectSound(page, "outbox-390")

          expect(errors).toEqual([])
          // The invitation's link, followed: the owner is not the invited person, and the page says so (a 403).
          await tabTo(page, { href: link })
          await page.keyboard.press("Enter")
          await page.waitForURL(link)
          expect(await page.textContent("main")).toContain("This invitation is for someone else")
        })
      })
    )
  })
})
