import type { SqlClient, Statement } from "@effect/sql"
import { Schema } from "effect"
import type { AccountScope } from "../../domain/company/Company.js"
import type { V3Query } from "../../domain/platform/V3Query.js"

/**
 * The SQL condition of an `AccountScope` (made by the company Policy): rows whose `accountColumn` names an
 * account the request reaches, in the key's company and environment.
 */
export const accountsIn = (sql: SqlClient.SqlClient, scope: AccountScope, accountColumn: string): Statement.Fragment =>
  sql`${sql(accountColumn)} IN (SELECT id FROM accounts WHERE company_id = ${scope.companyId}
    AND environment = ${scope.environment}
    AND ${scope.accountIds === "all" ? sql`TRUE` : sql.in("id", scope.accountIds)})`

/** An `AccountScope` in a repository statement's request, passed on as it is: only the Policy makes one. */
export const ScopeParam = Schema.declare(
  (input: unknown): input is AccountScope =>
    typeof input === "object" && input !== null && "companyId" in input && "accountIds" in input
).annotations({ identifier: "AccountScope" })

/** A parsed v3 list query in a repository statement's request, passed on as it is (the statement compiles it). */
export const QueryParam = Schema.declare(
  (input: unknown): input is V3Query => typeof input === "object" && input !== null && "page" in input
).annotations({ identifier: "V3Query" })
