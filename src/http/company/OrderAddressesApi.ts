import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { identity, Option, type ParseResult, Schema } from "effect"
import {
  Address1,
  Address2,
  AddressCountryCode,
  AddressValidationResult,
  City,
  PostalCode,
  ProvinceCode
} from "../../domain/catalog/Address.js"
import { plainIssues } from "../../domain/platform/IssueMessages.js"
import { Links, strictBody, type V3QuerySpec, v3UrlParams } from "../V3Requests.js"
import { ApiKeyAuthV3, Operation } from "./ApiKeyAuth.js"

/**
 * Address tools for order placement, version 3 (spec "Versioning" 3.1; docs/decisions/0040-v3-order-addresses.md;
 * docs/company-api.md "Address tools"), over the Addresses service: validation of a create-order address, and
 * autocomplete whose suggestions come in that same shape.
 */

/** A union's issue as the issue of its first member, the field's own schema (not one issue per member). */
const firstMemberIssue = (issue: ParseResult.ParseIssue) => {
  const first = issue._tag === "Composite" && Array.isArray(issue.issues) ? issue.issues[0] : issue
  return { message: plainIssues(first)[0]?.message ?? "is not valid", override: true }
}

/**
 * Optional, with null read as absent (a suggestion's or a read's null fields can be sent back as they are).
 * A bad value gets one issue, the string schema's, rather than one per alternative ("Expected null" …).
 */
const optionalOrNull = (schema: Schema.Schema<string>) =>
  Schema.optionalToOptional(Schema.NullOr(schema).annotations({ message: firstMemberIssue }), Schema.String, {
    decode: Option.filter((value): value is string => value !== null),
    encode: identity
  })

/**
 * The create-order address (`shippingAddress`): street, city and country are required; `address2`,
 * `provinceCode` and `postalCode` may be absent or null, since not every country has provinces or postal
 * codes. Whether the address is complete for its country is what validation answers, not this shape.
 */
export const OrderAddressV3 = Schema.Struct({
  address1: Address1,
  address2: optionalOrNull(Address2),
  city: City,
  provinceCode: optionalOrNull(ProvinceCode),
  postalCode: optionalOrNull(PostalCode),
  countryCode: AddressCountryCode
}).annotations({ identifier: "OrderAddressV3" })

/** `POST /v3/orders/addresses/validate` (3.1): the address under `address`; 3.0's top-level `country` is refused. */
export const ValidateAddressV3 = strictBody(Schema.Struct({ address: OrderAddressV3 }))

export class AddressValidationV3 extends Schema.Class<AddressValidationV3>("AddressValidationV3")({
  data: Schema.Struct({
    result: AddressValidationResult.annotations({
      description:
        "`verified`: complete for delivery to its country; `ambiguous`: something could not be confirmed, and `message` says what"
    }),
    message: Schema.String
  })
}) {}

/** A suggestion in the create-order address shape: every field present, null where the suggestion has none. */
export const AddressSuggestionV3 = Schema.Struct({
  address1: Schema.NullOr(Schema.String),
  address2: Schema.NullOr(Schema.String),
  city: Schema.String,
  provinceCode: Schema.NullOr(Schema.String),
  postalCode: Schema.NullOr(Schema.String),
  countryCode: Schema.String
}).annotations({ identifier: "AddressSuggestionV3" })

export class AddressSuggestionListV3 extends Schema.Class<AddressSuggestionListV3>("AddressSuggestionListV3")({
  data: Schema.Array(AddressSuggestionV3),
  links: Links
}) {}

/** Addresses.autocomplete returns at most 10 suggestions, best first; `page[size]` and `page[number]` slice them. */
export const autocompleteV3Query = {
  filters: ["country", "address"],
  paging: "number",
  maxPageSize: 10,
  defaultPageSize: 10
} satisfies V3QuerySpec

/**
 * The query as the document shows it and the platform decodes it: both filters are required (the v3
 * parser still refuses every parameter not listed here).
 */
const AutocompleteParams = Schema.Struct({
  ...v3UrlParams(autocompleteV3Query, {}).fields,
  "filter[country]": AddressCountryCode.annotations({
    description: "ISO 3166-1 alpha-2 country code, either case (`us` reads as `US`)"
  }),
  // No description of its own: it would replace the bounds in the 400's message (the operation explains it).
  "filter[address]": Schema.String.pipe(Schema.minLength(4), Schema.maxLength(128))
})

// Both serve order placement: the permission to place orders, the marketplace class (catalog and orders).
const operation = { permission: "orders:create", rateClass: "marketplace:read" } as const

export class OrderAddressesV3Api extends HttpApiGroup.make("orderAddressesV3")
  .add(
    HttpApiEndpoint.post("validate", "/orders/addresses/validate")
      .setPayload(ValidateAddressV3)
      .addSuccess(AddressValidationV3)
      .annotate(Operation, operation)
      .annotate(OpenApi.Summary, "Check a shipping address before placing an order")
  )
  .add(
    HttpApiEndpoint.get("autocomplete", "/orders/addresses/autocomplete")
      .setUrlParams(AutocompleteParams)
      .addSuccess(AddressSuggestionListV3)
      .annotate(Operation, operation)
      .annotate(OpenApi.Summary, "Address suggestions for partial input, in the create-order address shape")
      .annotate(
        OpenApi.Description,
        "`filter[address]` is the start of a place name, a US ZIP code, or `street, place` (what comes before the place becomes `address1`). At most 10 suggestions, best first."
      )
  )
  .prefix("/public-api/v3")
  .middleware(ApiKeyAuthV3)
  .annotate(OpenApi.Title, "Order addresses (v3)")
  .annotate(
    OpenApi.Description,
    "Validate a shipping address and suggest addresses as a recipient types. Authenticated with `X-Api-Key`."
  ) {}
