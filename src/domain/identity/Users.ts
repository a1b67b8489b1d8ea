import { Schema } from "effect"
import { Address1, Address2, AddressCountryCode, City, PostalCode, ProvinceCode } from "../catalog/Address.js"

/** Users and their saved addresses (spec "Profile"; docs/oauth.md). */

export const ReceiptPreference = Schema.Literal("email", "sms", "both", "none")
export type ReceiptPreference = typeof ReceiptPreference.Type

export class User extends Schema.Class<User>("User")({
  id: Schema.String,
  email: Schema.String,
  displayName: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  defaultCountry: Schema.String,
  receiptPreference: ReceiptPreference,
  createdAt: Schema.String
}) {}

export class SavedAddress extends Schema.Class<SavedAddress>("SavedAddress")({
  id: Schema.String,
  label: Schema.NullOr(Schema.String),
  firstName: Schema.String,
  lastName: Schema.String,
  phone: Schema.NullOr(Schema.String),
  address1: Schema.NullOr(Schema.String),
  address2: Schema.NullOr(Schema.String),
  city: Schema.NullOr(Schema.String),
  provinceCode: Schema.NullOr(Schema.String),
  postalCode: Schema.NullOr(Schema.String),
  countryCode: Schema.String,
  isDefault: Schema.Boolean
}) {}

export const DisplayName = Schema.String.pipe(Schema.maxLength(80))
export const ProfilePhone = Schema.String.pipe(Schema.maxLength(20))

/** `PATCH /v1/me`: every field optional; `null` clears `displayName` and `phone`. */
export const UserPatch = Schema.Struct({
  displayName: Schema.optional(Schema.NullOr(DisplayName)),
  phone: Schema.optional(Schema.NullOr(ProfilePhone)),
  defaultCountry: Schema.optional(AddressCountryCode),
  receiptPreference: Schema.optional(ReceiptPreference)
}).annotations({ identifier: "UserPatch" })
export type UserPatch = typeof UserPatch.Type

/** `POST /v1/me/addresses`. */
export const NewAddress = Schema.Struct({
  firstName: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(60)),
  lastName: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(60)),
  countryCode: AddressCountryCode,
  label: Schema.optional(Schema.String.pipe(Schema.maxLength(40))),
  phone: Schema.optional(ProfilePhone),
  address1: Schema.optional(Address1),
  address2: Schema.optional(Address2),
  city: Schema.optional(City),
  provinceCode: Schema.optional(ProvinceCode),
  postalCode: Schema.optional(PostalCode),
  isDefault: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "NewAddress" })
export type NewAddress = typeof NewAddress.Type

/** `GET /v1/me`. */
export class Me extends Schema.Class<Me>("Me")({
  user: User,
  addresses: Schema.Array(SavedAddress),
  scopes: Schema.Array(Schema.String)
}) {}
