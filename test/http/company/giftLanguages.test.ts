import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TimeTravel } from "../../support/auth.js"
import { makeCheckoutTestServer } from "../../support/checkout.js"
import { createCompany, keyHeaders, postWith, raiseLimits } from "../../support/company.js"
import { eventually } from "../../support/eventually.js"
import { postForm, raw, testPublicUrl } from "../../support/http.js"

/**
 * The gift page, its e-mails and texts in the recipient's language (docs/decisions/0074-gift-page-languages.md), over
 * real HTTP: the page follows `Accept-Language`, the switcher's cookie overrides it (and comes back only to the gift's
 * own pages), dates and country names through `Intl` in that locale, the live status's label too, a refused claim's
 * problems in that language beside their fields; the first e-mail follows the recipient's country, later ones the
 * language they picked.
 */

const sqlClient = SqlClient.SqlClient

const catalog = Effect.flatMap(sqlClient, (sql) =>
  Effect.gen(function* () {
    const [chosen] = yield* sql<{ productId: string; variantId: string }>`
      SELECT p.id AS product_id, v.id AS variant_id FROM products p JOIN variants v ON v.product_id = p.id
        JOIN variant_locations l ON l.variant_id = v.id
      WHERE v.price_usd IS NOT NULL AND v.price_usd < 10000 AND NOT v.is_digital AND l.stock > 100
        AND 'DE' = ANY (l.ships_to) AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
      ORDER BY p.id LIMIT 1`
    return chosen!
  })
).pipe(Effect.orDie)

/** A company with a product campaign (7 days to claim), and a way to send its gift by e-mail to a recipient. */
const setup = Effect.gen(function* () {
  const company = yield* createCompany()
  yield* raiseLimits(company.companyId)
  const product = yield* catalog
  const headers = keyHeaders(company.apiKey)
  const campaign = yield* postWith(
    "/public-api/v2/campaigns",
    {
      name: "Welcome",
      customization: {
        giftProperties: {
          selectedGiftType: "product",
          productId: product.productId,
          budget: { min: 1, max: 20000 },
          expiration: { daysFromSend: 7 }
        },
        message: "Welcome aboard!"
      }
    },
    headers
  )
  expect(campaign.status, JSON.stringify(campaign.body)).toBe(201)
  const send = (key: string, country?: string) =>
    Effect.gen(function* () {
      if (country !== undefined) {
        const made = yield* postWith(
          "/public-api/v2/recipients",
          { firstName: "Ada", lastName: "Lovelace", email: `${key}@example.com`, country },
          headers
        )
        expect(made.status, JSON.stringify(made.body)).toBe(201)
      }
      const sent = yield* postWith(
        "/public-api/v2/gifts",
        {
          campaignId: campaign.body.id,
          recipients: [{ firstname: "Ada", lastname: "Lovelace", email: `${key}@example.com`, key }],
          sendingMethod: "email"
        },
        headers
      )
      expect(sent.status, JSON.stringify(sent.body)).toBe(200)
      const result = sent.body.results[0] as { id: string; link: string }
      return { id: result.id, path: result.link.replace(testPublicUrl, "") }
    })
  return { ...product, send }
})

const page = (path: string, headers: Record<string, string>) =>
  raw(HttpClientRequest.get(path).pipe(HttpClientRequest.setHeaders(headers)))

const messagesOf = (giftId: string) =>
  Effect.flatMap(sqlClient, (sql) =>
    sql<{ kind: string; subject: string; body: string }>`SELECT kind, subject, body FROM notifications
      WHERE gift_id = ${giftId} ORDER BY created_at, kind`.pipe(Effect.orDie)
  )

describe("the gift page in the recipient's language", () => {
  it.layer(makeCheckoutTestServer(), { timeout: 180_000 })((it) => {
    it.effect("Accept-Language picks the page's language; the switcher's cookie overrides it", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const gift = yield* company.send("page")

        const french = yield* page(gift.path, { "accept-language": "fr-FR,fr;q=0.9,en;q=0.5" })
        expect(french.status).toBe(200)
        expect(french.text).toContain('<html lang="fr">')
        expect(french.text).toContain("<h1>Ada, vous avez un cadeau</h1>")
        expect(french.text).toMatch(/Ce cadeau expire le \d{1,2} [a-zéû]+ \d{4}\./)
        // Countries by their French names, in French order; the campaign's message as written.
        expect(french.text).toContain(">Allemagne</option>")
        expect(french.text).toContain("Welcome aboard!")
        expect(french.text).toContain('<option value="fr" lang="fr" selected>Français</option>')
        // A region the page has no language of (`fr-CA`) gets its language; none at all gets English.
        expect((yield* page(gift.path, { "accept-language": "fr-CA" })).text).toContain('<html lang="fr">')
        expect((yield* page(gift.path, { "accept-language": "zh-CN, ko;q=0.8" })).text).toContain('<html lang="en">')

        // The switcher: back to the page it was on, with a year's cookie on the gift pages' path.
        const back = `${gift.path}/choices?country=DE`
        const switched = yield* postForm(`${gift.path}/language`, { language: "ja", back })
        expect(switched.status).toBe(303)
        expect(switched.headers.location).toBe(back)
        const cookie = switched.headers["set-cookie"]
        expect(cookie).toMatch(/^ribbon_gift_language=ja; Max-Age=31536000; Path=\/g; HttpOnly; SameSite=Lax/)
        const japanese = yield* page(back, { "accept-language": "fr-FR", cookie: "ribbon_gift_language=ja" })
        expect(japanese.text).toContain('<html lang="ja">')
        expect(japanese.text).toContain("<h2>ギフトを選んでください</h2>")
        expect(japanese.text).toContain('aria-label="')
        expect(japanese.text).toContain(">選ぶ</button>")

        // Never back to another site or another gift; a language the page does not offer changes nothing.
        for (const elsewhere of ["https://evil.example/", "//evil.example", "/g/another-token", `${gift.path}x`]) {
          const bounced = yield* postForm(`${gift.path}/language`, { language: "de", back: elsewhere })
          expect(bounced.headers.location, elsewhere).toBe(gift.path)
        }
        const unknown = yield* postForm(`${gift.path}/language`, { language: "xx", back })
        expect(unknown.status).toBe(303)
        expect(unknown.headers["set-cookie"]).toBeUndefined()
        const sql = yield* sqlClient
        const [stored] = yield* Effect.orDie(
          sql<{ language: string }>`SELECT language FROM gifts WHERE id = ${gift.id}`
        )
        expect(stored!.language).toBe("de")
      })
    )

    it.effect("a refused claim is told in the page's language, beside its fields; the claimed page too", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const gift = yield* company.send("claim")
        const german = { "accept-language": "de-DE" }
        const form = {
          productId: company.productId,
          variantId: company.variantId,
          firstName: "Ada",
          lastName: "Lovelace",
          email: "ada@example.com",
          phone: "+49 30 1234567",
          address1: "Unter den Linden 77",
          city: "Berlin",
          zipcode: "10117",
          country: "DE"
        }
        const refused = yield* postForm(`${gift.path}/claim`, { ...form, email: "not-an-address", city: "" }, german)
        expect(refused.status).toBe(422)
        expect(refused.text).toContain('<html lang="de">')
        expect(refused.text).toContain("<strong>Ihr Geschenk ist noch nicht eingelöst.</strong>")
        expect(refused.text).toContain(
          '<li><a href="#email">E-Mail: Geben Sie eine E-Mail-Adresse ein, etwa name@beispiel.de.</a></li>'
        )
        expect(refused.text).toContain('<p class="field-error" id="city-error">Fehler: Geben Sie den Ort so ein')
        expect(refused.text).toMatch(/<input id="email" [^>]*aria-invalid="true" aria-describedby="email-error">/)

        const claimed = yield* postForm(`${gift.path}/claim`, form, german)
        expect(claimed.status, claimed.text.slice(0, 400)).toBe(200)
        expect(claimed.text).toContain("<h1>Ihr Geschenk ist eingelöst</h1>")
        expect(claimed.text).toContain("Deutschland")
        expect(claimed.text).toContain(">Bestellung eingegangen</span>")
        const status = yield* raw(
          HttpClientRequest.get(`${gift.path}/status`).pipe(
            HttpClientRequest.setHeaders({ accept: "application/json", "accept-language": "pt-BR" })
          )
        )
        expect(JSON.parse(status.text)).toMatchObject({ shipmentStatus: "orderReceived", label: "Pedido recebido" })
      })
    )

    it.effect("the first e-mail follows the recipient's country; later ones the language picked on the page", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const inFrance = yield* company.send("france", "FR")
        const [first] = yield* messagesOf(inFrance.id)
        expect(first).toMatchObject({ kind: "gift.sent", subject: "Vous avez un cadeau" })
        expect(first!.body).toContain("Bonjour Ada, vous avez un cadeau à choisir : http://ribbon.test/g/")
        expect(first!.body).toContain("\n\nWelcome aboard!")

        const unknown = yield* company.send("anywhere")
        expect((yield* messagesOf(unknown.id))[0]).toMatchObject({ subject: "You have a gift" })
        expect((yield* postForm(`${unknown.path}/language`, { language: "ja", back: unknown.path })).status).toBe(303)

        // Halfway to the expiry: the reminder, in Japanese.
        yield* (yield* TimeTravel).advance("4 days")
        const reminders = yield* eventually(
          messagesOf(unknown.id),
          (rows) => rows.some((row) => row.kind === "gift.reminder"),
          "the reminder"
        )
        const reminder = reminders.find((row) => row.kind === "gift.reminder")!
        expect(reminder.subject).toBe("ギフトがお待ちしています")
        expect(reminder.body).toMatch(/^Adaさん、ギフトはまだ選ばれるのを待っています：http:\/\/ribbon\.test\/g\//)
      })
    )
  })
})
