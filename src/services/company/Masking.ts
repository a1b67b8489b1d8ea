import { parsePhoneNumberFromString } from "libphonenumber-js"
import type { Permission } from "../../domain/company/Company.js"

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
