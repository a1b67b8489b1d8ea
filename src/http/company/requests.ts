import { Effect, Option } from "effect"
import type { AccountScope } from "../../domain/company/Company.js"
import { PermissionDenied } from "../../domain/company/Errors.js"
import type { GiftRecipientInput, GiftStatus } from "../../domain/company/Gifts.js"
import { Accounts } from "../../services/company/Accounts.js"
import type { GiftClaim, GiftListQuery } from "../../services/company/Gifts.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import type { Caller } from "./ApiKeyAuth.js"
import { type ClaimGiftV2, expansionPermissions, type giftExpansions } from "./GiftsApi.js"

/**
 * What the company API's requests ask for, read the same way by every handler that takes them: the scope of a
 * v2 list, a v2 gift's recipient and claim as the Gifts service takes them, a gift list's filters and a gift read's expansions.
 */

type GiftExpansion = (typeof giftExpansions)[number]

/**
 * The scope of a v2 list: the caller's, narrowed to the `accountId` query parameter when there is one (404
 * when the caller does not reach it), as docs/decisions/0033-scoping-and-masking.md has v2 narrow.
 */
export const listScope = (caller: Caller, accountId: string | undefined) =>
  Effect.gen(function* () {
    if (accountId === undefined) return caller.scope
    const account = yield* Effect.flatMap(Accounts, (accounts) => accounts.find(caller.scope, accountId))
    return yield* Effect.map(CompanyPolicy, (policy): AccountScope => policy.scopeOf(caller.key, Option.some(account)))
  })

/** A v2 claim (`POST /v2/gifts/{id}/claim`, `POST /v2/orders`, the gift page's form) as the service takes it. */
export const claimOf = (claim: typeof ClaimGiftV2.Type): GiftClaim => {
  const { orderRecipient: who } = claim
  return {
    variantId: claim.variantId.toLowerCase(),
    recipient: { firstName: who.firstName, lastName: who.lastName, email: who.email, phone: who.phone },
    address: {
      address1: who.address.addressLine1,
      address2: who.address.addressLine2,
      city: who.address.city,
      provinceCode: who.address.state,
      postalCode: who.address.zipcode,
      countryCode: who.country
    }
  }
}

/** A recipient of `POST /v2/gifts` or `POST /v2/orders` as the Gifts service takes it. */
export const giftRecipientOf = (recipient: {
  readonly firstname: string
  readonly lastname: string
  readonly email?: string | undefined
  readonly phone?: string | undefined
  readonly externalId?: string | undefined
  readonly key: string
}): GiftRecipientInput => ({
  firstname: recipient.firstname,
  lastname: recipient.lastname,
  email: recipient.email ?? null,
  phone: recipient.phone ?? null,
  externalId: recipient.externalId ?? null,
  key: recipient.key
})

/** `expand[]` as given: one value or several. */
export const expansionsOf = (
  expand: GiftExpansion | ReadonlyArray<GiftExpansion> | undefined
): ReadonlyArray<GiftExpansion> => (expand === undefined ? [] : typeof expand === "string" ? [expand] : expand)

/** Each expansion asked for needs the expanded resource's read permission (403 otherwise). */
export const canExpand = (caller: Caller, expand: ReadonlyArray<GiftExpansion>) =>
  Effect.flatMap(CompanyPolicy, (policy) =>
    Effect.forEach(
      expand,
      (expansion) => {
        const allowed: Effect.Effect<void, PermissionDenied> = policy.canPerform(
          caller.key,
          expansionPermissions[expansion]
        )
        return allowed.pipe(
          Effect.mapError(
            (denied) =>
              new PermissionDenied({
                message: `expand[]=${expansion} needs the ${denied.permission} permission, which this API key lacks.`,
                permission: denied.permission
              })
          )
        )
      },
      { discard: true }
    )
  )

/** A comma-separated filter as its values (none when absent or empty). */
const setOf = (text: string | undefined) =>
  (text ?? "")
    .split(",")
    .map((value) => value.trim())
    .filter((value) => value !== "")

/** `GET /v2/gifts`'s filters (checked by the API) and paging as the Gifts service takes them. */
export const giftListQueryOf = (
  params: {
    readonly statuses?: string | undefined
    readonly campaignIds?: string | undefined
    readonly keys?: string | undefined
    readonly createdBefore?: string | undefined
    readonly createdAfter?: string | undefined
  },
  skip: number,
  limit: number
): GiftListQuery => ({
  skip,
  limit,
  statuses: setOf(params.statuses) as ReadonlyArray<GiftStatus>,
  campaignIds: setOf(params.campaignIds),
  keys: setOf(params.keys),
  createdBefore: params.createdBefore === undefined ? undefined : new Date(params.createdBefore),
  createdAfter: params.createdAfter === undefined ? undefined : new Date(params.createdAfter)
})
