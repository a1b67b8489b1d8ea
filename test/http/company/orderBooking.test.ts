import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FulfillmentSimulator } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { londonAddress, makeCheckoutTestServer } from "../../support/checkout.js"
import {
  createCompany,
  getWith,
  keyHeaders,
  orderCounts,
  postWith,
  raiseLimits,
  v2Keys
} from "../../support/company.js"

/**
 * v3 orders over real HTTP (docs/decisions/0039-v3-orders.md): which account and billing method an order is charged to,
 * and what a supplier refusal leaves behind (nothing: the booking, the stock and the debit roll back together).
 */

const orders = "/public-api/v3/orders"
const accounts = "/public-api/v3/accounts"
const billingMethods = "/public-api/v3/billing-methods"

const recipient = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+44 20 7946 0958" }

const v3Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })

const orderBody = (variantId: string, idempotencyKey: string, extra: Record<string, unknown> = {}) => ({
  variantId,
  recipient,
  shippingAddress: londonAddress,
  idempotencyKey,
  ...extra
})

/** A test company with raised limits, and physical variants for sale that ship to GB with stock (tracked). */
const setup = Effect.gen(function* () {
  const company = yield* createCompany("test")
  yield* raiseLimits(company.companyId)
  const sql = yield* SqlClient.SqlClient
  const variants = yield* sql<{
    id: string
  }>`SELECT v.id FROM variants v JOIN variant_locations l ON l.variant_id = v.id
    WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND 'GB' = ANY (l.ships_to) AND l.stock > 100
    ORDER BY l.stock DESC, v.id LIMIT 2`
  return { ...company, variantId: variants[0]!.id, otherVariantId: variants[1]!.id }
})

/** The remaining funds of each billing method the key reaches, by account. */
const remainingByAccount = (apiKey: string) =>
  Effect.map(
    getWith(billingMethods, keyHeaders(apiKey)),
    (response) =>
      new Map(
        (response.body.data as Array<{ accountId: string; spendingLimit: { remaining: number } }>).map((method) => [
          method.accountId,
          method.spendingLimit.remaining
        ])
      )
  )

const stockOf = (variantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ stock: number }>`SELECT stock FROM variant_locations WHERE variant_id = ${variantId}`,
      (rows) => rows[0]!.stock
    )
  ).pipe(Effect.orDie)

const setStock = (variantId: string, stock: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE variant_locations SET stock = ${stock} WHERE variant_id = ${variantId}`.pipe(Effect.orDie)
  )

describe("orders: account, billing method and booking (/public-api/v3)", () => {
  it.layer(makeCheckoutTestServer(), { timeout: 180_000 })((it) => {
    it.effect("with no account named, the company's default account and its default method are charged", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const second = yield* postWith(
          accounts,
          { name: "Second", billingMethod: { name: "B", type: "prepaid", spendingLimit: { amount: 100_000_00 } } },
          keyHeaders(company.apiKey)
        )
        const secondId = second.body.data.id as string
        const before = yield* remainingByAccount(company.apiKey)

        const placed = yield* postWith(orders, orderBody(company.variantId, "default"), keyHeaders(company.apiKey))
        expect(placed.status).toBe(201)
        expect(placed.body.data.accountId).toBe(company.accountId)
        const after = yield* remainingByAccount(company.apiKey)
        expect(after.get(company.accountId)).toBeLessThan(before.get(company.accountId)!)
        expect(after.get(secondId)).toBe(before.get(secondId))

        // A key that reaches only the second account: that account, the only one in reach, is charged.
        const narrow = yield* postWith(
          v2Keys,
          {
            name: "narrow",
            permissions: ["orders:create", "orders:read:unmasked"],
            accountsAccess: { scope: "selected-accounts", ids: [secondId] }
          },
          keyHeaders(company.apiKey)
        )
        const viaNarrow = yield* postWith(
          orders,
          orderBody(company.variantId, "narrow"),
          keyHeaders(narrow.body.apiKey as string)
        )
        expect(viaNarrow.status).toBe(201)
        expect(viaNarrow.body.data.accountId).toBe(secondId)
        expect((yield* remainingByAccount(company.apiKey)).get(secondId)).toBeLessThan(before.get(secondId)!)
      })
    )

    it.effect("an account without a default billing method: 404 when the order names none, by body or header", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const bare = yield* postWith(accounts, { name: "Bare" }, keyHeaders(company.apiKey))
        expect(bare.status).toBe(201)
        const bareId = bare.body.data.id as string
        const before = yield* orderCounts

        const byBody = yield* postWith(
          orders,
          orderBody(company.variantId, "bare-body", { accountId: bareId }),
          keyHeaders(company.apiKey)
        )
        expect(byBody.body).toEqual(v3Error(404, "404_BILL_001"))
        const byHeader = yield* postWith(
          orders,
          orderBody(company.variantId, "bare-header"),
          keyHeaders(company.apiKey, { "ribbon-account-id": bareId })
        )
        expect(byHeader.body).toEqual(v3Error(404, "404_BILL_001"))
        // The account comes before the variant: an unknown variant on that account is still the method's 404.
        const unknownVariant = yield* postWith(
          orders,
          orderBody("0123456789abcdef01234567", "bare-variant", { accountId: bareId }),
          keyHeaders(company.apiKey)
        )
        expect(unknownVariant.body).toEqual(v3Error(404, "404_BILL_001"))
        expect(yield* orderCounts).toEqual(before)
      })
    )

    it.effect("the supplier out of stock: 422, and no order, booking, debit or stock taken; the key stays free", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const before = yield* orderCounts
        const remaining = yield* remainingByAccount(company.apiKey)
        // Stock runs out after the order's checks read the variant: the booking's own stock update refuses.
        yield* setStock(company.otherVariantId, 0)
        const refused = yield* postWith(orders, orderBody(company.otherVariantId, "empty"), keyHeaders(company.apiKey))
        expect(refused.body).toEqual(v3Error(422, "422_ORDS_006"))
        expect(yield* orderCounts).toEqual(before)
        expect(yield* stockOf(company.otherVariantId)).toBe(0)
        expect(yield* remainingByAccount(company.apiKey)).toEqual(remaining)

        // A forced refusal from the supplier, before it writes anything, is the same 422.
        const fulfillment = yield* FulfillmentSimulator
        yield* fulfillment.forceFailure(company.variantId, "out_of_stock", 1)
        const forced = yield* postWith(orders, orderBody(company.variantId, "forced"), keyHeaders(company.apiKey))
        expect(forced.body).toEqual(v3Error(422, "422_ORDS_006"))
        expect(yield* orderCounts).toEqual(before)

        // Restocked, the same key places the order: nothing of the refused attempt remained.
        yield* setStock(company.otherVariantId, 10)
        const placed = yield* postWith(orders, orderBody(company.otherVariantId, "empty"), keyHeaders(company.apiKey))
        expect(placed.status).toBe(201)
        expect(placed.headers["idempotent-replayed"]).toBeUndefined()
        expect(yield* stockOf(company.otherVariantId)).toBe(9)
        expect(yield* orderCounts).toEqual({
          orders: before.orders + 1,
          entries: before.entries + 1,
          bookings: before.bookings + 1
        })
      })
    )

    it.effect("a supplier briefly unavailable is retried within the request: one order, one booking", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const before = yield* orderCounts
        const stock = yield* stockOf(company.variantId)
        const fulfillment = yield* FulfillmentSimulator
        yield* fulfillment.forceFailure(company.variantId, "transient", 2)
        const placed = yield* postWith(orders, orderBody(company.variantId, "retried"), keyHeaders(company.apiKey))
        expect(placed.status).toBe(201)
        expect(yield* orderCounts).toEqual({
          orders: before.orders + 1,
          entries: before.entries + 1,
          bookings: before.bookings + 1
        })
        expect(yield* stockOf(company.variantId)).toBe(stock - 1)
      })
    )
  })
})
