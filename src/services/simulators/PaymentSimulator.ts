import { Effect, Layer, Redacted } from "effect"
import { makeId } from "../../domain/platform/Ids.js"
import {
  type Charge,
  type ChargeRequest,
  PaymentDeclined,
  PaymentProvider,
  type PaymentProviderShape,
  type SavedCard,
  type SavedCardChargeRequest
} from "../checkout/PaymentProvider.js"

/**
 * The test-mode card processor: the shipped `PaymentProvider` (`PAYMENT_PROVIDER=simulator`;
 * docs/decisions/0026-hosted-payment-page.md, docs/checkout.md, docs/operations.md "Payment and fulfillment
 * providers"). Only the test cards below do anything, and no real card is ever charged: `charge` returns a charge
 * for the succeeding card and fails with `PaymentDeclined` for every other.
 */

/** The test cards (docs/decisions/0026-hosted-payment-page.md), digits only. */
export const testCards = {
  succeeds: "4242424242424242",
  declined: "4000000000000002",
  insufficientFunds: "4000000000009995"
} as const

export const declineMessages = {
  card_declined: "Your card was declined.",
  insufficient_funds: "Your card has insufficient funds.",
  testMode:
    "This is a test-mode payment page, so real cards cannot be charged. Pay with the test card 4242 4242 4242 4242."
} as const

const charge = Effect.fn("PaymentSimulator.charge")(function* (request: ChargeRequest) {
  const { amount, card, currency, reference } = request
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    return yield* Effect.dieMessage(`PaymentSimulator.charge: amount must be a positive integer, got ${amount}`)
  }
  if (!/^[A-Z]{3}$/.test(currency)) {
    return yield* Effect.dieMessage(`PaymentSimulator.charge: currency must be an ISO 4217 code, got ${currency}`)
  }
  // Never the number: brand and last four are what a receipt shows anyway.
  yield* Effect.annotateCurrentSpan({
    "payment.brand": card.brand,
    "payment.last4": card.last4,
    "payment.amount": amount,
    "payment.currency": currency,
    "payment.reference": reference
  })
  switch (Redacted.value(card.number)) {
    case testCards.succeeds: {
      const id = yield* makeId
      return { chargeId: `ch_${id}`, brand: card.brand, last4: card.last4 } satisfies Charge
    }
    case testCards.declined:
      return yield* new PaymentDeclined({ reason: "card_declined", message: declineMessages.card_declined })
    case testCards.insufficientFunds:
      return yield* new PaymentDeclined({ reason: "insufficient_funds", message: declineMessages.insufficient_funds })
    default:
      return yield* new PaymentDeclined({ reason: "card_declined", message: declineMessages.testMode })
  }
})

/**
 * A saved test card's token names what charging it does, so that the simulator keeps no state and every instance
 * charges it alike: `pm_test_{outcome}_{id}`. The number is not in it.
 */
const savedOutcomes = {
  [testCards.succeeds]: "succeeds",
  [testCards.declined]: "declined",
  [testCards.insufficientFunds]: "insufficientFunds"
} as const

const saveCard = Effect.fn("PaymentSimulator.saveCard")(function* (card: ChargeRequest["card"]) {
  yield* Effect.annotateCurrentSpan({ "payment.brand": card.brand, "payment.last4": card.last4 })
  const outcome = savedOutcomes[Redacted.value(card.number) as keyof typeof savedOutcomes]
  if (outcome === undefined) {
    return yield* new PaymentDeclined({ reason: "card_declined", message: declineMessages.testMode })
  }
  const id = yield* makeId
  return { paymentMethod: `pm_test_${outcome}_${id}`, brand: card.brand, last4: card.last4 } satisfies SavedCard
})

const chargeSaved = Effect.fn("PaymentSimulator.chargeSaved")(function* (request: SavedCardChargeRequest) {
  const { amount, currency, paymentMethod, reference } = request
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    return yield* Effect.dieMessage(`PaymentSimulator.chargeSaved: amount must be a positive integer, got ${amount}`)
  }
  yield* Effect.annotateCurrentSpan({
    "payment.amount": amount,
    "payment.currency": currency,
    "payment.reference": reference
  })
  const outcome = /^pm_test_([A-Za-z]+)_[0-9a-f]{24}$/.exec(paymentMethod)?.[1]
  switch (outcome) {
    case "succeeds": {
      const id = yield* makeId
      return { chargeId: `ch_${id}`, brand: "visa", last4: "4242" } satisfies Charge
    }
    case "insufficientFunds":
      return yield* new PaymentDeclined({ reason: "insufficient_funds", message: declineMessages.insufficient_funds })
    default:
      return yield* new PaymentDeclined({ reason: "card_declined", message: declineMessages.card_declined })
  }
})

/** The test-mode processor. It keeps no state: the checkout records the charge id, an allowance the saved card's token. */
export class PaymentSimulator extends Effect.Service<PaymentSimulator>()("PaymentSimulator", {
  succeed: { charge, saveCard, chargeSaved } as const
}) {
  /** The simulator as the payment provider. */
  static readonly provider: Layer.Layer<PaymentProvider> = Layer.effect(
    PaymentProvider,
    Effect.map(PaymentSimulator, (simulator): PaymentProviderShape => simulator)
  ).pipe(Layer.provide(PaymentSimulator.Default))
}
