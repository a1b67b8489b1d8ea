import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Either, Exit } from "effect"
import { type CardInput, type ValidCard, validateCard } from "../../../src/domain/checkout/Cards.js"
import { PaymentDeclined, PaymentProvider } from "../../../src/services/checkout/PaymentProvider.js"
import { declineMessages, PaymentSimulator, testCards } from "../../../src/services/simulators/PaymentSimulator.js"

const now = new Date("2026-05-15T12:00:00Z")
const good: CardInput = { number: "4242 4242 4242 4242", expiry: "12/30", cvc: "123", name: "Jane Doe" }

const cardOf = (input: Partial<CardInput>, at: Date = now): ValidCard => {
  const result = validateCard({ ...good, ...input }, at)
  if (Either.isLeft(result)) throw new Error(`expected a valid card, got ${JSON.stringify(result.left)}`)
  return result.right
}

describe("PaymentSimulator.charge (test mode), as the PaymentProvider", () => {
  const charge = (number: string) =>
    Effect.flatMap(PaymentProvider, (payments) =>
      payments.charge({ card: cardOf({ number }), amount: 4210, currency: "USD", reference: "chk_1" })
    ).pipe(Effect.provide(PaymentSimulator.provider))

  it.effect("4242 4242 4242 4242 succeeds with a charge id, the brand and the last four digits only", () =>
    Effect.gen(function* () {
      const result = yield* charge("4242 4242 4242 4242")
      expect(result.chargeId).toMatch(/^ch_[0-9a-f]{24}$/)
      expect(result).toEqual({ chargeId: result.chargeId, brand: "visa", last4: "4242" })
      const other = yield* charge(testCards.succeeds)
      expect(other.chargeId).not.toBe(result.chargeId)
    })
  )

  /** [number, reason, message]. */
  const declines: ReadonlyArray<readonly [string, string, string]> = [
    ["4000 0000 0000 0002", "card_declined", "Your card was declined."],
    ["4000 0000 0000 9995", "insufficient_funds", "Your card has insufficient funds."],
    ["5555 5555 5555 4444", "card_declined", declineMessages.testMode],
    ["4012 8888 8888 1881", "card_declined", declineMessages.testMode]
  ]

  it.effect.each(declines)("%s is declined: %s", ([number, reason, message]) =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(charge(number))
      expect(error).toBeInstanceOf(PaymentDeclined)
      expect(error._tag).toBe("PaymentDeclined")
      expect({ reason: error.reason, message: error.message }).toEqual({ reason, message })
    })
  )

  it("the test-mode decline tells the person to use a test card", () => {
    expect(declineMessages.testMode).toMatch(/test/i)
    expect(declineMessages.testMode).toContain("4242 4242 4242 4242")
  })

  it.effect("an amount that is not a positive integer, or a malformed currency, is a defect", () =>
    Effect.gen(function* () {
      const payments = yield* PaymentSimulator
      const card = cardOf({})
      for (const [amount, currency] of [
        [0, "USD"],
        [-5, "USD"],
        [10.5, "USD"],
        [100, "usd"]
      ] as const) {
        const exit = yield* Effect.exit(payments.charge({ card, amount, currency, reference: "r" }))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      }
    }).pipe(Effect.provide(PaymentSimulator.Default))
  )
})
