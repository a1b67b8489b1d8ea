import { Schema } from "effect"

/**
 * The company API platform (spec company-gifting-api.md "API key", "Authentication";
 * docs/decisions/0032-companies-and-keys.md): companies, their accounts, the `test`/`live` environment, API keys and
 * their permissions.
 */

/** A company id (24-hex ids satisfy it). */
export const CompanyId = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9]{8,}$/)).annotations({
  description: "Company id, `^[A-Za-z0-9]{8,}$`"
})

/** A 24-hex id in a path (API key ids, account ids). */
export const HexId = Schema.String.pipe(Schema.pattern(/^[a-fA-F0-9]{24}$/)).annotations({
  description: "24 hexadecimal characters"
})

/** The environment every company resource and key belongs to; a key works only on its own environment. */
export const Environment = Schema.Literal("test", "live")
export type Environment = typeof Environment.Type

/** Every permission value, shared by v2 and v3 (spec "Authentication" 7). */
export const permissions = [
  "gifts:create",
  "gifts:create:demo",
  "gifts:update",
  "gifts:read:unmasked",
  "gifts:read:masked",
  "orders:create",
  "orders:cancel",
  "orders:read:unmasked",
  "orders:read:masked",
  "campaigns:create",
  "campaigns:update",
  "campaigns:read",
  "collections:read",
  "products:read",
  "products:read:prices",
  "recipients:create",
  "recipients:update",
  "recipients:read:unmasked",
  "recipients:read:masked",
  "recipients:delete",
  "accounts:create",
  "accounts:read",
  "audit:read"
] as const

export const Permission = Schema.Literal(...permissions)
export type Permission = typeof Permission.Type

/** What each permission lets a key (or a member) do, in the words docs/permissions.md and the dashboard show. */
export const permissionDescriptions: Readonly<Record<Permission, string>> = {
  "gifts:create": "Send gifts",
  "gifts:create:demo": "Send demonstration gifts (no operation asks for it yet)",
  "gifts:update": "Change, cancel and expire gifts",
  "gifts:read:unmasked": "Read gifts with their personal data in full",
  "gifts:read:masked": "Read gifts with their personal data masked",
  "orders:create": "Place orders, claim gifts, simulate orders and check addresses",
  "orders:cancel": "Cancel orders",
  "orders:read:unmasked": "Read orders with their personal data in full",
  "orders:read:masked": "Read orders with their personal data masked",
  "campaigns:create": "Create campaigns",
  "campaigns:update": "Change campaigns",
  "campaigns:read": "Read campaigns",
  "collections:read": "Read and export collections",
  "products:read": "Read and export products, their variants and tags",
  "products:read:prices": "See products' prices (without it, products come without them)",
  "recipients:create": "Add recipients",
  "recipients:update": "Change recipients",
  "recipients:read:unmasked": "Read recipients with their personal data in full",
  "recipients:read:masked": "Read recipients with their personal data masked",
  "recipients:delete": "Delete recipients",
  "accounts:create": "Create accounts",
  "accounts:read": "Read accounts and their billing methods",
  "audit:read": "Read the company's audit log: who changed what, and when"
}

/** Permitted key lifetimes in days; other values inside the schema bounds are refused with a clear 400. */
export const expirationChoices = [30, 60, 90, 180, 365] as const
export const defaultExpirationInDays = 90

/** A key's name: unique among the company's keys. */
export const ApiKeyName = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))

/** `expirationInDays` as the spec bounds it (0.00069 to 365), then narrowed to the permitted values. */
export const ExpirationInDays = Schema.Number.pipe(
  Schema.between(0.00069, 365),
  Schema.filter(
    (days) =>
      (expirationChoices as ReadonlyArray<number>).includes(days) ||
      `Must be one of ${expirationChoices.join(", ")} days (got ${days})`
  )
).annotations({ description: "Days until the key expires: 30, 60, 90, 180 or 365 (default 90)" })

/** Which accounts a key reaches: every account of its company, or the listed ones. */
export const AccountsAccess = Schema.Struct({
  scope: Schema.Literal("all-accounts", "selected-accounts").annotations({
    message: (issue) => ({
      message: `Expected "all-accounts" or "selected-accounts", got ${JSON.stringify(issue.actual)}`,
      override: true
    })
  }),
  ids: Schema.Array(HexId)
})
export type AccountsAccess = typeof AccountsAccess.Type

export const allAccounts: AccountsAccess = { scope: "all-accounts", ids: [] }

/** `Request-Source` values (docs/decisions/0033-scoping-and-masking.md); recorded on what a request creates. */
export const RequestSource = Schema.Literal("api_native", "api_zapier", "api_salesforce", "api_ftp", "api_make")
export type RequestSource = typeof RequestSource.Type

/** `YYYY-MM-DDThh:mm:ss.sZ`: ISO 8601 in UTC with milliseconds. */
export const Timestamp = Schema.String.annotations({ description: "YYYY-MM-DDThh:mm:ss.sZ (UTC, milliseconds)" })

export const formatTimestamp = (date: Date): string => date.toISOString()

/** What a key or a member reaches: its permissions (with a member's rights), and its accounts. */
export interface Reach {
  readonly permissions: ReadonlyArray<string>
  readonly accountsAccess: AccountsAccess
}

/** The first thing a target reaches beyond its holder: a permission, all accounts, or one account. */
export type Overreach =
  | { readonly _tag: "Permission"; readonly permission: string }
  | { readonly _tag: "AllAccounts" }
  | { readonly _tag: "Account"; readonly accountId: string }

/**
 * Whether `target` reaches no further than `holder` (undefined) or what it reaches beyond: the subset rule by
 * which a key manages keys and a member manages members (docs/decisions/0054-company-members-and-roles.md).
 */
export const overreach = (holder: Reach, target: Reach): Overreach | undefined => {
  const permission = target.permissions.find((held) => !holder.permissions.includes(held))
  if (permission !== undefined) return { _tag: "Permission", permission }
  if (holder.accountsAccess.scope === "all-accounts") return undefined
  if (target.accountsAccess.scope === "all-accounts") return { _tag: "AllAccounts" }
  const accountId = target.accountsAccess.ids.find((id) => !holder.accountsAccess.ids.includes(id.toLowerCase()))
  return accountId === undefined ? undefined : { _tag: "Account", accountId }
}

/**
 * Who acts on a company's resources: an API key, or a member through the dashboard (its role's permissions,
 * its accounts, in the environment it works in). The company Policy judges both alike; `kind` only words its
 * messages (a key, which has none, is "this API key").
 */
export interface Principal {
  readonly kind?: "key" | "member"
  readonly id: string
  readonly name: string
  readonly companyId: string
  readonly environment: Environment
  readonly permissions: ReadonlyArray<Permission>
  readonly accountsAccess: AccountsAccess
}

/** A stored key as the services see it (never the key value). */
export const ApiKeyRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  environment: Environment,
  name: Schema.String,
  permissions: Schema.Array(Permission),
  accountsAccess: AccountsAccess,
  enforceMtls: Schema.Boolean,
  requestSource: Schema.NullOr(RequestSource),
  createdAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf,
  revokedAt: Schema.NullOr(Schema.DateFromSelf),
  /** The key's first characters, to recognise it by (none for keys made before they were kept). */
  prefix: Schema.NullOr(Schema.String),
  /** When the key last authenticated a request, recorded at most once a minute; none if never. */
  lastUsedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type ApiKeyRecord = typeof ApiKeyRecord.Type

/** The rate-limit scopes of the spec's table (docs/decisions/0034-company-rate-limits.md). */
export const RateScope = Schema.Literal(
  "global",
  "marketplace:read",
  "marketplace:write",
  "administration:read",
  "administration:write",
  "authentication:read",
  "authentication:write"
)
export type RateScope = typeof RateScope.Type

/** A token bucket: `rate` tokens per second, holding up to `burst`. */
export const RateLimit = Schema.Struct({
  rate: Schema.Number.pipe(Schema.positive()),
  burst: Schema.Int.pipe(Schema.positive())
})
export type RateLimit = typeof RateLimit.Type

/** Per-company overrides, by scope ("higher limits may be approved for verified integrations"). */
export const RateLimitOverrides = Schema.partial(Schema.Record({ key: RateScope, value: RateLimit }))
export type RateLimitOverrides = typeof RateLimitOverrides.Type

/** The spec's table. */
export const defaultRateLimits: Readonly<Record<RateScope, RateLimit>> = {
  global: { rate: 25, burst: 200 },
  "marketplace:read": { rate: 25, burst: 200 },
  "marketplace:write": { rate: 10, burst: 30 },
  "administration:read": { rate: 10, burst: 30 },
  "administration:write": { rate: 5, burst: 20 },
  "authentication:read": { rate: 5, burst: 30 },
  "authentication:write": { rate: 5, burst: 10 }
}

/** An account of a company, in one environment. */
export const AccountRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  environment: Environment,
  name: Schema.String,
  isDefault: Schema.Boolean
})
export type Account = typeof AccountRecord.Type

declare const AccountScopeBrand: unique symbol

/** The accounts a request may reach: the one `Ribbon-Account-Id` named, or every account its key reaches. */
export interface AccountScope {
  readonly [AccountScopeBrand]: true
  readonly companyId: string
  readonly environment: Environment
  /** `all`: every account of the company in the key's environment. */
  readonly accountIds: "all" | ReadonlyArray<string>
}
