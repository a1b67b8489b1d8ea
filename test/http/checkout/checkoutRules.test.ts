import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Array as Arr, Clock, Duration, Effect, Exit, Fiber, Metric, Option, Schedule } from "effect"
import type { Checkout } from "../../../src/domain/checkout/Checkout.js"
import { FREE_DECLINES } from "../../../src/domain/checkout/PaymentAttempts.js"
import { AgentOrders } from "../../../src/services/checkout/AgentOrders.js"
import { Checkouts, placementFallbackDelay, SMS_CONSENT_TEXT } from "../../../src/services/checkout/Checkouts.js"
import { checkoutsSettled, Placement } from "../../../src/services/checkout/Placement.js"
import { FulfillmentSimulator } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { issueTestToken, SignedInUser, signedIn, TimeTravel } from "../../support/auth.js"
import { CheckoutTestServer, londonAddress, payWith, recipient, settled } from "../../support/checkout.js"
import { get, postText, type RawResponse, raw, ribbonClient } from "../../support/http.js"

/**
 * The rules of quotes, checkouts, payment, placement and orders through HTTP
 * (docs/decisions/0025-quotes-and-checkouts.md, docs/decisions/0035-idempotency.md; spec "Quote", "Checkout", "Checkout
 * item", "Limits"): bad input is refused with the failing field's path and leaves nothing behind, each business rule
 * answers with its own problem code, idempotent creation holds under 50 parallel requests, every checkout path ends in
 * the status it should, and a placement stopped half-way and run again books exactly one order per item.
 */

// ---------------------------------------------------------------------------------------------------------
// Helpers

/** Physical variants for sale in `country` with at least `minStock` units of tracked stock, none used before. */
const used = new Set<string>()
const stockedVariants = (count: number, country = "GB", minStock = 30) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string }>`
      SELECT v.id FROM variants v JOIN variant_locations vl ON vl.variant_id = v.id
      WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND vl.stock >= ${minStock}
        AND ${country} = ANY (vl.ships_to)
      ORDER BY v.id`
    const picked = rows
      .map((row) => row.id)
      .filter((id) => !used.has(id))
      .slice(0, count)
    expect(picked, `${count} stocked variants shipping to ${country}`).toHaveLength(count)
    for (const id of picked) used.add(id)
    return picked
  })

const quote = (variantId: string, countryCode = "GB") =>
  Effect.flatMap(ribbonClient, (client) => client.quotes.createQuote({ payload: { variantId, countryCode } }))

const quotes = (count: number, country = "GB") =>
  Effect.flatMap(stockedVariants(count, country), (ids) => Effect.forEach(ids, (id) => quote(id, country)))

const bodyFor = (quoteIds: ReadonlyArray<string>, extra: Record<string, unknown> = {}) => ({
  items: quoteIds.map((quoteId) => ({ quoteId })),
  recipient,
  shippingAddress: londonAddress,
  ...extra
})

const bearer = (token: string | undefined) => (token === undefined ? {} : { authorization: `Bearer ${token}` })

const postJson = (path: string, body: unknown, token?: string) => postText(path, JSON.stringify(body), bearer(token))

const postEmpty = (path: string, token?: string) =>
  raw(HttpClientRequest.post(path).pipe(HttpClientRequest.setHeaders(bearer(token))))

/** A `/v1` problem: status (on the response and in the body), content type and code. */
const expectProblem = (response: RawResponse, status: number, code: string) => {
  expect(response.status, response.text).toBe(status)
  expect(response.headers["content-type"]).toContain("application/problem+json")
  expect(response.body.code, response.text).toBe(code)
  expect(response.body.status).toBe(status)
}

/** A 400 naming `path` among its field errors. */
const expectInvalid = (response: RawResponse, path: string) => {
  expectProblem(response, 400, "invalid_request")
  const paths = (response.body.errors as ReadonlyArray<{ path: string }>).map((issue) => issue.path)
  expect(paths, response.text).toContain(path)
}

const createCheckout = (quoteIds: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const response = yield* postJson("/v1/checkouts", bodyFor(quoteIds, extra))
    expect(response.status, response.text).toBe(201)
    return response.body as Checkout
  })

const getCheckout = (checkoutId: string) =>
  Effect.flatMap(ribbonClient, (client) => client.checkouts.getCheckout({ path: { checkoutId } }))

/** Creates, pays and waits for the placement of a checkout of `count` fresh items. */
const placedCheckout = (count: number) =>
  Effect.gen(function* () {
    const qs = yield* quotes(count)
    const checkout = yield* createCheckout(qs.map((q) => q.id))
    const paid = yield* payWith(checkout)
    expect(paid.status).toBe(200)
    const final = yield* settled(checkout.id)
    expect(final.status).toBe("confirmed")
    return final
  })

const eventTypesOf = (checkoutId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ type: string }>`SELECT type FROM events WHERE checkout_id = ${checkoutId} ORDER BY id`, (rows) =>
      rows.map((row) => row.type)
    )
  )

const pathAndQuery = (url: string) => {
  const parsed = new URL(url)
  return parsed.pathname + parsed.search
}

const tokenOf = (checkout: Checkout) => new URL(checkout.paymentUrl!).searchParams.get("t")!

const withToken = (checkout: Checkout, token: string): Checkout => {
  const url = new URL(checkout.paymentUrl!)
  url.searchParams.set("t", token)
  return { ...checkout, paymentUrl: url.toString() } as Checkout
}

/** `n` characters. */
const chars = (n: number, c = "a") => c.repeat(n)

// ---------------------------------------------------------------------------------------------------------

describe("checkout rules", () => {
  it.layer(CheckoutTestServer.pipe(signedIn({ defaultCountry: "GB" })), { timeout: 180_000 })((it) => {
    it.effect("refuses bad input with the failing field's path and creates nothing", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { userId } = yield* SignedInUser
        const qs = yield* quotes(4)
        const ids = qs.map((q) => q.id)
        const base = bodyFor(ids)
        const withRecipient = (patch: Record<string, unknown>) => ({ ...base, recipient: { ...recipient, ...patch } })
        const withAddress = (patch: Record<string, unknown>) => ({
          ...base,
          shippingAddress: { ...londonAddress, ...patch }
        })
        const { countryCode: _, ...addressWithoutCountry } = londonAddress
        const { recipient: __, ...withoutRecipient } = base
        const quantity = (value: unknown) => ({
          ...base,
          items: ids.map((quoteId, index) => (index === 3 ? { quoteId, quantity: value } : { quoteId }))
        })

        const table: ReadonlyArray<readonly [string, unknown, string]> = [
          ["no items", { ...base, items: [] }, "items"],
          [
            "21 items",
            { ...base, items: Arr.makeBy(21, (i) => ({ quoteId: ids[i % ids.length]! + (i < 4 ? "" : `x${i}`) })) },
            "items"
          ],
          ["quantity 0", quantity(0), "items[3].quantity"],
          ["quantity 11", quantity(11), "items[3].quantity"],
          ["quantity 1.5", quantity(1.5), "items[3].quantity"],
          ["missing recipient", withoutRecipient, "recipient"],
          ["empty firstName", withRecipient({ firstName: "" }), "recipient.firstName"],
          ["61-char firstName", withRecipient({ firstName: chars(61) }), "recipient.firstName"],
          ["61-char lastName", withRecipient({ lastName: chars(61) }), "recipient.lastName"],
          ["bad email", withRecipient({ email: "ada-at-example.com" }), "recipient.email"],
          ["6-char phone", withRecipient({ phone: "+44207" }), "recipient.phone"],
          ["21-char phone", withRecipient({ phone: `+${chars(20, "1")}` }), "recipient.phone"],
          ["phone not E.164", withRecipient({ phone: "12345678" }), "recipient.phone"],
          ["missing countryCode", { ...base, shippingAddress: addressWithoutCountry }, "shippingAddress.countryCode"],
          ["countryCode G1", withAddress({ countryCode: "G1" }), "shippingAddress.countryCode"],
          ["201-char address1", withAddress({ address1: chars(201) }), "shippingAddress.address1"],
          ["201-char address2", withAddress({ address2: chars(201) }), "shippingAddress.address2"],
          ["empty city", withAddress({ city: "" }), "shippingAddress.city"],
          ["101-char city", withAddress({ city: chars(101) }), "shippingAddress.city"],
          ["11-char provinceCode", withAddress({ provinceCode: chars(11, "A") }), "shippingAddress.provinceCode"],
          ["21-char postalCode", withAddress({ postalCode: chars(21, "1") }), "shippingAddress.postalCode"],
          ["http callbackUrl", { ...base, callbackUrl: "http://example.com/x" }, "callbackUrl"],
          [
            "callbackUrl with credentials",
            { ...base, callbackUrl: "https://agent:secret@example.com/x" },
            "callbackUrl"
          ],
          ["private callbackUrl", { ...base, callbackUrl: "https://10.0.0.7/hook" }, "callbackUrl"],
          ["link-local callbackUrl", { ...base, callbackUrl: "https://169.254.169.254/latest" }, "callbackUrl"],
          ["IPv4-mapped callbackUrl", { ...base, callbackUrl: "https://[::ffff:192.168.1.1]/hook" }, "callbackUrl"],
          ["unique-local callbackUrl", { ...base, callbackUrl: "https://[fd00::1]/hook" }, "callbackUrl"],
          ["121-char idempotencyKey", { ...base, idempotencyKey: chars(121) }, "idempotencyKey"],
          ["bad notify.email", { ...base, notify: { email: "nobody" } }, "notify.email"],
          ["bad notify.sms", { ...base, notify: { sms: "not-a-phone" }, smsConsent: true }, "notify.sms"]
        ]
        for (const [name, body, path] of table) {
          const response = yield* postJson("/v1/checkouts", body)
          expect(response.status, `${name}: ${response.text}`).toBe(400)
          expectInvalid(response, path)
        }

        // Nothing was created, and the quotes are still free.
        const [created] = yield* sql<{ checkouts: number; items: number; events: number }>`
          SELECT
            (SELECT count(*)::int FROM checkouts WHERE user_id = ${userId}) AS checkouts,
            (SELECT count(*)::int FROM checkout_items WHERE quote_id IN ${sql.in(ids)}) AS items,
            (SELECT count(*)::int FROM events WHERE user_id = ${userId}) AS events`
        expect(created).toEqual({ checkouts: 0, items: 0, events: 0 })
        const free = yield* sql<{ id: string }>`
          SELECT id FROM quotes WHERE id IN ${sql.in(ids)} AND checkout_id IS NULL`
        expect(free.map((row) => row.id).sort()).toEqual([...ids].sort())

        // Quotes.
        const [variantId] = yield* stockedVariants(1)
        expectInvalid(yield* postJson("/v1/quotes", { variantId: "" }), "variantId")
        expectInvalid(yield* postJson("/v1/quotes", { countryCode: "GB" }), "variantId")
        expectInvalid(yield* postJson("/v1/quotes", { variantId, countryCode: "G1" }), "countryCode")
        expectProblem(yield* postJson("/v1/quotes", { variantId: "v_does_not_exist" }), 404, "variant_not_found")
        const { countries } = yield* Effect.flatMap(ribbonClient, (client) => client.catalog.countries())
        const unsupported = ["AQ", "ZZ", "XX", "QQ"].find((code) => !countries.includes(code))!
        expectInvalid(yield* postJson("/v1/quotes", { variantId, countryCode: unsupported }), "countryCode")
      })
    )

    it.effect("quote rules: stock, shipping, ownership, expiry, reuse, country, address, digital, SMS consent", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const client = yield* ribbonClient
        const travel = yield* TimeTravel

        // Out of stock, and not shippable to GB.
        const [outOfStock] = yield* sql<{ id: string }>`
          SELECT v.id FROM variants v JOIN variant_locations vl ON vl.variant_id = v.id
          WHERE v.price_usd IS NOT NULL AND vl.stock = 0 AND 'GB' = ANY (vl.ships_to) ORDER BY v.id LIMIT 1`
        expect(outOfStock, "a seeded variant with no stock").toBeDefined()
        expectProblem(
          yield* postJson("/v1/quotes", { variantId: outOfStock!.id, countryCode: "GB" }),
          422,
          "variant_out_of_stock"
        )
        const [notShippable] = yield* sql<{ id: string }>`
          SELECT v.id FROM variants v JOIN variant_locations vl ON vl.variant_id = v.id
          WHERE v.price_usd IS NOT NULL AND NOT ('GB' = ANY (vl.ships_to)) ORDER BY v.id LIMIT 1`
        expect(notShippable, "a seeded variant that does not ship to GB").toBeDefined()
        const refused = yield* postJson("/v1/quotes", { variantId: notShippable!.id, countryCode: "GB" })
        expectProblem(refused, 422, "variant_not_shippable")

        // Another user's quote is not found.
        const [mine] = yield* quotes(1)
        const other = yield* issueTestToken({ defaultCountry: "GB" })
        expectProblem(yield* get(`/v1/quotes/${mine!.id}`, bearer(other.accessToken)), 404, "quote_not_found")
        const theirs = yield* postJson("/v1/quotes", { variantId: mine!.variantId }, other.accessToken)
        expect(theirs.status).toBe(201)
        expectProblem(yield* get(`/v1/quotes/${theirs.body.id}`), 404, "quote_not_found")
        expectProblem(yield* postJson("/v1/checkouts", bodyFor([theirs.body.id])), 404, "quote_not_found")

        // Expiry: the price lock is 15 minutes.
        const [stale] = yield* quotes(1)
        yield* travel.advance("16 minutes")
        const expired = yield* postJson("/v1/checkouts", bodyFor([stale!.id]))
        expectProblem(expired, 409, "quote_expired")
        expect(expired.body.quoteId).toBe(stale!.id)

        // A quote backs one checkout.
        const [once] = yield* quotes(1)
        yield* createCheckout([once!.id])
        const reused = yield* postJson("/v1/checkouts", bodyFor([once!.id]))
        expectProblem(reused, 409, "quote_already_used")
        expect(reused.body.quoteId).toBe(once!.id)

        // One country per checkout.
        const [both] = yield* sql<{ id: string }>`
          SELECT v.id FROM variants v JOIN variant_locations vl ON vl.variant_id = v.id
          WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND (vl.stock IS NULL OR vl.stock > 5)
            AND 'GB' = ANY (vl.ships_to) AND 'US' = ANY (vl.ships_to)
          ORDER BY v.id DESC LIMIT 1`
        const gb = yield* quote(both!.id, "GB")
        const us = yield* quote(both!.id, "US")
        expectProblem(yield* postJson("/v1/checkouts", bodyFor([gb.id, us.id])), 422, "country_mismatch")

        // An address that does not hold together: a Beverly Hills ZIP in New York.
        const us2 = yield* quote(both!.id, "US")
        const unverified = yield* postJson(
          "/v1/checkouts",
          bodyFor([us2.id], {
            recipient: { ...recipient, phone: "+1 212 555 0100" },
            shippingAddress: {
              countryCode: "US",
              address1: "1 Main Street",
              city: "New York",
              provinceCode: "NY",
              postalCode: "90210"
            }
          })
        )
        expectProblem(unverified, 422, "address_unverified")
        expect(unverified.body.detail).toMatch(/90210|ZIP|postal/i)
        expect(unverified.body.issues.length).toBeGreaterThan(0)
        // Nothing consumed: the same quote still checks out with a good address.
        const [{ checkoutId }] = yield* sql<{ checkoutId: string | null }>`
          SELECT checkout_id FROM quotes WHERE id = ${us2.id}`
        expect(checkoutId).toBeNull()

        // A digital-only cart needs only the country.
        const [digital] = yield* sql<{ id: string }>`
          SELECT v.id FROM variants v JOIN variant_locations vl ON vl.variant_id = v.id
          WHERE v.is_digital AND v.price_usd IS NOT NULL AND (vl.stock IS NULL OR vl.stock > 0)
            AND 'GB' = ANY (vl.ships_to)
          ORDER BY v.id LIMIT 1`
        expect(digital, "a seeded digital variant for GB").toBeDefined()
        const digitalQuote = yield* quote(digital!.id)
        expect(digitalQuote.shippingRequired).toBe(false)
        const digitalCheckout = yield* postJson("/v1/checkouts", {
          items: [{ quoteId: digitalQuote.id }],
          recipient,
          shippingAddress: { countryCode: "GB" }
        })
        expect(digitalCheckout.status, digitalCheckout.text).toBe(201)
        expect(digitalCheckout.body.status).toBe("pending_payment")

        // SMS needs consent; the error carries the text to show.
        const [smsQuote] = yield* quotes(1)
        const notify = { sms: "+44 7911 123456" }
        const noConsent = yield* postJson("/v1/checkouts", bodyFor([smsQuote!.id], { notify }))
        expectProblem(noConsent, 422, "sms_consent_required")
        expect(noConsent.body.consentText).toBe(SMS_CONSENT_TEXT)
        const consented = yield* postJson("/v1/checkouts", bodyFor([smsQuote!.id], { notify, smsConsent: true }))
        expect(consented.status, consented.text).toBe(201)
        const [stored] = yield* sql<{ notifySms: string; smsConsent: boolean }>`
          SELECT notify_sms, sms_consent FROM checkouts WHERE id = ${consented.body.id}`
        expect(stored).toEqual({ notifySms: "+447911123456", smsConsent: true })
        void client
      })
    )

    it.effect("idempotency: replays the same body, refuses another, and holds under 50 parallel requests", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { userId } = yield* SignedInUser

        const [q1, q2] = yield* quotes(2)
        const body = bodyFor([q1!.id], { idempotencyKey: "rules-replay-1" })
        const first = yield* postJson("/v1/checkouts", body)
        expect(first.status, first.text).toBe(201)
        expect(first.headers["idempotent-replayed"]).toBeUndefined()
        const again = yield* postJson("/v1/checkouts", body)
        expect(again.status, again.text).toBe(201)
        expect(again.headers["idempotent-replayed"]).toBe("true")
        expect(again.body).toEqual(first.body)
        const different = yield* postJson("/v1/checkouts", { ...body, items: [{ quoteId: q2!.id }] })
        expectProblem(different, 422, "idempotency_key_reused")
        const [{ free }] = yield* sql<{ free: boolean }>`
          SELECT checkout_id IS NULL AS free FROM quotes WHERE id = ${q2!.id}`
        expect(free).toBe(true)

        // 50 parallel requests with one key and one body: one checkout.
        const parallelQuotes = yield* quotes(3)
        const key = "rules-parallel-1"
        const parallelBody = bodyFor(
          parallelQuotes.map((q) => q.id),
          { idempotencyKey: key }
        )
        const responses = yield* Effect.forEach(
          Arr.makeBy(50, () => parallelBody),
          (b) => postJson("/v1/checkouts", b),
          { concurrency: 50 }
        )
        const [row] = yield* sql<{ id: string }>`
          SELECT id FROM checkouts WHERE user_id = ${userId} AND idempotency_key = ${key}`
        const [{ n }] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM checkouts WHERE user_id = ${userId} AND idempotency_key = ${key}`
        expect(n).toBe(1)
        // Each gets the checkout, or (docs/decisions/0035-idempotency.md) a 409 "still in flight, retry in a second";
        // never a refusal of its own quotes.
        for (const response of responses) {
          if (response.status === 201) {
            expect(response.body.id).toBe(row!.id)
          } else {
            expectProblem(response, 409, "idempotency_in_flight")
            expect(response.headers["retry-after"], response.text).toBe("1")
          }
        }
        expect(responses.filter((r) => r.status === 201).length).toBeGreaterThan(0)
        const claimed = yield* sql<{ checkoutId: string }>`
          SELECT checkout_id FROM quotes WHERE id IN ${sql.in(parallelQuotes.map((q) => q.id))}`
        expect(claimed.map((c) => c.checkoutId)).toEqual([row!.id, row!.id, row!.id])
        const [{ items }] = yield* sql<{ items: number }>`
          SELECT count(*)::int AS items FROM checkout_items
          WHERE quote_id IN ${sql.in(parallelQuotes.map((q) => q.id))}`
        expect(items).toBe(3)
        const [{ checkouts }] = yield* sql<{ checkouts: number }>`
          SELECT count(DISTINCT checkout_id)::int AS checkouts FROM checkout_items
          WHERE quote_id IN ${sql.in(parallelQuotes.map((q) => q.id))}`
        expect(checkouts).toBe(1)
      })
    )

    it.effect("partially_confirmed: one item out of stock at the supplier is failed and refunded", () =>
      Effect.gen(function* () {
        const fulfillment = yield* FulfillmentSimulator
        const settledPartially = Metric.tagged(checkoutsSettled, "status", "partially_confirmed")
        const counted = (yield* Metric.value(settledPartially)).count
        const qs = yield* quotes(2)
        const checkout = yield* createCheckout(qs.map((q) => q.id))
        yield* fulfillment.forceFailure(qs[1]!.variantId, "out_of_stock", 1)
        expect((yield* payWith(checkout)).status).toBe(200)
        const final = yield* settled(checkout.id)
        expect(final.status).toBe("partially_confirmed")
        // Counted once, in the metric of its final status.
        expect((yield* Metric.value(settledPartially)).count).toBe(counted + 1)
        expect(final.items.map((i) => i.status)).toEqual(["placed", "failed"])
        expect(final.items[1]!.failureReason).toBeTruthy()
        expect(final.failureReason).toBeTruthy()
        expect(final.refundedAmount).toBe(final.items[1]!.amount)
        expect(final.orderIds).toEqual([final.items[0]!.orderId])
        expect(yield* eventTypesOf(checkout.id)).toContain("checkout.item_failed")
      })
    )

    it.effect("failed: every item out of stock is refunded in full and no order exists", () =>
      Effect.gen(function* () {
        const fulfillment = yield* FulfillmentSimulator
        const sql = yield* SqlClient.SqlClient
        const qs = yield* quotes(2)
        const checkout = yield* createCheckout(qs.map((q) => q.id))
        for (const q of qs) yield* fulfillment.forceFailure(q.variantId, "out_of_stock", 1)
        expect((yield* payWith(checkout)).status).toBe(200)
        const final = yield* settled(checkout.id)
        expect(final.status).toBe("failed")
        expect(final.items.map((i) => i.status)).toEqual(["failed", "failed"])
        expect(final.refundedAmount).toBe(final.totalAmount)
        expect(final.orderIds).toEqual([])
        expect(final.failureReason).toBeTruthy()
        const [{ n }] = yield* sql<{
          n: number
        }>`SELECT count(*)::int AS n FROM orders WHERE checkout_id = ${checkout.id}`
        expect(n).toBe(0)
      })
    )

    it.effect("declined cards and wrong tokens leave the checkout awaiting payment", () =>
      Effect.gen(function* () {
        const [q] = yield* quotes(1)
        const checkout = yield* createCheckout([q!.id])

        const declined = yield* payWith(checkout, { number: "4000 0000 0000 0002" })
        expect(declined.status).toBe(402)
        expect(declined.text).toMatch(/declined/i)
        expect((yield* getCheckout(checkout.id)).status).toBe("pending_payment")
        expect(yield* eventTypesOf(checkout.id)).toContain("checkout.payment_declined")

        const poor = yield* payWith(checkout, { number: "4000 0000 0000 9995" })
        expect(poor.status).toBe(402)
        expect(poor.text).toMatch(/insufficient funds/i)
        expect((yield* getCheckout(checkout.id)).status).toBe("pending_payment")
        expect((yield* eventTypesOf(checkout.id)).filter((t) => t === "checkout.payment_declined")).toHaveLength(2)

        const before = yield* eventTypesOf(checkout.id)
        const forged = withToken(checkout, "A".repeat(43))
        expect((yield* get(pathAndQuery(forged.paymentUrl!))).status).toBe(404)
        const wrong = yield* payWith(forged)
        expect(wrong.status).toBe(404)
        expect(wrong.text).toContain("not valid")
        const after = yield* getCheckout(checkout.id)
        expect(after.status).toBe("pending_payment")
        expect(after.updatedAt).toBe(checkout.updatedAt)
        expect(yield* eventTypesOf(checkout.id)).toEqual(before)

        // The right card still pays afterwards.
        expect((yield* payWith(checkout)).status).toBe(200)
        expect((yield* settled(checkout.id)).status).toBe("confirmed")
      })
    )

    it.effect("after 5 declines the page tries no card for a growing wait, then takes the payment", () =>
      Effect.gen(function* () {
        const travel = yield* TimeTravel
        const [q] = yield* quotes(1)
        const checkout = yield* createCheckout([q!.id])
        const declinedCount = Effect.map(
          eventTypesOf(checkout.id),
          (types) => types.filter((t) => t === "checkout.payment_declined").length
        )
        const decline = () => payWith(checkout, { number: "4000 0000 0000 0002" })

        for (let i = 1; i < FREE_DECLINES; i++) {
          const declined = yield* decline()
          expect(declined.status).toBe(402)
          expect(declined.text).not.toContain("Too many payments")
        }
        // Four at once: the declines are counted under the checkout's lock, so one card is tried (the 5th
        // decline, whose page says the checkout now pauses) and the others are refused untried.
        const burst = yield* Effect.all(Array.from({ length: 4 }, decline), { concurrency: "unbounded" })
        expect(burst.map((response) => response.status).sort()).toEqual([402, 429, 429, 429])
        const fifth = burst.find((response) => response.status === 402)!
        expect(fifth.text).toContain("Your card was declined.")
        expect(fifth.text).toContain("Too many payments were declined for this checkout. You can try again in 1 minute")
        expect(yield* declinedCount).toBe(FREE_DECLINES)

        // The test card that pays is refused untried: the processor would have charged it.
        const refused = yield* payWith(checkout)
        expect(refused.status).toBe(429)
        expect(refused.headers["content-type"]).toContain("text/html")
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
        expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60)
        expect(refused.text).toContain("your card was not charged")
        expect(refused.text).toContain('name="t"')
        expect((yield* getCheckout(checkout.id)).status).toBe("pending_payment")
        expect(yield* declinedCount).toBe(FREE_DECLINES)
        expect(yield* eventTypesOf(checkout.id)).not.toContain("checkout.paid")

        // After the wait one more card is tried; its decline doubles the wait.
        yield* travel.advance("61 seconds")
        const sixth = yield* decline()
        expect(sixth.status).toBe(402)
        expect(sixth.text).toContain("You can try again in 2 minutes")
        yield* travel.advance("61 seconds")
        const early = yield* payWith(checkout)
        expect(early.status).toBe(429)
        expect(Number(early.headers["retry-after"])).toBeGreaterThan(0)
        expect(Number(early.headers["retry-after"])).toBeLessThanOrEqual(60)
        expect(yield* declinedCount).toBe(FREE_DECLINES + 1)

        // Once the wait is over, the same checkout pays.
        yield* travel.advance("60 seconds")
        expect((yield* payWith(checkout)).status).toBe(200)
        expect((yield* settled(checkout.id)).status).toBe("confirmed")
      })
    )

    it.effect("cancel before payment; cancelling twice or after payment conflicts", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const [q] = yield* quotes(1)
        const checkout = yield* createCheckout([q!.id])
        const cancelled = yield* client.checkouts.cancelCheckout({ path: { checkoutId: checkout.id } })
        expect(cancelled.status).toBe("cancelled")
        expect(cancelled.paymentUrl).toBeNull()
        const twice = yield* postEmpty(`/v1/checkouts/${checkout.id}/cancel`)
        expectProblem(twice, 409, "checkout_state_conflict")
        const page = yield* get(pathAndQuery(checkout.paymentUrl!))
        expect(page.status).toBe(410)
        expect((yield* payWith(checkout)).status).toBe(410)

        const paid = yield* placedCheckout(1)
        expectProblem(yield* postEmpty(`/v1/checkouts/${paid.id}/cancel`), 409, "checkout_state_conflict")
        expect((yield* getCheckout(paid.id)).status).toBe("confirmed")
      })
    )

    it.effect("order cancel: refunds one item, refuses shipped and already cancelled, refunds a whole checkout", () =>
      Effect.gen(function* () {
        const orders = yield* AgentOrders
        const client = yield* ribbonClient
        const checkout = yield* placedCheckout(2)
        const [first, second] = checkout.items
        const cancelled = yield* postEmpty(`/v1/orders/${first!.orderId}/cancel`)
        expect(cancelled.status, cancelled.text).toBe(200)
        expect(cancelled.body.status).toBe("cancelled")
        const afterOne = yield* getCheckout(checkout.id)
        expect(afterOne.status).toBe("confirmed")
        expect(afterOne.items.map((i) => i.status)).toEqual(["refunded", "placed"])
        expect(afterOne.refundedAmount).toBe(first!.amount)

        yield* orders.advance(second!.orderId!)
        yield* orders.advance(second!.orderId!)
        const shipped = yield* client.orders.getOrder({ path: { orderId: second!.orderId! } })
        expect(shipped.status).toBe("shipped")
        expect(shipped.trackingNumber).toBeTruthy()
        const inTransit = yield* postEmpty(`/v1/orders/${second!.orderId}/cancel`)
        expectProblem(inTransit, 409, "order_in_transit")
        expect(inTransit.body.orderStatus).toBe("shipped")
        expectProblem(yield* postEmpty(`/v1/orders/${first!.orderId}/cancel`), 409, "order_already_cancelled")
        const unchanged = yield* getCheckout(checkout.id)
        expect(unchanged.refundedAmount).toBe(first!.amount)
        expect(unchanged.status).toBe("confirmed")

        // Another user sees none of it.
        const other = yield* issueTestToken({ defaultCountry: "GB" })
        expectProblem(yield* get(`/v1/orders/${second!.orderId}`, bearer(other.accessToken)), 404, "order_not_found")
        expectProblem(
          yield* postEmpty(`/v1/orders/${second!.orderId}/cancel`, other.accessToken),
          404,
          "order_not_found"
        )
        expectProblem(yield* get(`/v1/checkouts/${checkout.id}`, bearer(other.accessToken)), 404, "checkout_not_found")

        // Cancelling the only order of a checkout refunds the checkout.
        const single = yield* placedCheckout(1)
        expect((yield* postEmpty(`/v1/orders/${single.orderIds[0]}/cancel`)).status).toBe(200)
        const refunded = yield* getCheckout(single.id)
        expect(refunded.status).toBe("refunded")
        expect(refunded.refundedAmount).toBe(refunded.totalAmount)
        expect(refunded.items.map((i) => i.status)).toEqual(["refunded"])
        expect(yield* eventTypesOf(single.id)).toContain("checkout.refunded")
      })
    )

    it.effect("expiry: the payment window closes after 30 minutes", () =>
      Effect.gen(function* () {
        const travel = yield* TimeTravel
        const [q] = yield* quotes(1)
        const checkout = yield* createCheckout([q!.id])
        yield* travel.advance("31 minutes")
        // The `checkout.expire` job runs at expiresAt; the worker polls every second.
        yield* getCheckout(checkout.id).pipe(
          Effect.repeat({
            schedule: Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(100))),
            until: (c) => c.status === "expired"
          })
        )
        const expired = yield* getCheckout(checkout.id)
        expect(expired.status).toBe("expired")
        expect(expired.paymentUrl).toBeNull()
        expect(yield* eventTypesOf(checkout.id)).toContain("checkout.expired")
        const page = yield* get(pathAndQuery(checkout.paymentUrl!))
        expect(page.status).toBe(410)
        expect(page.text).toMatch(/expired/i)
        const late = yield* payWith(checkout)
        expect(late.status).toBe(410)
        expect((yield* getCheckout(checkout.id)).status).toBe("expired")
        expectProblem(yield* postEmpty(`/v1/checkouts/${checkout.id}/cancel`), 409, "checkout_state_conflict")

        // The stream of a final checkout replays and ends; reconnecting after its last event is a 204,
        // which tells EventSource to stop.
        const replay = yield* get(`/v1/checkouts/${checkout.id}/events`, { "last-event-id": "0" })
        expect(replay.status).toBe(200)
        expect(replay.text).toContain("event: checkout.expired")
        const lastId = [...replay.text.matchAll(/^id: (\d+)$/gm)].at(-1)![1]!
        const reconnect = yield* get(`/v1/checkouts/${checkout.id}/events`, { "last-event-id": lastId })
        expect(reconnect.status).toBe(204)
        expect(reconnect.text).toBe("")
      })
    )

    it.effect("orders wait for placement to settle; a supplier still down at the last attempt refunds the item", () =>
      Effect.gen(function* () {
        const fulfillment = yield* FulfillmentSimulator
        const placement = yield* Placement
        const [first, second] = yield* stockedVariants(2)
        const q1 = yield* quote(first!)
        const q2 = yield* quote(second!)
        yield* fulfillment.forceFailure(second!, "transient")
        const checkout = yield* createCheckout([q1.id, q2.id])
        expect((yield* payWith(checkout)).status).toBe(200)

        // The first item is ordered; the second keeps failing, so the checkout stays placing.
        const placing = yield* getCheckout(checkout.id).pipe(
          Effect.repeat(
            Schedule.recurWhile((c: Checkout) => c.items[0]!.orderId === null).pipe(
              Schedule.addDelay(() => "50 millis"),
              Schedule.intersect(Schedule.recurs(200)),
              Schedule.map(([c]) => c)
            )
          )
        )
        expect(placing.status).toBe("placing")
        expect(placing.items.map((item) => item.status)).toEqual(["placed", "pending"])
        const early = yield* postEmpty(`/v1/orders/${placing.items[0]!.orderId}/cancel`)
        expectProblem(early, 409, "checkout_state_conflict")
        expect(early.body.checkoutStatus).toBe("placing")

        // The job's last attempt gives up on the second item: failed, refunded, the checkout settled.
        yield* placement.place(checkout.id, true)
        const settledCheckout = yield* getCheckout(checkout.id)
        expect(settledCheckout.status).toBe("partially_confirmed")
        expect(settledCheckout.items[1]).toMatchObject({ status: "failed", orderId: null })
        expect(settledCheckout.items[1]!.failureReason).toMatch(/supplier/)
        expect(settledCheckout.refundedAmount).toBe(settledCheckout.items[1]!.amount)

        // Now the order can be cancelled, and with it every placed order: the checkout is refunded.
        const cancelled = yield* postEmpty(`/v1/orders/${placing.items[0]!.orderId}/cancel`)
        expect(cancelled.status, cancelled.text).toBe(200)
        const refunded = yield* getCheckout(checkout.id)
        expect(refunded.status).toBe("refunded")
        expect(refunded.refundedAmount).toBe(refunded.totalAmount)
      }).pipe(Effect.ensuring(Effect.flatMap(FulfillmentSimulator, (f) => f.clearForcedFailures())))
    )

    it.effect("the instance that takes a payment places it at once; its delayed job is the fallback", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const checkouts = yield* Checkouts
        const travel = yield* TimeTravel
        const placeJob = (checkoutId: string) =>
          Effect.map(
            sql<{ status: string; attempts: number; runAt: Date; updatedAt: Date }>`
              SELECT status, attempts, run_at, updated_at FROM jobs
              WHERE kind = 'checkout.place' AND key = ${checkoutId}`,
            ([job]) => job!
          )
        const paidAndConfirmed = (checkoutId: string) =>
          Effect.map(
            sql<{ type: string; createdAt: Date }>`
              SELECT type, created_at FROM events WHERE checkout_id = ${checkoutId}
                AND type IN ('checkout.paid', 'checkout.confirmed') ORDER BY id`,
            (rows) => rows.map((row) => row.createdAt.getTime())
          )

        // Paid on the page: placed by the same instance long before the job's run_at lets any worker take it.
        const [a, b] = yield* stockedVariants(2)
        const paid = yield* createCheckout([(yield* quote(a!)).id, (yield* quote(b!)).id])
        expect((yield* payWith(paid)).status).toBe(200)
        expect((yield* settled(paid.id)).status).toBe("confirmed")
        const [paidAt, confirmedAt] = yield* paidAndConfirmed(paid.id)
        const inline = yield* placeJob(paid.id)
        // run_at is the delay after the enqueue, a moment after the paid event in the same transaction.
        const delay = Duration.toMillis(placementFallbackDelay)
        expect(inline.runAt.getTime() - paidAt!).toBeGreaterThanOrEqual(delay)
        expect(inline.runAt.getTime() - paidAt!).toBeLessThan(delay + 1000)
        expect(confirmedAt!).toBeLessThan(inline.runAt.getTime())
        expect([inline.status, inline.attempts]).toEqual(["succeeded", 1])

        // Paid, but the instance stopped before placing it: once the job's run_at comes, a worker does.
        const [c, d] = yield* stockedVariants(2)
        const orphan = yield* createCheckout([(yield* quote(c!)).id, (yield* quote(d!)).id])
        yield* sql.withTransaction(
          Effect.gen(function* () {
            const locked = Option.getOrThrow(yield* checkouts.forPayment(orphan.id, tokenOf(orphan)))
            yield* checkouts.markPaid(locked, "ch_test_orphan", new Date(yield* Clock.currentTimeMillis))
          })
        )
        yield* Effect.sleep("1500 millis")
        expect((yield* getCheckout(orphan.id)).status).toBe("paid")
        yield* travel.advance(placementFallbackDelay)
        expect((yield* settled(orphan.id)).status).toBe("confirmed")
        expect(yield* placeJob(orphan.id)).toMatchObject({ status: "succeeded", attempts: 1 })
      })
    )

    it.effect("a placement stopped half-way and run again books exactly one order per item", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const placement = yield* Placement
        const fulfillment = yield* FulfillmentSimulator
        const variants = yield* stockedVariants(3)
        const stock = () =>
          Effect.map(
            sql<{ variantId: string; stock: number }>`
              SELECT variant_id, stock FROM variant_locations WHERE variant_id IN ${sql.in(variants)}`,
            (rows) => Object.fromEntries(rows.map((row) => [row.variantId, row.stock]))
          )
        const qs = yield* Effect.forEach(variants, (id) => quote(id))
        const checkout = yield* createCheckout(
          qs.map((q) => q.id),
          { items: qs.map((q, index) => ({ quoteId: q.id, quantity: index + 1 })) }
        )
        const stockBefore = yield* stock()
        // The supplier is briefly unavailable for the second item: placement books the others at once, then
        // retries the second with backoff (the failures are shared by every runner). Meanwhile the supplier
        // holds orders that the checkout has not recorded: the window a crash must survive.
        yield* fulfillment.forceFailure(variants[1]!, "transient", 5)
        expect((yield* payWith(checkout)).status).toBe(200)

        // A placement run (racing the worker's own), stopped once the supplier has booked an item.
        const run = yield* Effect.fork(placement.place(checkout.id))
        const booked = sql<{ itemIndex: number }>`
          SELECT item_index FROM orders WHERE checkout_id = ${checkout.id} ORDER BY item_index`
        yield* booked.pipe(Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (rows) => rows.length > 0 }))
        yield* Fiber.interrupt(run)
        expect((yield* booked).map((row) => row.itemIndex)).not.toContain(1)
        const midway = yield* sql<{ status: string }>`
          SELECT status FROM checkout_items WHERE checkout_id = ${checkout.id} ORDER BY index`
        expect(midway.map((row) => row.status)).toEqual(["pending", "pending", "pending"])
        expect(yield* Fiber.await(run)).toSatisfy(Exit.isInterrupted)

        // The resumed run finishes the job.
        yield* placement.place(checkout.id)
        const final = yield* settled(checkout.id)
        expect(final.status).toBe("confirmed")
        expect(final.items.map((i) => i.status)).toEqual(["placed", "placed", "placed"])
        expect(new Set(final.orderIds).size).toBe(3)

        const perItem = yield* sql<{ itemIndex: number; n: number }>`
          SELECT item_index, count(*)::int AS n FROM orders WHERE checkout_id = ${checkout.id}
          GROUP BY item_index ORDER BY item_index`
        expect(perItem).toEqual([
          { itemIndex: 0, n: 1 },
          { itemIndex: 1, n: 1 },
          { itemIndex: 2, n: 1 }
        ])
        const orderRows = yield* sql<{ id: string }>`SELECT id FROM orders WHERE checkout_id = ${checkout.id}`
        expect(orderRows.map((row) => row.id).sort()).toEqual([...final.orderIds].sort())
        const stockAfter = yield* stock()
        for (const [index, variantId] of variants.entries()) {
          expect(stockBefore[variantId]! - stockAfter[variantId]!, variantId).toBe(index + 1)
        }
        expect((yield* eventTypesOf(checkout.id)).filter((t) => t === "checkout.item_placed")).toHaveLength(3)
      })
    )
  })
})
