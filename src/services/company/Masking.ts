import { parsePhoneNumberFromString } from "libphonenumber-js"
import type { Permission } from "../../domain/company/Company.js"
import type { CompanyOrderRecord } from "../../domain/company/Orders.js"

/**
 * Masking of personal data for reads with only a `:read:masked` permission
 * (docs/decisions/0033-scoping-and-masking.md): the shape of a value stays recognisable (`j***@example.com`,
 * `+1******4567`) while what identifies a person is hidden. Resource areas (gifts, orders, recipients) call these when
 * `readMode` says `masked`.
 */

/** `john.doe@example.com` → `j***@example.com`. */
export const maskEmail = (email: string): string => {
  const at = email.lastIndexOf("@")
  if (at <= 0) return "***"
  return `${email[0]}***${email.slice(at)}`
}

/** `+15551234567` → `+1******4567`: the country calling code and the last four digits stay. */
export const maskPhone = (phone: string): string => {
  const parsed = parsePhoneNumberFromString(phone)
  if (parsed !== undefined) {
    const national = parsed.nationalNumber
    return `+${parsed.countryCallingCode}${"*".repeat(Math.max(national.length - 4, 0))}${national.slice(-4)}`
  }
  const digits = phone.replace(/\D/g, "")
  return digits.length <= 4 ? "*".repeat(digits.length) : `${"*".repeat(digits.length - 4)}${digits.slice(-4)}`
}

/** `Jane van Dijk` → `J*** v** D***`: each word keeps its first letter and its length. */
export const maskName = (name: string): string =>
  name.replace(/\p{L}[\p{L}\p{M}'’-]*/gu, (word) => `${word[0]}${"*".repeat(word.length - 1)}`)

/** `221B Baker Street` → `**** B**** S*****`: numbers hidden entirely, words keep their first letter. */
export const maskStreet = (line: string): string =>
  line.replace(/[\p{L}\p{N}][\p{L}\p{M}\p{N}'’-]*/gu, (word) =>
    /^\p{N}/u.test(word) ? "*".repeat(word.length) : `${word[0]}${"*".repeat(word.length - 1)}`
  )

/** An order's shipping address as a company's reader sees it: street lines and postal code may be withheld. */
export interface ShownAddress {
  readonly address1: string | null
  readonly address2: string | null
  readonly city: string
  readonly provinceCode: string | null
  readonly postalCode: string | null
  readonly countryCode: string
}

/**
 * The one rule for what a company's key or member sees of an order's shipping address (docs/permissions.md
 * "Address privacy", docs/decisions/0071-recipient-address-privacy.md). An address its gift's campaign hides
 * (`addressHidden`) shows only its city, region and country, in every read mode, `:read:unmasked` included; any
 * other shows its street lines masked in `masked` mode and whole in `unmasked`. The fulfillment partner's booking
 * never goes through here: it always has the full address.
 */
export const shownAddress = (
  order: Pick<
    CompanyOrderRecord,
    "address1" | "address2" | "city" | "provinceCode" | "postalCode" | "countryCode" | "addressHidden"
  >,
  mode: "masked" | "unmasked"
): ShownAddress => {
  const place = { city: order.city, provinceCode: order.provinceCode, countryCode: order.countryCode }
  if (order.addressHidden) return { address1: null, address2: null, ...place, postalCode: null }
  const mask = mode === "masked"
  return {
    address1: mask ? maskStreet(order.address1) : order.address1,
    address2: order.address2 === null ? null : mask ? maskStreet(order.address2) : order.address2,
    ...place,
    postalCode: order.postalCode
  }
}

export type ReadMode = "unmasked" | "masked" | "none"

/** How a key may read a domain's personal data: `unmasked` wins over `masked`; neither is no access. */
export const readMode = (
  permissions: ReadonlyArray<Permission>,
  domain: "gifts" | "orders" | "recipients"
): ReadMode =>
  permissions.includes(`${domain}:read:unmasked`)
    ? "unmasked"
    : permissions.includes(`${domain}:read:masked`)
      ? "masked"
      : "none"

/**
 * The read modes of a key's permissions, per resource with personal data (a key without a resource's read
 * permission sees it masked): worked out once per request by the API-key middleware.
 */
export const readModesOf = (permissions: ReadonlyArray<Permission>) => {
  const modeOf = (domain: "gifts" | "orders" | "recipients") =>
    readMode(permissions, domain) === "unmasked" ? ("unmasked" as const) : ("masked" as const)
  return { gifts: modeOf("gifts"), orders: modeOf("orders"), recipients: modeOf("recipients") }
}
