import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { Webhook } from "standardwebhooks"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { TimeTravel } from "../../support/auth.js"
import { makeCheckoutTestServer } from "../../support/checkout.js"
import { getWith, patchWith, postWith } from "../../support/company.js"
import { eventually } from "../../support/eventually.js"
import { companyWithProductCampaign } from "../../support/giftLinks.js"
import { get, postForm, testPublicUrl } from "../../support/http.js"
import { certificate, httpsReceiver } from "../../support/receiver.js"
import { signatureHeaders } from "../../support/webhooks.js"

/**
 * A gift that reaches any country, and its expiry (docs/decisions/0073-gifts-that-reach-any-country.md), over real
 * HTTP with the background worker: where nothing the campaign allows ships, the recipient is offered digital gifts
 * within the budget and claims one with no address (the order's street and city null); where nothing fits at all, the
 * page says so and the sender gets `gift-undeliverable` (verified with `standardwebhooks` at a loopback receiver), once
 * per gift and country; the last reminder 48 hours before expiry (the server's clock moved), none for a claimed gift,
 * and neither reminder where the campaign disables them, before or after sending; and an expired link's page names the
 * date and the company.
 */

const gifts = "/public-api/v2/gifts"
const sqlClient = SqlClient.SqlClient

/** A product with one physical variant that ships to GB but not to BR (where digital gifts still go). */
const catalog = Effect.flatMap(sqlClient, (sql) =>
  Effect.gen(function* () {
    const [chosen] = yield* sql<{ productId: string; variantId: string }>`
      SELECT p.id AS product_id, v.id AS variant_id FROM products p JOIN variants v ON v.product_id = p.id
        JOIN variant_locations l ON l.variant_id = v.id
      WHERE v.price_usd IS NOT NULL AND v.price_usd < 10000 AND NOT v.is_digital AND l.stock > 100
        AND 'GB' = ANY (l.ships_to) AND NOT 'BR' = ANY (l.ships_to)
        AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
      ORDER BY p.id LIMIT 1`
    return chosen!
  })
).pipe(Effect.orDie)

const setup = (budget: { min: number; max: number }, expiration: unknown = { daysFromSend: 7 }) =>
  Effect.gen(function* () {
    const product = yield* catalog
    const company = yield* companyWithProductCampaign(product.productId, {
      message: "Welcome aboard!",
      giftProperties: { budget, expiration }
    })
    const sql = yield* sqlClient
    const [named] = yield* Effect.orDie(
      sql<{ name: string }>`SELECT name FROM companies WHERE id = ${company.companyId}`
    )
    return { ...company, ...product, campaignId: company.campaign.id, name: named!.name }
  })

type Company = Effect.Effect.Success<ReturnType<typeof setup>>

/** Another campaign of the company, for its product, with the reminders setting given; the company sending it. */
const withCampaign = (company: Company, notificationPolicy: { readonly disableReminders: boolean }) =>
  Effect.map(
    postWith(
      "/public-api/v2/campaigns",
      {
        name: "Quiet",
        customization: {
          giftProperties: {
            selectedGiftType: "product",
            productId: company.productId,
            budget: { min: 1, max: 20000 },
            expiration: { daysFromSend: 7 }
          },
          notificationPolicy: { sendingChannels: ["email"], ...notificationPolicy }
        }
      },
      company.headers
    ),
    (response): Company => {
      expect(response.status, JSON.stringify(response.body)).toBe(201)
      return { ...company, campaignId: response.body.id as string }
    }
  )

const sendGift = (company: Company, key: string, sendingMethod = "link") =>
  Effect.map(
    postWith(
      gifts,
      {
        campaignId: company.campaignId,
        recipients: [{ firstname: "Ada", lastname: "Lovelace", email: `${key}@example.com`, key }],
        sendingMethod
      },
      company.headers
    ),
    (response) => {
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      const result = response.body.results[0] as { id: string; link: string }
      return { ...result, path: result.link.replace(testPublicUrl, "") }
    }
  )

const who = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+44 20 7946 0958" }

const counts = Effect.flatMap(sqlClient, (sql) =>
  sql<{ orders: number; undeliverable: number }>`SELECT
    (SELECT count(*)::int FROM company_orders) AS orders,
    (SELECT count(*)::int FROM gift_undeliverable_countries) AS undeliverable`.pipe(Effect.map((rows) => rows[0]!))
).pipe(Effect.orDie)

const ReachServer = makeCheckoutTestServer(
  Layer.mergeAll(
    FulfillmentSettings.Default,
    OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert], timeout: Duration.seconds(30) })
  )
)

describe("a gift that reaches any country", () => {
  it.layer(ReachServer, { timeout: 180_000 })((it) => {
    it.effect("where nothing the campaign allows ships, a digital gift within the budget is offered and claimed", () =>
      Effect.gen(function* () {
        const company = yield* setup({ min: 1, max: 200 })
        const gift = yield* sendGift(company, "digital")

        // The landing page says when the gift expires.
        const landing = yield* get(gift.path)
        expect(landing.status).toBe(200)
        const expires = new Intl.DateTimeFormat("en", { dateStyle: "long", timeZone: "UTC" }).format(
          new Date(Date.parse((yield* getWith(`${gifts}/${gift.id}`, company.headers)).body.expirationDate))
        )
        expect(landing.text).toContain(`This gift expires on ${expires}.`)

        // GB: the campaign's own product.
        const own = yield* get(`${gift.path}/choices?country=GB`)
        expect(own.text).toContain(`value="${company.productId}"`)
        expect(own.text).not.toContain('id="digital-offer"')

        // BR: nothing the campaign allows ships there; digital gifts do, within the budget.
        const choices = yield* get(`${gift.path}/choices?country=BR`)
        expect(choices.status).toBe(200)
        expect(choices.text).toContain('id="digital-offer"')
        expect(choices.text).toContain("cannot be shipped to Brazil")
        expect(choices.text).not.toMatch(/[$£€]\s?\d/)
        const offered = [...choices.text.matchAll(/name="productId" value="([0-9a-f]+)"/g)].map((m) => m[1]!)
        expect(offered.length).toBeGreaterThan(0)
        expect(offered.length).toBeLessThanOrEqual(6)
        expect(offered).not.toContain(company.productId)
        const sql = yield* sqlClient
        const digital = yield* Effect.orDie(
          sql<{
            productId: string
          }>`SELECT DISTINCT product_id FROM variants WHERE is_digital AND product_id IN ${sql.in(offered)}`
        )
        expect(digital.map((row) => row.productId).sort()).toEqual([...offered].sort())

        // The form asks for no address: the name, the e-mail it goes to, the phone; the country is the one chosen.
        const productId = offered[0]!
        const form = yield* get(`${gift.path}/choose?productId=${productId}&country=BR`)
        expect(form.status).toBe(200)
        for (const label of ["First name", "Last name", "Email", "Phone"])
          expect(form.text).toContain(`>${label}</label>`)
        expect(form.text).not.toContain("Address line 1")
        expect(form.text).toContain("Country: Brazil")
        const variantId = /name="variantId" value="([0-9a-f]+)"/.exec(form.text)![1]!

        // A form without an e-mail is refused in the page's words; nothing is placed.
        const before = yield* counts
        const refused = yield* postForm(`${gift.path}/claim`, {
          ...who,
          email: "",
          variantId,
          productId,
          country: "BR"
        })
        expect(refused.status).toBe(422)
        expect(refused.text).toContain("Email:")
        expect(refused.text).not.toContain("Address line 1")
        expect((yield* counts).orders).toBe(before.orders)

        // A physical variant is not claimable in BR, whatever the form says.
        const physical = yield* postForm(`${gift.path}/claim`, {
          ...who,
          variantId: company.variantId,
          productId: company.productId,
          country: "BR"
        })
        expect(physical.status).toBe(422)
        expect((yield* counts).orders).toBe(before.orders)

        const claimed = yield* postForm(`${gift.path}/claim`, { ...who, variantId, productId, country: "BR" })
        expect(claimed.status, claimed.text.slice(0, 800)).toBe(200)
        expect(claimed.text).toContain("Your gift is claimed")
        expect(claimed.text).toContain("ada@example.com")
        expect(claimed.text).toContain("Brazil")
        const read = yield* getWith(`${gifts}/${gift.id}`, company.headers)
        expect(read.body).toMatchObject({ status: "claimed", deliveryDetails: { countryCode: "BR" } })
        // No address: the country alone, stored and shown as null rather than empty, by v3 and v2's expansion.
        const noAddress = {
          address1: null,
          address2: null,
          city: null,
          provinceCode: null,
          postalCode: null,
          countryCode: "BR"
        }
        const order = yield* getWith(`/public-api/v3/orders/${read.body.orderId}`, company.headers)
        expect(order.body.data).toMatchObject({ giftId: gift.id, status: "active", shippingAddress: noAddress })
        const expanded = yield* getWith(`${gifts}/${gift.id}?expand[]=orders`, company.headers)
        expect(expanded.body.orders[0].shippingAddress).toEqual(noAddress)
        const [row] = yield* Effect.orDie(
          sql<{ variantId: string; address1: string | null; city: string | null; countryCode: string }>`
            SELECT variant_id, address1, city, country_code FROM company_orders WHERE id = ${read.body.orderId}`
        )
        expect(row).toEqual({ variantId, address1: null, city: null, countryCode: "BR" })

        // A v3 order of a digital variant keeps its country alone too, whatever address the request gave.
        const placed = yield* postWith(
          "/public-api/v3/orders",
          {
            variantId,
            recipient: who,
            shippingAddress: { address1: "Avenida Paulista 1000", city: "São Paulo", countryCode: "BR" },
            idempotencyKey: "digital-v3"
          },
          company.headers
        )
        expect(placed.status, JSON.stringify(placed.body)).toBe(201)
        expect(placed.body.data.shippingAddress).toEqual(noAddress)
        expect((yield* counts).undeliverable).toBe(before.undeliverable)
      })
    )

    it.scoped("where nothing fits at all, the page says so and the sender gets gift-undeliverable once", () =>
      Effect.gen(function* () {
        const receiver = yield* httpsReceiver()
        // A budget nothing in the catalog fits, physical or digital.
        const company = yield* setup({ min: 1, max: 1 })
        const hook = yield* postWith(
          "/public-api/v3/webhooks",
          { url: receiver.url("/hooks"), eventTypes: ["gift-undeliverable"] },
          company.headers
        )
        expect(hook.status, JSON.stringify(hook.body)).toBe(201)
        const gift = yield* sendGift(company, "nowhere")

        const page = yield* get(`${gift.path}/choices?country=BR`)
        expect(page.status).toBe(200)
        expect(page.text).toContain('id="undeliverable"')
        expect(page.text).toContain("This gift cannot be delivered to Brazil")
        expect(page.text).toContain(`We have let ${company.name.replace(/&/g, "&amp;")} know`)
        expect(page.text).toContain(`<a href="${gift.path}">Pick another country</a>`)
        // Asked again, and for the form: still nothing, and no second event for BR.
        expect((yield* get(`${gift.path}/choices?country=BR`)).text).toContain('id="undeliverable"')
        expect((yield* get(`${gift.path}/choose?productId=${company.productId}&country=BR`)).status).toBe(422)

        const [delivery] = yield* eventually(
          Effect.sync(() => receiver.received),
          (received) => received.length >= 1,
          "the gift-undeliverable delivery"
        )
        const verified = new Webhook(hook.body.data.secret).verify(delivery!.body, signatureHeaders(delivery!)) as {
          webhookData: { eventType: string }
          eventData: Record<string, unknown>
        }
        expect(verified.webhookData).toMatchObject({ eventType: "gift-undeliverable" })
        expect(verified.eventData).toMatchObject({
          companyId: company.companyId,
          accountId: company.accountId,
          giftId: gift.id,
          countryCode: "BR",
          budget: { min: 1, max: 1 }
        })
        // Another country is another event; BR stays one.
        yield* get(`${gift.path}/choices?country=DE`)
        yield* eventually(
          Effect.sync(() => receiver.received.length),
          (n) => n >= 2,
          "the second country's delivery"
        )
        yield* Effect.sleep("500 millis")
        const countries = receiver.received.map(
          (request) => (JSON.parse(request.body) as { eventData: { countryCode: string } }).eventData.countryCode
        )
        expect(countries).toEqual(["BR", "DE"])

        // Each country is recorded once for the gift, in the order found (the dashboard's gift detail lists them).
        const sql = yield* sqlClient
        const rows = yield* Effect.orDie(
          sql<{ countryCode: string }>`SELECT country_code FROM gift_undeliverable_countries
            WHERE gift_id = ${gift.id} ORDER BY created_at, country_code`
        )
        expect(rows.map((row) => row.countryCode)).toEqual(["BR", "DE"])
      })
    )

    it.effect("the last reminder 48 hours before expiry, none for a claimed gift nor where reminders are off", () =>
      Effect.gen(function* () {
        const company = yield* setup({ min: 1, max: 20000 })
        const waiting = yield* sendGift(company, "waiting", "email")
        const claimed = yield* sendGift(company, "claimed", "email")
        // A campaign that disables reminders, and one that disables them once its gift is sent: the setting is
        // checked when each reminder is due, as well as when it is scheduled.
        const quiet = yield* sendGift(yield* withCampaign(company, { disableReminders: true }), "quiet", "email")
        const turnedOff = yield* withCampaign(company, { disableReminders: false })
        const muted = yield* sendGift(turnedOff, "muted", "email")
        const patched = yield* patchWith(
          `/public-api/v2/campaigns/${turnedOff.campaignId}`,
          { customization: { notificationPolicy: { disableReminders: true } } },
          company.headers
        )
        expect(patched.body.customization.notificationPolicy.disableReminders).toBe(true)
        const claim = yield* postWith(
          `${gifts}/${claimed.id}/claim`,
          {
            variantId: company.variantId,
            orderRecipient: {
              ...who,
              country: "GB",
              address: { addressLine1: "10 Downing Street", city: "London", zipcode: "SW1A 2AA" }
            }
          },
          company.headers
        )
        expect(claim.status, JSON.stringify(claim.body)).toBe(200)
        const sql = yield* sqlClient
        const lastReminders = (giftId: string) =>
          Effect.orDie(sql<{ recipient: string; body: string }>`SELECT recipient, body FROM notifications
              WHERE gift_id = ${giftId} AND kind = 'gift.last-reminder'`)
        const travel = yield* TimeTravel
        // Neither reminder for the gifts whose campaign disables them, once no reminder job of theirs is left to run.
        const noReminders = (due: ReadonlyArray<string>) =>
          Effect.forEach([quiet, muted], (gift) =>
            Effect.gen(function* () {
              yield* eventually(
                Effect.orDie(sql`SELECT 1 FROM jobs WHERE kind IN ${sql.in(due)} AND payload ->> 'giftId' = ${gift.id}
                  AND status IN ('pending', 'running')`),
                (rows) => rows.length === 0,
                "the reminder jobs due"
              )
              const sent = yield* Effect.orDie(sql`SELECT kind FROM notifications WHERE gift_id = ${gift.id}
                AND kind IN ('gift.reminder', 'gift.last-reminder')`)
              expect(sent, gift.id).toEqual([])
            })
          )

        // Day 4: the halfway reminder (3.5 days), not yet the last one (5 days).
        yield* travel.advance("4 days")
        yield* eventually(
          Effect.orDie(sql`SELECT 1 FROM notifications WHERE gift_id = ${waiting.id} AND kind = 'gift.reminder'`),
          (rows) => rows.length === 1,
          "the halfway reminder"
        )
        expect(yield* lastReminders(waiting.id)).toEqual([])
        yield* noReminders(["gift.remind"])

        // Day 5 and a bit: 48 hours before expiry.
        yield* travel.advance("25 hours")
        const [reminder] = yield* eventually(
          lastReminders(waiting.id),
          (rows) => rows.length === 1,
          "the last reminder"
        )
        expect(reminder!.recipient).toBe("waiting@example.com")
        expect(reminder!.body).toContain(waiting.link)
        expect(reminder!.body).toMatch(/your gift expires on [A-Z][a-z]+ \d{1,2}, \d{4}; choose it before then/)
        expect(yield* lastReminders(claimed.id)).toEqual([])
        yield* noReminders(["gift.remind", "gift.remind-last"])

        // Past the expiry: the link's page says when it expired and whom to ask.
        yield* travel.advance("2 days")
        const status = (giftId: string) =>
          Effect.map(getWith(`${gifts}/${giftId}`, company.headers), (response) => response.body)
        const expired = yield* eventually(status(waiting.id), (body) => body.status === "expired", "the expiry")
        const page = yield* get(waiting.path)
        expect(page.status).toBe(410)
        const date = new Intl.DateTimeFormat("en", { dateStyle: "long", timeZone: "UTC" }).format(
          new Date(Date.parse(expired.expirationDate))
        )
        expect(page.text).toContain(`This gift expired on ${date}.`)
        expect(page.text).toContain(`ask ${company.name.replace(/&/g, "&amp;")}, who sent it`)
        expect(yield* lastReminders(waiting.id)).toHaveLength(1)
      })
    )
  })
})
