import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Layer } from "effect"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { BaseUrl } from "../../support/auth.js"
import {
  browserSuiteSkipped,
  expectSoundPage,
  focusedId,
  focusedText,
  launchChromium,
  tabUntil
} from "../../support/browser.js"
import { londonAddress, makeCheckoutRealPortServer, recipient } from "../../support/checkout.js"
import { MemoryOAuthProvider, mcpClient } from "../../support/mcp.js"
import { certificate, httpsReceiver } from "../../support/receiver.js"

/**
 * Spending allowances end to end (docs/allowances.md): an agent, the MCP SDK's `Client` over Streamable HTTP,
 * named by its client ID metadata document (served over HTTPS on loopback) and authorized by the person in
 * Chromium with `payments:allowance`. Without an allowance its checkout is refused `allowance_unavailable` with the
 * paymentUrl; the person follows the agent's `setupUrl` and sets one up on the hosted page, by keyboard; the
 * agent's next checkout is paid at once and placed; one over the per-checkout limit is refused
 * `allowance_exceeded`; the person revokes it on /allowances and the next checkout is refused again. Every page
 * is axe-clean, with screenshots at test-output/allowances-*.png. Skipped as `browserSuiteSkipped` says.
 */

/** The seeded server with its worker; outbound HTTPS to loopback trusts the document receiver's certificate. */
const Server = makeCheckoutRealPortServer(
  Layer.mergeAll(
    FulfillmentSettings.Default,
    OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })
  )
)

const redirect = "http://127.0.0.1:33420/oauth/callback"
const scope = "profile catalog:read orders:read orders:write payments:allowance"
const account = { email: `allowance-${Date.now()}@example.com`, password: "a person's own password" }

/** The SDK's in-memory provider, naming itself by its metadata document's URL instead of registering. */
class DocumentProvider extends MemoryOAuthProvider {
  constructor(readonly clientMetadataUrl: string) {
    super(scope, redirect)
  }
}

interface ToolResult {
  readonly isError?: boolean
  readonly content: ReadonlyArray<{ readonly type: string; readonly text: string }>
  readonly structuredContent?: any
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as ToolResult

/** A refused tool call's problem: its first text names status and code, its second is the `/v1` problem body. */
const problemOf = (result: ToolResult, status: number, code: string) => {
  expect(result.isError, JSON.stringify(result.content)).toBe(true)
  expect(result.content[0]!.text).toMatch(new RegExp(`^Error ${status} ${code}: `))
  const body = JSON.parse(result.content[1]!.text)
  expect(body.code).toBe(code)
  return body
}

/** "£12.34" as the person types it into the form: major units (two-decimal currencies). */
const typed = (minor: number) => (minor / 100).toFixed(2)

describe.skipIf(browserSuiteSkipped)("spending allowances end to end", () => {
  it.layer(Server, { timeout: 240_000 })((it) => {
    it.scoped(
      "an MCP agent without an allowance, the person setting one up in chromium, paid at once, over the limit, revoked",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          let documentUrl = ""
          const receiver = yield* httpsReceiver((request) =>
            request.path === "/agent/client.json"
              ? {
                  status: 200,
                  headers: { "content-type": "application/json", "cache-control": "max-age=300" },
                  body: JSON.stringify({
                    client_id: documentUrl,
                    client_name: "Gift Agent",
                    client_uri: "https://agent.example",
                    redirect_uris: [redirect],
                    grant_types: ["authorization_code", "refresh_token"],
                    response_types: ["code"],
                    token_endpoint_auth_method: "none"
                  })
                }
              : { status: 404 }
          )
          documentUrl = receiver.url("/agent/client.json")
          // A physical variant shipping to GB with stock for every checkout below.
          const sql = yield* SqlClient.SqlClient
          const [variant] = yield* sql<{ id: string }>`
            SELECT v.id FROM variants v JOIN variant_locations vl ON vl.variant_id = v.id
            WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND vl.stock >= 30 AND 'GB' = ANY (vl.ships_to)
            ORDER BY v.id LIMIT 1`
          expect(variant).toBeDefined()

          yield* Effect.promise(async () => {
            const mcpUrl = new URL(`${baseUrl}/mcp`)
            const provider = new DocumentProvider(documentUrl)
            const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })
            await mcpClient()
              .connect(first)
              .catch(() => undefined)
            expect(provider.authorizationUrl?.searchParams.get("client_id")).toBe(documentUrl)

            const browser = await launchChromium()
            try {
              const page = await browser.newPage({ viewport: { width: 900, height: 900 } })
              const problems: Array<string> = []
              page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
              page.on("console", (message) => {
                if (message.type() === "error") problems.push(`console: ${message.text()}`)
              })
              let landed: URL | undefined
              await page.route(`${redirect}**`, (route) => {
                landed = new URL(route.request().url())
                return route.fulfill({ status: 200, contentType: "text/plain", body: "callback" })
              })

              // The person signs up and allows the agent, the consent page explaining the allowance scope.
              await page.goto(provider.authorizationUrl!.toString())
              await page.getByLabel("Email for the new account").fill(account.email)
              await page.getByLabel("Choose a password (at least 8 characters)").fill(account.password)
              await page.getByRole("button", { name: "Create account" }).click()
              await page.getByRole("button", { name: "Allow" }).waitFor()
              expect(await page.getByRole("heading", { level: 1 }).textContent()).toContain("Gift Agent")
              expect(await page.locator("main").textContent()).toContain("spending allowance")
              await expectSoundPage(page, "allowances-consent")
              await page.getByRole("button", { name: "Allow" }).click()
              await page.waitForURL(`${redirect}**`)
              await first.finishAuth(landed!.searchParams.get("code")!)
              expect(provider.saved?.scope?.split(" ")).toContain("payments:allowance")
              const agent = mcpClient()
              await agent.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }))

              const quote = async () => {
                const made = await call(agent, "createQuote", { variantId: variant!.id, countryCode: "GB" })
                expect(made.isError, JSON.stringify(made.content)).toBeFalsy()
                return {
                  quoteId: made.structuredContent.id as string,
                  total: made.structuredContent.totalAmount as number
                }
              }
              const checkout = async (quantity = 1) => {
                const { quoteId, total } = await quote()
                const result = await call(agent, "createCheckout", {
                  items: [{ quoteId, quantity }],
                  recipient,
                  shippingAddress: londonAddress,
                  payWith: "allowance"
                })
                return { result, total: total * quantity }
              }

              // 1. No allowance yet: the checkout is made but refused, with the link to pay by hand; the
              // allowances tool gives the set-up link to hand the person.
              const none = await checkout()
              const unavailable = problemOf(none.result, 402, "allowance_unavailable")
              expect(unavailable.paymentUrl).toMatch(new RegExp(`^${baseUrl}/pay/${unavailable.checkoutId}\\?t=`))
              const listed = await call(agent, "listAllowances", {})
              expect(listed.isError).toBeFalsy()
              expect(listed.structuredContent.allowances).toEqual([])
              const setupUrl: string = listed.structuredContent.setupUrl
              expect(setupUrl).toBe(`${baseUrl}/allowances/new?client_id=${encodeURIComponent(documentUrl)}`)
              expect(listed.content[0]!.text).toContain(setupUrl)

              // 2. The person sets it up: one checkout of the quote fits the per-checkout limit, two do not.
              const perCheckout = Math.floor(none.total * 1.5)
              const response = await page.goto(setupUrl)
              expect(response?.status()).toBe(200)
              await expect(page.title()).resolves.toBe("Set up an allowance for Gift Agent · Ribbon")
              await expectSoundPage(page, "allowances-new")
              const typeInto = async (id: string, text: string) => {
                await tabUntil(page, focusedId(id), `#${id}`)
                await page.keyboard.press("Control+A")
                await page.keyboard.type(text)
              }
              await typeInto("currency", "GBP")
              await typeInto("perCheckout", typed(perCheckout))
              await typeInto("periodLimit", typed(10 * none.total))
              await typeInto("total", typed(20 * none.total))
              await typeInto("days", "30")
              await typeInto("countries", "GB")
              await typeInto("card-number", "4242 4242 4242 4242")
              await typeInto("card-expiry", "12/34")
              await typeInto("card-cvc", "123")
              await typeInto("card-name", "Ada Lovelace")
              await typeInto("email", account.email)
              await typeInto("password", account.password)
              await expectSoundPage(page, "allowances-filled")
              await tabUntil(page, focusedText("Allow Gift Agent to pay"), "the submit button")
              const [created] = await Promise.all([
                page.waitForResponse((r) => r.request().method() === "POST" && r.url() === `${baseUrl}/allowances/new`),
                page.keyboard.press("Enter")
              ])
              expect(created.status()).toBe(201)
              await page.getByRole("heading", { level: 1, name: "Allowance set up" }).waitFor()
              const done = (await page.locator("main").textContent()) ?? ""
              expect(done).toContain("Gift Agent can now pay for you within these limits.")
              expect(done).toContain(`Up to £${typed(perCheckout)} per checkout`)
              expect(done).toContain("Deliveries to GB only")
              expect(done).toMatch(/Card \S+ ending 4242/)
              expect(await page.content()).not.toContain("4242 4242 4242 4242")
              await expectSoundPage(page, "allowances-created")

              // The agent sees it, with what it may spend now.
              const active = await call(agent, "listAllowances", {})
              expect(active.structuredContent.allowances).toHaveLength(1)
              expect(active.structuredContent.allowances[0]).toMatchObject({
                status: "active",
                currency: "GBP",
                perCheckoutLimit: perCheckout,
                remainingInPeriod: perCheckout,
                allowedCountries: ["GB"]
              })

              // 3. The next checkout is paid at once, no page, and placed.
              const paid = await checkout()
              expect(paid.result.isError, JSON.stringify(paid.result.content)).toBeFalsy()
              expect(paid.result.structuredContent).toMatchObject({ status: "paid", paymentUrl: null })
              expect(paid.result.structuredContent.nextStep).toContain("waitForCheckout")
              let settled = paid.result.structuredContent
              for (let i = 0; i < 4 && (settled.status === "paid" || settled.status === "placing"); i++) {
                const waited = await call(agent, "waitForCheckout", { checkoutId: settled.id, status: settled.status })
                settled = waited.structuredContent
              }
              expect(settled.status).toBe("confirmed")
              expect(settled.orderIds).toHaveLength(1)

              // 4. Two of the quote are over the per-checkout limit: refused, naming it, still payable by hand.
              const over = await checkout(2)
              const exceeded = problemOf(over.result, 402, "allowance_exceeded")
              expect(exceeded.limit).toBe("perCheckout")
              expect(exceeded.paymentUrl).toMatch(new RegExp(`^${baseUrl}/pay/${exceeded.checkoutId}\\?t=`))
              expect(over.result.content[0]!.text).toContain(`£${typed(perCheckout)}`)

              // 5. The person revokes it on /allowances (signed in by the set-up page), by keyboard.
              await page.goto(`${baseUrl}/allowances`)
              await expect(page.title()).resolves.toBe("Your allowances · Ribbon")
              const section = page.locator("section.allowance")
              await expect(section.count()).resolves.toBe(1)
              const history = (await section.locator("table").textContent()) ?? ""
              expect(history).toContain(settled.id)
              expect(history).toContain("Paid")
              await expectSoundPage(page, "allowances-list")
              await tabUntil(page, focusedText("Revoke"), "the revoke button")
              const [revoked] = await Promise.all([
                page.waitForResponse((r) => r.request().method() === "POST" && r.url().endsWith("/revoke")),
                page.keyboard.press("Enter")
              ])
              expect(revoked.status()).toBe(200)
              await expect(page.getByRole("status").textContent()).resolves.toBe(
                "The allowance was revoked; it can no longer be used."
              )
              await expect(section.locator(".badge").textContent()).resolves.toBe("revoked")
              await expect(page.getByRole("button", { name: "Revoke" }).count()).resolves.toBe(0)
              await expectSoundPage(page, "allowances-revoked")

              // The agent's next checkout is refused again; its allowance reads revoked.
              const after = await checkout()
              const refused = problemOf(after.result, 402, "allowance_unavailable")
              expect(refused.paymentUrl).toMatch(/\/pay\//)
              const gone = await call(agent, "listAllowances", {})
              expect(gone.structuredContent.allowances[0].status).toBe("revoked")
              expect(problems).toEqual([])
              await agent.close()
            } finally {
              await browser.close()
            }
          })
        }),
      240_000
    )
  })
})
