import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TimeTravel } from "../../support/auth.js"
import { makeCheckoutTestServer } from "../../support/checkout.js"
import {
  createCompany,
  getWith,
  keyHeaders,
  patchWith,
  postWith,
  postWithoutBody,
  raiseLimits,
  timestampPattern,
  v2Keys
} from "../../support/company.js"
import { eventually } from "../../support/eventually.js"
import { testPublicUrl } from "../../support/http.js"

/**
 * Gifts, version 2, over real HTTP with the background worker (docs/decisions/0047-v2-gifts.md): per-recipient
 * outcomes, the key that finds a gift again, the budget held on the ledger and released on cancel and expiry (the
 * expiry job driven by moving the server's clock), the list's filters, and every bad body (which stores
 * nothing).
 */

const gifts = "/public-api/v2/gifts"
const campaigns = "/public-api/v2/campaigns"

const sqlClient = SqlClient.SqlClient

const counts = Effect.flatMap(sqlClient, (sql) =>
  sql<{ gifts: number; entries: number; recipients: number; notifications: number }>`SELECT
    (SELECT count(*)::int FROM gifts) AS gifts,
    (SELECT count(*)::int FROM billing_entries WHERE subject_type = 'gift') AS entries,
    (SELECT count(*)::int FROM recipients) AS recipients,
    (SELECT count(*)::int FROM notifications WHERE gift_id IS NOT NULL) AS notifications`.pipe(
    Effect.map((rows) => rows[0]!)
  )
).pipe(Effect.orDie)

const v2Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })

/** A test company whose limits never bite, and an active campaign with a 10–50 USD budget. */
const setup = (budget = { min: 10, max: 50 }, expiration: unknown = { daysFromSend: 7 }) =>
  Effect.gen(function* () {
    const company = yield* createCompany()
    yield* raiseLimits(company.companyId)
    const sql = yield* sqlClient
    const [product] = yield* sql<{
      id: string
    }>`SELECT id FROM products WHERE min_price_usd IS NOT NULL ORDER BY id LIMIT 1`
    const headers = keyHeaders(company.apiKey)
    const campaign = yield* postWith(
      campaigns,
      {
        name: "Thank you",
        customization: {
          giftProperties: { selectedGiftType: "product", productId: product!.id, budget, expiration },
          message: "Thanks for everything this year!"
        }
      },
      headers
    )
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(201)
    return { ...company, headers, campaignId: campaign.body.id as string }
  })

const remaining = (headers: Record<string, string>) =>
  Effect.map(
    getWith("/public-api/v3/billing-methods", headers),
    (response) => response.body.data[0].spendingLimit.remaining as number
  )

const ada = { firstname: "Ada", lastname: "Lovelace", email: "ada@example.com", key: "ada-2026" }
const alan = { firstname: "Alan", lastname: "Turing", phone: "+44 20 7946 0958", key: "alan-2026" }

describe("gifts (/public-api/v2)", () => {
  it.layer(makeCheckoutTestServer(), { timeout: 180_000 })((it) => {
    it.effect("sends a gift per recipient, holds each budget, and finds a gift again by its key", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const before = yield* remaining(company.headers)
        const sent = yield* postWith(
          gifts,
          { campaignId: company.campaignId, recipients: [ada, alan], sendingMethod: "email" },
          company.headers
        )
        expect(sent.status, JSON.stringify(sent.body)).toBe(200)
        expect(sent.body.results).toEqual([
          {
            success: true,
            id: expect.stringMatching(/^[0-9a-f]{24}$/),
            key: "ada-2026",
            link: expect.stringMatching(`^${testPublicUrl}/g/[A-Za-z0-9_-]{32}$`)
          },
          { success: true, id: expect.any(String), key: "alan-2026", link: expect.any(String) }
        ])
        // 50 USD held per gift.
        expect(yield* remaining(company.headers)).toBe(before - 2 * 5000)

        const [first] = sent.body.results
        const gift = yield* getWith(`${gifts}/${first.id}`, company.headers)
        expect(gift.body).toEqual({
          id: first.id,
          campaignId: company.campaignId,
          accountId: company.accountId,
          recipientId: expect.stringMatching(/^[0-9a-f]{24}$/),
          key: "ada-2026",
          status: "unopened",
          link: first.link,
          budget: { min: 10, max: 50 },
          expirationDate: expect.stringMatching(timestampPattern),
          sendingMethod: "email",
          metadata: null,
          orderId: null,
          deliveryDetails: null,
          swappedFrom: null,
          thankYouNote: null,
          source: null,
          createdAt: expect.stringMatching(timestampPattern),
          claimedAt: null
        })
        expect(Date.parse(gift.body.expirationDate) - Date.parse(gift.body.createdAt)).toBe(7 * 24 * 3_600_000)
        // The recipient is the company's, and the e-mail went to the outbox with the link and the note.
        const recipient = yield* getWith(`/public-api/v2/recipients/${gift.body.recipientId}`, company.headers)
        expect(recipient.body).toMatchObject({ firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" })
        const sql = yield* sqlClient
        const [message] = yield* sql<{ channel: string; recipient: string; body: string }>`
          SELECT channel, recipient, body FROM notifications WHERE gift_id = ${first.id}`
        expect(message).toMatchObject({ channel: "email", recipient: "ada@example.com" })
        expect(message!.body).toContain(first.link)
        expect(message!.body).toContain("Thanks for everything this year!")

        // The same keys again: the same gifts, nothing more held or written.
        const countsBefore = yield* counts
        const again = yield* postWith(
          gifts,
          { campaignId: company.campaignId, recipients: [alan, ada], sendingMethod: "email" },
          company.headers
        )
        expect(again.body.results.map((r: { id: string }) => r.id)).toEqual([
          sent.body.results[1].id,
          sent.body.results[0].id
        ])
        expect(yield* counts).toEqual(countsBefore)
        expect(yield* remaining(company.headers)).toBe(before - 2 * 5000)
      })
    )

    it.effect("one recipient's failure is its own result: the others' gifts are made", () =>
      Effect.gen(function* () {
        const company = yield* setup({ min: 1, max: 20_000 })
        // 100,000 USD of test funds hold five 20,000 USD gifts; the sixth is refused, the others stand.
        const recipients = Array.from({ length: 6 }, (_, i) => ({
          firstname: "Guest",
          lastname: `Number ${i}`,
          email: `guest${i}@example.com`,
          key: `guest-${i}`
        }))
        const sent = yield* postWith(gifts, { campaignId: company.campaignId, recipients }, company.headers)
        expect(sent.status).toBe(200)
        expect(sent.body.results.map((r: { success: boolean }) => r.success)).toEqual([
          true,
          true,
          true,
          true,
          true,
          false
        ])
        expect(sent.body.results[5]).toEqual({
          success: false,
          key: "guest-5",
          errorCode: "UNPROCESSABLE_ENTITY",
          message: expect.stringContaining("this needs 2000000")
        })
        expect(yield* remaining(company.headers)).toBe(0)
        const sql = yield* sqlClient
        const [row] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM gifts WHERE key = 'guest-5'
          AND campaign_id = ${company.campaignId}`
        expect(row!.count).toBe(0)
      })
    )

    it.effect("a key limited to one account never reaches another account's recipient through a gift", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const sql = yield* sqlClient
        // Ada is a recipient of the default account only.
        const adaRecipient = yield* postWith(
          "/public-api/v2/recipients",
          { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", mobilePhone: "+44 20 7946 0958" },
          company.headers
        )
        expect(adaRecipient.status, JSON.stringify(adaRecipient.body)).toBe(201)
        const adaId = adaRecipient.body.id as string
        const adaBefore = yield* sql`SELECT * FROM recipients WHERE id = ${adaId}`
        // Sales, its campaign, and a key that reaches Sales alone.
        const sales = yield* postWith(
          "/public-api/v3/accounts",
          {
            name: "Sales",
            billingMethod: { name: "Sales budget", type: "prepaid", spendingLimit: { amount: 5000_00 } }
          },
          company.headers
        )
        const salesId = sales.body.data.id as string
        const salesHeaders = keyHeaders(company.apiKey, { "ribbon-account-id": salesId })
        const [product] = yield* sql<{
          productId: string
        }>`SELECT product_id FROM campaigns WHERE id = ${company.campaignId}`
        const campaign = yield* postWith(
          campaigns,
          {
            name: "Sales thanks",
            customization: {
              giftProperties: {
                selectedGiftType: "product",
                productId: product!.productId,
                budget: { min: 10, max: 50 }
              }
            }
          },
          salesHeaders
        )
        expect(campaign.status, JSON.stringify(campaign.body)).toBe(201)
        const limited = yield* postWith(
          v2Keys,
          {
            name: "sales only",
            permissions: ["gifts:create", "gifts:read:unmasked", "recipients:read:unmasked"],
            accountsAccess: { scope: "selected-accounts", ids: [salesId] }
          },
          company.headers
        )
        const salesKey = keyHeaders(limited.body.apiKey)

        // Ada's e-mail, another name and phone, texted: the gift is for a recipient of Sales' own.
        const eve = { firstname: "Eve", lastname: "Mallory", email: "ADA@example.com", phone: "+1 415 555 0100" }
        const sent = yield* postWith(
          gifts,
          { campaignId: campaign.body.id, recipients: [{ ...eve, key: "eve-1" }], sendingMethod: "sms" },
          salesKey
        )
        expect(sent.body.results[0], JSON.stringify(sent.body)).toMatchObject({ success: true })
        const gift = yield* getWith(`${gifts}/${sent.body.results[0].id}`, salesKey)
        expect(gift.body.recipientId).not.toBe(adaId)
        const own = yield* getWith(`/public-api/v2/recipients/${gift.body.recipientId}`, salesKey)
        expect(own.body).toMatchObject({
          firstName: "Eve",
          lastName: "Mallory",
          email: "ADA@example.com",
          mobilePhone: "+14155550100",
          accounts: [salesId]
        })
        // Ada stays out of the key's reach, untouched, and her phone gets nothing.
        expect((yield* getWith(`/public-api/v2/recipients/${adaId}`, salesKey)).status).toBe(404)
        expect(yield* sql`SELECT * FROM recipients WHERE id = ${adaId}`).toEqual(adaBefore)
        const texts = yield* sql<{ recipient: string }>`SELECT recipient FROM notifications
          WHERE gift_id = ${gift.body.id}`
        expect(texts).toEqual([{ recipient: "+14155550100" }])

        // A key reaching both accounts finds the recipient of the campaign's account.
        const again = yield* postWith(
          gifts,
          { campaignId: campaign.body.id, recipients: [{ ...ada, key: "ada-sales" }] },
          company.headers
        )
        const second = yield* getWith(`${gifts}/${again.body.results[0].id}`, company.headers)
        expect(second.body.recipientId).toBe(gift.body.recipientId)
        expect(yield* sql`SELECT * FROM recipients WHERE id = ${adaId}`).toEqual(adaBefore)
      })
    )

    it.effect("cancel and expire release the budget once; a closed gift takes no change", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const before = yield* remaining(company.headers)
        const sent = yield* postWith(
          gifts,
          { campaignId: company.campaignId, recipients: [ada, alan] },
          company.headers
        )
        const [one, two] = sent.body.results.map((r: { id: string }) => r.id)
        // Neither takes a body: none at all (`curl -X POST`), or an empty one, is fine.
        const cancelled = yield* postWithoutBody(`${gifts}/${one}/cancel`, company.headers)
        expect(cancelled.body.status).toBe("cancelled")
        const expired = yield* postWith(`${gifts}/${two}/expire`, "", company.headers)
        expect(expired.body.status).toBe("expired")
        expect(yield* remaining(company.headers)).toBe(before)
        for (const [path, body] of [
          [`${gifts}/${one}/cancel`, {}],
          [`${gifts}/${one}/expire`, {}],
          [`${gifts}/${two}/cancel`, {}]
        ] as const) {
          expect(yield* postWith(path, body, company.headers)).toMatchObject({
            status: 422,
            body: v2Error(422, "UNPROCESSABLE_ENTITY")
          })
        }
        expect(yield* patchWith(`${gifts}/${one}`, { metadata: { a: "b" } }, company.headers)).toMatchObject({
          status: 422,
          body: v2Error(422, "UNPROCESSABLE_ENTITY")
        })
        expect(yield* remaining(company.headers)).toBe(before)
      })
    )

    it.effect("a new expirationDate is in the future and at most 365 days ahead; otherwise 400, nothing moved", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const sent = yield* postWith(gifts, { campaignId: company.campaignId, recipients: [ada] }, company.headers)
        const url = `${gifts}/${sent.body.results[0].id}`
        const before = yield* getWith(url, company.headers)
        const sql = yield* sqlClient
        const expiryJobs = Effect.map(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE kind = 'gift.expire'`,
          (rows) => rows[0]!.n
        )
        const jobsBefore = yield* expiryJobs
        const day = 24 * 3_600_000
        for (const expirationDate of [
          "2036-01-01T00:00:00.000Z",
          new Date(Date.now() + 366 * day).toISOString(),
          new Date(Date.now() - day).toISOString()
        ]) {
          const refused = yield* patchWith(url, { expirationDate, metadata: { a: "b" } }, company.headers)
          expect(refused.status, expirationDate).toBe(400)
          expect(refused.body).toMatchObject({ errorCode: "INVALID_REQUEST", path: "expirationDate" })
        }
        expect((yield* getWith(url, company.headers)).body).toEqual(before.body)
        expect(yield* expiryJobs).toBe(jobsBefore)
        // 364 days ahead is within the bound.
        const within = new Date(Date.now() + 364 * day).toISOString()
        const moved = yield* patchWith(url, { expirationDate: within }, company.headers)
        expect(moved.status, JSON.stringify(moved.body)).toBe(200)
        expect(moved.body.expirationDate).toBe(within)
      })
    )

    it.effect("the expiry job expires an open gift at its time, released; a later expiry moves it", () =>
      Effect.gen(function* () {
        const company = yield* setup({ min: 10, max: 50 }, { daysFromSend: 2 })
        const before = yield* remaining(company.headers)
        const sent = yield* postWith(
          gifts,
          { campaignId: company.campaignId, recipients: [ada, alan] },
          company.headers
        )
        const [one, two] = sent.body.results.map((r: { id: string }) => r.id)
        // The second gift gets ten days.
        const later = new Date(Date.now() + 10 * 24 * 3_600_000).toISOString()
        const changed = yield* patchWith(
          `${gifts}/${two}`,
          { expirationDate: later, metadata: { crm: "7", crm_ref: "A_1" } },
          company.headers
        )
        expect(changed.status, JSON.stringify(changed.body)).toBe(200)
        expect(changed.body).toMatchObject({ expirationDate: later })
        // Metadata keys come back exactly as sent.
        expect(changed.body.metadata).toEqual({ crm: "7", crm_ref: "A_1" })
        expect((yield* getWith(`${gifts}/${two}`, company.headers)).body.metadata).toEqual({ crm: "7", crm_ref: "A_1" })

        yield* Effect.flatMap(TimeTravel, (travel) => travel.advance("3 days"))
        yield* eventually(
          getWith(`${gifts}/${one}`, company.headers),
          (response) => response.body.status === "expired",
          "the first gift to expire"
        )
        expect((yield* getWith(`${gifts}/${two}`, company.headers)).body.status).toBe("unopened")
        expect(yield* remaining(company.headers)).toBe(before - 5000)
        yield* Effect.flatMap(TimeTravel, (travel) => travel.advance("8 days"))
        yield* eventually(
          getWith(`${gifts}/${two}`, company.headers),
          (response) => response.body.status === "expired",
          "the second gift to expire"
        )
        expect(yield* remaining(company.headers)).toBe(before)
      })
    )

    it.effect("reminds an e-mailed gift's recipient halfway to its expiry, once, unless claimed or closed", () =>
      Effect.gen(function* () {
        const company = yield* setup({ min: 10, max: 50 }, { daysFromSend: 4 })
        const sent = yield* postWith(
          gifts,
          {
            campaignId: company.campaignId,
            recipients: [ada, { ...alan, email: "alan@example.com" }],
            sendingMethod: "email"
          },
          company.headers
        )
        const [waiting, cancelled] = sent.body.results.map((r: { id: string }) => r.id)
        yield* postWith(`${gifts}/${cancelled}/cancel`, {}, company.headers)
        const sql = yield* sqlClient
        const reminders = (giftId: string) =>
          Effect.map(
            sql<{ recipient: string; body: string }>`SELECT recipient, body FROM notifications
              WHERE gift_id = ${giftId} AND kind = 'gift.reminder'`,
            (rows) => rows
          ).pipe(Effect.orDie)
        yield* Effect.flatMap(TimeTravel, (travel) => travel.advance("1 day"))
        expect(yield* reminders(waiting)).toEqual([])
        yield* Effect.flatMap(TimeTravel, (travel) => travel.advance("1 day"))
        const [reminder] = yield* eventually(reminders(waiting), (rows) => rows.length === 1, "the reminder")
        expect(reminder!.recipient).toBe("ada@example.com")
        expect(reminder!.body).toContain(sent.body.results[0].link)
        expect(yield* reminders(cancelled)).toEqual([])
      })
    )

    it.effect("lists newest first with statuses, campaignIds, keys and created filters", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const sent = yield* postWith(
          gifts,
          { campaignId: company.campaignId, recipients: [ada, alan] },
          company.headers
        )
        const [one, two] = sent.body.results.map((r: { id: string }) => r.id)
        yield* postWith(`${gifts}/${one}/cancel`, {}, company.headers)
        const all = yield* getWith(gifts, company.headers)
        expect(all.body).toMatchObject({ skip: 0, limit: 20 })
        expect(all.body.results.map((g: { id: string }) => g.id)).toEqual([two, one])
        const open = yield* getWith(`${gifts}?statuses=unopened,opened`, company.headers)
        expect(open.body.results.map((g: { id: string }) => g.id)).toEqual([two])
        const byKey = yield* getWith(`${gifts}?keys=ada-2026&campaignIds=${company.campaignId}`, company.headers)
        expect(byKey.body.results.map((g: { id: string }) => g.id)).toEqual([one])
        const none = yield* getWith(`${gifts}?createdBefore=2000-01-01T00:00:00Z`, company.headers)
        expect(none.body.results).toEqual([])
        const paged = yield* getWith(`${gifts}?skip=1&limit=1`, company.headers)
        expect(paged.body).toMatchObject({ skip: 1, limit: 1 })
        expect(paged.body.results.map((g: { id: string }) => g.id)).toEqual([one])
        expect(yield* getWith(`${gifts}?statuses=lost`, company.headers)).toMatchObject({ status: 400 })

        // Another company sees none of them.
        const other = yield* setup()
        expect(yield* getWith(`${gifts}/${one}`, other.headers)).toMatchObject({
          status: 404,
          body: v2Error(404, "NOT_FOUND")
        })
        expect((yield* getWith(gifts, other.headers)).body.results).toEqual([])
      })
    )

    it.effect("expand[] adds the recipient (masked by the recipients permission), the campaign and the orders", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const sent = yield* postWith(gifts, { campaignId: company.campaignId, recipients: [ada] }, company.headers)
        const id = sent.body.results[0].id
        const full = yield* getWith(
          `${gifts}/${id}?expand[]=recipient&expand[]=campaign&expand[]=orders`,
          company.headers
        )
        expect(full.status, JSON.stringify(full.body)).toBe(200)
        expect(full.body.recipient).toMatchObject({ firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" })
        expect(full.body.campaign).toMatchObject({ id: company.campaignId, name: "Thank you" })
        expect(full.body.orders).toEqual([])
        const plain = yield* getWith(`${gifts}/${id}`, company.headers)
        expect(plain.body).not.toHaveProperty("recipient")
        expect(plain.body).not.toHaveProperty("campaign")
        // A key that reads recipients masked sees the recipient masked, in a list too.
        const masked = yield* postWith(
          v2Keys,
          { name: "masked", permissions: ["gifts:read:unmasked", "recipients:read:masked"] },
          company.headers
        )
        const listed = yield* getWith(`${gifts}?expand[]=recipient`, keyHeaders(masked.body.apiKey))
        expect(listed.status).toBe(200)
        expect(listed.body.results[0].recipient.firstName).toBe("A**")
        expect(listed.body.results[0].recipient.email).not.toBe("ada@example.com")
        expect(yield* getWith(`${gifts}/${id}?expand[]=everything`, company.headers)).toMatchObject({ status: 400 })

        // `fields` narrows a read to those fields (with the id, and what expand[] adds).
        const narrow = yield* getWith(`${gifts}/${id}?fields=status,link&expand[]=campaign`, company.headers)
        expect(narrow.status, JSON.stringify(narrow.body)).toBe(200)
        expect(Object.keys(narrow.body).sort()).toEqual(["campaign", "id", "link", "status"])
        const narrowList = yield* getWith(`${gifts}?fields=key`, company.headers)
        expect(narrowList.body.results).toEqual([{ id, key: "ada-2026" }])
        expect(yield* getWith(`${gifts}?fields=key,secret`, company.headers)).toMatchObject({
          status: 400,
          body: { errorCode: "INVALID_REQUEST", path: "fields" }
        })
      })
    )

    it.effect("refuses every bad body with a 400 naming the field, and stores nothing", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const before = yield* counts
        const bad: ReadonlyArray<readonly [unknown, string]> = [
          [{ recipients: [ada] }, "campaignId"],
          [{ campaignId: "nope", recipients: [ada] }, "campaignId"],
          [{ campaignId: company.campaignId }, "recipients"],
          [{ campaignId: company.campaignId, recipients: [] }, "recipients"],
          [
            {
              campaignId: company.campaignId,
              recipients: Array.from({ length: 101 }, (_, i) => ({ ...ada, key: `k${i}` }))
            },
            "recipients"
          ],
          [{ campaignId: company.campaignId, recipients: [{ ...ada, key: "" }] }, "recipients[0].key"],
          [{ campaignId: company.campaignId, recipients: [{ ...ada, key: "k".repeat(121) }] }, "recipients[0].key"],
          [{ campaignId: company.campaignId, recipients: [{ ...ada, firstname: "" }] }, "recipients[0].firstname"],
          [{ campaignId: company.campaignId, recipients: [{ ...ada, email: "not-mail" }] }, "recipients[0].email"],
          [{ campaignId: company.campaignId, recipients: [{ ...ada, phone: "12" }] }, "recipients[0].phone"],
          [{ campaignId: company.campaignId, recipients: [ada], sendingMethod: "fax" }, "sendingMethod"]
        ]
        for (const [body, path] of bad) {
          const response = yield* postWith(gifts, body, company.headers)
          expect(response.status, `${JSON.stringify(body).slice(0, 200)}: ${JSON.stringify(response.body)}`).toBe(400)
          expect(response.body).toMatchObject({ errorCode: "INVALID_REQUEST", path })
        }
        expect(
          yield* postWith(gifts, { campaignId: "0123456789abcdef01234567", recipients: [ada] }, company.headers)
        ).toMatchObject({ status: 404, body: v2Error(404, "NOT_FOUND") })
        // A draft campaign sends nothing.
        yield* Effect.flatMap(
          sqlClient,
          (sql) => sql`UPDATE campaigns SET status = 'paused' WHERE id = ${company.campaignId}`
        )
        expect(
          yield* postWith(gifts, { campaignId: company.campaignId, recipients: [ada] }, company.headers)
        ).toMatchObject({
          status: 422,
          body: v2Error(422, "UNPROCESSABLE_ENTITY")
        })
        expect(yield* counts).toEqual(before)
        // A key without gifts:create is refused.
        const reader = yield* postWith(v2Keys, { name: "reader", permissions: ["gifts:read:masked"] }, company.headers)
        expect(
          (yield* postWith(
            gifts,
            { campaignId: company.campaignId, recipients: [ada] },
            keyHeaders(reader.body.apiKey)
          )).status
        ).toBe(403)
      })
    )
  })
})
