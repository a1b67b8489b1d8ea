import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { BrowserContext, Page } from "playwright-core"
import { Webhook } from "standardwebhooks"
import { allAccounts } from "../../../src/domain/company/Company.js"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { BaseUrl } from "../../support/auth.js"
import { browserSuiteSkipped, expectSoundPage, launchChromium } from "../../support/browser.js"
import { londonAddress, makeCheckoutRealPortServer, recipient } from "../../support/checkout.js"
import { ownerOf } from "../../support/dashboardMembers.js"
import { certificate, httpsReceiver, type Received } from "../../support/receiver.js"
import { signatureHeaders } from "../../support/webhooks.js"

/**
 * The webhooks pages in a real browser (Debian's chromium), against the served API with its own worker, which
 * delivers to a real HTTPS receiver on loopback: create an endpoint (its secret copied from the page), place a
 * sandbox order through the API, see its delivery, resend it and see the second attempt arrive, signed with that
 * secret. Then a test event, disable and enable, and deletion through its confirm step; and the main flow again
 * at 390 px with the keyboard only. Every page visited passes axe-core and does not scroll sideways; screenshots go
 * to test-output/dashboard-webhooks-*.png. Skipped without chromium and on the Postgres run (`browserSuiteSkipped`).
 */

const Server = makeCheckoutRealPortServer(
  Layer.mergeAll(
    FulfillmentSettings.Default,
    OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })
  )
)

/** axe's serious and critical findings on the page, and whether it scrolls sideways: none and no. */
const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-webhooks-${name}`)

const focusedText = (page: Page) =>
  page.evaluate(
    "document.activeElement ? (document.activeElement.id || document.activeElement.textContent.trim()) : ''"
  )

/** Tabs forward until the focused element's id or text is `target` (at most 60 presses). */
const tabTo = async (page: Page, target: string) => {
  for (let i = 0; i < 60; i++) {
    if ((await focusedText(page)) === target) return
    await page.keyboard.press("Tab")
  }
  throw new Error(`Tab never reached ${target}`)
}

/** Reloads the page until its main content matches `text` (the worker delivers in the background). */
const reloadUntil = async (page: Page, text: RegExp) => {
  await expect
    .poll(
      async () => {
        await page.reload()
        return page.locator("main").textContent()
      },
      { timeout: 20_000, interval: 200 }
    )
    .toMatch(text)
}

/** A new company signed up over HTTP, its session given to a browser context; its id. */
const signUpInto = (baseUrl: string, context: BrowserContext, name: string) =>
  Effect.gen(function* () {
    const { browser: http, companyId } = yield* ownerOf(baseUrl, name)
    yield* Effect.promise(() =>
      context.addCookies([
        {
          name: "ribbon_dashboard",
          value: http.cookies.get("ribbon_dashboard")!,
          url: `${baseUrl}/dashboard`,
          httpOnly: true,
          sameSite: "Lax"
        }
      ])
    )
    return companyId
  })

/** Places an order through the API with a new test key of the company: its id. */
const placeOrder = (baseUrl: string, companyId: string) =>
  Effect.gen(function* () {
    const key = yield* Effect.flatMap(KeyStore, (keys) =>
      keys.create({
        companyId,
        environment: "test",
        name: "orders",
        expirationInDays: 1,
        enforceMtls: false,
        permissions: ["orders:create"],
        accountsAccess: allAccounts,
        requestSource: null
      })
    )
    const sql = yield* SqlClient.SqlClient
    const [variant] = yield* sql<{ id: string }>`SELECT v.id FROM variants v
      JOIN variant_locations l ON l.variant_id = v.id
      WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND 'GB' = ANY (l.ships_to) AND l.stock > 100
      ORDER BY l.stock DESC, v.id LIMIT 1`
    const response = yield* Effect.promise(() =>
      fetch(`${baseUrl}/public-api/v3/orders`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key.apiKey },
        body: JSON.stringify({
          variantId: variant!.id,
          recipient,
          shippingAddress: londonAddress,
          idempotencyKey: `dashboard-${companyId}`
        })
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { data: { id: string } } }))
    )
    expect(response.status).toBe(201)
    return response.body.data.id
  }).pipe(Effect.orDie)

/** The requests the receiver got at `path`. */
const at = (received: ReadonlyArray<Received>, path: string) => received.filter((request) => request.path === path)

describe.skipIf(browserSuiteSkipped)("dashboard webhooks in chromium", () => {
  it.layer(Server, { timeout: 180_000 })((it) => {
    it.scoped(
      "create, an API order's delivery, resend to an HTTPS receiver; then by keyboard at 390 px",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const receiver = yield* httpsReceiver((_, index) => ({ status: index % 2 === 0 ? 200 : 202, body: "ok" }))
          const browser = yield* Effect.acquireRelease(Effect.promise(launchChromium), (b) =>
            Effect.promise(() => b.close())
          )
          const origin = new URL(baseUrl).origin

          // --- With a mouse, at 1200 px. ---
          const context = yield* Effect.promise(() => browser.newContext({ viewport: { width: 1200, height: 900 } }))
          yield* Effect.promise(() => context.grantPermissions(["clipboard-read", "clipboard-write"], { origin }))
          const companyId = yield* signUpInto(baseUrl, context, "Hooked in Chromium")
          const page = yield* Effect.promise(() => context.newPage())
          const errors: Array<string> = []
          page.on("console", (message) => {
            // Statuses the test asks for (400) are logged as failed loads; anything else (a CSP refusal) counts.
            if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
              errors.push(message.text())
            }
          })
          const url = receiver.url("/hooks/desktop")
          const { endpointPath, secret } = yield* Effect.promise(async () => {
            await page.goto(`${baseUrl}/dashboard`)
            await page.getByRole("link", { name: "Webhooks" }).click()
            await page.waitForURL(`${baseUrl}/dashboard/webhooks`)
            expect(await page.locator("main").textContent()).toContain("No test endpoints yet.")
            await expectSound(page, "list-empty")

            await page.getByRole("link", { name: "Add an endpoint" }).click()
            await expectSound(page, "new")
            // Nothing filled in: each field says what it needs.
            await page.getByRole("button", { name: "Create endpoint" }).click()
            await expect.poll(() => page.locator("#url-error").textContent()).toBe("Enter the endpoint's URL.")
            expect(await page.locator("#eventTypes-error").textContent()).toBe("Choose at least one event type.")
            await expectSound(page, "new-errors")

            await page.getByLabel("URL").fill(url)
            await page.getByLabel("order-created").check()
            await page.getByRole("button", { name: "Create endpoint" }).click()
            await expect.poll(() => page.locator("h1").textContent()).toBe("Endpoint created")
            const secret = await page.getByLabel("Signing secret").inputValue()
            expect(secret).toMatch(/^whsec_/)
            await page.getByRole("button", { name: "Copy secret" }).click()
            await expect.poll(() => page.getByRole("status").textContent()).toBe("Copied.")
            expect(await page.evaluate("navigator.clipboard.readText()")).toBe(secret)
            await expectSound(page, "created")

            await page.getByRole("link", { name: "Go to the endpoint" }).click()
            await expect.poll(() => page.locator("h1").textContent()).toBe("Webhook endpoint")
            expect(await page.locator("main").textContent()).toContain("No deliveries yet.")
            expect(await page.content()).not.toContain(secret.slice(6))
            await expectSound(page, "endpoint-empty")
            return { endpointPath: new URL(page.url()).pathname, secret }
          })

          const orderId = yield* placeOrder(baseUrl, companyId)
          yield* Effect.promise(async () => {
            await reloadUntil(page, /Delivered/)
            const row = await page.getByRole("row").nth(1).textContent()
            expect(row).toMatch(/order-created\s*Delivered\s*1\s*200\s*\d+ ms/)
            await expectSound(page, "endpoint")

            await page.getByRole("link", { name: "order-created" }).click()
            await expect.poll(() => page.locator("h1").textContent()).toBe("Delivery of order-created")
            const main = await page.locator("main").textContent()
            expect(main).toContain(url)
            expect(main).toContain(`"orderId": "${orderId}"`)
            expect(main).toContain("webhook-signature")
            expect(main).toMatch(/Attempt 1[\s\S]*Response status\s*200/)
            await expectSound(page, "delivery")

            await page.getByRole("button", { name: "Resend" }).click()
            await expect.poll(() => page.getByRole("status").textContent()).toContain("Resent")
            // Its outcome, not just its start: a started attempt shows "In flight".
            await reloadUntil(page, /Attempt 2[\s\S]*Response status\s*202/)
            await expectSound(page, "delivery-resent")
          })
          // Both attempts arrived, with the same webhook-id, signed with the secret the page showed once.
          const desktop = at(receiver.received, "/hooks/desktop")
          expect(desktop).toHaveLength(2)
          expect(desktop[0]!.headers["webhook-id"]).toBe(desktop[1]!.headers["webhook-id"])
          for (const request of desktop) {
            expect(new Webhook(secret).verify(request.body, signatureHeaders(request))).toMatchObject({
              webhookData: { eventType: "order-created", target: url },
              eventData: { orderId }
            })
          }

          yield* Effect.promise(async () => {
            await page.goto(`${baseUrl}${endpointPath}`)
            await page.getByRole("button", { name: "Send test event" }).click()
            await expect.poll(() => page.getByRole("status").textContent()).toContain("A test event is on its way")
            await reloadUntil(page, /webhook-test/)
            await page.getByRole("button", { name: "Disable" }).click()
            await expect.poll(() => page.getByRole("status").textContent()).toContain("Endpoint disabled")
            expect(await page.getByRole("button", { name: "Send test event" }).count()).toBe(0)
            await expectSound(page, "endpoint-disabled")
            await page.getByRole("button", { name: "Enable" }).click()
            await expect.poll(() => page.getByRole("status").textContent()).toContain("Endpoint enabled")

            await page.getByRole("link", { name: "Delete endpoint" }).click()
            await expect.poll(() => page.locator("#confirm-title").textContent()).toBe("Delete this endpoint?")
            await expectSound(page, "delete")
            await page.getByRole("button", { name: "Delete endpoint" }).click()
            await page.waitForURL(`${baseUrl}/dashboard/webhooks?environment=test`)
            expect(await page.getByRole("status").textContent()).toContain("Endpoint deleted.")
            expect(await page.locator("main").textContent()).toContain("No test endpoints yet.")
            expect(errors).toEqual([])
          })
          yield* Effect.promise(() => context.close())

          // --- The main flow again with the keyboard only, at 390 px. ---
          const narrow = yield* Effect.promise(() =>
            browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true })
          )
          yield* Effect.promise(() => narrow.grantPermissions(["clipboard-read", "clipboard-write"], { origin }))
          const narrowCompany = yield* signUpInto(baseUrl, narrow, "Keyboard Hooks with a rather long company name")
          const keys = yield* Effect.promise(() => narrow.newPage())
          const keyboardUrl = receiver.url("/hooks/keyboard")
          yield* Effect.promise(async () => {
            await keys.goto(`${baseUrl}/dashboard`)
            await tabTo(keys, "Webhooks")
            await keys.keyboard.press("Enter")
            await keys.waitForURL(`${baseUrl}/dashboard/webhooks`)
            await expectSound(keys, "list-390")
            await tabTo(keys, "Add an endpoint")
            await keys.keyboard.press("Enter")
            await keys.waitForURL(/\/dashboard\/webhooks\/new/)
            await expectSound(keys, "new-390")
            await tabTo(keys, "url")
            await keys.keyboard.type(keyboardUrl)
            await tabTo(keys, "event-order-created")
            await keys.keyboard.press("Space")
            expect(await keys.locator("#event-order-created").isChecked()).toBe(true)
            await tabTo(keys, "Create endpoint")
            await keys.keyboard.press("Enter")
            await expect.poll(() => keys.locator("h1").textContent()).toBe("Endpoint created")
            await expectSound(keys, "created-390")
            await tabTo(keys, "Copy secret")
            await keys.keyboard.press("Space")
            await expect.poll(() => keys.getByRole("status").textContent()).toBe("Copied.")
            await tabTo(keys, "Go to the endpoint")
            await keys.keyboard.press("Enter")
            await expect.poll(() => keys.locator("h1").textContent()).toBe("Webhook endpoint")
          })
          yield* placeOrder(baseUrl, narrowCompany)
          yield* Effect.promise(async () => {
            await reloadUntil(keys, /Delivered/)
            await expectSound(keys, "endpoint-390")
            await tabTo(keys, "order-created")
            await keys.keyboard.press("Enter")
            await expect.poll(() => keys.locator("h1").textContent()).toBe("Delivery of order-created")
            await expectSound(keys, "delivery-390")
            await tabTo(keys, "Resend")
            await keys.keyboard.press("Enter")
            await expect.poll(() => keys.getByRole("status").textContent()).toContain("Resent")
            await reloadUntil(keys, /Attempt 2[\s\S]*Response status\s*20[02]/)
            await expectSound(keys, "delivery-resent-390")
          })
          const keyboard = at(receiver.received, "/hooks/keyboard")
          expect(keyboard).toHaveLength(2)
          expect(keyboard[0]!.headers["webhook-id"]).toBe(keyboard[1]!.headers["webhook-id"])
        }),
      // About 20 s alone; more when the machine is busy.
      90_000
    )
  })
})
