import {
  type HttpApi,
  type HttpApiEndpoint,
  type HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "@effect/platform"
import { Context, Option, Schema, SchemaAST } from "effect"
import { shownAddress } from "../../domain/company/Addresses.js"
import {
  type Account,
  type AccountScope,
  type ApiKeyRecord,
  type Permission,
  permissionDescriptions,
  permissions,
  type RateScope,
  type RequestSource
} from "../../domain/company/Company.js"
import {
  AccountNotFound,
  ApiKeyExpired,
  ApiKeyInvalid,
  ApiKeyMissing,
  CompanyMismatch,
  EnvironmentMismatch,
  MtlsRequired,
  PermissionDenied
} from "../../domain/company/Errors.js"
import { memberRights, roleDescriptions, rolePermissions, roleRights, roles } from "../../domain/company/Members.js"
import { InvalidRequest, NotFound, RateLimited } from "../../domain/platform/Errors.js"
import { type Line, lineError } from "../ErrorLines.js"
import { endpointsOf } from "../Reflection.js"

/**
 * API-key authentication for the company API (`/public-api/v2`, `/public-api/v3`). Each endpoint
 * declares its `Operation` (permission and rate-limit class) as an annotation; the middleware reads it
 * from the API definition, and docs/permissions.md is generated from the same annotations.
 */

/**
 * What an operation needs: a permission (several: any one of them, as a read of personal data takes its
 * `:read:masked` or `:read:unmasked`; `null`: any valid key of the company) and its rate-limit class. A
 * sandbox control is for test keys only (`testKeysOnly`): a live key gets the 404 `NotFound`, which the
 * operation declares among its errors. The flag is read by the middleware only; the document does not show it.
 */
export interface OperationPolicy {
  readonly permission: Permission | ReadonlyArray<Permission> | null
  readonly rateClass: RateScope
  readonly testKeysOnly?: boolean
}

export class Operation extends Context.Tag("ribbon/Operation")<Operation, OperationPolicy>() {}

/** The resources whose personal data a key reads masked or unmasked, by its `:read:masked`/`:read:unmasked`. */
export type PersonalDataDomain = "gifts" | "orders" | "recipients"

/** How a key reads each resource's personal data: unmasked only with that resource's `:read:unmasked`. */
export type ReadModes = Readonly<Record<PersonalDataDomain, "masked" | "unmasked">>

/** The authenticated caller, provided to every handler behind the middleware. */
export interface Caller {
  readonly key: ApiKeyRecord
  /** The account `Ribbon-Account-Id` named, resolved against the key's `accountsAccess`. */
  readonly account: Option.Option<Account>
  /** The accounts the request may reach, as the company Policy scoped it. */
  readonly scope: AccountScope
  /** `Request-Source`, recorded on what the request creates. */
  readonly requestSource: RequestSource | null
  /** How the request reads each resource's personal data, resolved once by the middleware. */
  readonly readModes: ReadModes
}

export class CurrentCaller extends Context.Tag("ribbon/CurrentCaller")<CurrentCaller, Caller>() {}

const failures = (line: Line) =>
  Schema.Union(
    lineError(line, InvalidRequest),
    lineError(line, ApiKeyMissing),
    lineError(line, ApiKeyInvalid),
    lineError(line, ApiKeyExpired),
    lineError(line, PermissionDenied),
    lineError(line, EnvironmentMismatch),
    lineError(line, MtlsRequired),
    lineError(line, CompanyMismatch),
    lineError(line, AccountNotFound),
    lineError(line, RateLimited)
  )

/** `X-Api-Key`, documented as the OpenAPI security scheme; the value stays Redacted until it is hashed. */
const security = {
  apiKey: HttpApiSecurity.apiKey({ key: "X-Api-Key", in: "header" }).pipe(
    HttpApiSecurity.annotate(OpenApi.Description, "The company's API key: 24 hexadecimal characters")
  )
}

export class ApiKeyAuthV2 extends HttpApiMiddleware.Tag<ApiKeyAuthV2>()("ApiKeyAuthV2", {
  provides: CurrentCaller,
  failure: failures("v2"),
  security
}) {}

export class ApiKeyAuthV3 extends HttpApiMiddleware.Tag<ApiKeyAuthV3>()("ApiKeyAuthV3", {
  provides: CurrentCaller,
  failure: failures("v3"),
  security
}) {}

export interface OperationRow extends OperationPolicy {
  readonly method: string
  readonly path: string
  readonly group: string
  readonly name: string
  readonly summary: string | undefined
}

/** Whether the endpoint declares `NotFound` in `line`'s format among its errors. */
const declaresNotFound = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps, line: Line) => {
  const wanted = SchemaAST.getIdentifierAnnotation(lineError(line, NotFound).ast)
  const declared = new Set<Schema.Schema.Any>()
  HttpApiSchema.deunionize(declared, endpoint.errorSchema)
  return [...declared].some(
    (schema) =>
      Option.isSome(wanted) && Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(schema.ast)) === wanted.value
  )
}

/**
 * Every endpoint behind the API-key middleware and its declared policy; an endpoint without one is a bug, as is
 * a `testKeysOnly` one that does not declare the `NotFound` a live key gets.
 */
export const operationsOf = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): ReadonlyArray<OperationRow> =>
  endpointsOf(api).flatMap(({ group, endpoint, annotations, middleware }) => {
    if (!middleware.has(ApiKeyAuthV2) && !middleware.has(ApiKeyAuthV3)) return []
    const policy = Context.getOption(annotations, Operation)
    if (Option.isNone(policy)) throw new Error(`${endpoint.method} ${endpoint.path} declares no Operation`)
    if (policy.value.testKeysOnly === true && !declaresNotFound(endpoint, middleware.has(ApiKeyAuthV2) ? "v2" : "v3")) {
      throw new Error(`${endpoint.method} ${endpoint.path} is for test keys only but declares no NotFound`)
    }
    return [
      {
        method: endpoint.method,
        path: endpoint.path,
        group,
        name: endpoint.name,
        summary: Option.getOrUndefined(Context.getOption(annotations, OpenApi.Summary)),
        ...policy.value
      }
    ]
  })

const permissionText = (permission: OperationPolicy["permission"]) =>
  permission === null
    ? "any key"
    : (typeof permission === "string" ? [permission] : permission).map((p) => `\`${p}\``).join(" or ")

/** The "What each permission allows" section of docs/permissions.md: the words the dashboard's key form shows too. */
const permissionsAllowDoc = (): ReadonlyArray<string> => [
  "## What each permission allows",
  "",
  "Generated from `permissionDescriptions` in `src/domain/company/Company.ts`, which the dashboard's API key form shows.",
  "",
  "| Permission | Allows |",
  "|---|---|",
  ...permissions.map((permission) => `| \`${permission}\` | ${permissionDescriptions[permission]} |`),
  ""
]

/** The "Dashboard roles" section of docs/permissions.md, from the role table in src/domain/company/Members.ts. */
const rolesDoc = (): ReadonlyArray<string> => {
  const mark = (held: boolean) => (held ? "✓" : "")
  return [
    "## Dashboard roles",
    "",
    "Generated from `src/domain/company/Members.ts` ([decisions/0054](decisions/0054-company-members-and-roles.md)).",
    "Each member of a company holds one role: a named set of the permissions above, judged by the same Policy as a",
    "key holding them, plus rights only people hold. A member may be limited to some accounts, as a key is. A member",
    "gives (invites, changes, limits) only roles and accounts within its own, rights included, so only an owner makes",
    "or changes an owner; the last owner cannot leave or be demoted.",
    "",
    "| Role | For |",
    "|---|---|",
    ...roles.map((role) => `| \`${role}\` | ${roleDescriptions[role]} |`),
    "",
    `| Permission or right | ${roles.map((role) => `\`${role}\``).join(" | ")} |`,
    `|---|${roles.map(() => "---").join("|")}|`,
    ...permissions.map(
      (permission) =>
        `| \`${permission}\` | ${roles.map((role) => mark(rolePermissions[role].includes(permission))).join(" | ")} |`
    ),
    ...memberRights.map(
      (right) => `| \`${right}\` (right) | ${roles.map((role) => mark(roleRights[role].includes(right))).join(" | ")} |`
    ),
    ""
  ]
}

/**
 * The "Address privacy" section of docs/permissions.md: its table is what `shownAddress`, the one rule every company
 * read of an order's address goes through, makes of one address in each case.
 */
const addressPrivacyDoc = (): ReadonlyArray<string> => {
  const address = {
    address1: "350 Fifth Avenue",
    address2: "Suite 3300",
    city: "New York",
    provinceCode: "NY",
    postalCode: "10118",
    countryCode: "US"
  }
  const cell = (value: string | null) => (value === null ? "null" : `\`${value}\``)
  const row = (label: string, addressHidden: boolean, mode: "masked" | "unmasked") => {
    const shown = shownAddress({ ...address, addressHidden }, mode)
    const fields = [shown.address1, shown.address2, shown.city, shown.provinceCode, shown.postalCode, shown.countryCode]
    return `| ${label} | ${fields.map(cell).join(" | ")} |`
  }
  return [
    "## Address privacy",
    "",
    "Generated from `shownAddress` in `src/domain/company/Addresses.ts`",
    "([decisions/0071](decisions/0071-recipient-address-privacy.md)). A campaign's `hideRecipientAddress` (true unless",
    "set to `false` when it is made or changed) leaves only the city, region and country of the address a recipient gives:",
    "no street lines and no postal code, in every read of the order by a key or a dashboard member, whatever their",
    "read permission (`orders:read:unmasked` included): `GET /public-api/v3/orders` and `/orders/{id}`, the order of a",
    "gift read or list with `expand[]=orders`, and the dashboard's order pages. The order says so with",
    "`recipientAddressHidden: true`. An order keeps the campaign's setting of when its recipient gave the address:",
    "turning the setting off shows the addresses given after, not those given under it; turning it on hides the",
    "campaign's earlier orders too. The setting changes what reads show, never what is stored or booked: the order",
    "keeps the full address for its delivery. Orders placed with `POST /public-api/v3/orders` belong to no campaign and follow only the read",
    "permission. Webhook events carry no address. For the address `350 Fifth Avenue, Suite 3300, New York, NY 10118, US`:",
    "",
    "| The order's campaign, and the reader's permission | `address1` | `address2` | `city` | `provinceCode` | `postalCode` | `countryCode` |",
    "|---|---|---|---|---|---|---|",
    row("hides addresses, `orders:read:unmasked`", true, "unmasked"),
    row("hides addresses, `orders:read:masked`", true, "masked"),
    row("shows addresses (or no campaign), `orders:read:unmasked`", false, "unmasked"),
    row("shows addresses (or no campaign), `orders:read:masked`", false, "masked"),
    "",
    "A dashboard member reads as their role's permissions do (the table above): `owner`, `admin` and `sender` read",
    "orders unmasked, `developer` and `viewer` masked.",
    ""
  ]
}

/** docs/permissions.md, generated from the API definition. */
export const permissionsDoc = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): string => {
  const rows = operationsOf(api)
  const lines = [
    "# Permissions",
    "",
    "Generated from the API definition (`operationsOf` in `src/http/company/ApiKeyAuth.ts`); `test/http/company/permissions.test.ts`",
    "keeps this file in step (regenerate: `npx tsx scripts/permissions-doc.ts`). Every company-API operation declares the permission its API key must hold and the",
    'rate-limit class it draws from (besides the global bucket). "any key" means any valid key of the company:',
    "key management needs no permission of its own, but a key creates, rotates and revokes only keys whose permissions",
    "and accounts (`accountsAccess`) are within its own.",
    "A gift read's `expand[]` also needs each expanded resource's own read permission (`recipients:read:masked` or",
    "`:unmasked`, `orders:read:masked` or `:unmasked`, `campaigns:read`), and masks it by that permission.",
    "",
    "| Method | Path | Permission | Rate-limit class |",
    "|---|---|---|---|",
    ...rows.map(
      (row) => `| ${row.method} | \`${row.path}\` | ${permissionText(row.permission)} | \`${row.rateClass}\` |`
    ),
    "",
    ...permissionsAllowDoc(),
    ...rolesDoc(),
    ...addressPrivacyDoc()
  ]
  return lines.join("\n")
}
