import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { AccountScope } from "../../domain/company/Company.js"
import { type CompanyEventType, WebhookEndpointRecord } from "../../domain/company/Webhooks.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { compileV3Query, type V3Columns, v3Page } from "../platform/V3QuerySql.js"
import { QueryParam, ScopeParam } from "./Scope.js"

const endpointColumns = "id, company_id, environment, url, event_types, disabled_at, created_at"

/** An endpoint with the secret its deliveries are signed with. */
export const SigningEndpoint = Schema.Struct({ ...WebhookEndpointRecord.fields, secret: Schema.String })
export type SigningEndpoint = typeof SigningEndpoint.Type

/**
 * The `company_webhook_endpoints` table. Only the CompanyWebhooks service uses it. Its statements run in the
 * caller's transaction. Unexpected database errors are defects.
 */
export class CompanyWebhooksRepo extends Effect.Service<CompanyWebhooksRepo>()("CompanyWebhooksRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const listColumns: V3Columns<WebhookEndpointRecord> = {
      paging: "number",
      filters: {},
      sort: { createdAt: "created_at" },
      defaultOrder: [{ column: "created_at", descending: false }],
      id: "id"
    }

    /** The rows of the scope's company and environment that are not deleted. */
    const ofCompany = (scope: AccountScope) =>
      sql`company_id = ${scope.companyId} AND environment = ${scope.environment} AND deleted_at IS NULL`

    const countOf = SqlSchema.single({
      Request: ScopeParam,
      Result: Schema.Struct({ count: Schema.Int }),
      execute: (scope) => sql`SELECT count(*)::int AS count FROM company_webhook_endpoints WHERE ${ofCompany(scope)}`
    })

    const insertEndpoint = SqlSchema.single({
      Request: Schema.Struct({
        id: Schema.String,
        scope: ScopeParam,
        url: Schema.String,
        eventTypes: Schema.Array(Schema.String),
        secret: Schema.String,
        at: Schema.DateFromSelf
      }),
      Result: WebhookEndpointRecord,
      execute: ({ id, scope, url, eventTypes, secret, at }) => sql`INSERT INTO company_webhook_endpoints
            (id, company_id, environment, url, event_types, secret, created_at)
          VALUES (${id}, ${scope.companyId}, ${scope.environment}, ${url}, ${JSON.stringify(eventTypes)}::jsonb,
            ${secret}, ${at})
          RETURNING ${sql.literal(endpointColumns)}`
    })

    const findInScope = SqlSchema.findOne({
      Request: Schema.Struct({ scope: ScopeParam, id: Schema.String }),
      Result: WebhookEndpointRecord,
      execute: ({ scope, id }) => sql`SELECT ${sql.literal(endpointColumns)} FROM company_webhook_endpoints
          WHERE id = ${id} AND ${ofCompany(scope)}`
    })

    const findSigningInScope = SqlSchema.findOne({
      Request: Schema.Struct({ scope: ScopeParam, id: Schema.String }),
      Result: SigningEndpoint,
      execute: ({ scope, id }) => sql`SELECT ${sql.literal(endpointColumns)}, secret FROM company_webhook_endpoints
          WHERE id = ${id} AND ${ofCompany(scope)} FOR UPDATE`
    })

    const updateDisabled = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, id: Schema.String, disabledAt: Schema.NullOr(Schema.DateFromSelf) }),
      Result: WebhookEndpointRecord,
      execute: ({ scope, id, disabledAt }) => sql`UPDATE company_webhook_endpoints
          SET disabled_at = CASE WHEN ${disabledAt}::timestamptz IS NULL THEN NULL ELSE coalesce(disabled_at, ${disabledAt}) END
          WHERE id = ${id} AND ${ofCompany(scope)} RETURNING ${sql.literal(endpointColumns)}`
    })

    const findPage = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, query: QueryParam }),
      Result: WebhookEndpointRecord,
      execute: ({ scope, query }) => {
        const { where, orderBy, limit } = compileV3Query(sql, query, listColumns)
        return sql`SELECT ${sql.literal(endpointColumns)} FROM company_webhook_endpoints
        WHERE ${ofCompany(scope)} AND ${where} ORDER BY ${orderBy} LIMIT ${limit}`
      }
    })

    const markDeleted = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, id: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ scope, id, at }) => sql`UPDATE company_webhook_endpoints SET deleted_at = ${at}, secret = NULL
          WHERE id = ${id} AND ${ofCompany(scope)} RETURNING id`
    })

    const findSubscribed = SqlSchema.findAll({
      Request: Schema.String,
      Result: SigningEndpoint,
      execute: (eventType) => sql`SELECT ${sql.literal(endpointColumns)}, secret
        FROM company_webhook_endpoints
        WHERE deleted_at IS NULL AND event_types @> ${JSON.stringify([eventType])}::jsonb
        ORDER BY created_at, id`
    })

    const findSubscribedOf = SqlSchema.findAll({
      Request: Schema.Struct({
        companyId: Schema.String,
        environment: Schema.String,
        types: Schema.Array(Schema.String)
      }),
      Result: SigningEndpoint,
      execute: ({ companyId, environment, types }) => sql`SELECT ${sql.literal(endpointColumns)}, secret
          FROM company_webhook_endpoints
          WHERE company_id = ${companyId} AND environment = ${environment} AND deleted_at IS NULL
            AND event_types ?| ${types}::text[]
          ORDER BY created_at, id`
    })

    /** How many endpoints the scope's company holds in its environment (not deleted). */
    const count = Effect.fn("CompanyWebhooksRepo.count")(function* (scope: AccountScope) {
      const { count } = yield* Effect.orDie(countOf(scope))
      return count
    })

    /** A new endpoint of the scope's company and environment. */
    const insert = Effect.fn("CompanyWebhooksRepo.insert")(
      (endpoint: {
        readonly id: string
        readonly scope: AccountScope
        readonly url: string
        readonly eventTypes: ReadonlyArray<CompanyEventType>
        readonly secret: string
        readonly at: Date
      }) => Effect.orDie(insertEndpoint(endpoint))
    )

    /** An endpoint of the scope's company and environment that is not deleted, or none. */
    const find = Effect.fn("CompanyWebhooksRepo.find")((scope: AccountScope, webhookId: string) =>
      Effect.orDie(findInScope({ scope, id: webhookId }))
    )

    /**
     * An endpoint of the scope's company and environment that is not deleted, with its secret, locked until the
     * caller's transaction ends (a change of its status waits for it), or none.
     */
    const findSigning = Effect.fn("CompanyWebhooksRepo.findSigning")((scope: AccountScope, webhookId: string) =>
      Effect.orDie(findSigningInScope({ scope, id: webhookId }))
    )

    /**
     * Marks the scope's endpoint disabled by request since `at` (kept when it already was), or, with null, not
     * disabled; the endpoint, or none when it is not the scope's.
     */
    const setDisabled = Effect.fn("CompanyWebhooksRepo.setDisabled")(function* (
      scope: AccountScope,
      webhookId: string,
      at: Date | null
    ) {
      const [endpoint] = yield* Effect.orDie(updateDisabled({ scope, id: webhookId, disabledAt: at }))
      return Option.fromNullable(endpoint)
    })

    /** The endpoints of the scope's company and environment, oldest first, paged as a v3 list query asks. */
    const page = Effect.fn("CompanyWebhooksRepo.page")(function* (scope: AccountScope, query: V3Query) {
      const rows = yield* Effect.orDie(findPage({ scope, query }))
      return v3Page(rows, query, listColumns)
    })

    /** Marks the scope's endpoint deleted at `at` and erases its secret; whether there was one. */
    const remove = Effect.fn("CompanyWebhooksRepo.remove")(function* (
      scope: AccountScope,
      webhookId: string,
      at: Date
    ) {
      const deleted = yield* Effect.orDie(markDeleted({ scope, id: webhookId, at }))
      return deleted.length > 0
    })

    /** Every endpoint of every company and environment subscribed to `eventType`, oldest first, with its secret. */
    const subscribedTo = Effect.fn("CompanyWebhooksRepo.subscribedTo")((eventType: CompanyEventType) =>
      Effect.orDie(findSubscribed(eventType))
    )

    /** The endpoints of one company and environment subscribed to any of `types`, oldest first, with their secrets. */
    const subscribedIn = Effect.fn("CompanyWebhooksRepo.subscribedIn")(
      (companyId: string, environment: string, types: ReadonlyArray<CompanyEventType>) =>
        Effect.orDie(findSubscribedOf({ companyId, environment, types }))
    )

    return { count, insert, find, findSigning, setDisabled, page, remove, subscribedTo, subscribedIn } as const
  })
}) {}
