import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { AccountScope } from "../../../src/domain/company/Company.js"
import { Campaigns } from "../../../src/services/company/Campaigns.js"
import { Gifts } from "../../../src/services/company/Gifts.js"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { londonAddress, recipient } from "../../support/checkout.js"
import { csrfOf, type DashboardBrowser, type Page, tableOf, textOf } from "../../support/dashboard.js"
import { memberOf, ownerOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"

/**
 * The dashboard's gifts and campaigns over HTTP: the gift list filtered by status, campaign, dates and recipient
 * (exact rows, in SQL); a gift's page with its history and messages; cancel (the budget credited back), a new expiry
 * (a bad one refused, nothing changed) and the link sent again (a message in the outbox each time), each audited;
 * campaigns filtered and paused; another company's gift is 404; a viewer reads recipients masked, cannot search
 * them and is refused every change.
 */

const promise = <A>(run: () => Promise<A>) => Effect.promise(run)

const sql = Effect.orDie(SqlClient.SqlClient)

/** An active campaign of the company's test account, and gifts by e-mail to `people` from it. */
const campaignWith = (
  companyId: string,
  name: string,
  people: ReadonlyArray<{ readonly firstname: string; readonly lastname: string; readonly email: string }>
) =>
  Effect.gen(function* () {
    const db = yield* sql
    const [product] = yield* db<{ id: string }>`SELECT id FROM products WHERE min_price_usd IS NOT NULL
      ORDER BY id LIMIT 1`.pipe(Effect.orDie)
    const scope = { companyId, environment: "test", accountIds: "all" } as AccountScope
    const caller = { scope, account: Option.none(), source: null }
    const campaign = yield* Effect.orDie(
      Effect.flatMap(Campaigns, (campaigns) =>
        campaigns.create(caller, {
          name,
          status: "active",
          giftProperties: {
            selectedGiftType: "product",
            productId: product!.id,
            budget: { min: 10, max: 50 },
            expiration: { daysFromSend: 30 }
          },
          notificationPolicy: { sendingChannels: ["email"], disableReminders: false },
          message: null
        })
      )
    )
    const results = yield* Effect.orDie(
      Effect.flatMap(Gifts, (gifts) =>
        gifts.create(caller, {
          campaignId: campaign.id,
          sendingMethod: "email",
          recipients: people.map((person) => ({
            ...person,
            phone: null,
            externalId: null,
            key: `gift-${person.firstname.toLowerCase()}`
          }))
        })
      )
    )
    return {
      campaignId: campaign.id,
      giftIds: results.map((result) => (result.success ? result.gift.id : "")),
      scope
    }
  })

/** The gift list's rows as [recipient, status, campaign]. */
const giftRows = (page: Page) => tableOf(page, "Gifts").map((cells) => [cells[0], cells[1], cells[2]])

const listed = (browser: DashboardBrowser, query: string) =>
  promise(() => browser.get(`/dashboard/gifts${query}`)).pipe(Effect.map(giftRows))

/** Posts a gift page's form (its CSRF token) and follows the redirect back: the page with its flash message. */
const act = (browser: DashboardBrowser, giftId: string, action: string, fields: Record<string, string> = {}) =>
  promise(async () => {
    const page = await browser.get(`/dashboard/gifts/${giftId}`)
    const done = await browser.post(`/dashboard/gifts/${giftId}/${action}`, {
      csrf: csrfOf(page.text, `/dashboard/gifts/${giftId}/${action}`),
      ...fields
    })
    expect(done.status).toBe(303)
    return textOf((await browser.get(done.location!)).text)
  })

const giftRow = (giftId: string) =>
  Effect.flatMap(sql, (db) =>
    db<{ status: string; expiresAt: Date; reserved: number }>`SELECT status, expires_at, reserved FROM gifts
      WHERE id = ${giftId}`.pipe(Effect.orDie)
  ).pipe(Effect.map((rows) => rows[0]!))

const countOf = (query: (db: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ n: number }>, unknown>) =>
  Effect.flatMap(sql, (db) => Effect.orDie(query(db))).pipe(Effect.map((rows) => rows[0]!.n))

const resends = (giftId: string) =>
  countOf((db) => db`SELECT count(*)::int AS n FROM notifications WHERE gift_id = ${giftId} AND kind = 'gift.resent'`)
const audited = (giftId: string, action: string) =>
  countOf((db) => db`SELECT count(*)::int AS n FROM audit_events WHERE target_id = ${giftId} AND action = ${action}`)

describe("dashboard gifts and campaigns", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 240_000 })((it) => {
    it.effect(
      "lists, filters, searches, shows, cancels, changes and resends gifts; masks and refuses a viewer",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const owner = yield* ownerOf(baseUrl, "Gifting Co")
          const spring = yield* campaignWith(owner.companyId, "Spring thanks", [
            { firstname: "Ada", lastname: "Lovelace", email: "ada@example.com" },
            { firstname: "Alan", lastname: "Turing", email: "alan@example.com" }
          ])
          const welcome = yield* campaignWith(owner.companyId, "Welcome aboard", [
            { firstname: "Grace", lastname: "Hopper", email: "grace@example.com" }
          ])
          const [ada, alan] = spring.giftIds as [string, string]
          const [grace] = welcome.giftIds as [string]
          const db = yield* sql
          yield* db`UPDATE gifts SET created_at = CASE id WHEN ${ada} THEN TIMESTAMPTZ '2026-01-05T10:00:00Z'
            WHEN ${alan} THEN TIMESTAMPTZ '2026-01-10T10:00:00Z' ELSE TIMESTAMPTZ '2026-02-01T10:00:00Z' END
          WHERE id IN (${ada}, ${alan}, ${grace})`.pipe(Effect.orDie)

          // The list, newest first, and each filter's exact rows.
          const browser = owner.browser
          expect(yield* listed(browser, "")).toEqual([
            ["Grace Hopper grace@example.com", "Unopened", "Welcome aboard"],
            ["Alan Turing alan@example.com", "Unopened", "Spring thanks"],
            ["Ada Lovelace ada@example.com", "Unopened", "Spring thanks"]
          ])
          expect((yield* listed(browser, `?campaign=${spring.campaignId}`)).map((row) => row[0])).toEqual([
            "Alan Turing alan@example.com",
            "Ada Lovelace ada@example.com"
          ])
          expect((yield* listed(browser, "?q=LOVE")).map((row) => row[0])).toEqual(["Ada Lovelace ada@example.com"])
          expect((yield* listed(browser, "?q=grace%40ex")).map((row) => row[0])).toEqual([
            "Grace Hopper grace@example.com"
          ])
          expect((yield* listed(browser, "?q=%25")).map((row) => row[0])).toEqual([])
          expect((yield* listed(browser, "?from=2026-01-06&to=2026-01-31")).map((row) => row[0])).toEqual([
            "Alan Turing alan@example.com"
          ])
          expect((yield* listed(browser, "?from=2026-01-05&to=2026-01-05")).map((row) => row[0])).toEqual([
            "Ada Lovelace ada@example.com"
          ])
          const none = yield* promise(() => browser.get("/dashboard/gifts?status=cancelled"))
          expect(textOf(none.text)).toContain("No gifts match these filters.")
          const bad = yield* promise(() => browser.get("/dashboard/gifts?status=lost&from=2026-13-01"))
          expect(bad.status).toBe(400)
          expect(textOf(bad.text)).toContain("Status: expected one of unopened, opened")
          expect(textOf(bad.text)).toContain("From: expected a date as YYYY-MM-DD.")

          // A gift's page: its history and its first message.
          const shown = yield* promise(() => browser.get(`/dashboard/gifts/${ada}`))
          expect(shown.status).toBe(200)
          expect(textOf(shown.text)).toContain("Sent (unopened): 2026-01-05 10:00:00 UTC")
          expect(tableOf(shown, "Messages to the recipient")).toEqual([
            ["Gift sent", "E-mail", "ada@example.com", expect.stringMatching(/UTC$/)]
          ])

          // Cancel: a confirm step first, then the budget credited back.
          const confirm = yield* promise(() => browser.get(`/dashboard/gifts/${ada}/cancel`))
          expect(textOf(confirm.text)).toContain("The 50.00 USD it holds is credited back to its billing method.")
          const cancelled = yield* promise(() =>
            browser.post(`/dashboard/gifts/${ada}/cancel`, {
              csrf: csrfOf(confirm.text, `/dashboard/gifts/${ada}/cancel`)
            })
          )
          expect(cancelled.status).toBe(303)
          const afterCancel = textOf((yield* promise(() => browser.get(cancelled.location!))).text)
          expect(afterCancel).toContain("The gift is cancelled: 50.00 USD is credited back to its billing method.")
          expect(afterCancel).toMatch(/Cancelled: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/)
          expect(yield* giftRow(ada)).toMatchObject({ status: "cancelled", reserved: 0 })
          expect(
            yield* countOf(
              (db) => db`SELECT count(*)::int AS n FROM billing_entries WHERE subject_id = ${ada} AND kind = 'credit'`
            )
          ).toBe(1)
          expect(yield* audited(ada, "gift.cancelled")).toBe(1)
          expect((yield* listed(browser, "?status=cancelled")).map((row) => row[0])).toEqual([
            "Ada Lovelace ada@example.com"
          ])

          // A new expiry: out of bounds is refused and changes nothing; within them, the end of that day.
          const before = yield* giftRow(alan)
          expect(yield* act(browser, alan, "expiry", { expiresOn: "2099-01-01" })).toContain(
            "The expiration date must be within 365 days. Nothing was changed."
          )
          expect(yield* act(browser, alan, "expiry", { expiresOn: "soon" })).toContain(
            "New expiry date: expected a date as YYYY-MM-DD. Nothing was changed."
          )
          expect((yield* giftRow(alan)).expiresAt).toEqual(before.expiresAt)
          expect(yield* audited(alan, "gift.updated")).toBe(0)
          const day = new Date(Date.now() + 60 * 86_400_000).toISOString().slice(0, 10)
          expect(yield* act(browser, alan, "expiry", { expiresOn: day })).toContain(
            `The gift now expires at ${day} 23:59:59 UTC.`
          )
          expect((yield* giftRow(alan)).expiresAt.toISOString()).toBe(`${day}T23:59:59.000Z`)
          expect(yield* audited(alan, "gift.updated")).toBe(1)

          // The link sent again: a message in the outbox each time, audited; a closed gift sends nothing.
          expect(yield* act(browser, alan, "resend")).toContain("The gift's link was sent again to its recipient.")
          yield* act(browser, alan, "resend")
          expect(yield* resends(alan)).toBe(2)
          expect(yield* audited(alan, "gift.resent")).toBe(2)
          const again = yield* promise(() => browser.get(`/dashboard/gifts/${alan}`))
          expect(tableOf(again, "Messages to the recipient").map((row) => row[0])).toEqual([
            "Gift sent",
            "Link sent again",
            "Link sent again"
          ])
          const closed = yield* promise(() =>
            browser.post(`/dashboard/gifts/${ada}/resend`, {
              csrf: csrfOf(again.text, `/dashboard/gifts/${alan}/resend`)
            })
          )
          expect(closed.status).toBe(303)
          expect(textOf((yield* promise(() => browser.get(closed.location!))).text)).toContain(
            `Gift ${ada} is cancelled; it takes no further change.`
          )
          expect(yield* resends(ada)).toBe(0)

          // Campaigns: filtered, a campaign's gifts, paused.
          const campaignRows = (page: Page) => tableOf(page, "Campaigns").map((cells) => [cells[0], cells[1]])
          expect(campaignRows(yield* promise(() => browser.get("/dashboard/campaigns")))).toEqual([
            ["Welcome aboard", "Active"],
            ["Spring thanks", "Active"]
          ])
          expect(campaignRows(yield* promise(() => browser.get("/dashboard/campaigns?q=SPRING")))).toEqual([
            ["Spring thanks", "Active"]
          ])
          expect(campaignRows(yield* promise(() => browser.get("/dashboard/campaigns?status=paused")))).toEqual([])
          const campaignPage = yield* promise(() => browser.get(`/dashboard/campaigns/${spring.campaignId}`))
          expect(tableOf(campaignPage, "Newest gifts of Spring thanks").map((row) => row[0])).toEqual([
            "Alan Turing",
            "Ada Lovelace"
          ])
          expect(campaignPage.text).toContain(`/dashboard/gifts?environment=test&amp;campaign=${spring.campaignId}`)
          const paused = yield* promise(() =>
            browser.post(`/dashboard/campaigns/${spring.campaignId}/status`, {
              csrf: csrfOf(campaignPage.text, `/dashboard/campaigns/${spring.campaignId}/status`),
              status: "paused"
            })
          )
          expect(paused.status).toBe(303)
          expect(textOf((yield* promise(() => browser.get(paused.location!))).text)).toContain(
            "The campaign is paused."
          )
          const [campaignStatus] = yield* db<{
            status: string
          }>`SELECT status FROM campaigns WHERE id = ${spring.campaignId}`.pipe(Effect.orDie)
          expect(campaignStatus!.status).toBe("paused")

          // Another company sees none of it.
          const other = yield* ownerOf(baseUrl, "Elsewhere")
          expect((yield* promise(() => other.browser.get(`/dashboard/gifts/${alan}`))).status).toBe(404)
          expect((yield* promise(() => other.browser.get(`/dashboard/campaigns/${spring.campaignId}`))).status).toBe(
            404
          )
          const home = yield* promise(() => other.browser.get("/dashboard"))
          const foreign = yield* promise(() =>
            other.browser.post(`/dashboard/gifts/${alan}/resend`, { csrf: csrfOf(home.text) })
          )
          expect(foreign.status).toBe(404)
          expect(yield* resends(alan)).toBe(2)
          expect(yield* listed(other.browser, "")).toEqual([])

          // A viewer reads recipients masked, cannot search them, and is refused every change.
          const viewer = yield* memberOf(baseUrl, owner.companyId, "viewer")
          const masked = yield* promise(() => viewer.get("/dashboard/gifts"))
          expect(giftRows(masked).map((row) => row[0])).toEqual([
            "G**** H***** g***@example.com",
            "A*** T***** a***@example.com",
            "A** L******* a***@example.com"
          ])
          expect(masked.text).not.toContain("grace@example.com")
          expect(masked.text).not.toContain('name="q"')
          const searched = yield* promise(() => viewer.get("/dashboard/gifts?q=ada"))
          expect(searched.status).toBe(400)
          expect(textOf(searched.text)).toContain("Recipient: your role reads recipients masked")
          const viewed = yield* promise(() => viewer.get(`/dashboard/gifts/${alan}`))
          expect(viewed.status).toBe(200)
          expect(viewed.text).not.toContain("alan@example.com")
          expect(viewed.text).not.toContain(`/dashboard/gifts/${alan}/resend`)
          expect((yield* promise(() => viewer.get(`/dashboard/gifts/${alan}/cancel`))).status).toBe(403)
          for (const action of ["cancel", "resend", "expiry"]) {
            const refused = yield* promise(() =>
              viewer.post(`/dashboard/gifts/${alan}/${action}`, { csrf: csrfOf(viewed.text), expiresOn: day })
            )
            expect(refused.status).toBe(403)
          }
          const refusedPause = yield* promise(() =>
            viewer.post(`/dashboard/campaigns/${welcome.campaignId}/status`, {
              csrf: csrfOf(viewed.text),
              status: "paused"
            })
          )
          expect(refusedPause.status).toBe(403)
          expect(yield* giftRow(alan)).toMatchObject({
            status: "unopened",
            expiresAt: new Date(`${day}T23:59:59.000Z`)
          })
          expect(yield* resends(alan)).toBe(2)
        }),
      { timeout: 200_000 }
    )

    it.effect(
      "a gift's page shows its thank-you note, when it was written and changed, and until when it may change",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const owner = yield* ownerOf(baseUrl, "Noted Co")
          const db = yield* sql
          const [product] = yield* db<{ productId: string; variantId: string }>`
          SELECT p.id AS product_id, v.id AS variant_id FROM products p JOIN variants v ON v.product_id = p.id
            JOIN variant_locations l ON l.variant_id = v.id
          WHERE v.price_usd IS NOT NULL AND NOT v.is_digital AND l.stock > 100 AND 'GB' = ANY (l.ships_to)
            AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
          ORDER BY p.id LIMIT 1`.pipe(Effect.orDie)
          const scope = { companyId: owner.companyId, environment: "test", accountIds: "all" } as AccountScope
          const caller = { scope, account: Option.none(), source: null }
          const gifts = yield* Gifts
          const campaign = yield* Effect.orDie(
            Effect.flatMap(Campaigns, (campaigns) =>
              campaigns.create(caller, {
                name: "Thanks received",
                status: "active",
                giftProperties: {
                  selectedGiftType: "product",
                  productId: product!.productId,
                  budget: { min: 1, max: 20000 },
                  expiration: { daysFromSend: 30 }
                },
                notificationPolicy: { sendingChannels: ["email"], disableReminders: false },
                message: null
              })
            )
          )
          const [ada, alan] = (yield* Effect.orDie(
            gifts.create(caller, {
              campaignId: campaign.id,
              sendingMethod: "link",
              recipients: ["Ada", "Alan"].map((firstname) => ({
                firstname,
                lastname: "Noted",
                email: `${firstname.toLowerCase()}@example.com`,
                phone: null,
                externalId: null,
                key: `noted-${firstname}`
              }))
            })
          )).map((result) => (result.success ? result.gift : undefined))
          // Ada claims hers, writes a note on the gift page and changes it.
          const { gift: claimed } = yield* Effect.orDie(
            gifts.claim(ada!, { variantId: product!.variantId, recipient, address: londonAddress })
          )
          yield* Effect.orDie(gifts.writeThankYou(claimed, "Thank you <3"))
          const { gift: noted } = yield* Effect.orDie(gifts.writeThankYou(claimed, "Thank you <3\nThe tea is perfect."))
          const at = (date: Date | null) => `${date!.toISOString().slice(0, 19).replace("T", " ")} UTC`

          const page = yield* promise(() => owner.browser.get(`/dashboard/gifts/${noted.id}`))
          expect(page.status).toBe(200)
          expect(page.text).toContain('<h2 id="gift-thank-you">Thank-you note</h2>')
          expect(page.text).toContain(
            '<blockquote class="note" id="thank-you-note">Thank you &lt;3\nThe tea is perfect.</blockquote>'
          )
          const facts = textOf(page.text)
          expect(facts).toContain(`Written ${at(noted.thankYouCreatedAt)}`)
          expect(facts).toContain(`Last changed ${at(noted.thankYouUpdatedAt)}`)
          expect(facts).toContain(
            `Can be changed until ${at(new Date(noted.thankYouCreatedAt!.getTime() + 24 * 3_600_000))}`
          )

          const none = yield* promise(() => owner.browser.get(`/dashboard/gifts/${alan!.id}`))
          expect(textOf(none.text)).toContain(
            "The recipient can write a thank-you note on the gift page once the gift is claimed."
          )
        })
    )
  })
})
