import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AddressCountryCode, PhoneInput } from "../../domain/catalog/Address.js"
import { HexId, RequestSource, Timestamp } from "../../domain/company/Company.js"
import { AccountNotFound, RecipientAlreadyExists, RecipientNotFound } from "../../domain/company/Errors.js"
import { ExternalId, RecipientEmail } from "../../domain/company/Recipients.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { ApiKeyAuthV2, Operation } from "./ApiKeyAuth.js"
import { listParams } from "./CampaignsApi.js"

export { ExternalId, RecipientEmail }

/**
 * Recipients, version 2 (docs/decisions/0033-scoping-and-masking.md, docs/decisions/0046-v2-recipients.md;
 * docs/company-api.md "Recipients"): the people a company sends gifts to. Reads with only `recipients:read:masked` show
 * names, e-mail and phone masked. Deleting one erases its personal data. Unknown body properties are ignored, as v2
 * always has.
 */

const Name = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))

const MobilePhone = PhoneInput.annotations({
  description: "E.164 (`+14155552671`); other international forms are normalised to it"
})

const AccountIds = Schema.Array(HexId).pipe(Schema.minItems(1), Schema.maxItems(100))

/** `POST /v2/recipients`. */
export const CreateRecipientV2 = Schema.Struct({
  firstName: Name,
  lastName: Name,
  email: Schema.optional(RecipientEmail),
  mobilePhone: Schema.optional(MobilePhone),
  country: Schema.optional(AddressCountryCode),
  externalId: Schema.optional(ExternalId),
  accounts: Schema.optional(
    AccountIds.annotations({
      description: "The accounts that may reach it; default: Ribbon-Account-Id, else the key's only or default account"
    })
  )
})

/** `PATCH /v2/recipients/{id}`: absent fields stay, `null` clears an optional one. */
export const UpdateRecipientV2 = Schema.Struct({
  firstName: Schema.optional(Name),
  lastName: Schema.optional(Name),
  email: Schema.optional(Schema.NullOr(RecipientEmail)),
  mobilePhone: Schema.optional(Schema.NullOr(MobilePhone)),
  country: Schema.optional(Schema.NullOr(AddressCountryCode)),
  externalId: Schema.optional(Schema.NullOr(ExternalId)),
  accounts: Schema.optional(
    AccountIds.annotations({
      description: "Replaces the accounts the key reaches; accounts it does not reach are kept"
    })
  )
})

export class RecipientV2 extends Schema.Class<RecipientV2>("RecipientV2")({
  id: Schema.String,
  firstName: Schema.String,
  lastName: Schema.String,
  email: Schema.NullOr(Schema.String),
  mobilePhone: Schema.NullOr(Schema.String),
  country: Schema.NullOr(Schema.String),
  externalId: Schema.NullOr(Schema.String),
  accounts: Schema.Array(Schema.String),
  source: Schema.NullOr(RequestSource),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

export class RecipientListV2 extends Schema.Class<RecipientListV2>("RecipientListV2")({
  results: Schema.Array(RecipientV2),
  skip: Schema.Int,
  limit: Schema.Int
}) {}

const RecipientPath = Schema.Struct({ recipientId: HexId })

const read = {
  permission: ["recipients:read:masked", "recipients:read:unmasked"],
  rateClass: "administration:read"
} as const

export class RecipientsV2Api extends HttpApiGroup.make("recipientsV2")
  .add(
    HttpApiEndpoint.post("create", "/recipients")
      .setPayload(CreateRecipientV2)
      .addSuccess(RecipientV2, { status: 201 })
      .addError(lineError("v2", AccountNotFound))
      .addError(lineError("v2", RecipientAlreadyExists))
      .annotate(Operation, { permission: "recipients:create", rateClass: "administration:write" })
      .annotate(OpenApi.Summary, "Create a recipient; shown masked unless the key reads recipients unmasked")
  )
  .add(
    HttpApiEndpoint.get("list", "/recipients")
      .setUrlParams(
        Schema.Struct({
          ...listParams,
          externalId: Schema.optional(ExternalId),
          email: Schema.optional(RecipientEmail)
        })
      )
      .addSuccess(RecipientListV2)
      .addError(lineError("v2", AccountNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "List recipients, newest first; masked unless the key reads them unmasked")
  )
  .add(
    HttpApiEndpoint.get("get", "/recipients/:recipientId")
      .setPath(RecipientPath)
      .addSuccess(RecipientV2)
      .addError(lineError("v2", RecipientNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "Retrieve a recipient")
  )
  .add(
    HttpApiEndpoint.patch("update", "/recipients/:recipientId")
      .setPath(RecipientPath)
      .setPayload(UpdateRecipientV2)
      .addSuccess(RecipientV2)
      .addError(lineError("v2", RecipientNotFound))
      .addError(lineError("v2", AccountNotFound))
      .addError(lineError("v2", RecipientAlreadyExists))
      .annotate(Operation, { permission: "recipients:update", rateClass: "administration:write" })
      .annotate(OpenApi.Summary, "Change a recipient; absent fields stay, null clears an optional one")
  )
  .add(
    HttpApiEndpoint.del("delete", "/recipients/:recipientId")
      .setPath(RecipientPath)
      .addError(lineError("v2", RecipientNotFound))
      .annotate(Operation, { permission: "recipients:delete", rateClass: "administration:write" })
      .annotate(
        OpenApi.Summary,
        "Delete a recipient: its personal data is erased; gifts and orders naming it keep working"
      )
  )
  .addError(lineError("v2", InvalidRequest))
  .prefix("/public-api/v2")
  .middleware(ApiKeyAuthV2)
  .annotate(OpenApi.Title, "Recipients (v2)")
  .annotate(
    OpenApi.Description,
    "Recipients, version 2: the people a company sends gifts to. Authenticated with `X-Api-Key`."
  ) {}
