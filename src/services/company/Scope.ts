import type { SqlClient, Statement } from "@effect/sql"
import type { AccountScope } from "../../domain/company/Company.js"

/**
 * The SQL condition of an `AccountScope` (made by the company Policy): rows whose `accountColumn` names an
 * account the request reaches, in the key's company and environment.
 */
export const accountsIn = (sql: SqlClient.SqlClient, scope: AccountScope, accountColumn: string): Statement.Fragment =>
  sql`${sql(accountColumn)} IN (SELECT id FROM accounts WHERE company_id = ${scope.companyId}
    AND environment = ${scope.environment}
    AND ${scope.accountIds === "all" ? sql`TRUE` : sql.in("id", scope.accountIds)})`
