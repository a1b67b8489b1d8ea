import { Schema } from "effect"
import { Environment, RequestSource } from "./Company.js"

/**
 * Recipients, version 2 (docs/decisions/0046-v2-recipients.md, docs/company-api.md "Recipients"): the people a company
 * sends gifts to. A recipient belongs to the company (in one environment) and lists the accounts that may reach
 * it. Its `externalId` (the company's own identifier) and its e-mail (case-insensitively) are each unique
 * in the company and environment.
 *
 * Deleting a recipient erases its personal data (names, e-mail, phone and `externalId`) and keeps the row
 * as a tombstone (`deletedAt` set), so gifts and orders that name it keep working; an order keeps the
 * delivery details it was placed with on its own row.
 */

/** A recipient's e-mail, as every API line and the dashboard take it. */
export const RecipientEmail = Schema.String.pipe(
  Schema.maxLength(254),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "Expected an e-mail address" })
).annotations({ description: "Unique among the recipients of each account, case-insensitively" })

/** The company's own identifier of a recipient, as every API line and the dashboard take it. */
export const ExternalId = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(120),
  Schema.pattern(/^[^\p{Cc}]+$/u, { message: () => "Expected printable characters" })
).annotations({ description: "The company's own identifier, unique among the recipients of each account" })

/** A stored recipient as the services see it. A deleted one has `deletedAt` set and its personal data null. */
export const RecipientRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  environment: Environment,
  accountIds: Schema.Array(Schema.String),
  firstName: Schema.NullOr(Schema.String),
  lastName: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  mobilePhone: Schema.NullOr(Schema.String),
  country: Schema.NullOr(Schema.String),
  externalId: Schema.NullOr(Schema.String),
  source: Schema.NullOr(RequestSource),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf,
  deletedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type RecipientRecord = typeof RecipientRecord.Type

/** What a new recipient is made of; the phone already in E.164, the country upper-cased. */
export interface NewRecipient {
  readonly firstName: string
  readonly lastName: string
  readonly email: string | null
  readonly mobilePhone: string | null
  readonly country: string | null
  readonly externalId: string | null
  /** The accounts that may reach it; none: the account the request means (see `Recipients.create`). */
  readonly accountIds: ReadonlyArray<string>
}

/** A change to a recipient: absent fields stay, `null` clears an optional one. */
export interface RecipientChange {
  readonly firstName?: string | undefined
  readonly lastName?: string | undefined
  readonly email?: string | null | undefined
  readonly mobilePhone?: string | null | undefined
  readonly country?: string | null | undefined
  readonly externalId?: string | null | undefined
  readonly accountIds?: ReadonlyArray<string> | undefined
}
