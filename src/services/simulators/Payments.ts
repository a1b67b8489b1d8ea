import { Data, Effect, Either, Redacted } from "effect"
import { makeId } from "../../domain/platform/Ids.js"

/**
 * Card payments for the hosted payment page (docs/decisions/0026-hosted-payment-page.md). The processor is simulated in
 * test mode: only the test cards below do anything, and no real card is ever charged.
 *
 * - `validateCard` checks what the person typed (pure, so the page can re-render with field errors);
 * - `Payments.charge` takes a validated card and either returns a charge or fails with `PaymentDeclined`.
 *
 * The full card number lives only inside a `Redacted` in `ValidCard` (it prints and serialises as
 * `<redacted>`) and is dropped after charging: a `Charge` keeps the brand and last four digits only.
 */

/** What the payment form posts, as typed: field names match the form's input names. */
export interface CardInput {
  readonly number: string
  readonly expiry: string
  readonly cvc: string
  readonly name: string
}

export type CardField = keyof CardInput

/** One problem with one field, in words the person paying can act on. */
export interface CardFieldError {
  readonly field: CardField
  readonly message: string
}

export type CardBrand = "visa" | "mastercard" | "amex" | "other"

export interface ValidCard {
  /** Digits only; never logged, never stored, never echoed back. */
  readonly number: Redacted.Redacted<string>
  readonly brand: CardBrand
  readonly last4: string
  /** 1 to 12. */
  readonly expMonth: number
  /** Four digits, e.g. 2030. */
  readonly expYear: number
  /** Trimmed, inner whitespace collapsed. */
  readonly name: string
}

export const cardMessages = {
  numberMissing: "Enter your card number",
  numberInvalid: "Enter a valid card number",
  expiryMissing: "Enter the card's expiry date",
  expiryInvalid: "Enter the expiry date as MM/YY, for example 04/29",
  expiryTooFar: "Enter a valid expiry date",
  expired: "The card has expired",
  cvcMissing: "Enter the card's security code (CVC)",
  cvc3: "Enter the 3-digit security code from the back of your card",
  cvc4: "Enter the 4-digit security code from the front of your card",
  nameMissing: "Enter the name as it appears on the card",
  nameTooLong: "The name on the card must be 100 characters or fewer"
} as const

/** An expiry further ahead than this many years is taken for a typing mistake. */
export const MAX_EXPIRY_YEARS_AHEAD = 20

/** The Luhn (mod 10) check over a string of digits. */
export const luhnValid = (digits: string): boolean => {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return digits.length > 0 && sum % 10 === 0
}

/** Visa 4…; Amex 34/37; Mastercard 51–55 and 2221–2720; anything else is `other`. */
export const cardBrand = (digits: string): CardBrand => {
  if (digits.startsWith("4")) return "visa"
  if (/^3[47]/.test(digits)) return "amex"
  const two = Number(digits.slice(0, 2))
  const four = Number(digits.slice(0, 4))
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return "mastercard"
  return "other"
}

/** Removes the spaces and dashes people type between digit groups. */
export const normalizeCardNumber = (number: string): string => number.replace(/[\s-]/g, "")

/** `MM/YY`, `MM / YY` or `MMYY` (surrounding whitespace forgiven); the year is 20YY. */
const parseExpiry = (expiry: string): { readonly month: number; readonly year: number } | undefined => {
  const match = /^(\d{2})\s*\/\s*(\d{2})$/.exec(expiry.trim()) ?? /^(\d{2})(\d{2})$/.exec(expiry.trim())
  if (match === null) return undefined
  const month = Number(match[1])
  if (month < 1 || month > 12) return undefined
  return { month, year: 2000 + Number(match[2]) }
}

/**
 * Checks the payment form. Every field is checked, so the page can show every problem at once. A card is
 * valid through the last moment of its expiry month, in UTC.
 */
export const validateCard = (input: CardInput, now: Date): Either.Either<ValidCard, ReadonlyArray<CardFieldError>> => {
  const errors: Array<CardFieldError> = []

  const digits = normalizeCardNumber(input.number)
  if (digits === "") errors.push({ field: "number", message: cardMessages.numberMissing })
  else if (!/^\d{12,19}$/.test(digits) || !luhnValid(digits)) {
    errors.push({ field: "number", message: cardMessages.numberInvalid })
  }

  const expiry = parseExpiry(input.expiry)
  if (input.expiry.trim() === "") errors.push({ field: "expiry", message: cardMessages.expiryMissing })
  else if (expiry === undefined) errors.push({ field: "expiry", message: cardMessages.expiryInvalid })
  else if (now.getTime() >= Date.UTC(expiry.year, expiry.month, 1)) {
    // Date.UTC's month is 0-based, so `expiry.month` is the first moment of the following month.
    errors.push({ field: "expiry", message: cardMessages.expired })
  } else if (expiry.year > now.getUTCFullYear() + MAX_EXPIRY_YEARS_AHEAD) {
    errors.push({ field: "expiry", message: cardMessages.expiryTooFar })
  }

  const cvc = input.cvc.trim()
  const amex = /^3[47]/.test(digits)
  if (cvc === "") errors.push({ field: "cvc", message: cardMessages.cvcMissing })
  else if (!(amex ? /^\d{4}$/ : /^\d{3}$/).test(cvc)) {
    errors.push({ field: "cvc", message: amex ? cardMessages.cvc4 : cardMessages.cvc3 })
  }

  const name = input.name.trim().replace(/\s+/g, " ")
  if (name === "") errors.push({ field: "name", message: cardMessages.nameMissing })
  else if ([...name].length > 100) errors.push({ field: "name", message: cardMessages.nameTooLong })

  if (errors.length > 0 || expiry === undefined) return Either.left(errors)
  return Either.right({
    number: Redacted.make(digits),
    brand: cardBrand(digits),
    last4: digits.slice(-4),
    expMonth: expiry.month,
    expYear: expiry.year,
    name
  })
}

// ---------------------------------------------------------------------------------------------------------
// The simulated processor

export type DeclineReason = "card_declined" | "insufficient_funds"

/** The processor refused the card. Rendered on the payment page only; the checkout stays `pending_payment`. */
export class PaymentDeclined extends Data.TaggedError("PaymentDeclined")<{
  readonly reason: DeclineReason
  /** One sentence for the person paying. */
  readonly message: string
}> {}

/** A successful charge: what may be kept once the card number is gone. */
export interface Charge {
  /** `ch_` and 24 hex characters. */
  readonly chargeId: string
  readonly brand: CardBrand
  readonly last4: string
}

export interface ChargeRequest {
  readonly card: ValidCard
  /** Minor units of `currency`; a positive integer. */
  readonly amount: number
  /** ISO 4217, upper case. */
  readonly currency: string
  /** The merchant's reference, e.g. the checkout id. */
  readonly reference: string
}

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

const charge = Effect.fn("Payments.charge")(function* (request: ChargeRequest) {
  const { amount, card, currency, reference } = request
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    return yield* Effect.dieMessage(`Payments.charge: amount must be a positive integer, got ${amount}`)
  }
  if (!/^[A-Z]{3}$/.test(currency)) {
    return yield* Effect.dieMessage(`Payments.charge: currency must be an ISO 4217 code, got ${currency}`)
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

/** The test-mode processor. It keeps no state: the checkout records the charge id. */
export class Payments extends Effect.Service<Payments>()("Payments", {
  succeed: { charge } as const
}) {}
