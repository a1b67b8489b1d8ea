import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AuditEvent } from "../../domain/company/Audit.js"
import type { AccountScope } from "../../domain/company/Company.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { compileV3Query, likeEscape, type V3Columns, v3Page } from "../platform/V3QuerySql.js"
import { QueryParam, ScopeParam } from "./Scope.js"

/**
 * The `audit_events` table (docs/decisions/0057-audit-log.md). Only the Audit service uses it. Its insert runs in the
 * transaction of the change it records. Unexpected database errors are defects.
 */
export class AuditRepo extends Effect.Service<AuditRepo>()("AuditRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * How a list's query reaches the table: newest first, filtered by actor, action and time. `actor` (the
     * dashboard's: a key's or member's id, or part of its name) is not a filter of the v3 list.
     */
    const listColumns: V3Columns<AuditEvent> = {
      paging: "number",
      filters: {
        actorId: (value) => sql`actor_id = ${value.toLowerCase()}`,
        actor: (value) => sql`(actor_id = ${value.toLowerCase()} OR actor_name ILIKE ${`%${likeEscape(value)}%`})`,
        action: (value) => sql`action = ${value}`,
        "occurredAt][gte": (value) => sql`occurred_at >= ${new Date(value)}`,
        "occurredAt][lte": (value) => sql`occurred_at <= ${new Date(value)}`
      },
      sort: { occurredAt: "occurred_at" },
      defaultOrder: [{ column: "occurred_at", descending: true }],
      id: "id"
    }

    /**
     * The rows a scope reads: its company's in its environment, and of those tied to an account, only the accounts
     * it reaches (a change of the company in one environment, such as a key or an endpoint, ties to none); and the
     * changes of the company as a whole (its members, ownership, settings), which belong to no environment.
     */
    const inScope = (scope: AccountScope) =>
      sql`company_id = ${scope.companyId} AND (environment IS NULL OR environment = ${scope.environment})
        AND (account_id IS NULL OR ${scope.accountIds === "all" ? sql`TRUE` : sql.in("account_id", scope.accountIds)})`

    const insertEvent = SqlSchema.void({
      Request: AuditEvent,
      execute: (event) => sql`INSERT INTO audit_events ${sql.insert(event as never)}`
    })

    const findPage = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, query: QueryParam }),
      Result: AuditEvent,
      execute: ({ scope, query }) => {
        const { where, orderBy, limit } = compileV3Query(sql, query, listColumns)
        return sql`SELECT * FROM audit_events WHERE ${inScope(scope)} AND ${where} ORDER BY ${orderBy} LIMIT ${limit}`
      }
    })

    /** Writes one row, in the caller's transaction. */
    const insert = Effect.fn("AuditRepo.insert")((event: AuditEvent) => Effect.orDie(insertEvent(event)))

    /** One page of the rows the scope reads, as a v3 list query asks. */
    const page = Effect.fn("AuditRepo.page")(function* (scope: AccountScope, query: V3Query) {
      const rows = yield* Effect.orDie(findPage({ scope, query }))
      return v3Page(rows, query, listColumns)
    })

    return { insert, page } as const
  })
}) {}
