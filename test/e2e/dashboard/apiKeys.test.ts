import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { BaseUrl, makeRealPortServer } from "../../support/auth.js"
import { browserSuiteSkipped, expectSoundPage, launchChromium } from "../../support/browser.js"
import { DashboardBrowser } from "../../support/dashboard.js"

/**
 * The API keys pages in chromium: create a key (shown once, copied with its button, then only its prefix in the
 * list), use it on /public-api/v3/accounts, revoke it through the confirm step (the key then gets 401); a form
 * with a problem shows it beside its field. Once more at 390 px wide with the keyboard only, and once with
 * JavaScript off (the key is there to select, the copy button is not). Every page visited passes axe-core
 * (no serious or critical violation) and does not scroll sideways; screenshots go to test-output/.
 */

/** axe's serious and critical findings on the page, and whether it scrolls sideways: none and no. */
const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

/** The focused element's id, its accessible label, or its text. */
const focused = (page: Page) =>
  page.evaluate(
    `(() => { const e = document.activeElement; return e ? (e.id || e.getAttribute("aria-label") || e.textContent.trim()) : "" })()`
  ) as Promise<string>

/** Tabs forward (or back) until the focused element is `target` (its id, label or text); at most 80 presses. */
const tabTo = async (page: Page, target: string, key: "Tab" | "Shift+Tab" = "Tab") => {
  for (let i = 0; i < 80; i++) {
    if ((await focused(page)) === target) return
    await page.keyboard.press(key)
  }
  throw new Error(`${key} never reached ${target}`)
}

/** A browser context signed in to a new company (signed up over HTTP, its session cookie handed over). */
const signedIn = async (
  browser: Browser,
  baseUrl: string,
  companyName: string,
  options: { readonly width: number; readonly javaScript?: boolean }
): Promise<{ readonly context: BrowserContext; readonly page: Page; readonly errors: Array<string> }> => {
  const http = new DashboardBrowser(baseUrl)
  await http.signUp(companyName)
  const context = await browser.newContext({
    viewport: { width: options.width, height: 900 },
    isMobile: options.width < 500,
    javaScriptEnabled: options.javaScript !== false
  })
  const host = new URL(baseUrl).hostname
  await context.addCookies(
    [...http.cookies].map(([name, value]) => ({ name, value, domain: host, path: "/dashboard" }))
  )
  const page = await context.newPage()
  const errors: Array<string> = []
  page.on("console", (message) => {
    // Statuses the test asks for (400) are logged as failed loads; anything else (a CSP refusal) counts.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) errors.push(message.text())
  })
  return { context, page, errors }
}

/** One chromium for the file's tests. */
class Chromium extends Context.Tag("test/Chromium")<Chromium, Browser>() {}

const ChromiumLive = Layer.scoped(
  Chromium,
  Effect.acquireRelease(Effect.promise(launchChromium), (browser) => Effect.promise(() => browser.close()))
)

const accountsStatus = async (baseUrl: string, apiKey: string) =>
  (await fetch(`${baseUrl}/public-api/v3/accounts`, { headers: { "x-api-key": apiKey } })).status

describe.skipIf(browserSuiteSkipped)("dashboard API keys in chromium", () => {
  it.layer(Layer.merge(makeRealPortServer(), ChromiumLive), { timeout: 180_000 })((it) => {
    it.effect("creates a key shown once, copies it, uses it, revokes it; the key then gets 401", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const browser = yield* Chromium
        yield* Effect.promise(async () => {
          // With the mouse, at desktop width.
          const { context, page, errors } = await signedIn(browser, baseUrl, "Chromium Keys", { width: 1200 })
          await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseUrl })
          await page.goto(`${baseUrl}/dashboard/api-keys`)
          expect(await page.locator("h1").textContent()).toBe("API keys")
          await expectSound(page, "api-keys-empty")

          await page.getByRole("link", { name: "Create a test key" }).click()
          await page.waitForURL(`${baseUrl}/dashboard/api-keys/new?environment=test`)
          await expectSound(page, "api-keys-new")

          // No name: the form says so beside the field, and keeps what was ticked.
          await page.getByLabel("accounts:read: Read accounts and their billing methods").check()
          await page.getByRole("button", { name: "Create key" }).click()
          await expect.poll(() => page.locator("#name-error").textContent()).toBe("Give the key a name.")
          expect(await page.getByLabel("accounts:read: Read accounts and their billing methods").isChecked()).toBe(true)
          await expectSound(page, "api-keys-new-error")

          await page.getByLabel("Name").fill("Chromium integration")
          await page.getByRole("button", { name: "Create key" }).click()
          await expect.poll(() => page.locator("h1").textContent()).toBe("API key created")
          const apiKey = await page.locator("#api-key").inputValue()
          expect(apiKey).toMatch(/^[0-9a-f]{24}$/)
          await expectSound(page, "api-keys-created")
          await page.getByRole("button", { name: "Copy key" }).click()
          await expect.poll(() => page.locator("#copy-status").textContent()).toBe("Copied.")
          expect(await page.evaluate("navigator.clipboard.readText()")).toBe(apiKey)

          expect(await accountsStatus(baseUrl, apiKey)).toBe(200)

          await page.getByRole("link", { name: "Back to API keys" }).click()
          await page.waitForURL(`${baseUrl}/dashboard/api-keys?environment=test`)
          const table = (await page.getByRole("table").textContent()) ?? ""
          expect(table).toContain("Chromium integration")
          expect(table).toContain(`${apiKey.slice(0, 6)}…`)
          expect(await page.content()).not.toContain(apiKey)
          await expectSound(page, "api-keys")

          await page.getByRole("link", { name: "Revoke Chromium integration" }).click()
          await expect.poll(() => page.locator("h1").textContent()).toBe("Revoke “Chromium integration”")
          await expectSound(page, "api-keys-revoke")
          expect(await accountsStatus(baseUrl, apiKey)).toBe(200)
          await page.getByRole("button", { name: "Revoke key" }).click()
          await page.waitForURL(`${baseUrl}/dashboard/api-keys?environment=test`)
          expect(await page.getByRole("status").first().textContent()).toContain("is revoked")
          await expectSound(page, "api-keys-revoked")
          expect(await accountsStatus(baseUrl, apiKey)).toBe(401)
          expect(errors).toEqual([])
          await context.close()

          // JavaScript off: the key is in a field to select and copy by hand; no button that would do nothing.
          const noScript = await signedIn(browser, baseUrl, "No Script Keys", { width: 1200, javaScript: false })
          await noScript.page.goto(`${baseUrl}/dashboard/api-keys/new`)
          await noScript.page.getByLabel("Name").fill("Without scripts")
          await noScript.page.getByRole("button", { name: "Create key" }).click()
          await expect.poll(() => noScript.page.locator("h1").textContent()).toBe("API key created")
          const shown = await noScript.page.locator("#api-key").inputValue()
          expect(shown).toMatch(/^[0-9a-f]{24}$/)
          expect(await noScript.page.getByRole("button", { name: "Copy key" }).isVisible()).toBe(false)
          await noScript.page.locator("#api-key").selectText()
          const selected = `(() => { const e = document.getElementById("api-key"); return e.value.slice(e.selectionStart, e.selectionEnd) })()`
          expect(await noScript.page.evaluate(selected)).toBe(shown)
          await noScript.context.close()
        })
      })
    )

    it.effect("at 390 px wide, with the keyboard only: creates, copies and revokes a key", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const browser = yield* Chromium
        yield* Effect.promise(async () => {
          const { context, page, errors } = await signedIn(browser, baseUrl, "Keyboard Keys", { width: 390 })
          await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseUrl })
          await page.goto(`${baseUrl}/dashboard/api-keys`)
          await expectSound(page, "api-keys-empty-390")

          await tabTo(page, "Create a test key")
          await page.keyboard.press("Enter")
          await page.waitForURL(`${baseUrl}/dashboard/api-keys/new?environment=test`)
          await expectSound(page, "api-keys-new-390")
          await tabTo(page, "name")
          await page.keyboard.type("Keyboard integration with a long name")
          await tabTo(page, "permission-accounts-read")
          await page.keyboard.press("Space")
          await tabTo(page, "permission-campaigns-read")
          await page.keyboard.press("Space")
          await tabTo(page, "Create key")
          await page.keyboard.press("Enter")
          await expect.poll(() => page.locator("h1").textContent()).toBe("API key created")
          await expectSound(page, "api-keys-created-390")
          const apiKey = await page.locator("#api-key").inputValue()

          await tabTo(page, "Copy key")
          await page.keyboard.press("Space")
          await expect.poll(() => page.locator("#copy-status").textContent()).toBe("Copied.")
          expect(await page.evaluate("navigator.clipboard.readText()")).toBe(apiKey)
          expect(await accountsStatus(baseUrl, apiKey)).toBe(200)

          await tabTo(page, "Back to API keys")
          await page.keyboard.press("Enter")
          await page.waitForURL(`${baseUrl}/dashboard/api-keys?environment=test`)
          await expectSound(page, "api-keys-390")
          await tabTo(page, "Revoke Keyboard integration with a long name")
          await page.keyboard.press("Enter")
          await expect.poll(() => page.locator("h1").textContent()).toContain("Revoke")
          await expectSound(page, "api-keys-revoke-390")
          // The way back comes after the button; Shift+Tab from it returns to the button.
          await tabTo(page, "Cancel")
          await tabTo(page, "Revoke key", "Shift+Tab")
          await page.keyboard.press("Enter")
          await page.waitForURL(`${baseUrl}/dashboard/api-keys?environment=test`)
          expect(await page.getByRole("status").first().textContent()).toContain("is revoked")
          await expectSound(page, "api-keys-revoked-390")
          expect(await accountsStatus(baseUrl, apiKey)).toBe(401)
          expect(errors).toEqual([])
          await context.close()
        })
      })
    )
  })
})
