import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ActorType, AuditAction } from "../../domain/company/Audit.js"
import { Environment, HexId, Timestamp } from "../../domain/company/Company.js"
import { DateTimeFilter, Links, type V3QuerySpec, v3UrlParams } from "../V3Requests.js"
import { ApiKeyAuthV3, Operation } from "./ApiKeyAuth.js"

/**
 * The company audit log, version 3 (docs/decisions/0057-audit-log.md, docs/company-api.md "Audit log"): every change
 * the company's keys and members made, newest first, with who, what, where and from which request. Ids and names
 * only: never a secret or a recipient's personal data.
 */

export class AuditEventV3 extends Schema.Class<AuditEventV3>("AuditEventV3")({
  id: Schema.String,
  occurredAt: Timestamp,
  actor: Schema.Struct({
    type: ActorType.annotations({ description: "`key`, `member` (the dashboard) or `operator` (the command line)" }),
    id: Schema.NullOr(Schema.String).annotations({
      description: "The API key's or member's id; null for the operator"
    }),
    name: Schema.String.annotations({ description: "The key's or member's name when it acted" })
  }),
  action: AuditAction,
  target: Schema.Struct({
    type: Schema.String.annotations({ description: "The resource changed: the action's part before the dot" }),
    id: Schema.String
  }),
  accountId: Schema.NullOr(Schema.String).annotations({
    description:
      "The account the change was on; null for a change of the company in the environment (keys, webhooks) or as a whole"
  }),
  environment: Schema.NullOr(Environment).annotations({
    description:
      "The key's environment; null for a change of the company as a whole (members, invitations, ownership, settings), which every key reads"
  }),
  sourceAddress: Schema.NullOr(Schema.String).annotations({
    description: "The request's source address (an IPv6 one by its /64); null for the operator"
  }),
  requestId: Schema.NullOr(Schema.String).annotations({
    description: "The `X-Request-Id` of the response to the request that made the change; null for the operator"
  })
}) {}

export class AuditEventListV3 extends Schema.Class<AuditEventListV3>("AuditEventListV3")({
  data: Schema.Array(AuditEventV3),
  links: Links
}) {}

export const auditEventsV3Query = {
  filters: ["actorId", "action", "occurredAt][gte", "occurredAt][lte"],
  sort: ["occurredAt"],
  paging: "number",
  maxPageSize: 100,
  defaultPageSize: 50,
  filterSchemas: {
    actorId: HexId,
    action: AuditAction,
    "occurredAt][gte": DateTimeFilter,
    "occurredAt][lte": DateTimeFilter
  }
} satisfies V3QuerySpec

export class AuditEventsV3Api extends HttpApiGroup.make("auditEventsV3")
  .add(
    HttpApiEndpoint.get("list", "/audit-events")
      .setUrlParams(v3UrlParams(auditEventsV3Query, {}))
      .addSuccess(AuditEventListV3)
      .annotate(Operation, { permission: "audit:read", rateClass: "administration:read" })
      .annotate(
        OpenApi.Summary,
        "List the audit log, newest first: every change made by the company's keys and members, in the key's environment and to the company as a whole"
      )
  )
  .prefix("/public-api/v3")
  .middleware(ApiKeyAuthV3)
  .annotate(OpenApi.Title, "Audit log (v3)")
  .annotate(
    OpenApi.Description,
    "Who changed what, when and from where: one event per change. Authenticated with `X-Api-Key`."
  ) {}
