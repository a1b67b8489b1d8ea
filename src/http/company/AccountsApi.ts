import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BillingStatus, BillingType } from "../../domain/company/Billing.js"
import { HexId, Timestamp } from "../../domain/company/Company.js"
import { AccountNameTaken, AccountNotFound, BillingMethodNotFound } from "../../domain/company/Errors.js"
import { lineError } from "../ErrorLines.js"
import { Links, strictBody, type V3QuerySpec, v3UrlParams } from "../V3Requests.js"
import { ApiKeyAuthV3, Operation } from "./ApiKeyAuth.js"

/**
 * Accounts and billing methods, version 3 (spec "Versioning" 3.1; docs/decisions/0041-v3-accounts-and-billing.md;
 * docs/company-api.md "Accounts and billing"). Accounts show only `id` and `name` since 3.1; billing methods are how an
 * account pays for its orders and gifts, with what remains of their spending limit.
 */

/** The largest spending limit taken, in minor units: 20,000,000.00 in the billing currency. */
export const maxSpendingLimit = 2_000_000_000

const Name = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))

export class AccountV3 extends Schema.Class<AccountV3>("AccountV3")({ id: Schema.String, name: Schema.String }) {}

export class AccountResponseV3 extends Schema.Class<AccountResponseV3>("AccountResponseV3")({ data: AccountV3 }) {}

export class AccountListV3 extends Schema.Class<AccountListV3>("AccountListV3")({
  data: Schema.Array(AccountV3),
  links: Links
}) {}

/** `{amount, currency}`: `amount` in the currency's minor units (docs/decisions/0036-company-resources.md). */
const Amount = Schema.Struct({ amount: Schema.Int, currency: Schema.String })

export class BillingMethodV3 extends Schema.Class<BillingMethodV3>("BillingMethodV3")({
  id: Schema.String,
  accountId: Schema.String,
  name: Schema.String,
  type: BillingType,
  status: BillingStatus,
  isDefault: Schema.Boolean,
  spendingLimit: Schema.NullOr(
    Schema.Struct({ ...Amount.fields, remaining: Schema.Int }).annotations({
      description: "The cap and what remains of it, in minor units; null when uncapped"
    })
  ),
  createdAt: Timestamp
}) {}

export class BillingMethodResponseV3 extends Schema.Class<BillingMethodResponseV3>("BillingMethodResponseV3")({
  data: BillingMethodV3
}) {}

export class BillingMethodListV3 extends Schema.Class<BillingMethodListV3>("BillingMethodListV3")({
  data: Schema.Array(BillingMethodV3),
  links: Links
}) {}

/** `POST /v3/accounts` (3.1): `billingMethod` optional, every field of it required when present. */
export const CreateAccountV3 = strictBody(
  Schema.Struct({
    name: Name.annotations({ description: "Unique among the company's accounts in this environment" }),
    billingMethod: Schema.optional(
      Schema.Struct({
        name: Name,
        type: BillingType,
        spendingLimit: Schema.Struct({
          amount: Schema.Int.pipe(Schema.between(0, maxSpendingLimit)).annotations({
            description: "In minor units of the billing currency (USD)"
          })
        })
      })
    )
  })
)

export const accountsV3Query = {
  filters: ["name"],
  sort: ["createdAt", "name"],
  paging: "number",
  maxPageSize: 100,
  defaultPageSize: 20
} satisfies V3QuerySpec

export const billingMethodsV3Query = {
  filters: ["accountId", "status", "type"],
  sort: ["createdAt", "name"],
  paging: "number",
  maxPageSize: 100,
  defaultPageSize: 20,
  filterSchemas: { accountId: HexId, status: BillingStatus, type: BillingType }
} satisfies V3QuerySpec

const AccountPath = Schema.Struct({ accountId: HexId })
const BillingMethodPath = Schema.Struct({ billingMethodId: HexId })

const read = { permission: "accounts:read", rateClass: "administration:read" } as const
const create = { permission: "accounts:create", rateClass: "administration:write" } as const

export class AccountsV3Api extends HttpApiGroup.make("accountsV3")
  .add(
    HttpApiEndpoint.get("list", "/accounts")
      .setUrlParams(v3UrlParams(accountsV3Query, {}))
      .addSuccess(AccountListV3)
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "List the accounts the key reaches (only id and name)")
  )
  .add(
    HttpApiEndpoint.get("get", "/accounts/:accountId")
      .setPath(AccountPath)
      .addSuccess(AccountResponseV3)
      .addError(lineError("v3", AccountNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "Retrieve an account (only id and name)")
  )
  .add(
    HttpApiEndpoint.post("create", "/accounts")
      .setPayload(CreateAccountV3)
      .addSuccess(AccountResponseV3, { status: 201 })
      .addError(lineError("v3", AccountNameTaken))
      .annotate(Operation, create)
      .annotate(OpenApi.Summary, "Create an account, optionally with its first billing method")
  )
  .add(
    HttpApiEndpoint.get("billingMethods", "/billing-methods")
      .setUrlParams(v3UrlParams(billingMethodsV3Query, {}))
      .addSuccess(BillingMethodListV3)
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "List the billing methods of the accounts the key reaches")
  )
  .add(
    HttpApiEndpoint.get("billingMethod", "/billing-methods/:billingMethodId")
      .setPath(BillingMethodPath)
      .addSuccess(BillingMethodResponseV3)
      .addError(lineError("v3", BillingMethodNotFound))
      .annotate(Operation, read)
      .annotate(OpenApi.Summary, "Retrieve a billing method, with what remains of its spending limit")
  )
  .prefix("/public-api/v3")
  .middleware(ApiKeyAuthV3)
  .annotate(OpenApi.Title, "Accounts and billing (v3)")
  .annotate(
    OpenApi.Description,
    "A company's accounts and the billing methods that pay for their orders. Authenticated with `X-Api-Key`."
  ) {}
