import { Schema } from "effect"

/**
 * Postal addresses and phone numbers: the shapes shared by address validation and autocomplete
 * (`/v1/addresses/*`, `/public-api/v3/orders/addresses/*`), saved addresses and the checkout's
 * `shippingAddress` and `recipient.phone`. The rules behind them live in `src/services/catalog/Addresses.ts`.
 *
 * Bounds follow the agent API's limits: address lines 1–200 (`address2` max 200), city 1–100,
 * province max 10, postal code max 20, country two letters (either case, decoded to uppercase).
 * Optional fields also accept `null` as "absent", so a saved address (whose fields are `string | null`)
 * can be passed on as it is.
 */

/** ISO 3166-1 alpha-2 as a client writes it (`us` or `US`), decoded to uppercase. */
export const AddressCountryCode = Schema.transform(
  Schema.String.pipe(Schema.pattern(/^[A-Za-z]{2}$/)),
  Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/)),
  { strict: true, decode: (code) => code.toUpperCase(), encode: (code) => code }
).annotations({
  identifier: "AddressCountryCode",
  description: "ISO 3166-1 alpha-2 country code (two letters, normalised to uppercase)"
})

export const Address1 = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
export const Address2 = Schema.String.pipe(Schema.maxLength(200))
export const City = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))
export const ProvinceCode = Schema.String.pipe(Schema.maxLength(10))
export const PostalCode = Schema.String.pipe(Schema.maxLength(20))

/**
 * An address as a client sends it: the validate body's `address`, the checkout's `shippingAddress`.
 * Only `countryCode` is required by the shape; whether the address is complete enough to deliver to is
 * what `Addresses.validate` decides.
 */
export const AddressInput = Schema.Struct({
  address1: Schema.optionalWith(Address1, { nullable: true }),
  address2: Schema.optionalWith(Address2, { nullable: true }),
  city: Schema.optionalWith(City, { nullable: true }),
  provinceCode: Schema.optionalWith(ProvinceCode, { nullable: true }),
  postalCode: Schema.optionalWith(PostalCode, { nullable: true }),
  countryCode: AddressCountryCode
}).annotations({ identifier: "AddressInput" })
export type AddressInput = typeof AddressInput.Type

/** The fields of an address, for issues that point at one of them. */
export const AddressField = Schema.Literal("address1", "address2", "city", "provinceCode", "postalCode", "countryCode")
export type AddressField = typeof AddressField.Type

/**
 * One autocomplete suggestion, in the create-order address shape (every value a string). `city` and
 * `countryCode` are always there; `provinceCode` where the country uses one; `postalCode` for a postal-code
 * match; `address1` only when the query carried a street part before the place (`"10 Downing Street,
 * London"`). Absent fields are omitted rather than empty, so a suggestion can be merged into a
 * `shippingAddress` without breaking its minimum lengths.
 */
export const AddressSuggestion = Schema.Struct({
  address1: Schema.optional(Address1),
  city: City,
  provinceCode: Schema.optional(ProvinceCode),
  postalCode: Schema.optional(PostalCode),
  countryCode: Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/))
}).annotations({ identifier: "AddressSuggestion" })
export type AddressSuggestion = typeof AddressSuggestion.Type

export const AddressValidationResult = Schema.Literal("verified", "ambiguous")
export type AddressValidationResult = typeof AddressValidationResult.Type

/** What is wrong with one field, in words an agent can repeat to the user. */
export const AddressIssue = Schema.Struct({
  field: AddressField,
  message: Schema.String
}).annotations({ identifier: "AddressIssue" })
export type AddressIssue = typeof AddressIssue.Type

/** The wire body of `POST /v1/addresses/validate`: `{result, message}`. */
export const AddressValidationResponse = Schema.Struct({
  result: AddressValidationResult,
  message: Schema.String
}).annotations({ identifier: "AddressValidationResponse" })
export type AddressValidationResponse = typeof AddressValidationResponse.Type

/**
 * What `Addresses.validate` returns: the wire fields, every issue found (empty when verified; `message`
 * joins them), and the normalised address that was checked (what a checkout should store).
 */
export const AddressValidation = Schema.Struct({
  ...AddressValidationResponse.fields,
  issues: Schema.Array(AddressIssue),
  address: AddressInput
}).annotations({ identifier: "AddressValidation" })
export type AddressValidation = typeof AddressValidation.Type

/** A phone number as the checkout takes it (`recipient.phone`, `notify.sms`): 7–20 characters. */
export const PhoneInput = Schema.String.pipe(Schema.minLength(7), Schema.maxLength(20))

/** A phone number in E.164 form (`+` and up to 15 digits), as `Addresses.validatePhone` returns it. */
export const E164Phone = Schema.String.pipe(Schema.pattern(/^\+[1-9]\d{6,14}$/), Schema.brand("E164Phone"))
export type E164Phone = typeof E164Phone.Type

// Errors. The HTTP layer maps them to the error catalogue (both are 400s where a client sent them).

/** A country code that is not an ISO 3166-1 alpha-2 country (autocomplete's `country`). */
export class UnknownCountry extends Schema.TaggedError<UnknownCountry>()("UnknownCountry", {
  countryCode: Schema.String,
  message: Schema.String
}) {}

/** Why a phone number was refused. */
export const InvalidPhoneReason = Schema.Literal(
  "not_international",
  "not_a_number",
  "unknown_calling_code",
  "too_short",
  "too_long",
  "has_extension",
  "invalid_number"
)
export type InvalidPhoneReason = typeof InvalidPhoneReason.Type

/** A phone number that is not a valid number in E.164 form. */
export class InvalidPhone extends Schema.TaggedError<InvalidPhone>()("InvalidPhone", {
  phone: Schema.String,
  reason: InvalidPhoneReason,
  message: Schema.String
}) {}
