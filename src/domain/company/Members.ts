import { Schema } from "effect"
import {
  AccountsAccess,
  type Environment,
  type Permission,
  type Principal,
  permissions,
  type Reach
} from "./Company.js"

/**
 * The people of a company (docs/decisions/0054-company-members-and-roles.md): each member holds one role, a
 * named set of the permissions API keys use plus the rights only people hold, and reaches all of the company's
 * accounts or some of them, as a key does. What a member may do through the dashboard is exactly what a key
 * holding the same permissions and accounts may do through the API.
 */

export const roles = ["owner", "admin", "developer", "sender", "viewer"] as const
export const Role = Schema.Literal(...roles)
export type Role = typeof Role.Type

/**
 * What only people do: manage the company's members, its billing, its developer settings (API keys, webhook
 * endpoints, exports), and the company itself (ownership, the two-factor requirement).
 */
export const memberRights = ["members:manage", "billing:manage", "developer:manage", "company:manage"] as const
export const MemberRight = Schema.Literal(...memberRights)
export type MemberRight = typeof MemberRight.Type

const isUnmaskedRead = (permission: Permission) => permission.endsWith(":read:unmasked")
const isRead = (permission: Permission) => permission.includes(":read")

/** The API permissions each role holds. */
export const rolePermissions: Readonly<Record<Role, ReadonlyArray<Permission>>> = {
  owner: permissions,
  admin: permissions,
  // Builds integrations: every operation, but personal data only masked.
  developer: permissions.filter((permission) => !isUnmaskedRead(permission)),
  // Sends gifts and orders and sees whom they went to.
  sender: permissions.filter(
    (permission) =>
      !permission.endsWith(":read:masked") &&
      !["recipients:delete", "accounts:create", "gifts:create:demo"].includes(permission)
  ),
  // Reads everything, personal data masked.
  viewer: permissions.filter((permission) => isRead(permission) && !isUnmaskedRead(permission))
}

/** The rights only people hold, by role. */
export const roleRights: Readonly<Record<Role, ReadonlyArray<MemberRight>>> = {
  owner: memberRights,
  admin: ["members:manage", "billing:manage", "developer:manage"],
  developer: ["developer:manage"],
  sender: [],
  viewer: []
}

/** What each role is for, in the words the dashboard shows. */
export const roleDescriptions: Readonly<Record<Role, string>> = {
  owner: "Everything, including ownership and the company's security settings",
  admin: "Everything but ownership: members, billing, keys and webhooks, all data unmasked",
  developer: "API keys, webhooks and exports; every operation, personal data masked",
  sender: "Campaigns, gifts, orders and recipients, with whom they went to",
  viewer: "Reads everything, personal data masked"
}

/** A member of a company, with the name and e-mail of the person. */
export const Member = Schema.Struct({
  companyId: Schema.String,
  userId: Schema.String,
  email: Schema.String,
  displayName: Schema.NullOr(Schema.String),
  role: Role,
  accountsAccess: AccountsAccess,
  createdAt: Schema.DateFromSelf
})
export type Member = typeof Member.Type

/** What a member may do: the API permissions and accounts of its role, as a key would hold them, and its rights. */
export interface MemberGrant {
  readonly permissions: ReadonlyArray<Permission>
  readonly accountsAccess: AccountsAccess
  readonly rights: ReadonlyArray<MemberRight>
}

export const grantOf = (member: Pick<Member, "role" | "accountsAccess">): MemberGrant => ({
  permissions: rolePermissions[member.role],
  accountsAccess: member.accountsAccess,
  rights: roleRights[member.role]
})

/** Everything a member (or a role given with some accounts) reaches, rights included: what the subset rule compares. */
export const reachOf = (member: Pick<Member, "role" | "accountsAccess">): Reach => ({
  permissions: [...rolePermissions[member.role], ...roleRights[member.role]],
  accountsAccess: member.accountsAccess
})

/** A member as the company Policy judges it, working in one environment: the same checks an API key passes. */
export const principalOf = (member: Member, environment: Environment): Principal => ({
  kind: "member",
  id: member.userId,
  name: member.displayName ?? member.email,
  companyId: member.companyId,
  environment,
  permissions: rolePermissions[member.role],
  accountsAccess: member.accountsAccess
})

/** How long an invitation's link stays valid. */
export const invitationLifetimeDays = 7

/** An invitation to join a company, by e-mail. Its token is kept only as a hash. */
export const Invitation = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  email: Schema.String,
  role: Role,
  accountsAccess: AccountsAccess,
  invitedBy: Schema.String,
  createdAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf,
  acceptedAt: Schema.NullOr(Schema.DateFromSelf),
  revokedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type Invitation = typeof Invitation.Type
