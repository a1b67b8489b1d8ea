import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import {
  browserSuiteSkipped,
  expectSoundPage,
  focusedId,
  focusedText,
  launchChromium,
  tabUntil
} from "../../support/browser.js"
import { signedInContext } from "../../support/dashboard.js"
import { ownerOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"

/**
 * "Send gifts" in a real browser (Debian's chromium), with the keyboard only: a campaign created from its form, then
 * a CSV of 1,000 rows (a BOM, a name with a quoted comma) of which exactly 7 are invalid. The preview names those 7
 * by line and reason and sends nothing; confirming sends the other 993, the page following the progress by itself;
 * the same file again sends no new gift. Every page passes axe-core (no serious or critical violation) and does not
 * scroll sideways; screenshots go to test-output/dashboard-send*.png.
 */

const expectSound = (page: Page, name: string) => expectSoundPage(page, `dashboard-${name}`)

const header = "firstName,lastName,email,phone,externalId,country"

/** The 7 invalid rows by line, and the reason the preview gives for each. */
const invalidRows = (outside: string): ReadonlyArray<readonly [number, string, string]> => [
  [101, "Alan,Turing,alan@example,,,{country}", "email: Expected an e-mail address"],
  [202, ",Noether,emmy@example.com,,,{country}", "firstName: is required"],
  [303, "Grace,Again,PERSON3@example.com,,,{country}", "key: duplicate key, the same as line 3"],
  [404, `Kurt,Godel,kurt@example.com,,,${outside}`, `country: ${outside} is not a country this campaign ships to`],
  [
    505,
    `${"L".repeat(101)},Long,long@example.com,,,{country}`,
    "firstName: Expected a string at most 100 character(s) long"
  ],
  [606, "Too,Many,many@example.com,,,{country},extra", "row: has 7 fields where the header has 6"],
  [707, "Nowhere,Known,nowhere@example.com,,,", "country: is required"]
]

/** 1,000 rows after a header with a BOM: line 2 names a person with a quoted comma, the 7 invalid rows in place. */
const thousandRows = (country: string, outside: string) => {
  const bad = new Map(invalidRows(outside).map(([line, row]) => [line, row.replace("{country}", country)]))
  const rows = Array.from({ length: 1000 }, (_, n) => {
    const line = n + 2
    if (line === 2) return `"Lovelace, Ada",King,person${line}@example.com,,,${country}`
    return bad.get(line) ?? `Person${line},Tester,person${line}@example.com,,,${country}`
  })
  return `\uFEFF${[header, ...rows].join("\r\n")}\r\n`
}

describe.skipIf(browserSuiteSkipped)("dashboard send gifts in chromium", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 300_000 })((it) => {
    it.scoped(
      "with the keyboard only: a campaign, a 1,000-row file with 7 invalid rows, 993 gifts sent, and none again",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const sql = yield* SqlClient.SqlClient
          const { browser: http, companyId } = yield* ownerOf(baseUrl, "Sending in Chromium")
          const giftCount = sql<{
            n: number
          }>`SELECT count(*)::int AS n FROM gifts WHERE company_id = ${companyId}`.pipe(
            Effect.map((rows) => rows[0]!.n),
            Effect.orDie
          )
          const chromium = yield* Effect.acquireRelease(Effect.promise(launchChromium), (b) =>
            Effect.promise(() => b.close())
          )
          const page = yield* Effect.promise(() =>
            signedInContext(chromium, http, { viewport: { width: 1200, height: 900 } }).then((c) => c.newPage())
          )
          const errors: Array<string> = []
          page.on("console", (message) => {
            if (message.type() === "error") errors.push(message.text())
          })
          const file = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-send-")), "people.csv")

          /**
           * From the send page: the file chosen through its input (with the keyboard the first time, by the file
           * input's own setter the second: Chromium may hold back a second chooser opened so soon), then checked.
           */
          const uploadFile = async (byKeyboard: boolean) => {
            await tabUntil(page, focusedId("file"), "the file input")
            if (byKeyboard) {
              const [chooser] = await Promise.all([page.waitForEvent("filechooser"), page.keyboard.press("Space")])
              await chooser.setFiles(file)
            } else {
              await page.locator("#file").setInputFiles(file)
            }
            await tabUntil(page, focusedText("Check the file"), "the check button")
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/dashboard\/send\/uploads\/\w+$/)
          }
          /** Confirms the previewed file and waits, without reloading, until the page says it was sent. */
          const confirmAndFollow = async (gifts: number) => {
            await tabUntil(page, focusedText(`Send ${gifts.toLocaleString("en")} gifts`), "the send button")
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/dashboard\/send\/uploads\/\w+$/)
            await expect
              .poll(() => page.locator("#progress-title").textContent(), { timeout: 120_000, interval: 250 })
              .toBe("Sent")
          }

          const { campaignId } = yield* Effect.promise(async () => {
            await page.goto(`${baseUrl}/dashboard/send`)
            await expectSound(page, "send-empty")
            await tabUntil(page, focusedText("create a campaign"), "the create link")
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/dashboard\/send\/campaigns\/new/)
            await expectSound(page, "send-campaign")
            await tabUntil(page, focusedId("name"), "the name")
            await page.keyboard.type("Thank you, team")
            await tabUntil(page, focusedId("budgetMax"), "the largest gift")
            await page.keyboard.type("100")
            await tabUntil(page, focusedText("Create the campaign"), "the create button")
            await page.keyboard.press("Enter")
            await page.waitForURL(/\/dashboard\/send\?.*campaignId=/)
            return { campaignId: new URL(page.url()).searchParams.get("campaignId")! }
          })
          const destinations = /ships to: ([A-Z, ]+)\./
            .exec(yield* Effect.promise(() => page.content()))![1]!
            .split(", ")
          const country = destinations.includes("GB") ? "GB" : destinations[0]!
          const outside = ["AQ", "KP", "ZZ"].find((code) => !destinations.includes(code))!
          Fs.writeFileSync(file, thousandRows(country, outside))

          yield* Effect.promise(async () => {
            await expectSound(page, "send")
            await uploadFile(true)
            expect(await page.locator("h1").textContent()).toBe("people.csv")
            const invalid = page.getByRole("table", { name: "Invalid rows" }).locator("tbody td")
            expect(await invalid.allTextContents()).toEqual(
              invalidRows(outside).flatMap(([line, , reason]) => [String(line), reason])
            )
            const first = page.getByRole("table", { name: "The first rows to send" }).locator("tbody tr").first()
            expect(await first.textContent()).toContain("Lovelace, Ada King")
            await expectSound(page, "send-preview")
          })
          expect(yield* giftCount).toBe(0)

          yield* Effect.promise(async () => {
            await confirmAndFollow(993)
            expect(await page.locator("#send-progress-region").textContent()).toContain(
              "993 new gifts, 0 already sent before, 0 failed, 0 to go."
            )
            await expectSound(page, "send-sent")
          })
          expect(yield* giftCount).toBe(993)

          // The same file again: checked again, and sending it makes no new gift.
          yield* Effect.promise(async () => {
            await page.goto(`${baseUrl}/dashboard/send?environment=test&campaignId=${campaignId}`)
            await uploadFile(false)
            await confirmAndFollow(993)
            expect(await page.locator("#send-progress-region").textContent()).toContain(
              "0 new gifts, 993 already sent before, 0 failed, 0 to go."
            )
          })
          expect(yield* giftCount).toBe(993)
          expect(errors).toEqual([])
        }),
      300_000
    )
  })
})
