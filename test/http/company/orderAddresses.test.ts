import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createCompany, getWith, keyHeaders, postWith, raiseLimits, v2Keys } from "../../support/company.js"
import { RibbonTestServer } from "../../support/http.js"

/**
 * v3 address tools over real HTTP (docs/decisions/0040-v3-order-addresses.md, spec "Versioning" 3.1). The orders group
 * serves `/orders/:orderId` (and its `/cancel`, `/simulate`) beside these static paths: every 200 here also shows
 * that the static routes win over the parameter.
 */

const validate = "/public-api/v3/orders/addresses/validate"
const autocomplete = "/public-api/v3/orders/addresses/autocomplete"

const empireState = {
  address1: "350 5th Ave",
  address2: "Floor 86",
  city: "New York",
  provinceCode: "NY",
  postalCode: "10118",
  countryCode: "US"
}

/** The v3 400 envelope with one failing field. */
const invalid = (path: string, message: string) => ({
  message: `${path}: ${message}`,
  errorCode: "400_PBLC_001",
  errors: [{ path, errorCode: "400_PBLC_001", message }]
})

/** A company whose limits never bite, and a second key holding only `permissions`. */
const companyWithKey = (permissions: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const company = yield* createCompany()
    yield* raiseLimits(company.companyId)
    const created = yield* postWith(v2Keys, { name: "scoped", permissions }, keyHeaders(company.apiKey))
    expect(created.status).toBe(200)
    return { ...company, scopedKey: created.body.apiKey as string }
  })

const twoLetters = "must match the pattern ^[A-Za-z]{2}$"

const query = (params: Record<string, string>) => `${autocomplete}?${new URLSearchParams(params).toString()}`

describe("order address tools (/public-api/v3/orders/addresses)", () => {
  it.layer(RibbonTestServer, { timeout: 120_000 })((it) => {
    it.effect("validate: a complete address is verified, shown as normalised", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const verified = yield* postWith(validate, { address: empireState }, keyHeaders(company.apiKey))
        expect(verified.status).toBe(200)
        expect(verified.body).toEqual({
          data: {
            result: "verified",
            message: "Address verified: 350 5th Ave, Floor 86, New York, NY 10118, United States of America"
          }
        })

        // Case, spacing, a state's name and an empty address2 are normalised before the checks.
        const loose = yield* postWith(
          validate,
          {
            address: {
              address1: " 350  5th Ave ",
              address2: null,
              city: "new york",
              provinceCode: "New York",
              postalCode: "10118",
              countryCode: "us"
            }
          },
          keyHeaders(company.apiKey)
        )
        expect(loose.status).toBe(200)
        expect(loose.body).toEqual({
          data: {
            result: "verified",
            message: "Address verified: 350 5th Ave, new york, NY 10118, United States of America"
          }
        })

        // Where a country has neither provinces nor postal codes, neither is needed.
        const hongKong = yield* postWith(
          validate,
          { address: { address1: "1 Queen's Road Central", city: "Hong Kong", countryCode: "HK" } },
          keyHeaders(company.apiKey)
        )
        expect(hongKong.body.data.result).toBe("verified")
      })
    )

    it.effect("validate: what cannot be confirmed is ambiguous, every problem named in the message", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const cases: ReadonlyArray<[Record<string, unknown>, string]> = [
          [{ ...empireState, provinceCode: "CA", postalCode: "10001" }, "ZIP 10001 is in NY, not CA"],
          [
            { ...empireState, city: "Boston", postalCode: "10001" },
            "City Boston does not match ZIP 10001 (New York, NY)"
          ],
          [
            { address1: "Pariser Platz 1", city: "Berlin", postalCode: "1234", countryCode: "DE" },
            "Postal code 1234 is not a valid format for Germany (expected 5 digits)"
          ],
          [{ address1: "1-1 Chiyoda", city: "Tokyo", countryCode: "JP" }, "postalCode is missing (required in Japan)"],
          // Two letters, but no country: the shape is right, the address cannot be delivered to.
          [
            { address1: "1 Main St", city: "Nowhere", countryCode: "ZZ" },
            "Country code ZZ is not a known ISO 3166-1 country code"
          ],
          // Blank after trimming: present for the shape, missing for delivery.
          [{ ...empireState, address1: "   " }, "address1 is missing"],
          [
            { address1: "1 Main St", city: "Springfield", countryCode: "US", postalCode: "99999" },
            "ZIP 99999 is not a known US ZIP code; provinceCode is missing (a state is required in United States of America)"
          ]
        ]
        for (const [address, message] of cases) {
          const response = yield* postWith(validate, { address }, keyHeaders(company.apiKey))
          expect(response.status, message).toBe(200)
          expect(response.body, message).toEqual({ data: { result: "ambiguous", message } })
        }
      })
    )

    it.effect("validate: the 3.0 top-level country, and every bound, are a 400 naming the field", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        yield* raiseLimits(company.companyId)
        const headers = keyHeaders(company.apiKey)

        // 3.0 took the country beside the address; 3.1 refuses it by name.
        const old = yield* postWith(validate, { address: empireState, country: "US" }, headers)
        expect(old.status).toBe(400)
        expect(old.body).toEqual(invalid("country", 'is unexpected, expected: "address"'))

        const long = (n: number, c = "x") => c.repeat(n)
        const atMost = (n: number, _value: string) => `must be at most ${n} characters`
        const cases: ReadonlyArray<[unknown, string, string]> = [
          [{}, "address", "is missing"],
          [{ address: "350 5th Ave, New York" }, "address", "must be an object"],
          [{ address: { ...empireState, address1: undefined } }, "address.address1", "is missing"],
          [{ address: { ...empireState, address1: null } }, "address.address1", "must be a string"],
          [{ address: { ...empireState, address1: "" } }, "address.address1", "must not be empty"],
          [{ address: { ...empireState, address1: long(201) } }, "address.address1", atMost(200, long(201))],
          [{ address: { ...empireState, address2: long(201) } }, "address.address2", atMost(200, long(201))],
          [{ address: { ...empireState, city: undefined } }, "address.city", "is missing"],
          [{ address: { ...empireState, city: long(101) } }, "address.city", atMost(100, long(101))],
          [{ address: { ...empireState, provinceCode: long(11) } }, "address.provinceCode", atMost(10, long(11))],
          [{ address: { ...empireState, postalCode: long(21, "1") } }, "address.postalCode", atMost(20, long(21, "1"))],
          [{ address: { ...empireState, postalCode: 10118 } }, "address.postalCode", "must be a string"],
          [{ address: { ...empireState, countryCode: undefined } }, "address.countryCode", "is missing"],
          [{ address: { ...empireState, countryCode: "USA" } }, "address.countryCode", twoLetters],
          [{ address: { ...empireState, countryCode: "U1" } }, "address.countryCode", twoLetters],
          // Strict inside the address too: 3.0's name for the country is not an alias.
          [
            { address: { ...empireState, country: "US" } },
            "address.country",
            'is unexpected, expected: "address1" | "address2" | "city" | "provinceCode" | "postalCode" | "countryCode"'
          ]
        ]
        for (const [body, path, message] of cases) {
          const response = yield* postWith(validate, body, headers)
          expect(response.status, JSON.stringify(body)).toBe(400)
          expect(response.body, JSON.stringify(body)).toEqual(invalid(path, message))
        }
      })
    )

    it.effect("autocomplete: suggestions in the create-order address shape; the country in either case", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const headers = keyHeaders(company.apiKey)
        const zips = yield* getWith(query({ "filter[country]": "us", "filter[address]": "1000" }), headers)
        expect(zips.status).toBe(200)
        expect(zips.body.data[0]).toEqual({
          address1: null,
          address2: null,
          city: "New York",
          provinceCode: "NY",
          postalCode: "10001",
          countryCode: "US"
        })
        expect(zips.body.data.map((s: any) => s.postalCode)).toEqual([
          "10001",
          "10002",
          "10003",
          "10004",
          "10005",
          "10006",
          "10007",
          "10008",
          "10009"
        ])
        expect(zips.body.links).toEqual({
          self: `${autocomplete}?filter%5Bcountry%5D=us&filter%5Baddress%5D=1000&page%5Bnumber%5D=1&page%5Bsize%5D=10`,
          next: null,
          prev: null
        })
        const upper = yield* getWith(query({ "filter[country]": "US", "filter[address]": "1000" }), headers)
        expect(upper.body.data).toEqual(zips.body.data)

        // A street before the place becomes address1.
        const street = yield* getWith(
          query({ "filter[country]": "GB", "filter[address]": "10 Downing Street, London" }),
          headers
        )
        expect(street.body.data[0]).toEqual({
          address1: "10 Downing Street",
          address2: null,
          city: "London",
          provinceCode: null,
          postalCode: null,
          countryCode: "GB"
        })
        const nothing = yield* getWith(query({ "filter[country]": "GB", "filter[address]": "Xqzvw" }), headers)
        expect(nothing.status).toBe(200)
        expect(nothing.body.data).toEqual([])
      })
    )

    it.effect("autocomplete: a suggestion with a street added validates as verified", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const headers = keyHeaders(company.apiKey)
        const suggested = yield* getWith(query({ "filter[country]": "US", "filter[address]": "10118" }), headers)
        expect(suggested.body.data).toHaveLength(1)
        const address = { ...suggested.body.data[0], address1: "350 5th Ave" }
        const checked = yield* postWith(validate, { address }, headers)
        expect(checked.status).toBe(200)
        expect(checked.body.data.result).toBe("verified")
      })
    )

    it.effect("autocomplete: page[size] and page[number] slice the suggestions, with links", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const headers = keyHeaders(company.apiKey)
        const all = yield* getWith(query({ "filter[country]": "US", "filter[address]": "Spri" }), headers)
        expect(all.body.data).toHaveLength(10)
        const first = yield* getWith(
          query({ "filter[country]": "US", "filter[address]": "Spri", "page[size]": "4" }),
          headers
        )
        const seen = [...first.body.data]
        let next: string | null = first.body.links.next
        while (next !== null) {
          const page: any = yield* getWith(next, headers)
          expect(page.status).toBe(200)
          seen.push(...page.body.data)
          next = page.body.links.next
        }
        expect(seen).toEqual(all.body.data)
      })
    )

    it.effect(
      "autocomplete: filter[country] is required and a country, filter[address] 4–128 characters; nothing else",
      () =>
        Effect.gen(function* () {
          const company = yield* createCompany()
          yield* raiseLimits(company.companyId)
          const headers = keyHeaders(company.apiKey)

          const noCountry = yield* getWith(query({ "filter[address]": "London" }), headers)
          expect(noCountry.status).toBe(400)
          expect(noCountry.body).toEqual(invalid("filter[country]", "is missing"))

          const unknown = yield* getWith(query({ "filter[country]": "ZZ", "filter[address]": "London" }), headers)
          expect(unknown.status).toBe(400)
          expect(unknown.body).toEqual(
            invalid("filter[country]", "Country ZZ is not a known ISO 3166-1 alpha-2 country code")
          )

          const pattern = (_value: string) => twoLetters
          const london = { "filter[country]": "GB", "filter[address]": "London" }
          const cases: ReadonlyArray<[Record<string, string>, string, string]> = [
            [{ ...london, "filter[country]": "GBR" }, "filter[country]", pattern("GBR")],
            [{ ...london, "filter[country]": "G1" }, "filter[country]", pattern("G1")],
            [{ ...london, "filter[country]": "" }, "filter[country]", pattern("")],
            [{ "filter[country]": "GB" }, "filter[address]", "is missing"],
            [{ ...london, "filter[address]": "Lon" }, "filter[address]", "must be at least 4 characters"],
            [{ ...london, "filter[address]": "x".repeat(129) }, "filter[address]", "must be at most 128 characters"],
            // The v3 parser refuses what the operation does not take: 3.0's `country`, other filters, bad pages.
            [{ ...london, country: "GB" }, "country", 'Unknown query parameter "country".'],
            [
              { ...london, "filter[city]": "London" },
              "filter[city]",
              'Unknown filter "city"; this operation accepts filter[country], filter[address].'
            ],
            [{ ...london, "page[size]": "11" }, "page[size]", "Expected an integer from 1 to 10."],
            [{ ...london, "page[cursor]": "abc" }, "page[cursor]", "This list pages with page[number]."]
          ]
          for (const [params, path, message] of cases) {
            const response = yield* getWith(query(params), headers)
            expect(response.status, JSON.stringify(params)).toBe(400)
            expect(response.body, JSON.stringify(params)).toEqual(invalid(path, message))
          }
          const edges = [
            { "filter[country]": "GB", "filter[address]": "Lond" },
            { "filter[country]": "GB", "filter[address]": "x".repeat(128) }
          ]
          for (const params of edges) expect((yield* getWith(query(params), headers)).status).toBe(200)
        })
    )

    it.effect("both need a key (401) holding orders:create (403)", () =>
      Effect.gen(function* () {
        const company = yield* companyWithKey(["products:read"])
        const list = query({ "filter[country]": "GB", "filter[address]": "London" })

        const missing = yield* postWith(validate, { address: empireState }, {})
        expect(missing.status).toBe(401)
        expect(missing.body).toEqual({
          status: 401,
          errorCode: "401_KEYS_001",
          message: "The X-Api-Key header is required."
        })
        const unknownKey = yield* getWith(list, keyHeaders("0123456789abcdef01234567"))
        expect(unknownKey.status).toBe(401)
        expect(unknownKey.body).toEqual({
          status: 401,
          errorCode: "401_KEYS_002",
          message: "The API key is not valid."
        })

        const denied = {
          status: 403,
          errorCode: "403_KEYS_001",
          message: "This API key lacks the orders:create permission."
        }
        const refusedValidate = yield* postWith(validate, { address: empireState }, keyHeaders(company.scopedKey))
        expect(refusedValidate.status).toBe(403)
        expect(refusedValidate.body).toEqual(denied)
        const refusedList = yield* getWith(list, keyHeaders(company.scopedKey))
        expect(refusedList.status).toBe(403)
        expect(refusedList.body).toEqual(denied)

        // Draws on the marketplace read bucket.
        const allowed = yield* getWith(list, keyHeaders(company.apiKey))
        expect(allowed.status).toBe(200)
        expect(allowed.headers["ratelimit-policy"]).toContain('"marketplace:read"')
      })
    )
  })
})
