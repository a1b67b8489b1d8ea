import { describe, expect, it } from "@effect/vitest"
import { maskStreet, shownAddress } from "../../../src/domain/company/Addresses.js"
import { maskEmail, maskName, maskPhone, readMode } from "../../../src/services/company/Masking.js"

describe("Masking", () => {
  it("masks e-mail addresses, keeping the first letter and the domain", () => {
    expect(maskEmail("john.doe@example.com")).toBe("j***@example.com")
    expect(maskEmail("a@b.co")).toBe("a***@b.co")
    expect(maskEmail("not-an-email")).toBe("***")
  })

  it("masks phone numbers, keeping the country code and the last four digits", () => {
    expect(maskPhone("+15551234567")).toBe("+1******4567")
    expect(maskPhone("+1 (555) 123-4567")).toBe("+1******4567")
    expect(maskPhone("+447911123456")).toBe("+44******3456")
    expect(maskPhone("0123")).toBe("****")
    expect(maskPhone("12-34-56-78")).toBe("****5678")
  })

  it("masks names and street lines word by word", () => {
    expect(maskName("Jane Doe")).toBe("J*** D**")
    expect(maskName("Zoë O'Brien-Smith")).toBe("Z** O************")
    expect(maskStreet("221B Baker Street")).toBe("**** B**** S*****")
    expect(maskStreet("Apt. 4, 12 Rue de la Paix")).toBe("A**. *, ** R** d* l* P***")
  })

  it("reads unmasked only with :read:unmasked, masked with :read:masked, nothing otherwise", () => {
    expect(readMode(["orders:read:masked", "orders:read:unmasked"], "orders")).toBe("unmasked")
    expect(readMode(["orders:read:masked"], "orders")).toBe("masked")
    expect(readMode(["gifts:read:unmasked"], "orders")).toBe("none")
  })

  it("shows a hidden address's city, region and country only, in either read mode", () => {
    const address = {
      address1: "221B Baker Street",
      address2: "Flat 2",
      city: "London",
      provinceCode: "LND",
      postalCode: "NW1 6XE",
      countryCode: "GB"
    }
    const place = { city: "London", provinceCode: "LND", countryCode: "GB" }
    for (const mode of ["masked", "unmasked"] as const) {
      expect(shownAddress({ ...address, addressHidden: true }, mode)).toEqual({
        address1: null,
        address2: null,
        postalCode: null,
        ...place
      })
    }
    expect(shownAddress({ ...address, addressHidden: false }, "unmasked")).toEqual(address)
    expect(shownAddress({ ...address, addressHidden: false }, "masked")).toEqual({
      ...address,
      address1: "**** B**** S*****",
      address2: "F*** *"
    })
  })
})
