import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, RealPortServer } from "../../support/auth.js"
import { browserSuiteSkipped, checkAccessibility, launchChromium } from "../../support/browser.js"

/**
 * The authorize pages in a real browser (Debian's chromium): create an account, consent, land on the
 * client's redirect URI with a code; both pages with no serious or critical axe-core finding. Screenshots of both
 * pages go to test-output/e2e/. Skipped as `browserSuiteSkipped` says (no chromium, or the run on a Postgres
 * server).
 */

const output = new URL("../../../test-output/e2e/", import.meta.url)

describe.skipIf(browserSuiteSkipped)("authorize pages in chromium", () => {
  it.layer(RealPortServer, { timeout: 120_000 })((it) => {
    it.effect(
      "signs up, shows the client and every scope on the consent page, and lands on the redirect with a code",
      () =>
        Effect.flatMap(BaseUrl, (baseUrl) =>
          Effect.promise(async () => {
            const redirectUri = "http://127.0.0.1:9/callback"
            const registered: any = await fetch(`${baseUrl}/oauth/register`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({
                client_name: "Browser Test Agent",
                redirect_uris: [redirectUri],
                token_endpoint_auth_method: "none"
              })
            }).then((r) => r.json())
            const verifier = randomBytes(32).toString("base64url")
            const scopes = ["profile", "catalog:read", "orders:read", "orders:write", "offline_access"]
            const url = new URL(`${baseUrl}/oauth/authorize`)
            url.search = new URLSearchParams({
              response_type: "code",
              client_id: registered.client_id,
              redirect_uri: redirectUri,
              scope: scopes.join(" "),
              state: "browser-state",
              code_challenge: createHash("sha256").update(verifier).digest("base64url"),
              code_challenge_method: "S256"
            }).toString()

            Fs.mkdirSync(output, { recursive: true })
            const browser = await launchChromium()
            try {
              // The pages are plain forms: they work with JavaScript off.
              const page = await browser.newPage({ javaScriptEnabled: false })
              // Nothing listens on the client's redirect URI: answer it here and record where we landed.
              let landed: URL | undefined
              await page.route(`${redirectUri}**`, (route) => {
                landed = new URL(route.request().url())
                return route.fulfill({ status: 200, contentType: "text/plain", body: "callback" })
              })
              await page.goto(url.toString())
              await expect(page.title()).resolves.toBe("Sign in to Ribbon")
              expect(await checkAccessibility(page), "the sign-in page: accessibility").toEqual([])
              await page.screenshot({ path: new URL("sign-in.png", output).pathname, fullPage: true })

              await page.getByLabel("Your name (optional)").fill("Browser User")
              await page.getByLabel("Email for the new account").fill(`browser-${Date.now()}@example.com`)
              await page.getByLabel("Choose a password (at least 8 characters)").fill("a browser password")
              await page.getByRole("button", { name: "Create account" }).click()

              await page.getByRole("button", { name: "Allow" }).waitFor()
              const heading = await page.getByRole("heading", { level: 1 }).textContent()
              expect(heading).toContain("Browser Test Agent")
              const text = await page.locator("main").textContent()
              expect(text).toContain("127.0.0.1:9")
              const listed = await page.locator("ul.scopes li code").allTextContents()
              expect(listed).toEqual(scopes)
              await expect(page.getByRole("button", { name: "Deny" }).isVisible()).resolves.toBe(true)
              expect(await checkAccessibility(page), "the consent page: accessibility").toEqual([])
              await page.screenshot({ path: new URL("consent.png", output).pathname, fullPage: true })

              await page.getByRole("button", { name: "Allow" }).click()
              await page.waitForURL(`${redirectUri}**`)
              expect(landed?.searchParams.get("code")).toMatch(/^rbc_/)
              expect(landed?.searchParams.get("state")).toBe("browser-state")
              expect(landed?.searchParams.get("iss")).toBe(baseUrl)

              // The session cookie is httpOnly and SameSite=Lax.
              const cookies = await page.context().cookies(`${baseUrl}/oauth/authorize`)
              const session = cookies.find((c) => c.name === "ribbon_session")
              expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax" })
            } finally {
              await browser.close()
            }
            expect(Fs.statSync(new URL("sign-in.png", output)).size).toBeGreaterThan(1000)
            expect(Fs.statSync(new URL("consent.png", output)).size).toBeGreaterThan(1000)
          })
        ),
      120_000
    )
  })
})
