import { Schema } from "effect"
import { Environment } from "./Company.js"

/**
 * The company audit log (docs/decisions/0057-audit-log.md, docs/company-api.md "Audit log"): one row per change a
 * company's key, member or the operator made, written in the change's own transaction. A row names who (the key or
 * member by id and name), what (a dotted, past-tense action and the id of the resource it changed), where (account,
 * environment) and how the request came (source address, request id); never a secret or personal data.
 */

/** Every action the log records; the resource type is the part before the dot. */
export const auditActions = [
  "account.created",
  "api_key.created",
  "api_key.rotated",
  "api_key.revoked",
  "billing_method.test_funds_added",
  "campaign.created",
  "campaign.updated",
  "company.activated",
  "company.two_factor_not_required",
  "company.two_factor_required",
  "export.started",
  "gift.created",
  "gift.updated",
  "gift.cancelled",
  "gift.expired",
  "gift.claimed",
  "gift.resent",
  "invitation.revoked",
  "member.accounts_limited",
  "member.invited",
  "member.joined",
  "member.removed",
  "member.role_changed",
  "order.created",
  "order.cancelled",
  "order.simulated",
  "ownership.transferred",
  "recipient.created",
  "recipient.updated",
  "recipient.deleted",
  "webhook_delivery.resent",
  "webhook_endpoint.created",
  "webhook_endpoint.deleted",
  "webhook_endpoint.disabled",
  "webhook_endpoint.enabled",
  "webhook_endpoint.tested"
] as const

export const AuditAction = Schema.Literal(...auditActions)
export type AuditAction = typeof AuditAction.Type

/** Where the resource changed is not the action's first part: an invitation is sent, ownership goes to a member. */
const targetTypes: Partial<Record<AuditAction, string>> = {
  "member.invited": "invitation",
  "ownership.transferred": "member"
}

/** The type of resource an action changes: `order` for `order.cancelled`, `invitation` for `member.invited`. */
export const targetTypeOf = (action: AuditAction): string => targetTypes[action] ?? action.slice(0, action.indexOf("."))

/** Who acted: an API key, a member through the dashboard, or the operator (the CLI, with no request). */
export const ActorType = Schema.Literal("key", "member", "operator")
export type ActorType = typeof ActorType.Type

/**
 * The actor of a request: the key or member (`id`, and its `name`: the key's name, the member's display name),
 * the source address as the rate limits count it, and the request id the response carries.
 */
export interface Actor {
  readonly type: "key" | "member"
  readonly id: string
  readonly name: string
  readonly sourceAddress: string
  readonly requestId: string
}

/** How a member is named as an actor: by the name they gave, never by their e-mail. */
export const memberActorName = (displayName: string | null): string => displayName ?? "Member"

/** One row of the log. */
export const AuditEvent = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  occurredAt: Schema.DateFromSelf,
  actorType: ActorType,
  actorId: Schema.NullOr(Schema.String),
  actorName: Schema.String,
  action: AuditAction,
  targetType: Schema.String,
  targetId: Schema.String,
  accountId: Schema.NullOr(Schema.String),
  /** None for a change of the company as a whole (its members, invitations, ownership and settings). */
  environment: Schema.NullOr(Environment),
  sourceAddress: Schema.NullOr(Schema.String),
  requestId: Schema.NullOr(Schema.String)
})
export type AuditEvent = typeof AuditEvent.Type
