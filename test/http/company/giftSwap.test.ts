import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CheckoutTestServer } from "../../support/checkout.js"
import { getWith, patchWith, postWith } from "../../support/company.js"
import { companyWithProductCampaign } from "../../support/giftLinks.js"
import { get, postForm, testPublicUrl } from "../../support/http.js"

/**
 * Swapping a product gift within its budget (docs/decisions/0072-swapping-a-gift-within-budget.md, docs/gifting.md
 * "Swap"), over real HTTP: the campaign's `swap` setting as the v2 campaign API takes and shows it, the gift page's
 * "See other gifts" and its choice claimed as a browser without JavaScript would, the order placed for the new
 * product with `swappedFrom` on the v2 gift and the v3 order, and the refusals: a product over the budget, and any other
 * product when the campaign disables swaps, for gifts it sent before too.
 */

const campaigns = "/public-api/v2/campaigns"
const gifts = "/public-api/v2/gifts"
const sqlClient = SqlClient.SqlClient

/** The campaign's budget, in USD: the sender's product and the others must land in GB within it. */
const budgetMax = 150

/**
 * The sender's product: one marketplace product with one variant for sale that ships to GB with stock, its item at
 * 10 to 40 USD (landed well within the budget). And a marketplace variant shipping to GB whose item alone is over
 * the budget, so its landed total is too.
 */
const catalog = Effect.flatMap(sqlClient, (sql) =>
  Effect.gen(function* () {
    const [original] = yield* sql<{ productId: string; title: string }>`
      SELECT p.id AS product_id, p.title FROM products p JOIN variants v ON v.product_id = p.id
        JOIN variant_locations l ON l.variant_id = v.id
      WHERE p.catalog = 'marketplace' AND v.price_usd BETWEEN 1000 AND 4000 AND NOT v.is_digital AND l.stock > 100
        AND 'GB' = ANY (l.ships_to) AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
      ORDER BY p.id LIMIT 1`
    const [over] = yield* sql<{ productId: string; variantId: string }>`
      SELECT v.product_id, v.id AS variant_id FROM variants v JOIN products p ON p.id = v.product_id
        JOIN variant_locations l ON l.variant_id = v.id
      WHERE p.catalog = 'marketplace' AND v.price_usd > ${budgetMax * 100} AND (l.stock IS NULL OR l.stock > 0)
        AND 'GB' = ANY (l.ships_to)
      ORDER BY v.id LIMIT 1`
    return { original: original!, over: over! }
  })
).pipe(Effect.orDie)

const setup = (giftProperties: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const products = yield* catalog
    const company = yield* companyWithProductCampaign(products.original.productId, {
      giftProperties: { budget: { min: 1, max: budgetMax }, ...giftProperties }
    })
    return { ...company, ...products }
  })

const sendGift = (company: Effect.Effect.Success<ReturnType<typeof setup>>, key: string) =>
  Effect.map(
    postWith(
      gifts,
      {
        campaignId: company.campaign.id,
        recipients: [{ firstname: "Ada", lastname: "Lovelace", email: `${key}@example.com`, key }]
      },
      company.headers
    ),
    (response) => {
      const gift = response.body.results[0] as { id: string; link: string }
      return { ...gift, path: gift.link.replace(testPublicUrl, "") }
    }
  )

/** The product ids a page offers with "Choose", in order. */
const offeredIds = (html: string) => [...html.matchAll(/name="productId" value="([0-9a-f]+)"/g)].map((m) => m[1]!)

/** The first variant a claim form offers. */
const firstVariant = (html: string) => /name="variantId" value="([^"]+)"/.exec(html)?.[1]

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

const orderRecipient = {
  firstName: "Ada",
  lastName: "Lovelace",
  email: "ada@example.com",
  phone: "+44 20 7946 0958",
  country: "GB",
  address: { addressLine1: "10 Downing Street", city: "London", zipcode: "SW1A 2AA" }
}

const campaignCount = (headers: Record<string, string>) =>
  Effect.map(getWith(`${campaigns}?limit=100`, headers), (response) => response.body.results.length as number)

const orderCount = (companyId: string) =>
  Effect.flatMap(sqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`SELECT count(*)::int AS n FROM company_orders WHERE company_id = ${companyId}`,
      (rows) => rows[0]!.n
    )
  ).pipe(Effect.orDie)

describe("swapping a gift within budget", () => {
  it.layer(CheckoutTestServer, { timeout: 180_000 })((it) => {
    it.effect("the campaign's swap: product default within_budget, collection disabled, bad values 400", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        expect(company.campaign.customization.giftProperties.swap).toBe("within_budget")
        const before = yield* campaignCount(company.headers)

        const bad = yield* postWith(
          campaigns,
          {
            name: "Bad",
            customization: {
              giftProperties: {
                selectedGiftType: "product",
                productId: company.original.productId,
                budget: { max: 50 },
                swap: "sometimes"
              }
            }
          },
          company.headers
        )
        expect(bad.status).toBe(400)
        expect(bad.body).toEqual({
          path: "customization.giftProperties.swap",
          errorCode: "INVALID_REQUEST",
          message: expect.any(String)
        })

        const sql = yield* sqlClient
        const [collection] = yield* sql<{ id: string }>`SELECT id FROM collections ORDER BY id LIMIT 1`
        const collectionBody = (swap?: string) => ({
          name: "Collection",
          customization: {
            giftProperties: {
              selectedGiftType: "collection",
              collectionId: collection!.id,
              budget: { max: 50 },
              ...(swap === undefined ? {} : { swap })
            }
          }
        })
        const refused = yield* postWith(campaigns, collectionBody("within_budget"), company.headers)
        expect(refused.status).toBe(400)
        expect(refused.body.path).toBe("customization.giftProperties.swap")
        expect(yield* campaignCount(company.headers)).toBe(before)

        const made = yield* postWith(campaigns, collectionBody(), company.headers)
        expect(made.status).toBe(201)
        expect(made.body.customization.giftProperties.swap).toBe("disabled")

        const path = `${campaigns}/${company.campaign.id}`
        const badChange = yield* patchWith(
          path,
          { customization: { giftProperties: { swap: "always" } } },
          company.headers
        )
        expect(badChange.status).toBe(400)
        expect(badChange.body.path).toBe("customization.giftProperties.swap")
        expect((yield* getWith(path, company.headers)).body.customization.giftProperties.swap).toBe("within_budget")

        const disabled = yield* patchWith(
          path,
          { customization: { giftProperties: { swap: "disabled" } } },
          company.headers
        )
        expect(disabled.status).toBe(200)
        expect(disabled.body.customization.giftProperties.swap).toBe("disabled")
        expect((yield* getWith(path, company.headers)).body.customization.giftProperties.swap).toBe("disabled")

        // To a collection without `swap`: the collection's default.
        const toCollection = yield* patchWith(
          path,
          {
            customization: {
              giftProperties: { selectedGiftType: "collection", collectionId: collection!.id, swap: "within_budget" }
            }
          },
          company.headers
        )
        expect(toCollection.status).toBe(400)
        expect(toCollection.body.path).toBe("customization.giftProperties.swap")
      })
    )

    it.effect("See other gifts, one chosen and claimed: the order is the new product, swappedFrom the original", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const gift = yield* sendGift(company, "swap")
        const before = yield* getWith(`${gifts}/${gift.id}`, company.headers)
        expect(before.body.swappedFrom).toBeNull()

        const choices = yield* get(`${gift.path}/choices?country=GB`)
        expect(choices.status).toBe(200)
        expect(offeredIds(choices.text)).toEqual([company.original.productId])
        expect(choices.text).toContain("See other gifts")

        const others = yield* get(`${gift.path}/others?country=GB`)
        expect(others.status).toBe(200)
        const otherIds = offeredIds(others.text)
        expect(otherIds.length).toBeGreaterThan(0)
        expect(otherIds.length).toBeLessThanOrEqual(6)
        expect(otherIds).not.toContain(company.original.productId)
        expect(otherIds).not.toContain(company.over.productId)

        const picked = otherIds[0]!
        const form = yield* get(`${gift.path}/choose?productId=${picked}&country=GB`)
        expect(form.status).toBe(200)
        const variantId = firstVariant(form.text)!
        expect(variantId).toBeDefined()

        const claimed = yield* postForm(`${gift.path}/claim`, { ...londonForm, productId: picked, variantId })
        expect(claimed.status, claimed.text).toBe(200)
        expect(claimed.text).toContain("Your gift is claimed")

        const read = yield* getWith(`${gifts}/${gift.id}?expand[]=orders`, company.headers)
        expect(read.body.status).toBe("claimed")
        const swappedFrom = { productId: company.original.productId, title: company.original.title }
        expect(read.body.swappedFrom).toEqual(swappedFrom)
        expect(read.body.orders[0].swappedFrom).toEqual(swappedFrom)
        // v3 reads show it too, by id and in the list, beside the line item of the product chosen.
        const order = yield* getWith(`/public-api/v3/orders/${read.body.orderId}`, company.headers)
        expect(order.body.data.lineItems[0]).toMatchObject({ productId: picked, variantId })
        expect(order.body.data.swappedFrom).toEqual(swappedFrom)
        const listed = yield* getWith("/public-api/v3/orders", company.headers)
        expect(listed.body.data.map((o: { id: string; swappedFrom: unknown }) => [o.id, o.swappedFrom])).toEqual([
          [read.body.orderId, swappedFrom]
        ])
      })
    )

    it.effect("a product over the budget cannot be chosen nor claimed; the gift stays open, no order", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const gift = yield* sendGift(company, "over")
        const chosen = yield* get(`${gift.path}/choose?productId=${company.over.productId}&country=GB`)
        expect(chosen.status).toBe(422)
        expect(chosen.text).toContain("Choose your gift")

        const viaForm = yield* postForm(`${gift.path}/claim`, {
          ...londonForm,
          productId: company.over.productId,
          variantId: company.over.variantId
        })
        expect(viaForm.status).toBe(422)

        const viaApi = yield* postWith(
          `${gifts}/${gift.id}/claim`,
          { variantId: company.over.variantId, orderRecipient },
          company.headers
        )
        expect(viaApi.status).toBe(422)
        expect(viaApi.body.errorCode).toBe("UNPROCESSABLE_ENTITY")
        const read = yield* getWith(`${gifts}/${gift.id}`, company.headers)
        expect(read.body.status).not.toBe("claimed")
        expect(read.body.swappedFrom).toBeNull()
        expect(yield* orderCount(company.companyId)).toBe(0)
      })
    )

    it.effect("a sent gift follows its campaign's swap as it is now: off stops its swap, on again allows it", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const gift = yield* sendGift(company, "turned")
        const other = offeredIds((yield* get(`${gift.path}/others?country=GB`)).text)[0]!
        const variantId = firstVariant((yield* get(`${gift.path}/choose?productId=${other}&country=GB`)).text)!
        const swapTo = (swap: string) =>
          Effect.map(
            patchWith(
              `${campaigns}/${company.campaign.id}`,
              { customization: { giftProperties: { swap } } },
              company.headers
            ),
            (response) => expect(response.status, JSON.stringify(response.body)).toBe(200)
          )

        // Turned off after the gift was sent: the gift already sent can no longer be swapped, by page or API.
        yield* swapTo("disabled")
        expect((yield* get(`${gift.path}/choices?country=GB`)).text).not.toContain("See other gifts")
        expect((yield* get(`${gift.path}/others?country=GB`)).status).toBe(404)
        expect((yield* get(`${gift.path}/choose?productId=${other}&country=GB`)).status).toBe(422)
        const viaForm = yield* postForm(`${gift.path}/claim`, { ...londonForm, productId: other, variantId })
        expect(viaForm.status).toBe(422)
        const viaApi = yield* postWith(`${gifts}/${gift.id}/claim`, { variantId, orderRecipient }, company.headers)
        expect(viaApi.status).toBe(422)
        expect(viaApi.body.errorCode).toBe("UNPROCESSABLE_ENTITY")
        expect(yield* orderCount(company.companyId)).toBe(0)

        // On again: the same gift may be swapped.
        yield* swapTo("within_budget")
        expect((yield* get(`${gift.path}/choices?country=GB`)).text).toContain("See other gifts")
        expect(offeredIds((yield* get(`${gift.path}/others?country=GB`)).text)).toContain(other)
        const claimed = yield* postWith(`${gifts}/${gift.id}/claim`, { variantId, orderRecipient }, company.headers)
        expect(claimed.status, JSON.stringify(claimed.body)).toBe(200)
        const read = yield* getWith(`${gifts}/${gift.id}`, company.headers)
        expect(read.body.swappedFrom).toEqual({ productId: company.original.productId, title: company.original.title })
      })
    )

    it.effect("swap disabled: no See other gifts, the other gifts' page 404, another product refused", () =>
      Effect.gen(function* () {
        // What a swappable gift would offer, to ask for it where swaps are disabled.
        const swappable = yield* setup()
        const probe = yield* sendGift(swappable, "probe")
        const other = offeredIds((yield* get(`${probe.path}/others?country=GB`)).text)[0]!
        const otherForm = yield* get(`${probe.path}/choose?productId=${other}&country=GB`)
        const otherVariant = firstVariant(otherForm.text)!

        const company = yield* setup({ swap: "disabled" })
        expect(company.campaign.customization.giftProperties.swap).toBe("disabled")
        const gift = yield* sendGift(company, "disabled")

        const choices = yield* get(`${gift.path}/choices?country=GB`)
        expect(choices.status).toBe(200)
        expect(choices.text).not.toContain("See other gifts")
        const others = yield* get(`${gift.path}/others?country=GB`)
        expect(others.status).toBe(404)
        expect(others.text).toContain("This gift cannot be exchanged for another.")

        const chosen = yield* get(`${gift.path}/choose?productId=${other}&country=GB`)
        expect(chosen.status).toBe(422)
        const viaForm = yield* postForm(`${gift.path}/claim`, {
          ...londonForm,
          productId: other,
          variantId: otherVariant
        })
        expect(viaForm.status).toBe(422)
        const viaApi = yield* postWith(
          `${gifts}/${gift.id}/claim`,
          { variantId: otherVariant, orderRecipient },
          company.headers
        )
        expect(viaApi.status).toBe(422)
        expect(yield* orderCount(company.companyId)).toBe(0)

        // The campaign's own product is still claimed as before, with nothing swapped.
        const own = yield* get(`${gift.path}/choose?productId=${company.original.productId}&country=GB`)
        const claimed = yield* postForm(`${gift.path}/claim`, {
          ...londonForm,
          productId: company.original.productId,
          variantId: firstVariant(own.text)!
        })
        expect(claimed.status).toBe(200)
        const read = yield* getWith(`${gifts}/${gift.id}`, company.headers)
        expect(read.body.swappedFrom).toBeNull()
        const order = yield* getWith(`/public-api/v3/orders/${read.body.orderId}`, company.headers)
        expect(order.body.data).toMatchObject({ giftId: gift.id, swappedFrom: null })
      })
    )
  })
})
