import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { BaseUrl, makeRealPortServer } from "../../support/auth.js"
import { browserSuiteSkipped, expectSoundPage, launchChromium } from "../../support/browser.js"
import { newEmail, strongPassword } from "../../support/dashboard.js"
import { AuthenticatorApp } from "../../support/twoFactor.js"

/**
 * Two-factor sign-in in a real browser (Debian's chromium), 390 px wide and with the keyboard only (Tab,
 * Shift+Tab, typing into the focused field, Enter): sign up, set up two-factor from the account page (the QR
 * code an <svg> in the page under its real CSP, the key read from the page and the code computed from it for
 * the current time), see the recovery codes, sign out; sign in with the password and a code; a wrong code
 * refused; a recovery code works once. Every page visited passes axe and does not scroll sideways; screenshots
 * go to test-output/dashboard-*.png. Skipped as `browserSuiteSkipped` says (no chromium, or the run on a Postgres server).
 */

const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

const focused = (page: Page) =>
  page.evaluate("[document.activeElement.id, document.activeElement.textContent.trim()]") as Promise<[string, string]>

/** Tabs forward until the element with `id` (or, for links and buttons, with the text `text`) has the focus. */
const tabTo = async (page: Page, target: { readonly id?: string; readonly text?: string }) => {
  for (let i = 0; i < 40; i++) {
    const [id, text] = await focused(page)
    if ((target.id !== undefined && id === target.id) || (target.text !== undefined && text === target.text)) return
    await page.keyboard.press("Tab")
  }
  throw new Error(`Tab never reached ${JSON.stringify(target)}`)
}

/** Shift+Tab back until the button or link with `text` has the focus. */
const tabBackTo = async (page: Page, text: string) => {
  for (let i = 0; i < 40; i++) {
    if ((await focused(page))[1] === text) return
    await page.keyboard.press("Shift+Tab")
  }
  throw new Error(`Shift+Tab never reached ${text}`)
}

const typeInto = async (page: Page, id: string, text: string) => {
  await tabTo(page, { id })
  await page.keyboard.type(text)
}

describe.skipIf(browserSuiteSkipped)("dashboard two-factor sign-in in chromium", () => {
  it.layer(makeRealPortServer(), { timeout: 180_000 })((it) => {
    it.effect("enrols with a code from the page's key, then signs in with password and code; keyboard only", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const email = newEmail("twofactor")
        yield* Effect.promise(async () => {
          const browser = await launchChromium()
          try {
            const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true })
            const page = await context.newPage()
            const errors: Array<string> = []
            page.on("console", (message) => {
              // Statuses the test asks for (401) are logged as failed loads; anything else (a CSP refusal) counts.
              if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
                errors.push(message.text())
              }
            })

            await page.goto(`${baseUrl}/dashboard/sign-up`)
            await typeInto(page, "email", email)
            await typeInto(page, "password", strongPassword)
            await typeInto(page, "companyName", "Second Factor Gifts")
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard`)

            await tabTo(page, { text: "Account and security" })
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/account`)
            await expectSound(page, "account")

            await tabTo(page, { text: "Set up two-factor sign-in" })
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/account/two-factor`)
            // The QR code is drawn: an <svg> element of the page, not an image the CSP could refuse.
            const qr = await page.locator(".qr svg").boundingBox()
            expect(qr?.width).toBe(200)
            await expectSound(page, "account-enrol")
            const key = (await page.locator("#two-factor-key").textContent())!.replace(/\s/g, "")
            const app = new AuthenticatorApp(key)

            await typeInto(page, "code", app.code())
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/account/two-factor/confirm`)
            expect(await page.getByRole("status").textContent()).toContain("Two-factor sign-in is on.")
            const codes = await page.locator(".recovery-codes code").allTextContents()
            expect(codes).toHaveLength(10)
            await expectSound(page, "account-recovery-codes")

            const signOut = async () => {
              await tabTo(page, { text: "Sign out" })
              await page.keyboard.press("Enter")
              await page.waitForURL(`${baseUrl}/dashboard/sign-in`)
            }
            const password = async () => {
              await typeInto(page, "email", email)
              await typeInto(page, "password", strongPassword)
              await page.keyboard.press("Enter")
              await page.waitForURL(`${baseUrl}/dashboard/sign-in/two-factor`)
            }

            await signOut()
            await password()
            await expectSound(page, "sign-in-two-factor")

            await typeInto(page, "code", app.wrongCode())
            await page.keyboard.press("Enter")
            await expect.poll(() => page.locator("#code-error").textContent()).toContain("This code is not right")
            await expectSound(page, "sign-in-two-factor-error")

            await typeInto(page, "code", app.code())
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard`)
            expect(await page.locator("h1").textContent()).toBe("Second Factor Gifts")

            // The account page says it is on; the pages behind it ask for the password again.
            await page.goto(`${baseUrl}/dashboard/account`)
            expect(await page.locator("main").textContent()).toContain("10 recovery codes left.")
            await tabTo(page, { text: "Make new recovery codes" })
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/account/recovery-codes`)
            await expectSound(page, "account-new-recovery-codes")
            await tabTo(page, { text: "Cancel" })
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/account`)
            await tabTo(page, { text: "Turn off two-factor sign-in" })
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/account/two-factor/disable`)
            await expectSound(page, "account-two-factor-off")

            // A recovery code signs in once.
            await tabBackTo(page, "Sign out")
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard/sign-in`)
            await password()
            await typeInto(page, "code", codes[0]!)
            await page.keyboard.press("Enter")
            await page.waitForURL(`${baseUrl}/dashboard`)
            expect(await page.getByRole("status").textContent()).toContain("recovery code; 9 left")

            await signOut()
            await password()
            await typeInto(page, "code", codes[0]!)
            await page.keyboard.press("Enter")
            await expect.poll(() => page.locator("#code-error").textContent()).toContain("already used")
            expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in/two-factor")
            expect(errors).toEqual([])
          } finally {
            await browser.close()
          }
        })
      })
    )
  })
})
