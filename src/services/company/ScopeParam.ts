import { Schema } from "effect"
import type { AccountScope } from "../../domain/company/Company.js"

/**
 * An `AccountScope` as a repository statement's parameter (`SqlSchema` requests): only the company Policy
 * makes one, so it is taken as it is, never decoded from outside.
 */
export const ScopeParam = Schema.declare(
  (input: unknown): input is AccountScope =>
    typeof input === "object" && input !== null && "companyId" in input && "accountIds" in input
)
