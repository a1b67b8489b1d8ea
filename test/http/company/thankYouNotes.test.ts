import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Webhook } from "standardwebhooks"
import { companyEventTypes } from "../../../src/domain/company/Webhooks.js"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { TimeTravel } from "../../support/auth.js"
import { makeCheckoutTestServer } from "../../support/checkout.js"
import { getWith, keyHeaders, postWith, v2Keys } from "../../support/company.js"
import { eventually, settle } from "../../support/eventually.js"
import { companyWithProductCampaign } from "../../support/giftLinks.js"
import { get, postForm, testPublicUrl } from "../../support/http.js"
import { certificate, httpsReceiver } from "../../support/receiver.js"
import { signatureHeaders } from "../../support/webhooks.js"

/**
 * Thank-you notes over real HTTP (docs/decisions/0070-gift-thank-you-notes.md): a claimed gift's recipient writes one
 * note to the sender from the gift page (a plain form POST, then a redirect back to the page), changes it within the
 * 24 hours after first writing it (the server's clock moved by `TimeTravel`), and is refused after; a refused note
 * leaves nothing in the database. v2 reads show it, masked or not; `gift-thank-you-note-added` reaches a loopback
 * receiver, verified with the `standardwebhooks` package (so that test runs before any time is moved: the package
 * refuses timestamps more than 5 minutes off).
 */

const gifts = "/public-api/v2/gifts"
const sqlClient = SqlClient.SqlClient

/** A product with one variant for sale that ships to GB with stock. */
const catalog = Effect.flatMap(sqlClient, (sql) =>
  Effect.map(
    sql<{ productId: string; variantId: string }>`
      SELECT p.id AS product_id, v.id AS variant_id FROM products p JOIN variants v ON v.product_id = p.id
        JOIN variant_locations l ON l.variant_id = v.id
      WHERE v.price_usd IS NOT NULL AND NOT v.is_digital AND l.stock > 100 AND 'GB' = ANY (l.ships_to)
        AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
      ORDER BY p.id LIMIT 1`,
    (rows) => rows[0]!
  )
).pipe(Effect.orDie)

const setup = Effect.gen(function* () {
  const product = yield* catalog
  const company = yield* companyWithProductCampaign(product.productId, { name: "Thanks" })
  return { ...company, ...product, campaignId: company.campaign.id }
})

type Company = Effect.Effect.Success<typeof setup>

const orderRecipient = {
  firstName: "Ada",
  lastName: "Lovelace",
  email: "ada@example.com",
  phone: "+44 20 7946 0958",
  country: "GB",
  address: { addressLine1: "10 Downing Street", city: "London", zipcode: "SW1A 2AA" }
}

/** A gift sent to Ada; claimed through the API unless `claimed` is false. Its id and its page's path. */
const giftFor = (company: Company, key: string, claimed = true) =>
  Effect.gen(function* () {
    const sent = yield* postWith(
      gifts,
      {
        campaignId: company.campaignId,
        recipients: [{ firstname: "Ada", lastname: "Lovelace", email: `${key}@example.com`, key }]
      },
      company.headers
    )
    const gift = sent.body.results[0] as { id: string; link: string }
    if (claimed) {
      const claim = yield* postWith(
        `${gifts}/${gift.id}/claim`,
        { variantId: company.variantId, orderRecipient },
        company.headers
      )
      expect(claim.status, JSON.stringify(claim.body)).toBe(200)
    }
    return { id: gift.id, path: gift.link.replace(testPublicUrl, "") }
  })

/** The note's form posted as a browser without JavaScript posts it. */
const postNote = (path: string, message: string) => postForm(`${path}/thank-you`, { message })

/** The note's columns as stored. */
const stored = (giftId: string) =>
  Effect.flatMap(sqlClient, (sql) =>
    Effect.map(
      sql<{ message: string | null; createdAt: Date | null; updatedAt: Date | null }>`
        SELECT thank_you_message AS message, thank_you_created_at AS created_at, thank_you_updated_at AS updated_at
        FROM gifts WHERE id = ${giftId}`,
      (rows) => rows[0]!
    )
  ).pipe(Effect.orDie)

const nothingStored = { message: null, createdAt: null, updatedAt: null }

const noteOf = (company: Company, giftId: string, headers = company.headers) =>
  Effect.map(getWith(`${gifts}/${giftId}`, headers), (response) => {
    expect(response.status, response.text).toBe(200)
    return response.body.thankYouNote as { message: string; createdAt: string } | null
  })

const travel = (duration: string) => Effect.flatMap(TimeTravel, (time) => time.advance(duration as "1 hour"))

const Server = makeCheckoutTestServer(
  Layer.mergeAll(
    FulfillmentSettings.Default,
    OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })
  )
)

describe("thank-you notes (/g/{token}/thank-you, v2 gift reads, gift-thank-you-note-added)", () => {
  it.layer(Server, { timeout: 180_000 })((it) => {
    it.scoped(
      "a note and its change each send gift-thank-you-note-added, signed and verified; the same text sends none",
      () =>
        Effect.gen(function* () {
          const receiver = yield* httpsReceiver()
          const company = yield* setup
          const endpoint = yield* postWith(
            "/public-api/v3/webhooks",
            { url: receiver.url("/hooks/notes"), eventTypes: ["gift-thank-you-note-added"] },
            company.headers
          )
          expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201)
          // Every event type at once, the new ones included: the stored list takes them all.
          const everything = yield* postWith(
            "/public-api/v3/webhooks",
            { url: receiver.url("/hooks/all"), eventTypes: [...companyEventTypes] },
            company.headers
          )
          expect(everything.status, JSON.stringify(everything.body)).toBe(201)
          expect(companyEventTypes).toContain("gift-thank-you-note-added")
          const gift = yield* giftFor(company, "hooked")

          expect((yield* postNote(gift.path, "Thank you so much!")).status).toBe(303)
          const notes = () => receiver.received.filter((request) => request.path === "/hooks/notes")
          yield* eventually(
            Effect.sync(() => notes().length),
            (n) => n >= 1,
            "the note's delivery"
          )
          const verifier = new Webhook(endpoint.body.data.secret)
          const first = verifier.verify(notes()[0]!.body, signatureHeaders(notes()[0]!)) as any
          const written = yield* stored(gift.id)
          expect(first).toEqual({
            webhookData: {
              id: notes()[0]!.headers["webhook-id"],
              eventType: "gift-thank-you-note-added",
              target: receiver.url("/hooks/notes"),
              triggeredAt: expect.any(String)
            },
            eventData: {
              companyId: company.companyId,
              accountId: company.accountId,
              giftId: gift.id,
              message: "Thank you so much!",
              createdAt: written.createdAt!.toISOString(),
              updatedAt: written.createdAt!.toISOString(),
              edited: false
            }
          })

          expect((yield* postNote(gift.path, "Thank you so much! The mug is lovely.")).status).toBe(303)
          yield* eventually(
            Effect.sync(() => notes().length),
            (n) => n >= 2,
            "the change's delivery"
          )
          const second = verifier.verify(notes()[1]!.body, signatureHeaders(notes()[1]!)) as any
          expect(second.eventData).toMatchObject({
            giftId: gift.id,
            message: "Thank you so much! The mug is lovely.",
            createdAt: written.createdAt!.toISOString(),
            edited: true
          })
          expect(second.webhookData.id).not.toBe(first.webhookData.id)

          // The same text again (a double submit): nothing changes, nothing is sent.
          const before = yield* stored(gift.id)
          expect((yield* postNote(gift.path, "  Thank you so much! The mug is lovely.\r\n")).status).toBe(303)
          yield* settle
          yield* settle
          expect(notes()).toHaveLength(2)
          expect(yield* stored(gift.id)).toEqual(before)
          // The endpoint of every type got the same two.
          yield* eventually(
            Effect.sync(() =>
              receiver.received.filter(
                (request) => request.path === "/hooks/all" && request.body.includes("gift-thank-you-note-added")
              )
            ),
            (found) => found.length === 2,
            "both deliveries to the endpoint of every type"
          )
        })
    )

    it.effect("bounds: an empty, blank or 501-character note is refused beside its field and stores nothing", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const gift = yield* giftFor(company, "bounds")

        const page = yield* get(gift.path)
        expect(page.status).toBe(200)
        expect(page.text).toContain(`<form method="post" action="${gift.path}/thank-you">`)
        expect(page.text).toContain('<label for="thank-you-message">Your note to ')
        expect(page.text).toContain('aria-describedby="thank-you-hint"')
        expect(page.text).toContain('maxlength="500"')
        expect(page.text).not.toContain(' aria-invalid="true"')

        for (const [message, problem] of [
          ["", "Write a note of at least 1 character."],
          [" \r\n\t ", "Write a note of at least 1 character."],
          ["a".repeat(501), "A note is at most 500 characters; this one has 501."],
          // Counted as every bound of the API is: an emoji outside the BMP is two.
          [`${"a".repeat(499)}🎁`, "A note is at most 500 characters; this one has 501."],
          ["Thanks\u0007", "A note is plain text: it cannot contain control characters."]
        ] as const) {
          const refused = yield* postNote(gift.path, message)
          expect(refused.status, refused.text.slice(0, 300)).toBe(422)
          expect(refused.headers["content-security-policy"]).toContain("default-src 'none'")
          expect(refused.text).toContain('<div class="error" role="alert" id="thank-you-problem">')
          expect(refused.text).toContain(`<a href="#thank-you-message">${problem}</a>`)
          expect(refused.text).toContain(`<p class="field-error" id="thank-you-error">Error: ${problem}</p>`)
          expect(refused.text).toContain('aria-describedby="thank-you-hint thank-you-error" aria-invalid="true"')
          expect(yield* stored(gift.id)).toEqual(nothingStored)
        }
        // A NUL is refused before any page, as in every body.
        const nul = yield* postNote(gift.path, "Thanks\u0000")
        expect(nul.status).toBe(400)
        expect(nul.body.detail).toBe("The body contains a NUL character, which no field accepts.")
        expect(yield* stored(gift.id)).toEqual(nothingStored)
        // The refused draft comes back in the field, escaped.
        const draft = yield* postNote(gift.path, `<b>${"x".repeat(500)}</b>`)
        expect(draft.status).toBe(422)
        expect(draft.text).toContain(`&lt;b&gt;${"x".repeat(500)}&lt;/b&gt;</textarea>`)
        expect(yield* stored(gift.id)).toEqual(nothingStored)
        expect(yield* noteOf(company, gift.id)).toBeNull()

        // 500 characters, once trimmed and with its line breaks as one character each, is accepted.
        const fits = `${"a".repeat(249)}\r\n${"b".repeat(250)}`
        const accepted = yield* postNote(gift.path, `  ${fits}\n `)
        expect(accepted.status).toBe(303)
        expect(accepted.headers.location).toBe(`${gift.path}?note=sent#thank-you`)
        expect((yield* stored(gift.id)).message).toBe(`${"a".repeat(249)}\n${"b".repeat(250)}`)
      })
    )

    it.effect("a gift not claimed, unknown or cancelled takes no note", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const open = yield* giftFor(company, "open", false)
        const refused = yield* postNote(open.path, "Thanks!")
        expect(refused.status).toBe(422)
        expect(refused.text).toContain('<p role="alert">A thank-you note can be written once the gift is claimed.</p>')
        expect(yield* stored(open.id)).toEqual(nothingStored)
        // The landing page offers no note before the claim.
        expect((yield* get(open.path)).text).not.toContain("thank-you-message")

        expect((yield* postNote("/g/not-a-token", "Thanks!")).status).toBe(404)
        expect((yield* postWith(`${gifts}/${open.id}/cancel`, {}, company.headers)).status).toBe(200)
        expect((yield* postNote(open.path, "Thanks!")).status).toBe(410)
        expect(yield* stored(open.id)).toEqual(nothingStored)
      })
    )

    it.effect("the note is shown back, read by v2 (masked too), changed within 24 hours and refused after", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const gift = yield* giftFor(company, "window")
        const masked = yield* postWith(
          v2Keys,
          { name: `masked-${Math.random()}`, permissions: ["gifts:read:masked"] },
          company.headers
        )
        expect(masked.status, JSON.stringify(masked.body)).toBe(200)
        const maskedHeaders = keyHeaders(masked.body.apiKey)

        expect((yield* postNote(gift.path, "Thank you <3")).status).toBe(303)
        const first = yield* stored(gift.id)
        expect(first.message).toBe("Thank you <3")
        expect(first.updatedAt).toEqual(first.createdAt)

        // Back on the page: the note, escaped, with its time and a word that it was sent; the form to change it.
        const shown = yield* get(`${gift.path}?note=sent`)
        expect(shown.status).toBe(200)
        expect(shown.text).toContain('<p class="saved" role="status">Your note was sent to ')
        expect(shown.text).toContain('<blockquote class="note" id="thank-you-note">Thank you &lt;3</blockquote>')
        const day = new Intl.DateTimeFormat("en", { dateStyle: "long", timeZone: "UTC" }).format(first.createdAt!)
        const time = new Intl.DateTimeFormat("en", { timeStyle: "short", timeZone: "UTC" }).format(first.createdAt!)
        expect(shown.text).toContain(`, written on ${day} at ${time} UTC:</p>`)
        expect(shown.text).toContain('<label for="thank-you-message">Change your note to ')
        expect(shown.text).toContain(">Save changes</button>")
        expect((yield* get(gift.path)).text).not.toContain("Your note was sent")

        const note = { message: "Thank you <3", createdAt: first.createdAt!.toISOString() }
        expect(yield* noteOf(company, gift.id)).toEqual(note)
        expect(yield* noteOf(company, gift.id, maskedHeaders)).toEqual(note)
        const listed = yield* getWith(`${gifts}?keys=window`, company.headers)
        expect(listed.body.results.map((g: any) => g.thankYouNote)).toEqual([note])
        const narrowed = yield* getWith(`${gifts}/${gift.id}?fields=thankYouNote`, maskedHeaders)
        expect(narrowed.body).toEqual({ id: gift.id, thankYouNote: note })

        // A minute before the 24 hours end, it can still change; its first time stays.
        yield* travel("23 hours")
        yield* travel("59 minutes")
        expect((yield* postNote(gift.path, "Thank you, truly.")).status).toBe(303)
        const changed = yield* stored(gift.id)
        expect(changed.message).toBe("Thank you, truly.")
        expect(changed.createdAt).toEqual(first.createdAt)
        expect(changed.updatedAt!.getTime()).toBeGreaterThan(first.createdAt!.getTime() + 23 * 3_600_000)
        expect(yield* noteOf(company, gift.id)).toEqual({ message: "Thank you, truly.", createdAt: note.createdAt })
        expect((yield* get(gift.path)).text).toMatch(/ UTC \(changed on [^)]+ UTC\):<\/p>/)

        // Then the form is gone, and a POST is refused with the reason; the note stays as it was.
        yield* travel("2 minutes")
        const after = yield* get(gift.path)
        expect(after.text).toContain('<blockquote class="note" id="thank-you-note">Thank you, truly.</blockquote>')
        expect(after.text).not.toContain("thank-you-message")
        expect(after.text).toContain("This note can no longer be changed")
        const late = yield* postNote(gift.path, "One more thing")
        expect(late.status).toBe(422)
        expect(late.text).toContain('role="alert"')
        expect(late.text).toContain(
          "<ul><li>This note can no longer be changed: a note may be changed for 24 hours after it is first written.</li></ul>"
        )
        expect(late.text).not.toContain("thank-you-message")
        expect(yield* stored(gift.id)).toEqual(changed)
      })
    )
  })
})
