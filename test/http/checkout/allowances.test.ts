import { HttpClient, HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import type { AllowanceTerms } from "../../../src/domain/checkout/Allowances.js"
import { postgres } from "../../../src/layers/Database.js"
import { Allowances } from "../../../src/services/checkout/Allowances.js"
import { Notifications } from "../../../src/services/checkout/Notifications.js"
import { Tokens } from "../../../src/services/identity/Tokens.js"
import { TwoFactor } from "../../../src/services/identity/TwoFactor.js"
import { FulfillmentSimulator } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { issueTestToken, SignedInUser, signedIn, TimeTravel } from "../../support/auth.js"
import { CheckoutTestServer, londonAddress, payWith, recipient, settled } from "../../support/checkout.js"
import { postText, type RawResponse, raw, ribbonClient, serveRibbon, testPublicUrl } from "../../support/http.js"
import { AuthenticatorApp } from "../../support/twoFactor.js"

/**
 * Spending allowances through HTTP (docs/allowances.md): a checkout with `payWith: "allowance"` is paid at once
 * when it fits every limit and refused with `allowance_exceeded` naming the limit (and the paymentUrl) otherwise;
 * the agent reads and gives up its allowance under `payments:allowance`; refunds are credited back; and 20
 * checkouts at once against limits that fit 3 pay exactly 3, on one instance and (with DATABASE_URL) on two.
 */

const databaseUrl = Effect.runSync(Config.option(Config.redacted("DATABASE_URL")))

/** Physical variants for sale in GB with plenty of tracked stock, none used before in this file. */
const used = new Set<string>()
const stockedVariant = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ id: string }>`
    SELECT v.id FROM variants v JOIN variant_locations vl ON vl.variant_id = v.id
    WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND vl.stock >= 30 AND 'GB' = ANY (vl.ships_to)
    ORDER BY v.id`
  const id = rows.map((row) => row.id).find((candidate) => !used.has(candidate))!
  used.add(id)
  return id
})

const quoteOf = (variantId: string) =>
  Effect.flatMap(ribbonClient, (client) => client.quotes.createQuote({ payload: { variantId, countryCode: "GB" } }))

const bodyFor = (quoteIds: ReadonlyArray<string>, extra: Record<string, unknown> = {}) => ({
  items: quoteIds.map((quoteId) => ({ quoteId })),
  recipient,
  shippingAddress: londonAddress,
  payWith: "allowance",
  ...extra
})

const postCheckout = (quoteIds: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
  postText("/v1/checkouts", JSON.stringify(bodyFor(quoteIds, extra)))

const expectProblem = (response: RawResponse, status: number, code: string) => {
  expect(response.status, response.text).toBe(status)
  expect(response.headers["content-type"]).toContain("application/problem+json")
  expect(response.body.code, response.text).toBe(code)
}

const terms = (patch: Partial<AllowanceTerms> = {}): AllowanceTerms => ({
  currency: "GBP",
  perCheckoutLimit: 100_000,
  period: "week",
  periodLimit: 100_000,
  totalLimit: 100_000,
  allowedCountries: null,
  allowedRecipients: null,
  allowedCategories: null,
  expiresInDays: 30,
  ...patch
})

const testCard = { number: "4242 4242 4242 4242", expiry: "12/34", cvc: "123", name: "Ada Lovelace" }

/** An allowance of the signed-in user for the test's client, made through the service (the page has its own test). */
const allow = (patch: Partial<AllowanceTerms> = {}, card = testCard) =>
  Effect.gen(function* () {
    const user = yield* SignedInUser
    const allowances = yield* Allowances
    return yield* allowances.create({ userId: user.userId, clientId: user.clientId, terms: terms(patch), card })
  }).pipe(Effect.orDie)

/** Posts the set-up page's form: the terms of `terms()` as a person types them, the test card, and `fields`. */
const postSetUpForm = (fields: Record<string, string>) =>
  raw(
    HttpClientRequest.post("/allowances/new").pipe(
      HttpClientRequest.bodyUrlParams({
        currency: "GBP",
        perCheckout: "500",
        period: "month",
        periodLimit: "1000",
        total: "2000",
        countries: "gb",
        recipients: "",
        categories: "",
        days: "30",
        number: "4242 4242 4242 4242",
        expiry: "12/34",
        cvc: "123",
        name: "Ada Lovelace",
        ...fields
      })
    )
  )

const ledgerOf = (allowanceId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ checkoutId: string; kind: string; amount: number }>`
      SELECT checkout_id, kind, amount FROM allowance_ledger WHERE allowance_id = ${allowanceId} ORDER BY created_at, id`
  )

const checkoutStatusOf = (checkoutId: string) =>
  Effect.flatMap(ribbonClient, (client) => client.checkouts.getCheckout({ path: { checkoutId } }))

/**
 * 20 checkouts at once, each costing one quote of the same variant, against limits that fit exactly 3 (`limit`
 * names which): exactly 3 are paid, the ledger holds exactly their charges, and the other 17 are refused naming
 * the limit and still await payment. `post` sends the n-th request (over one or two instances).
 */
const twentyAtOnce = (
  limit: "period" | "total",
  post: (n: number, body: string) => Effect.Effect<RawResponse, unknown, any>
) =>
  Effect.gen(function* () {
    const variantId = yield* stockedVariant
    const quotes = yield* Effect.forEach(Array.from({ length: 20 }), () => quoteOf(variantId), { concurrency: 5 })
    const amount = quotes[0]!.totalAmount
    expect(quotes.every((quote) => quote.totalAmount === amount)).toBe(true)
    const fitsThree = 3 * amount + Math.floor(amount / 2)
    const allowance = yield* allow(
      limit === "period"
        ? { perCheckoutLimit: amount, periodLimit: fitsThree, totalLimit: 10 * amount, period: "day" }
        : { perCheckoutLimit: amount, periodLimit: 10 * amount, totalLimit: fitsThree }
    )
    const responses = yield* Effect.forEach(
      quotes,
      (quote, n) => post(n, JSON.stringify(bodyFor([quote.id], { idempotencyKey: `burst-${limit}-${n}` }))),
      { concurrency: "unbounded" }
    )
    const paid = responses.filter((response) => response.status === 201)
    const refused = responses.filter((response) => response.status !== 201)
    expect(paid.map((response) => response.body.status)).toEqual(["paid", "paid", "paid"])
    for (const response of refused) {
      expectProblem(response, 402, "allowance_exceeded")
      expect(response.body.limit).toBe(limit)
      expect(response.body.paymentUrl).toMatch(/\/pay\//)
    }
    const ledger = yield* ledgerOf(allowance.id)
    expect(
      ledger
        .filter((entry) => entry.kind === "charge")
        .map((entry) => entry.checkoutId)
        .sort()
    ).toEqual(paid.map((response) => response.body.id as string).sort())
    expect(ledger.reduce((sum, entry) => sum + entry.amount, 0)).toBe(3 * amount)
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ spentTotal: number }>`SELECT spent_total FROM allowances WHERE id = ${allowance.id}`
    expect(row!.spentTotal).toBe(3 * amount)
    const pending = yield* sql<{ count: number }>`
      SELECT count(*)::int AS count FROM checkouts
      WHERE id IN ${sql.in(refused.map((response) => response.body.checkoutId as string))} AND status = 'pending_payment'`
    expect(pending[0]!.count).toBe(17)
    return allowance
  })

describe("spending allowances", () => {
  it.layer(CheckoutTestServer.pipe(signedIn({ defaultCountry: "GB" })), { timeout: 180_000 })((it) => {
    it.effect("without an allowance: allowance_unavailable with the paymentUrl, which still pays by hand", () =>
      Effect.gen(function* () {
        const quote = yield* quoteOf(yield* stockedVariant)
        const response = yield* postCheckout([quote.id])
        expectProblem(response, 402, "allowance_unavailable")
        expect(response.body.paymentUrl).toMatch(/\/pay\//)
        const checkout = yield* checkoutStatusOf(response.body.checkoutId)
        expect(checkout.status).toBe("pending_payment")
        expect((yield* payWith(checkout)).status).toBe(200)
      })
    )

    it.effect("a checkout that fits is paid at once, placed, and counted; GET /v1/allowances shows what is left", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const quote = yield* quoteOf(yield* stockedVariant)
        const allowance = yield* allow({ perCheckoutLimit: quote.totalAmount, periodLimit: 3 * quote.totalAmount })
        const checkout = yield* client.checkouts.createCheckout({
          payload: { items: [{ quoteId: quote.id }], recipient, shippingAddress: londonAddress, payWith: "allowance" }
        })
        expect(checkout.status).toBe("paid")
        expect(checkout.paymentUrl).toBeNull()
        expect((yield* settled(checkout.id)).status).toBe("confirmed")
        // The person is told, as after a payment on the page.
        const outbox = yield* Effect.flatMap(Notifications, (n) => n.forCheckout(checkout.id))
        expect(outbox.map((n) => `${n.kind}:${n.channel}`)).toContain("receipt:email")
        const { allowances, setupUrl } = yield* client.allowances.listAllowances()
        expect(setupUrl).toBe(
          `${testPublicUrl}/allowances/new?client_id=${encodeURIComponent((yield* SignedInUser).clientId)}`
        )
        expect(allowances).toHaveLength(1)
        expect(allowances[0]).toMatchObject({
          id: allowance.id,
          status: "active",
          currency: "GBP",
          spentTotal: quote.totalAmount,
          spentInPeriod: quote.totalAmount,
          remainingInPeriod: quote.totalAmount,
          card: { brand: "visa", last4: "4242" }
        })
        expect(yield* ledgerOf(allowance.id)).toEqual([
          { checkoutId: checkout.id, kind: "charge", amount: quote.totalAmount }
        ])
        // The card number is nowhere in Ribbon's database: only the processor's token and the last four.
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{
          text: string
        }>`SELECT row_to_json(a)::text AS text FROM allowances a WHERE id = ${allowance.id}`
        expect(row!.text).not.toContain("4242424242424242")
      })
    )

    it.effect("each rule refuses with allowance_exceeded naming it, charges nothing, and leaves the paymentUrl", () =>
      Effect.gen(function* () {
        const quote = () => Effect.flatMap(stockedVariant, quoteOf)
        const refusedBy = (limit: string, patch: Partial<AllowanceTerms>, extra: Record<string, unknown> = {}) =>
          Effect.gen(function* () {
            const q = yield* quote()
            const allowance = yield* allow(patch)
            const response = yield* postCheckout([q.id], extra)
            expectProblem(response, 402, "allowance_exceeded")
            expect(response.body.limit, response.text).toBe(limit)
            expect(response.body.paymentUrl).toMatch(/\/pay\//)
            expect(yield* ledgerOf(allowance.id)).toEqual([])
            expect((yield* checkoutStatusOf(response.body.checkoutId)).status).toBe("pending_payment")
          })
        const price = (yield* quote()).totalAmount
        yield* refusedBy("perCheckout", { perCheckoutLimit: Math.floor(price / 2) })
        yield* refusedBy("currency", { currency: "EUR" })
        yield* refusedBy("countries", { allowedCountries: ["FR", "DE"] })
        yield* refusedBy("recipients", { allowedRecipients: ["someone.else@example.com"] })
        yield* refusedBy("categories", { allowedCategories: ["No such category"] })
      })
    )

    it.effect("a refund (an item the supplier refused) is credited back to the allowance", () =>
      Effect.gen(function* () {
        const fulfillment = yield* FulfillmentSimulator
        const variantId = yield* stockedVariant
        const quote = yield* quoteOf(variantId)
        const allowance = yield* allow()
        yield* fulfillment.forceFailure(variantId, "out_of_stock", 1)
        const response = yield* postCheckout([quote.id])
        expect(response.status, response.text).toBe(201)
        expect((yield* settled(response.body.id)).status).toBe("failed")
        expect(yield* ledgerOf(allowance.id)).toEqual([
          { checkoutId: response.body.id, kind: "charge", amount: quote.totalAmount },
          { checkoutId: response.body.id, kind: "credit", amount: -quote.totalAmount }
        ])
        const { allowances } = yield* Effect.flatMap(ribbonClient, (client) => client.allowances.listAllowances())
        expect(allowances[0]!.spentTotal).toBe(0)
      }).pipe(Effect.ensuring(Effect.flatMap(FulfillmentSimulator, (f) => f.clearForcedFailures())))
    )

    it.effect("DELETE /v1/allowances/{id} revokes it at once; another client's is not found", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const allowance = yield* allow()
        const other = yield* issueTestToken({ defaultCountry: "GB" })
        const foreign = yield* raw(
          HttpClientRequest.del(`/v1/allowances/${allowance.id}`).pipe(HttpClientRequest.bearerToken(other.accessToken))
        )
        expectProblem(foreign, 404, "allowance_not_found")
        yield* client.allowances.revokeAllowance({ path: { allowanceId: allowance.id } })
        const { allowances } = yield* client.allowances.listAllowances()
        expect(allowances.find((a) => a.id === allowance.id)?.status).toBe("revoked")
        const quote = yield* quoteOf(yield* stockedVariant)
        expectProblem(yield* postCheckout([quote.id]), 402, "allowance_unavailable")
      })
    )

    it.effect("revoking the client's OAuth grant (POST /oauth/revoke) revokes its allowance", () =>
      Effect.gen(function* () {
        const allowances = yield* Allowances
        const other = yield* issueTestToken({ defaultCountry: "GB" })
        const made = yield* allowances
          .create({ userId: other.userId, clientId: other.clientId, terms: terms(), card: testCard })
          .pipe(Effect.orDie)
        const response = yield* raw(
          HttpClientRequest.post("/oauth/revoke").pipe(
            HttpClientRequest.bodyUrlParams({ token: other.accessToken, client_id: other.clientId })
          )
        )
        expect(response.status, response.text).toBe(200)
        const [row] = (yield* allowances.listForUser(other.userId)).filter((a) => a.id === made.id)
        expect(row!.revokedAt).not.toBeNull()
      })
    )

    it.effect("payWith allowance needs payments:allowance; without it nothing is created", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const narrow = yield* issueTestToken({ defaultCountry: "GB", scopes: ["orders:write", "orders:read"] })
        const before = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM checkouts`
        const response = yield* raw(
          HttpClientRequest.post("/v1/checkouts").pipe(
            HttpClientRequest.bearerToken(narrow.accessToken),
            HttpClientRequest.bodyUnsafeJson(bodyFor(["any-quote"]))
          )
        )
        expectProblem(response, 403, "insufficient_scope")
        expect(response.headers["www-authenticate"]).toContain('scope="payments:allowance"')
        const listed = yield* raw(
          HttpClientRequest.get("/v1/allowances").pipe(HttpClientRequest.bearerToken(narrow.accessToken))
        )
        expectProblem(listed, 403, "insufficient_scope")
        expect((yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM checkouts`)[0]!.count).toBe(
          before[0]!.count
        )
      })
    )

    it.effect(
      "the hosted page makes an allowance once the password confirms it; the person sees its history and revokes it",
      () =>
        Effect.gen(function* () {
          const user = yield* SignedInUser
          const allowances = yield* Allowances
          const sql = yield* SqlClient.SqlClient
          const form = (fields: Record<string, string>) =>
            postSetUpForm({ client_id: user.clientId, email: user.email, password: user.password, ...fields })
          const live = () =>
            Effect.map(allowances.listForUser(user.userId), (rows) => rows.filter((row) => row.revokedAt === null))
          // Whatever the earlier tests left: revoked, so that the page's is the only live one.
          yield* allowances.revokeForClient(user.userId, user.clientId)

          const page = yield* raw(
            HttpClientRequest.get(`/allowances/new?client_id=${encodeURIComponent(user.clientId)}`)
          )
          expect(page.status).toBe(200)
          expect(page.text).toContain("Let Test agent pay for you")
          expect(page.text).toContain('id="card-number"')
          expect(page.text).toContain('name="password"')
          expect((yield* raw(HttpClientRequest.get("/allowances/new?client_id=nobody"))).status).toBe(404)

          // Refused, nothing made: a wrong password, terms out of bounds, an invalid card.
          const wrong = yield* form({ password: "not the password" })
          expect(wrong.status).toBe(401)
          expect(wrong.text).toContain("not right")
          const tooLong = yield* form({ days: "120" })
          expect(tooLong.status).toBe(422)
          expect(tooLong.text).toContain('id="days" name="days"')
          expect(tooLong.text).toMatch(/aria-invalid="true" aria-describedby="days-error"/)
          const perCheckoutOver = yield* form({ perCheckout: "1500" })
          expect(perCheckoutOver.status).toBe(422)
          const badCard = yield* form({ number: "4242 4242 4242 4241" })
          expect(badCard.status).toBe(422)
          expect(badCard.text).toContain("card-number-error")
          expect(badCard.text).not.toContain("4242 4242 4242 4241")
          expect(yield* live()).toEqual([])

          const made = yield* form({})
          expect(made.status, made.text).toBe(201)
          expect(made.text).toContain("Allowance set up")
          const [allowance] = yield* live()
          expect(allowance).toMatchObject({
            clientId: user.clientId,
            currency: "GBP",
            perCheckoutLimit: 50_000,
            periodLimit: 100_000,
            totalLimit: 200_000,
            period: "month",
            allowedCountries: ["GB"],
            cardLast4: "4242"
          })
          const [stored] = yield* sql<{
            text: string
          }>`SELECT row_to_json(a)::text AS text FROM allowances a WHERE id = ${allowance!.id}`
          expect(stored!.text).not.toContain("4242424242424242")

          // A use shows in the history on the person's page, which revokes it.
          const quote = yield* quoteOf(yield* stockedVariant)
          const paid = yield* postCheckout([quote.id])
          expect(paid.status, paid.text).toBe(201)
          const cookie = String(made.headers["set-cookie"]).split(";")[0]!
          const list = yield* raw(
            HttpClientRequest.get("/allowances").pipe(HttpClientRequest.setHeader("cookie", cookie))
          )
          expect(list.status).toBe(200)
          expect(list.text).toContain(paid.body.id)
          expect(list.text).toContain("Paid")
          const csrf = /name="csrf" value="([^"]+)"/.exec(list.text)![1]!
          const revokeWith = (token: string) =>
            raw(
              HttpClientRequest.post(`/allowances/${allowance!.id}/revoke`).pipe(
                HttpClientRequest.setHeader("cookie", cookie),
                HttpClientRequest.bodyUrlParams({ csrf: token })
              )
            )
          expect((yield* revokeWith("forged")).status).toBe(403)
          expect(yield* live()).toHaveLength(1)
          const revoked = yield* revokeWith(csrf)
          expect(revoked.status).toBe(200)
          expect(revoked.text).toContain("The allowance was revoked")
          expect(yield* live()).toEqual([])
          // Without the session, the page asks to sign in.
          expect((yield* raw(HttpClientRequest.get("/allowances"))).text).toContain('action="/allowances/sign-in"')
        })
    )

    it.effect("with two-factor sign-in on, the set-up page needs the code as well as the password", () =>
      Effect.gen(function* () {
        const twoFactor = yield* TwoFactor
        const person = yield* issueTestToken({ defaultCountry: "GB" })
        const app = new AuthenticatorApp((yield* twoFactor.begin(person.userId, "Phone")).secret)
        yield* twoFactor.confirm(person.userId, app.code())
        const post = (code: string) =>
          postSetUpForm({ client_id: person.clientId, email: person.email, password: person.password, code })
        const missing = yield* post("")
        expect(missing.status).toBe(401)
        expect(missing.text).toContain("authenticator app")
        expect((yield* post(app.wrongCode())).status).toBe(401)
        const allowances = yield* Allowances
        expect(yield* allowances.listForUser(person.userId)).toEqual([])
        expect((yield* post(app.code())).status).toBe(201)
        expect(yield* allowances.listForUser(person.userId)).toHaveLength(1)
      }).pipe(Effect.orDie)
    )

    it.effect("20 checkouts at once against a period limit that fits 3: exactly 3 paid, the ledger equals them", () =>
      twentyAtOnce("period", (_n, body) => postText("/v1/checkouts", body))
    )

    // Last: it moves the clock a week on, past the test token's life, and goes on with a new token of the same grant.
    it.effect("the period limit starts again with the next calendar period", () =>
      Effect.gen(function* () {
        const variantId = yield* stockedVariant
        const first = yield* quoteOf(variantId)
        const amount = first.totalAmount
        yield* allow({
          period: "week",
          perCheckoutLimit: amount,
          periodLimit: amount,
          totalLimit: 5 * amount,
          expiresInDays: 90
        })
        expect((yield* postCheckout([first.id])).status).toBe(201)
        const refused = yield* postCheckout([(yield* quoteOf(variantId)).id])
        expectProblem(refused, 402, "allowance_exceeded")
        expect(refused.body.limit).toBe("period")
        expect(refused.body.detail).toMatch(/left this week/)
        yield* (yield* TimeTravel).advance("7 days")
        const { clientId, userId } = yield* SignedInUser
        const fresh = yield* Effect.flatMap(Tokens, (tokens) =>
          tokens.issueTokens({
            familyId: "f".repeat(24),
            clientId,
            userId,
            scope: "orders:write payments:allowance",
            refreshScope: "orders:write payments:allowance"
          })
        )
        const asFresh = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.flatMap(HttpClient.HttpClient, (client) =>
            Effect.provideService(
              effect,
              HttpClient.HttpClient,
              HttpClient.mapRequest(client, (request) =>
                HttpClientRequest.bearerToken(
                  HttpClientRequest.setHeader(request, "authorization", ""),
                  fresh.access_token
                )
              )
            )
          )
        const nextWeek = yield* asFresh(Effect.flatMap(quoteOf(variantId), (q) => postCheckout([q.id])))
        expect(nextWeek.status, nextWeek.text).toBe(201)
        const { allowances } = yield* asFresh(
          Effect.flatMap(ribbonClient, (client) => client.allowances.listAllowances())
        )
        expect(allowances[0]).toMatchObject({ spentInPeriod: amount, spentTotal: 2 * amount, remainingInPeriod: 0 })
      })
    )
  })
})

/** A second instance of the API on the same Postgres database, with its own pool, as another server would be. */
const secondInstance = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [{ name }] = yield* sql<{ name: string }>`SELECT current_database() AS name`
  const url = new URL(Redacted.value(Option.getOrThrow(databaseUrl)))
  url.pathname = `/${name}`
  const context = yield* Layer.build(serveRibbon(postgres(Redacted.make(url.toString()), { maxConnections: 5 })))
  return Context.get(context, HttpClient.HttpClient)
})

describe.skipIf(Option.isNone(databaseUrl))("spending allowances across two instances (Postgres)", () => {
  it.layer(CheckoutTestServer.pipe(signedIn({ defaultCountry: "GB" })), { timeout: 180_000 })((it) => {
    it.scoped("20 checkouts at once over two instances against a total that fits 3: exactly 3 paid", () =>
      Effect.gen(function* () {
        const { accessToken } = yield* SignedInUser
        const other = yield* secondInstance
        const first = yield* HttpClient.HttpClient
        const post = (n: number, body: string) => {
          const request = HttpClientRequest.post("/v1/checkouts").pipe(
            HttpClientRequest.bearerToken(accessToken),
            HttpClientRequest.bodyText(body, "application/json")
          )
          // Alternate instances, so the takes race across two pools.
          return raw(request).pipe(Effect.provideService(HttpClient.HttpClient, n % 2 === 0 ? first : other))
        }
        yield* twentyAtOnce("total", post)
      })
    )
  })
})
