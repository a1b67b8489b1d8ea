import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Browser, Page } from "playwright-core"
import { BaseUrl, makeRealPortServer } from "../../support/auth.js"
import { browserSuiteSkipped, expectSoundPage, launchChromium } from "../../support/browser.js"
import { newEmail, strongPassword } from "../../support/dashboard.js"
import { ownerOf } from "../../support/dashboardMembers.js"
import { invitationPathFor } from "../../support/invitations.js"

/**
 * The Members pages in a real browser (Debian's chromium): an owner invites a developer, who opens the link from
 * the outbox, creates a password and is signed in as a developer, and is refused the members pages; the owner's
 * member, confirm and leave pages; the same invitation once more at 390 px with the keyboard only. Every page
 * visited is checked with axe-core (no serious or critical violation) and for sideways scrolling; screenshots go
 * to test-output/dashboard-*.png. Skipped as `browserSuiteSkipped` says (no chromium, or the run on a Postgres server).
 */

let shared: Promise<Browser> | undefined
/** One chromium for the file. */
const chromium = () => {
  shared ??= launchChromium()
  return shared
}
afterAll(async () => {
  if (shared !== undefined) await (await shared).close()
})

/** axe's serious and critical findings on the page, and whether it scrolls sideways: none and no. */
const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

/** Console errors other than the failed loads of the statuses a test asks for (403, 409). */
const consoleErrors = (page: Page) => {
  const errors: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) errors.push(message.text())
  })
  return errors
}

const focused = (page: Page) =>
  page.evaluate(
    "document.activeElement ? [document.activeElement.id, document.activeElement.textContent.trim()] : []"
  ) as Promise<[string, string]>

/** Tabs forward until the focused element has the id, or the text, `target` (at most 40 presses). */
const tabTo = async (page: Page, target: string) => {
  for (let i = 0; i < 40; i++) {
    const [id, text] = await focused(page)
    if (id === target || text === target) return
    await page.keyboard.press("Tab")
  }
  throw new Error(`Tab never reached ${target}`)
}

describe.skipIf(browserSuiteSkipped)("dashboard members in chromium", () => {
  it.layer(makeRealPortServer(), { timeout: 180_000 })((it) => {
    it.effect(
      "an owner invites a developer, who accepts, is signed in as a developer and kept off the members pages",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const { email: ownerEmail } = yield* ownerOf(baseUrl, "Browser Members")
          const inviteeEmail = newEmail("developer")
          const browser = yield* Effect.promise(chromium)
          const ownerContext = yield* Effect.promise(() =>
            browser.newContext({ viewport: { width: 1200, height: 900 } })
          )
          const inviteeContext = yield* Effect.promise(() =>
            browser.newContext({ viewport: { width: 1200, height: 900 } })
          )
          const owner = yield* Effect.promise(() => ownerContext.newPage())
          const invitee = yield* Effect.promise(() => inviteeContext.newPage())
          owner.setDefaultTimeout(15_000)
          invitee.setDefaultTimeout(15_000)
          const ownerErrors = consoleErrors(owner)
          const inviteeErrors = consoleErrors(invitee)
          const otherEmail = newEmail("other")

          yield* Effect.promise(async () => {
            await owner.goto(`${baseUrl}/dashboard/sign-in`)
            await owner.getByLabel("Email").fill(ownerEmail)
            await owner.getByLabel("Password").fill(strongPassword)
            await owner.getByRole("button", { name: "Sign in" }).click()
            await owner.waitForURL(`${baseUrl}/dashboard`)
            await owner.getByRole("link", { name: "Members" }).click()
            await owner.waitForURL(`${baseUrl}/dashboard/members`)
            await expectSound(owner, "members")

            await owner.getByLabel("E-mail").fill(inviteeEmail)
            await owner.getByLabel("Role", { exact: true }).selectOption("developer")
            await owner.getByRole("button", { name: "Send invitation" }).click()
            await expect.poll(() => owner.getByRole("status").textContent()).toContain(`was sent to ${inviteeEmail}`)
            expect(await owner.getByRole("table", { name: "Invitations not yet accepted" }).textContent()).toContain(
              inviteeEmail
            )
            await expectSound(owner, "members-invited")
          })

          const path = yield* invitationPathFor(inviteeEmail)
          yield* Effect.promise(async () => {
            await invitee.goto(`${baseUrl}${path}`)
            expect(await invitee.locator("h1").textContent()).toBe("Join Browser Members")
            await expectSound(invitee, "invitation")
            await invitee.getByLabel("Your name").fill("Devi Developer")
            await invitee.getByLabel("Choose a password").fill(strongPassword)
            await invitee.getByRole("button", { name: "Create account and join" }).click()
            await invitee.waitForURL(`${baseUrl}/dashboard`)
            expect(await invitee.getByRole("status").textContent()).toContain(
              "You joined Browser Members as developer."
            )
            expect(await invitee.locator("header").textContent()).toContain(`Signed in as ${inviteeEmail}, developer`)
            await expectSound(invitee, "invitation-joined")

            // A developer may not manage members: the 403 page.
            const refused = await invitee.goto(`${baseUrl}/dashboard/members`)
            expect(refused?.status()).toBe(403)
            expect(await invitee.locator("h1").textContent()).toBe("Not allowed")
            await expectSound(invitee, "members-forbidden")

            // The link made one member; opened again, it says so.
            const used = await invitee.goto(`${baseUrl}${path}`)
            expect(used?.status()).toBe(409)
            await expectSound(invitee, "invitation-used")
          })

          // The owner sees the new member, its page and the confirm steps (left by Cancel).
          yield* Effect.promise(async () => {
            await owner.goto(`${baseUrl}/dashboard/members`)
            await owner.getByRole("link", { name: "Devi Developer" }).click()
            await expect.poll(() => owner.locator("h1").textContent()).toBe("Devi Developer")
            await expectSound(owner, "member")
            await owner.getByLabel("Role", { exact: true }).selectOption("sender")
            await owner.getByRole("button", { name: "Change role" }).click()
            await expect
              .poll(() => owner.getByRole("status").textContent())
              .toContain("Devi Developer is now a sender.")

            await owner.getByRole("link", { name: "Remove Devi Developer from the company" }).click()
            await expect.poll(() => owner.locator("h2").first().textContent()).toContain("Remove Devi Developer")
            await expectSound(owner, "member-remove")
            await owner.getByRole("link", { name: "Cancel" }).click()
            await owner.getByRole("link", { name: "Transfer ownership to Devi Developer" }).click()
            await expect.poll(() => owner.locator("h2").first().textContent()).toContain("the owner of Browser Members")
            await expectSound(owner, "member-transfer")

            await owner.goto(`${baseUrl}/dashboard/members/leave`)
            await expectSound(owner, "members-leave")

            // Someone else's invitation, opened by the owner: the page says whom it is for.
            await owner.goto(`${baseUrl}/dashboard/members`)
            await owner.getByLabel("E-mail").fill(otherEmail)
            await owner.getByRole("button", { name: "Send invitation" }).click()
            await expect.poll(() => owner.getByRole("status").textContent()).toContain(`was sent to ${otherEmail}`)
          })
          const otherPath = yield* invitationPathFor(otherEmail)
          yield* Effect.promise(async () => {
            const wrong = await owner.goto(`${baseUrl}${otherPath}`)
            expect(wrong?.status()).toBe(403)
            expect(await owner.locator("h1").textContent()).toBe("This invitation is for someone else")
            await expectSound(owner, "invitation-wrong-person")
            await ownerContext.close()
            await inviteeContext.close()
          })
          expect([...ownerErrors, ...inviteeErrors]).toEqual([])
        }),
      90_000
    )

    it.effect("at 390 px wide, with the keyboard only: invites a developer, who joins", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { email: ownerEmail } = yield* ownerOf(baseUrl, "Keyboard Members with a long company name")
        const inviteeEmail = newEmail("keys")
        const browser = yield* Effect.promise(chromium)
        const narrow = { viewport: { width: 390, height: 844 }, isMobile: true }
        const ownerContext = yield* Effect.promise(() => browser.newContext(narrow))
        const inviteeContext = yield* Effect.promise(() => browser.newContext(narrow))
        const owner = yield* Effect.promise(() => ownerContext.newPage())
        const invitee = yield* Effect.promise(() => inviteeContext.newPage())
        owner.setDefaultTimeout(15_000)
        invitee.setDefaultTimeout(15_000)

        yield* Effect.promise(async () => {
          await owner.goto(`${baseUrl}/dashboard/sign-in`)
          await tabTo(owner, "email")
          await owner.keyboard.type(ownerEmail)
          await tabTo(owner, "password")
          await owner.keyboard.type(strongPassword)
          await owner.keyboard.press("Enter")
          await owner.waitForURL(`${baseUrl}/dashboard`)
          await tabTo(owner, "Members")
          await owner.keyboard.press("Enter")
          await owner.waitForURL(`${baseUrl}/dashboard/members`)
          await expectSound(owner, "members-390")

          await tabTo(owner, "email")
          await owner.keyboard.type(inviteeEmail)
          await tabTo(owner, "invite-role")
          // Typing a role's first letter picks it.
          await owner.keyboard.type("d")
          expect(await owner.locator("#invite-role").inputValue()).toBe("developer")
          await tabTo(owner, "Send invitation")
          await owner.keyboard.press("Enter")
          await expect.poll(() => owner.getByRole("status").textContent()).toContain(`was sent to ${inviteeEmail}`)
          await expectSound(owner, "members-invited-390")
        })

        const path = yield* invitationPathFor(inviteeEmail)
        yield* Effect.promise(async () => {
          await invitee.goto(`${baseUrl}${path}`)
          await expectSound(invitee, "invitation-390")
          await tabTo(invitee, "newPassword")
          await invitee.keyboard.type(strongPassword)
          await invitee.keyboard.press("Enter")
          await invitee.waitForURL(`${baseUrl}/dashboard`)
          expect(await invitee.locator("header").textContent()).toContain(`Signed in as ${inviteeEmail}, developer`)
          await expectSound(invitee, "invitation-joined-390")

          // Back on the owner's page, Shift+Tab reaches the new member's link, and Enter opens it.
          await owner.goto(`${baseUrl}/dashboard/members`)
          await tabTo(owner, "Send invitation")
          for (let i = 0; i < 40 && (await focused(owner))[1] !== inviteeEmail; i++) {
            await owner.keyboard.press("Shift+Tab")
          }
          expect((await focused(owner))[1]).toBe(inviteeEmail)
          await owner.keyboard.press("Enter")
          await expect.poll(() => owner.locator("h1").textContent()).toBe(inviteeEmail)
          await expectSound(owner, "member-390")
          await ownerContext.close()
          await inviteeContext.close()
        })
      })
    )
  })
})
