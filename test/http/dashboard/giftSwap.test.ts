import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { AccountScope } from "../../../src/domain/company/Company.js"
import { Campaigns } from "../../../src/services/company/Campaigns.js"
import { Gifts } from "../../../src/services/company/Gifts.js"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { csrfOf, textOf } from "../../support/dashboard.js"
import { ownerOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"

/**
 * A campaign's swap in the dashboard over HTTP (docs/decisions/0072-swapping-a-gift-within-budget.md): the campaign
 * form's Swap select (a bad value named beside it, nothing made; `Off` stored as `disabled`), the campaign's page
 * saying what it allows, and a gift swapped on the gift page shown as "Swapped from" on the gift's and the order's
 * pages.
 */

const promise = <A>(run: () => Promise<A>) => Effect.promise(run)
const sql = Effect.orDie(SqlClient.SqlClient)

/** A marketplace product with one variant shipping to GB with stock, its item at 10 to 40 USD. */
const originalProduct = Effect.flatMap(sql, (db) =>
  db<{ id: string; title: string }>`
    SELECT p.id, p.title FROM products p JOIN variants v ON v.product_id = p.id
      JOIN variant_locations l ON l.variant_id = v.id
    WHERE p.catalog = 'marketplace' AND v.price_usd BETWEEN 1000 AND 4000 AND NOT v.is_digital AND l.stock > 100
      AND 'GB' = ANY (l.ships_to) AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
    ORDER BY p.id LIMIT 1`.pipe(Effect.orDie)
).pipe(Effect.map((rows) => rows[0]!))

const campaignCount = (companyId: string) =>
  Effect.flatMap(sql, (db) =>
    db<{ n: number }>`SELECT count(*)::int AS n FROM campaigns WHERE company_id = ${companyId}`.pipe(Effect.orDie)
  ).pipe(Effect.map((rows) => rows[0]!.n))

const londonForm = {
  firstName: "Ada",
  lastName: "Lovelace",
  email: "ada@example.com",
  phone: "+44 20 7946 0958",
  address1: "10 Downing Street",
  city: "London",
  zipcode: "SW1A 2AA",
  country: "GB"
}

describe("dashboard: swapping a gift", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 240_000 })((it) => {
    it.effect("the campaign form's Swap, the campaign's page, and Swapped from on the gift's and order's pages", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser: owner, companyId } = yield* ownerOf(baseUrl, "Swappers")
        const original = yield* originalProduct

        const form = yield* promise(() => owner.get("/dashboard/send/campaigns/new?environment=test"))
        expect(form.status).toBe(200)
        expect(form.text).toContain('<select id="swap" name="swap"')
        const fields = {
          csrf: csrfOf(form.text, "/dashboard/send/campaigns"),
          environment: "test",
          name: "No swaps",
          budgetMin: "1",
          budgetMax: "150",
          giftType: "product",
          productId: original.id,
          expiryDays: "30",
          message: "",
          reminders: "on"
        }
        const refused = yield* promise(() => owner.post("/dashboard/send/campaigns", { ...fields, swap: "sometimes" }))
        expect(refused.status).toBe(400)
        expect(textOf(refused.text)).toContain("Swap: ")
        expect(yield* campaignCount(companyId)).toBe(0)

        const created = yield* promise(() => owner.post("/dashboard/send/campaigns", { ...fields, swap: "disabled" }))
        expect(created.status, textOf(created.text)).toBe(303)
        const campaignId = new URL(created.location!, baseUrl).searchParams.get("campaignId")!
        const stored = yield* Effect.flatMap(sql, (db) =>
          db<{ swap: string }>`SELECT swap FROM campaigns WHERE id = ${campaignId}`.pipe(Effect.orDie)
        )
        expect(stored[0]!.swap).toBe("disabled")
        const campaignPage = yield* promise(() => owner.get(`/dashboard/campaigns/${campaignId}`))
        expect(textOf(campaignPage.text)).toContain("Swap Off: the recipient takes the campaign's gift")

        // A swappable campaign's gift, swapped on the gift page.
        const scope = { companyId, environment: "test", accountIds: "all" } as AccountScope
        const caller = { scope, account: Option.none(), source: null }
        const swappable = yield* Effect.orDie(
          Effect.flatMap(Campaigns, (campaigns) =>
            campaigns.create(caller, {
              name: "Swaps",
              status: "active",
              giftProperties: {
                selectedGiftType: "product",
                productId: original.id,
                budget: { min: 1, max: 150 },
                expiration: { daysFromSend: 30 }
              },
              notificationPolicy: { sendingChannels: ["email"], disableReminders: false },
              message: null
            })
          )
        )
        expect(swappable.swap).toBe("within_budget")
        const [sent] = yield* Effect.orDie(
          Effect.flatMap(Gifts, (gifts) =>
            gifts.create(caller, {
              campaignId: swappable.id,
              sendingMethod: "link",
              recipients: [
                {
                  firstname: "Ada",
                  lastname: "Lovelace",
                  email: "ada@example.com",
                  phone: null,
                  externalId: null,
                  key: "ada"
                }
              ]
            })
          )
        )
        if (sent === undefined || !sent.success) throw new Error("no gift")
        const gift = sent.gift
        const giftPage = `${baseUrl}/g/${gift.token}`
        const others = yield* promise(() => fetch(`${giftPage}/others?country=GB`).then((r) => r.text()))
        const picked = /name="productId" value="([0-9a-f]+)"/.exec(others)![1]!
        const choose = yield* promise(() =>
          fetch(`${giftPage}/choose?productId=${picked}&country=GB`).then((r) => r.text())
        )
        const variantId = /name="variantId" value="([^"]+)"/.exec(choose)![1]!
        const claimed = yield* promise(() =>
          fetch(`${giftPage}/claim`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ ...londonForm, productId: picked, variantId }).toString()
          })
        )
        expect(claimed.status).toBe(200)

        const giftDetail = textOf((yield* promise(() => owner.get(`/dashboard/gifts/${gift.id}`))).text)
        expect(giftDetail).toContain(`Swapped from ${original.title} ( ${original.id} )`)
        const [order] = yield* Effect.flatMap(sql, (db) =>
          db<{ id: string }>`SELECT id FROM company_orders WHERE gift_id = ${gift.id}`.pipe(Effect.orDie)
        )
        const orderPage = textOf((yield* promise(() => owner.get(`/dashboard/orders/${order!.id}`))).text)
        expect(orderPage).toContain(`Swapped from ${original.title} ( ${original.id} )`)
      })
    )
  })
})
