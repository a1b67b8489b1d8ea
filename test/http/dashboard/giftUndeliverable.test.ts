import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { AccountScope } from "../../../src/domain/company/Company.js"
import { Campaigns } from "../../../src/services/company/Campaigns.js"
import { Gifts } from "../../../src/services/company/Gifts.js"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { textOf } from "../../support/dashboard.js"
import { ownerOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"

/**
 * The dashboard's gift detail over HTTP lists the countries where a gift's recipient found nothing it could send
 * them, not even a digital gift within its budget (docs/decisions/0073-gifts-that-reach-any-country.md), once the
 * gift page found it so.
 */

/** A product with one physical variant that does not ship to BR. */
const productNotForBrazil = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ productId: string }>`
      SELECT p.id AS product_id FROM products p JOIN variants v ON v.product_id = p.id
        JOIN variant_locations l ON l.variant_id = v.id
      WHERE v.price_usd IS NOT NULL AND NOT v.is_digital AND NOT 'BR' = ANY (l.ships_to)
        AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
      ORDER BY p.id LIMIT 1`,
    (rows) => rows[0]!
  )
).pipe(Effect.orDie)

describe("the dashboard's gift detail", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 180_000 })((it) => {
    it.effect("lists the countries the recipient found nothing for", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const owner = yield* ownerOf(baseUrl, "Far Away Co")
        const { productId } = yield* productNotForBrazil
        const scope = { companyId: owner.companyId, environment: "test", accountIds: "all" } as AccountScope
        const caller = { scope, account: Option.none(), source: null }
        const campaign = yield* Effect.orDie(
          Effect.flatMap(Campaigns, (campaigns) =>
            campaigns.create(caller, {
              name: "Nothing fits",
              status: "active",
              giftProperties: {
                selectedGiftType: "product",
                productId,
                budget: { min: 1, max: 1 },
                expiration: { daysFromSend: 30 }
              },
              notificationPolicy: { sendingChannels: ["email"], disableReminders: false },
              message: null
            })
          )
        )
        const [result] = yield* Effect.orDie(
          Effect.flatMap(Gifts, (gifts) =>
            gifts.create(caller, {
              campaignId: campaign.id,
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
        if (result === undefined || !result.success) return expect.fail("the gift was not made")
        const gift = result.gift
        const before = yield* Effect.promise(() => owner.browser.get(`/dashboard/gifts/${gift.id}`))
        expect(textOf(before.text)).not.toContain("Could not be delivered")
        const choices = yield* Effect.promise(() => fetch(`${baseUrl}/g/${gift.token}/choices?country=BR`))
        expect(choices.status).toBe(200)
        expect(yield* Effect.promise(() => choices.text())).toContain('id="undeliverable"')
        const after = yield* Effect.promise(() => owner.browser.get(`/dashboard/gifts/${gift.id}`))
        expect(after.status).toBe(200)
        expect(textOf(after.text)).toContain("Could not be delivered")
        expect(textOf(after.text)).toMatch(/Could not be delivered.*Brazil \( BR \)/s)
      })
    )
  })
})
