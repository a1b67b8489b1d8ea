import { Either, Redacted } from "effect"

/**
 * The card a person types on the hosted payment page, and its check (pure, so the page can re-render with
 * field errors). The full card number lives only inside a `Redacted` in `ValidCard` (it prints and
 * serialises as `<redacted>`); the payment provider charges it, and a charge keeps the brand and last four
 * digits only.
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
