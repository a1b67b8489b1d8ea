import { Schema } from "effect"
import { DomainError } from "../platform/Errors.js"

// Company API platform: API keys, permissions, environments, accounts (docs/company-api.md).

/** No `X-Api-Key` header. */
export class ApiKeyMissing extends DomainError<ApiKeyMissing>()(
  "ApiKeyMissing",
  {},
  {
    status: 401,
    title: "API key missing",
    v1: "api_key_missing",
    oauth: "invalid_client",
    v2: "UNAUTHORIZED",
    v3: "401_KEYS_001"
  }
) {}

/** A malformed, unknown or deleted key: one answer for all three, so nothing is learnt by guessing. */
export class ApiKeyInvalid extends DomainError<ApiKeyInvalid>()(
  "ApiKeyInvalid",
  {},
  {
    status: 401,
    title: "API key invalid",
    v1: "api_key_invalid",
    oauth: "invalid_client",
    v2: "UNAUTHORIZED",
    v3: "401_KEYS_002"
  }
) {}

export class ApiKeyExpired extends DomainError<ApiKeyExpired>()(
  "ApiKeyExpired",
  {},
  {
    status: 401,
    title: "API key expired",
    v1: "api_key_expired",
    oauth: "invalid_client",
    v2: "UNAUTHORIZED",
    v3: "401_KEYS_003"
  }
) {}

/** The key lacks the operation's permission (or tries to grant one it does not hold). */
export class PermissionDenied extends DomainError<PermissionDenied>()(
  "PermissionDenied",
  { permission: Schema.String },
  {
    status: 403,
    title: "Permission denied",
    v1: "permission_denied",
    oauth: "access_denied",
    v2: "FORBIDDEN",
    v3: "403_KEYS_001"
  }
) {}

/** A key of one environment used on a resource of the other. */
export class EnvironmentMismatch extends DomainError<EnvironmentMismatch>()(
  "EnvironmentMismatch",
  {},
  {
    status: 403,
    title: "Environment mismatch",
    v1: "environment_mismatch",
    oauth: "access_denied",
    v2: "FORBIDDEN",
    v3: "403_KEYS_002"
  }
) {}

/** An `enforceMtls` key on the plain listener: call the mutual-TLS root instead. */
export class MtlsRequired extends DomainError<MtlsRequired>()(
  "MtlsRequired",
  {},
  {
    status: 403,
    title: "Mutual TLS required",
    v1: "mtls_required",
    oauth: "access_denied",
    v2: "MTLS_REQUIRED",
    v3: "403_KEYS_003"
  }
) {}

/** `companyId` names a company other than the key's. */
export class CompanyMismatch extends DomainError<CompanyMismatch>()(
  "CompanyMismatch",
  {},
  {
    status: 403,
    title: "Company mismatch",
    v1: "company_mismatch",
    oauth: "access_denied",
    v2: "FORBIDDEN",
    v3: "403_KEYS_004"
  }
) {}

/** `Ribbon-Account-Id` names no account the key can reach. */
export class AccountNotFound extends DomainError<AccountNotFound>()(
  "AccountNotFound",
  { accountId: Schema.String },
  {
    status: 404,
    title: "Account not found",
    v1: "account_not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_ACCT_001"
  }
) {}

export class ApiKeyNotFound extends DomainError<ApiKeyNotFound>()(
  "ApiKeyNotFound",
  { apiKeyId: Schema.String },
  {
    status: 404,
    title: "API key not found",
    v1: "api_key_not_found",
    oauth: "invalid_request",
    v2: "NOT_FOUND",
    v3: "404_KEYS_001"
  }
) {}

/** The company already has 3 active keys. */
export class ApiKeyLimitReached extends DomainError<ApiKeyLimitReached>()(
  "ApiKeyLimitReached",
  { limit: Schema.Int },
  {
    status: 422,
    title: "API key limit reached",
    v1: "api_key_limit_reached",
    oauth: "invalid_request",
    v2: "UNPROCESSABLE_ENTITY",
    v3: "422_KEYS_001"
  }
) {}
