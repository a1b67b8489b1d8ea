import { describe, expect, it } from "@effect/vitest"
import { Either, Redacted } from "effect"
import fc from "fast-check"
import {
  type CardFieldError,
  type CardInput,
  cardMessages,
  type ValidCard,
  validateCard
} from "../../../src/domain/checkout/Cards.js"

const now = new Date("2026-05-15T12:00:00Z")
const good: CardInput = { number: "4242 4242 4242 4242", expiry: "12/30", cvc: "123", name: "Jane Doe" }

const errorsOf = (input: Partial<CardInput>, at: Date = now): ReadonlyArray<CardFieldError> =>
  Either.match(validateCard({ ...good, ...input }, at), { onLeft: (errors) => errors, onRight: () => [] })

const cardOf = (input: Partial<CardInput>, at: Date = now): ValidCard => {
  const result = validateCard({ ...good, ...input }, at)
  if (Either.isLeft(result)) throw new Error(`expected a valid card, got ${JSON.stringify(result.left)}`)
  return result.right
}

describe("validateCard", () => {
  /** [what, input, expected field errors]: every other field is valid. */
  const rejected: ReadonlyArray<readonly [string, Partial<CardInput>, ReadonlyArray<CardFieldError>]> = [
    ["empty number", { number: "" }, [{ field: "number", message: cardMessages.numberMissing }]],
    ["only spaces", { number: "   " }, [{ field: "number", message: cardMessages.numberMissing }]],
    ["Luhn failure", { number: "4242 4242 4242 4241" }, [{ field: "number", message: cardMessages.numberInvalid }]],
    ["Luhn failure (2)", { number: "4000000000000001" }, [{ field: "number", message: cardMessages.numberInvalid }]],
    [
      "transposed digits",
      { number: "4242 4242 4242 2442" },
      [{ field: "number", message: cardMessages.numberInvalid }]
    ],
    ["11 digits", { number: "4242 4242 424" }, [{ field: "number", message: cardMessages.numberInvalid }]],
    ["20 digits", { number: "4242 4242 4242 4242 0000" }, [{ field: "number", message: cardMessages.numberInvalid }]],
    ["a letter", { number: "4242 4242 4242 424a" }, [{ field: "number", message: cardMessages.numberInvalid }]],
    ["dots", { number: "4242.4242.4242.4242" }, [{ field: "number", message: cardMessages.numberInvalid }]],
    ["empty expiry", { expiry: " " }, [{ field: "expiry", message: cardMessages.expiryMissing }]],
    ["month 13", { expiry: "13/30" }, [{ field: "expiry", message: cardMessages.expiryInvalid }]],
    ["month 00", { expiry: "00/30" }, [{ field: "expiry", message: cardMessages.expiryInvalid }]],
    ["one-digit month", { expiry: "1/30" }, [{ field: "expiry", message: cardMessages.expiryInvalid }]],
    ["four-digit year", { expiry: "12/2030" }, [{ field: "expiry", message: cardMessages.expiryInvalid }]],
    ["words", { expiry: "next year" }, [{ field: "expiry", message: cardMessages.expiryInvalid }]],
    ["last month", { expiry: "04/26" }, [{ field: "expiry", message: cardMessages.expired }]],
    ["last year", { expiry: "12/25" }, [{ field: "expiry", message: cardMessages.expired }]],
    ["decades ahead", { expiry: "12/60" }, [{ field: "expiry", message: cardMessages.expiryTooFar }]],
    ["empty CVC", { cvc: "" }, [{ field: "cvc", message: cardMessages.cvcMissing }]],
    ["2-digit CVC", { cvc: "12" }, [{ field: "cvc", message: cardMessages.cvc3 }]],
    ["4-digit CVC on Visa", { cvc: "1234" }, [{ field: "cvc", message: cardMessages.cvc3 }]],
    ["letters in CVC", { cvc: "12a" }, [{ field: "cvc", message: cardMessages.cvc3 }]],
    [
      "3-digit CVC on Amex",
      { number: "3782 822463 10005", cvc: "123" },
      [{ field: "cvc", message: cardMessages.cvc4 }]
    ],
    [
      "3-digit CVC on Amex 37",
      { number: "371449635398431", cvc: "123" },
      [{ field: "cvc", message: cardMessages.cvc4 }]
    ],
    ["empty name", { name: "   " }, [{ field: "name", message: cardMessages.nameMissing }]],
    ["101-character name", { name: "a".repeat(101) }, [{ field: "name", message: cardMessages.nameTooLong }]],
    [
      "everything empty",
      { number: "", expiry: "", cvc: "", name: "" },
      [
        { field: "number", message: cardMessages.numberMissing },
        { field: "expiry", message: cardMessages.expiryMissing },
        { field: "cvc", message: cardMessages.cvcMissing },
        { field: "name", message: cardMessages.nameMissing }
      ]
    ],
    [
      "bad number and expired",
      { number: "1234 5678 9012 3456", expiry: "01/20" },
      [
        { field: "number", message: cardMessages.numberInvalid },
        { field: "expiry", message: cardMessages.expired }
      ]
    ]
  ]

  it.each(rejected)("rejects %s", (_what, input, expected) => {
    expect(errorsOf(input)).toEqual(expected)
  })

  /** [what, input, brand, last4, month, year, name]. */
  const accepted: ReadonlyArray<readonly [string, Partial<CardInput>, string, string, number, number, string]> = [
    ["Visa with spaces", {}, "visa", "4242", 12, 2030, "Jane Doe"],
    ["dashes", { number: "4242-4242-4242-4242" }, "visa", "4242", 12, 2030, "Jane Doe"],
    [
      "whitespace around every field",
      { number: "  4242 4242  4242 4242 ", expiry: " 05 / 26 ", cvc: " 123 ", name: "  Jane \t Doe  " },
      "visa",
      "4242",
      5,
      2026,
      "Jane Doe"
    ],
    ["MM / YY", { expiry: "07 / 27" }, "visa", "4242", 7, 2027, "Jane Doe"],
    ["MMYY", { expiry: "0727" }, "visa", "4242", 7, 2027, "Jane Doe"],
    ["this month", { expiry: "05/26" }, "visa", "4242", 5, 2026, "Jane Doe"],
    ["Mastercard 5…", { number: "5555 5555 5555 4444" }, "mastercard", "4444", 12, 2030, "Jane Doe"],
    ["Mastercard 2…", { number: "2223 0031 2200 3222" }, "mastercard", "3222", 12, 2030, "Jane Doe"],
    ["Amex with a 4-digit CVC", { number: "3782 822463 10005", cvc: "1234" }, "amex", "0005", 12, 2030, "Jane Doe"],
    ["other brand", { number: "6011 1111 1111 1117" }, "other", "1117", 12, 2030, "Jane Doe"],
    ["12 digits", { number: "4000 0000 0002" }, "visa", "0002", 12, 2030, "Jane Doe"],
    ["19 digits", { number: "4000 0000 0000 0000 006" }, "visa", "0006", 12, 2030, "Jane Doe"],
    ["100-character name", { name: "é".repeat(100) }, "visa", "4242", 12, 2030, "é".repeat(100)]
  ]

  it.each(accepted)("accepts %s", (_what, input, brand, last4, month, year, name) => {
    const card = cardOf(input)
    expect({
      brand: card.brand,
      last4: card.last4,
      expMonth: card.expMonth,
      expYear: card.expYear,
      name: card.name
    }).toEqual({ brand, last4, expMonth: month, expYear: year, name })
  })

  it("a card is valid through the last moment of its expiry month, in UTC", () => {
    expect(errorsOf({ expiry: "05/26" }, new Date("2026-05-31T23:59:59.999Z"))).toEqual([])
    expect(errorsOf({ expiry: "05/26" }, new Date("2026-06-01T00:00:00Z"))).toEqual([
      { field: "expiry", message: cardMessages.expired }
    ])
    // A UTC+14 evening on 1 June is still 31 May in UTC.
    expect(errorsOf({ expiry: "05/26" }, new Date("2026-06-01T09:00:00+14:00"))).toEqual([])
  })

  it("keeps the full number only in a Redacted: it never prints or serialises", () => {
    const card = cardOf({})
    expect(Redacted.value(card.number)).toBe("4242424242424242")
    expect(JSON.stringify(card)).not.toMatch(/4242424242424242/)
    expect(String(card.number)).not.toMatch(/4242/)
  })

  /** An independent Luhn check digit for `payload` (the digits before it). */
  const checkDigit = (payload: string) => {
    let sum = 0
    const reversed = [...payload].reverse()
    reversed.forEach((c, i) => {
      const d = Number(c) * (i % 2 === 0 ? 2 : 1)
      sum += d > 9 ? d - 9 : d
    })
    return (10 - (sum % 10)) % 10
  }

  const payload = fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: 11, maxLength: 18 })
  const separators = fc.array(fc.constantFrom("", "", " ", "-"), { minLength: 19, maxLength: 19 })
  const format = (digits: string, seps: ReadonlyArray<string>) =>
    [...digits].map((d, i) => (i > 0 && i % 4 === 0 ? seps[i] : "") + d).join("")

  it("property: any 12–19 digit number with a wrong check digit is rejected, however it is spaced", () => {
    fc.assert(
      fc.property(payload, fc.integer({ min: 1, max: 9 }), separators, (digits, offset, seps) => {
        const wrong = (checkDigit(digits) + offset) % 10
        const result = validateCard({ ...good, number: format(digits + wrong, seps) }, now)
        expect(Either.isLeft(result)).toBe(true)
        const errors = Either.isLeft(result) ? result.left : []
        expect(errors.filter((e) => e.field === "number")).toEqual([
          { field: "number", message: cardMessages.numberInvalid }
        ])
      }),
      { numRuns: 500 }
    )
  })

  it("property: the right check digit passes the number check", () => {
    fc.assert(
      fc.property(payload, separators, (digits, seps) => {
        const errors = errorsOf({ number: format(digits + checkDigit(digits), seps), cvc: "1234" })
        // Amex numbers want 4 CVC digits and everything else 3: only the number must not be at fault.
        expect(errors.filter((e) => e.field === "number")).toEqual([])
      }),
      { numRuns: 500 }
    )
  })
})
