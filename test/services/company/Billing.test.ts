import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import type { AccountScope } from "../../../src/domain/company/Company.js"
import { Billing } from "../../../src/services/company/Billing.js"
import { CompanyServicesLive, createCompany } from "../../support/company.js"
import { TestDatabase } from "../../support/database.js"

/** The billing ledger on a real database: debits judged one at a time, credits restoring, remaining derived. */

const scopeOf = (company: { companyId: string }) =>
  ({ companyId: company.companyId, environment: "test", accountIds: "all" }) as unknown as AccountScope

describe("Billing", () => {
  it.layer(Layer.mergeAll(Billing.Default, CompanyServicesLive).pipe(Layer.provideMerge(TestDatabase)), {
    timeout: 120_000
  })((it) => {
    it.effect("of 12 debits racing for the last funds, only those the funds cover succeed; credits restore them", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const billing = yield* Billing
        const company = yield* createCompany()
        const methodId = yield* billing.create(company.accountId, {
          name: "Small",
          type: "prepaid",
          spendingLimit: 1000
        })

        // Each debit in its own transaction, as an order's would be, all at once.
        const results = yield* Effect.all(
          Array.from({ length: 12 }, (_, i) =>
            sql
              .withTransaction(
                billing.debit(methodId, 300, { type: "order", id: `order-${i}`, reason: "order placed" })
              )
              .pipe(Effect.either)
          ),
          { concurrency: "unbounded" }
        )
        const refused = results.filter(Either.isLeft).map((r) => r.left)
        expect(results.filter(Either.isRight)).toHaveLength(3)
        expect(refused).toHaveLength(9)
        for (const error of refused) {
          expect(error).toMatchObject({ _tag: "InsufficientFunds", billingMethodId: methodId, required: 300 })
        }
        const method = yield* billing.find(scopeOf(company), methodId)
        expect(method.remaining).toBe(100)

        yield* billing.credit(methodId, 300, { type: "order", id: "order-0", reason: "order cancelled" })
        expect((yield* billing.find(scopeOf(company), methodId)).remaining).toBe(400)
        const [sums] = yield* sql<{ debits: number; credits: number }>`SELECT
          sum(amount) FILTER (WHERE kind = 'debit')::int AS debits, sum(amount) FILTER (WHERE kind = 'credit')::int AS credits
          FROM billing_entries WHERE billing_method_id = ${methodId}`
        expect(sums).toEqual({ debits: 900, credits: 300 })
      })
    )

    it.effect("an uncapped method takes any debit; an archived one none", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const billing = yield* Billing
        const company = yield* createCompany("live")
        const invoice = yield* billing.defaultOf(company.accountId)
        expect(invoice).toMatchObject({ type: "invoice", spendingLimit: null, remaining: null })
        yield* billing.debit(invoice.id, 10_000_000, { type: "order", id: "big", reason: "order placed" })
        expect((yield* billing.defaultOf(company.accountId)).remaining).toBeNull()

        yield* sql`UPDATE billing_methods SET status = 'archived' WHERE id = ${invoice.id}`
        const archived = yield* Effect.flip(
          billing.debit(invoice.id, 1, { type: "order", id: "x", reason: "order placed" })
        )
        expect(archived._tag).toBe("BillingMethodArchived")
      })
    )
  })
})
