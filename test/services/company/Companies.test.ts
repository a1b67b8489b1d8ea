import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Companies } from "../../../src/services/company/Companies.js"
import { CompanyServicesLive, createCompany } from "../../support/company.js"
import { TestDatabase } from "../../support/database.js"

/** The owner's setting that every member sign in with a second factor, kept on the company row. */

describe("Companies", () => {
  it.layer(CompanyServicesLive.pipe(Layer.provideMerge(TestDatabase)), { timeout: 120_000 })((it) => {
    it.effect("requires no second factor until the owner turns the requirement on, and off again", () =>
      Effect.gen(function* () {
        const companies = yield* Companies
        const company = yield* createCompany()
        const other = yield* createCompany()
        expect(yield* companies.requiresTwoFactor(company.companyId)).toBe(false)
        yield* companies.requireTwoFactor(company.companyId, true)
        expect(yield* companies.requiresTwoFactor(company.companyId)).toBe(true)
        expect(yield* companies.requiresTwoFactor(other.companyId)).toBe(false)
        yield* companies.requireTwoFactor(company.companyId, false)
        expect(yield* companies.requiresTwoFactor(company.companyId)).toBe(false)
      })
    )

    it.effect("names an unknown company", () =>
      Effect.gen(function* () {
        const companies = yield* Companies
        const unknown = "0123456789abcdef01234567"
        for (const attempt of [companies.requireTwoFactor(unknown, true), companies.requiresTwoFactor(unknown)]) {
          expect(yield* Effect.flip(attempt)).toMatchObject({
            _tag: "CompanyNotFound",
            message: `No company ${unknown}.`
          })
        }
      })
    )
  })
})
