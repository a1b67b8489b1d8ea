import { Schema } from "effect"
import { DomainError, errorCode } from "../platform/Errors.js"

// Company API platform: API keys, permissions, environments, accounts (docs/company-api.md).

/** No `X-Api-Key` header. */
export class ApiKeyMissing extends DomainError<ApiKeyMissing>()(
  "ApiKeyMissing",
  {},
  errorCode(401, "API key missing", "api_key_missing", "UNAUTHORIZED", "401_KEYS_001", "invalid_client")
) {}

/** A malformed, unknown or deleted key: one answer for all three, so nothing is learnt by guessing. */
export class ApiKeyInvalid extends DomainError<ApiKeyInvalid>()(
  "ApiKeyInvalid",
  {},
  errorCode(401, "API key invalid", "api_key_invalid", "UNAUTHORIZED", "401_KEYS_002", "invalid_client")
) {}

export class ApiKeyExpired extends DomainError<ApiKeyExpired>()(
  "ApiKeyExpired",
  {},
  errorCode(401, "API key expired", "api_key_expired", "UNAUTHORIZED", "401_KEYS_003", "invalid_client")
) {}

/** The key lacks the operation's permission (or tries to grant one it does not hold). */
export class PermissionDenied extends DomainError<PermissionDenied>()(
  "PermissionDenied",
  { permission: Schema.String },
  errorCode(403, "Permission denied", "permission_denied", "FORBIDDEN", "403_KEYS_001", "access_denied")
) {}

/** A key of one environment used on a resource of the other. */
export class EnvironmentMismatch extends DomainError<EnvironmentMismatch>()(
  "EnvironmentMismatch",
  {},
  errorCode(403, "Environment mismatch", "environment_mismatch", "FORBIDDEN", "403_KEYS_002", "access_denied")
) {}

/** An `enforceMtls` key on the plain listener: call the mutual-TLS root instead. */
export class MtlsRequired extends DomainError<MtlsRequired>()(
  "MtlsRequired",
  {},
  errorCode(403, "Mutual TLS required", "mtls_required", "MTLS_REQUIRED", "403_KEYS_003", "access_denied")
) {}

/** `companyId` names a company other than the key's. */
export class CompanyMismatch extends DomainError<CompanyMismatch>()(
  "CompanyMismatch",
  {},
  errorCode(403, "Company mismatch", "company_mismatch", "FORBIDDEN", "403_KEYS_004", "access_denied")
) {}

/** `Ribbon-Account-Id` names no account the key can reach. */
export class AccountNotFound extends DomainError<AccountNotFound>()(
  "AccountNotFound",
  { accountId: Schema.String },
  errorCode(404, "Account not found", "account_not_found", "NOT_FOUND", "404_ACCT_001")
) {}

export class ApiKeyNotFound extends DomainError<ApiKeyNotFound>()(
  "ApiKeyNotFound",
  { apiKeyId: Schema.String },
  errorCode(404, "API key not found", "api_key_not_found", "NOT_FOUND", "404_KEYS_001")
) {}

/** The company already has 3 active keys. */
export class ApiKeyLimitReached extends DomainError<ApiKeyLimitReached>()(
  "ApiKeyLimitReached",
  { limit: Schema.Int },
  errorCode(422, "API key limit reached", "api_key_limit_reached", "UNPROCESSABLE_ENTITY", "422_KEYS_001")
) {}

// Accounts and billing (DESIGN.md §4.10).

/** An account of that name already exists in the company and environment. */
export class AccountNameTaken extends DomainError<AccountNameTaken>()(
  "AccountNameTaken",
  { name: Schema.String },
  errorCode(409, "Account name taken", "account_name_taken", "CONFLICT", "409_ACCT_001")
) {}

/** No billing method of that id on an account the request reaches. */
export class BillingMethodNotFound extends DomainError<BillingMethodNotFound>()(
  "BillingMethodNotFound",
  { billingMethodId: Schema.String },
  errorCode(404, "Billing method not found", "billing_method_not_found", "NOT_FOUND", "404_BILL_001")
) {}

/** The billing method's remaining funds do not cover the amount. */
export class InsufficientFunds extends DomainError<InsufficientFunds>()(
  "InsufficientFunds",
  { billingMethodId: Schema.String, remaining: Schema.Int, required: Schema.Int },
  errorCode(422, "Insufficient funds", "insufficient_funds", "UNPROCESSABLE_ENTITY", "422_BILL_001")
) {}

/** An archived billing method takes no new debits. */
export class BillingMethodArchived extends DomainError<BillingMethodArchived>()(
  "BillingMethodArchived",
  { billingMethodId: Schema.String },
  errorCode(422, "Billing method archived", "billing_method_archived", "UNPROCESSABLE_ENTITY", "422_BILL_002")
) {}
