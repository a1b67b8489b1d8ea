import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AccountsAccess,
  ApiKeyName,
  allAccounts,
  CompanyId,
  defaultExpirationInDays,
  ExpirationInDays,
  HexId,
  Permission,
  Timestamp
} from "../../domain/company/Company.js"
import {
  AccountNotFound,
  AccountsAccessDenied,
  ApiKeyLimitReached,
  ApiKeyNotFound,
  EnvironmentMismatch,
  PermissionDenied
} from "../../domain/company/Errors.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { Links, strictBody, type V3QuerySpec, v3UrlParams } from "../V3Requests.js"
import { ApiKeyAuthV2, ApiKeyAuthV3, Operation } from "./ApiKeyAuth.js"

/**
 * API-key management on both company lines (spec "API-key management (version 2)", "Operations named for
 * version 3"; docs/company-api.md). Key management needs no permission of its own (`permission: null`),
 * but a key can grant only the permissions it holds.
 */

/** A permission value; an unknown one names itself in the 400. */
const PermissionInput = Permission.annotations({
  message: (issue) => ({ message: `Unknown permission ${JSON.stringify(issue.actual)}`, override: true })
})

const createFields = {
  name: ApiKeyName.annotations({
    description: "Unique among the company's keys"
  }),
  expirationInDays: Schema.optionalWith(ExpirationInDays, { exact: true, default: () => defaultExpirationInDays }),
  enforceMtls: Schema.optionalWith(Schema.Boolean, { exact: true, default: () => false }),
  permissions: Schema.optionalWith(Schema.Array(PermissionInput), { exact: true, default: () => [] }),
  accountsAccess: Schema.optionalWith(AccountsAccess, { exact: true, default: () => allAccounts })
}

const keyFields = {
  id: Schema.String,
  expirationDate: Timestamp,
  createdAt: Timestamp,
  enforceMtls: Schema.Boolean,
  name: Schema.String
}

const createdFields = {
  ...keyFields,
  companyId: Schema.String,
  apiKey: Schema.String.annotations({ description: "The key value, shown only here" }),
  permissions: Schema.Array(Schema.String),
  accountsAccess: AccountsAccess
}

export class ApiKeyCreatedV2 extends Schema.Class<ApiKeyCreatedV2>("ApiKeyCreatedV2")(createdFields) {}

export class ApiKeyListItemV2 extends Schema.Class<ApiKeyListItemV2>("ApiKeyListItemV2")(keyFields) {}

export class ApiKeyListV2 extends Schema.Class<ApiKeyListV2>("ApiKeyListV2")({
  results: Schema.Array(ApiKeyListItemV2)
}) {}

const CompanyQuery = { companyId: Schema.optional(CompanyId) }

const KeyPath = Schema.Struct({ apiKeyId: HexId })

const read = { permission: null, rateClass: "authentication:read" } as const
const write = { permission: null, rateClass: "authentication:write" } as const

export class ApiKeysV2Api extends HttpApiGroup.make("apiKeysV2")
  .add(
    HttpApiEndpoint.post("create", "/authentication/apiKeys")
      .setPayload(Schema.Struct(createFields))
      .setUrlParams(Schema.Struct(CompanyQuery))
      .addSuccess(ApiKeyCreatedV2)
      .addError(lineError("v2", ApiKeyLimitReached))
      .annotate(Operation, write)
      .annotate(OpenApi.Summary, "Create an API key (the value is returned only here)")
  )
  .add(
    HttpApiEndpoint.get("list", "/authentication/apiKeys")
      .setUrlParams(Schema.Struct({ ...CompanyQuery, accountIds: Schema.optional(Schema.Array(HexId)) }))
      .addSuccess(ApiKeyListV2)
      .addError(lineError("v2", AccountNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "List the company's API keys")
  )
  .add(
    HttpApiEndpoint.del("delete", "/authentication/apiKeys/:apiKeyId")
      .setPath(KeyPath)
      .setUrlParams(Schema.Struct(CompanyQuery))
      .addError(lineError("v2", ApiKeyNotFound))
      .annotate(Operation, write)
      .annotate(OpenApi.Summary, "Delete an API key; it stops working at once")
  )
  .addError(lineError("v2", InvalidRequest))
  .addError(lineError("v2", PermissionDenied))
  .addError(lineError("v2", AccountsAccessDenied))
  .addError(lineError("v2", EnvironmentMismatch))
  .prefix("/public-api/v2")
  .middleware(ApiKeyAuthV2)
  .annotate(OpenApi.Title, "API keys (v2)")
  .annotate(OpenApi.Description, "API-key management, version 2. Authenticated with `X-Api-Key`.") {}

// Version 3: camelCase, `{data, links}`, rotation in one call.

export class ApiKeyV3 extends Schema.Class<ApiKeyV3>("ApiKeyV3")({
  ...keyFields,
  companyId: Schema.String,
  permissions: Schema.Array(Schema.String),
  accountsAccess: AccountsAccess
}) {}

export class ApiKeyCreatedV3 extends Schema.Class<ApiKeyCreatedV3>("ApiKeyCreatedV3")({
  data: Schema.Struct({
    ...createdFields,
    rotatedApiKey: Schema.NullOr(Schema.Struct({ id: Schema.String, expirationDate: Timestamp }))
  })
}) {}

export class ApiKeyListV3 extends Schema.Class<ApiKeyListV3>("ApiKeyListV3")({
  data: Schema.Array(ApiKeyV3),
  links: Links
}) {}

/** The v3 list's query: documented here, checked (unknown keys → 400) by src/http/V3Requests.ts. */
export const apiKeysV3Query = {
  filters: ["name", "enforceMtls"],
  sort: ["createdAt", "name", "expirationDate"],
  paging: "number",
  maxPageSize: 100,
  defaultPageSize: 20,
  extra: ["companyId"],
  filterSchemas: { enforceMtls: Schema.Literal("true", "false") }
} satisfies V3QuerySpec

export class ApiKeysV3Api extends HttpApiGroup.make("apiKeysV3")
  .add(
    HttpApiEndpoint.get("list", "/authentication/api-keys")
      .setUrlParams(v3UrlParams(apiKeysV3Query, CompanyQuery))
      .addSuccess(ApiKeyListV3)
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "List the company's API keys (no filter[accountId])")
  )
  .add(
    HttpApiEndpoint.post("create", "/authentication/api-keys")
      .setPayload(
        // Strict like every v3 body: a misspelt `accountsAccess` would otherwise make an all-accounts key.
        strictBody(
          Schema.Struct({
            ...createFields,
            rotation: Schema.optional(
              Schema.Struct({
                apiKeyId: HexId,
                expiresInHours: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 168)), {
                  exact: true,
                  default: () => 24
                })
              }).annotations({
                description: "Rotate: the named key stops working after expiresInHours (default 24, 0 = now)"
              })
            )
          })
        )
      )
      .setUrlParams(Schema.Struct(CompanyQuery))
      .addSuccess(ApiKeyCreatedV3, { status: 201 })
      .addError(lineError("v3", ApiKeyLimitReached))
      .addError(lineError("v3", ApiKeyNotFound))
      .annotate(Operation, write)
      .annotate(
        OpenApi.Summary,
        "Create an API key, or rotate one (create the new key and schedule the old one's expiry)"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/authentication/api-keys/:apiKeyId")
      .setPath(KeyPath)
      .setUrlParams(Schema.Struct(CompanyQuery))
      .addError(lineError("v3", ApiKeyNotFound))
      .annotate(Operation, write)
      .annotate(OpenApi.Summary, "Revoke an API key; it stops working at once")
  )
  .addError(lineError("v3", InvalidRequest))
  .addError(lineError("v3", PermissionDenied))
  .addError(lineError("v3", AccountsAccessDenied))
  .addError(lineError("v3", EnvironmentMismatch))
  .prefix("/public-api/v3")
  .middleware(ApiKeyAuthV3)
  .annotate(OpenApi.Title, "API keys (v3)")
  .annotate(OpenApi.Description, "API-key management, version 3. Authenticated with `X-Api-Key`.") {}
