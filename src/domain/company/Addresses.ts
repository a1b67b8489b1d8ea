import type { CompanyOrderRecord } from "./Orders.js"

/**
 * What a company's key or member sees of an order's shipping address: the street masked for a `:read:masked`
 * reader (docs/decisions/0033-scoping-and-masking.md), and only the city, region and country where the order's
 * campaign hides addresses (docs/decisions/0071-recipient-address-privacy.md). Pure, so that the API definition
 * can generate docs/permissions.md's table from the same rule.
 */

/** `221B Baker Street` → `**** B**** S*****`: numbers hidden entirely, words keep their first letter. */
export const maskStreet = (line: string): string =>
  line.replace(/[\p{L}\p{N}][\p{L}\p{M}\p{N}'’-]*/gu, (word) =>
    /^\p{N}/u.test(word) ? "*".repeat(word.length) : `${word[0]}${"*".repeat(word.length - 1)}`
  )

/** An order's shipping address as a company's reader sees it: street lines and postal code may be withheld. */
export interface ShownAddress {
  readonly address1: string | null
  readonly address2: string | null
  readonly city: string | null
  readonly provinceCode: string | null
  readonly postalCode: string | null
  readonly countryCode: string
}

/**
 * The one rule for what a company's key or member sees of an order's shipping address (docs/permissions.md
 * "Address privacy", docs/decisions/0071-recipient-address-privacy.md). An address its gift's campaign hides
 * (`addressHidden`) shows only its city, region and country, in every read mode, `:read:unmasked` included; any
 * other shows its street lines masked in `masked` mode and whole in `unmasked`. A digital order has only its country
 * (its street and city are null). The fulfillment partner's booking never goes through here: it always has the full
 * address.
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
    address1: order.address1 === null ? null : mask ? maskStreet(order.address1) : order.address1,
    address2: order.address2 === null ? null : mask ? maskStreet(order.address2) : order.address2,
    ...place,
    postalCode: order.postalCode
  }
}
