import { Schema } from "effect"
import { DomainError, type ErrorCode, errorCode } from "../platform/Errors.js"

// OAuth, bearer tokens and users (agent API `/oauth` and `/v1/me`; docs/oauth.md). v3 sequences start at 050
// so that they never meet the company API's own PBLC/ACCT errors.

/** The OAuth errors keep their RFC 6749 code on `/v1` too. */
const oauthError = (status: number, title: string, code: string, v2: string, v3: string): ErrorCode =>
  errorCode(status, title, code, v2, v3, code)

/** A `/v1` request without a valid access token (missing, unknown, expired, revoked, other audience). */
export class InvalidToken extends DomainError<InvalidToken>()(
  "InvalidToken",
  { resourceMetadata: Schema.String },
  oauthError(401, "Invalid access token", "invalid_token", "UNAUTHORIZED", "401_PBLC_050")
) {
  /** RFC 6750 / RFC 9728: where the client finds how to get a token. */
  get wwwAuthenticate(): string {
    return `Bearer resource_metadata="${this.resourceMetadata}"`
  }
}

/** A valid access token without the scope an operation requires. */
export class InsufficientScope extends DomainError<InsufficientScope>()(
  "InsufficientScope",
  { scope: Schema.String, resourceMetadata: Schema.String },
  oauthError(403, "Insufficient scope", "insufficient_scope", "FORBIDDEN", "403_PBLC_050")
) {
  get wwwAuthenticate(): string {
    return `Bearer error="insufficient_scope", scope="${this.scope}", resource_metadata="${this.resourceMetadata}"`
  }
}

/** Client authentication failed: unknown client, wrong secret, or the wrong authentication method. */
export class InvalidClient extends DomainError<InvalidClient>()(
  "InvalidClient",
  {},
  oauthError(401, "Invalid client", "invalid_client", "UNAUTHORIZED", "401_PBLC_051")
) {}

/** A code or refresh token that is unknown, expired, used, revoked, or issued to another client. */
export class InvalidGrant extends DomainError<InvalidGrant>()(
  "InvalidGrant",
  {},
  oauthError(400, "Invalid grant", "invalid_grant", "INVALID_GRANT", "400_PBLC_050")
) {}

export class UnsupportedGrantType extends DomainError<UnsupportedGrantType>()(
  "UnsupportedGrantType",
  {},
  oauthError(400, "Unsupported grant type", "unsupported_grant_type", "UNSUPPORTED_GRANT_TYPE", "400_PBLC_051")
) {}

/** A scope that is unknown, not registered for the client, or wider than the grant. */
export class InvalidScope extends DomainError<InvalidScope>()(
  "InvalidScope",
  {},
  oauthError(400, "Invalid scope", "invalid_scope", "INVALID_SCOPE", "400_PBLC_052")
) {}

/** RFC 8707: a `resource` other than this service. */
export class InvalidTarget extends DomainError<InvalidTarget>()(
  "InvalidTarget",
  {},
  oauthError(400, "Invalid target", "invalid_target", "INVALID_TARGET", "400_PBLC_053")
) {}

/** The client is not registered for the grant type it used. */
export class UnauthorizedClient extends DomainError<UnauthorizedClient>()(
  "UnauthorizedClient",
  {},
  oauthError(400, "Unauthorized client", "unauthorized_client", "UNAUTHORIZED_CLIENT", "400_PBLC_054")
) {}

/** RFC 7591: a redirect URI that is not https (or http on a loopback host), or not a URI. */
export class InvalidRedirectUri extends DomainError<InvalidRedirectUri>()(
  "InvalidRedirectUri",
  {},
  oauthError(400, "Invalid redirect URI", "invalid_redirect_uri", "INVALID_REDIRECT_URI", "400_PBLC_055")
) {}

/** RFC 7591: any other registration field out of bounds. */
export class InvalidClientMetadata extends DomainError<InvalidClientMetadata>()(
  "InvalidClientMetadata",
  {},
  oauthError(400, "Invalid client metadata", "invalid_client_metadata", "INVALID_CLIENT_METADATA", "400_PBLC_056")
) {}

/** Sign-up with an e-mail address that already has an account (compared case-insensitively). */
export class EmailTaken extends DomainError<EmailTaken>()(
  "EmailTaken",
  {},
  errorCode(409, "E-mail taken", "email_taken", "CONFLICT", "409_ACCT_050")
) {}

/** Sign-in with an unknown e-mail or a wrong password (never says which). */
export class InvalidCredentials extends DomainError<InvalidCredentials>()(
  "InvalidCredentials",
  {},
  errorCode(401, "Invalid credentials", "invalid_credentials", "UNAUTHORIZED", "401_ACCT_050", "access_denied")
) {}

/** No saved address with that id for the signed-in user (another user's address included). */
export class AddressNotFound extends DomainError<AddressNotFound>()(
  "AddressNotFound",
  { addressId: Schema.String },
  errorCode(404, "Address not found", "address_not_found", "NOT_FOUND", "404_ACCT_050")
) {}

// Two-factor sign-in (docs/decisions/0059-two-factor-sign-in.md).

/** A TOTP or recovery code that is wrong, outside the ±30 s window, or already used. */
export class TwoFactorInvalidCode extends DomainError<TwoFactorInvalidCode>()(
  "TwoFactorInvalidCode",
  {},
  errorCode(401, "Invalid two-factor code", "two_factor_invalid_code", "UNAUTHORIZED", "401_ACCT_051", "access_denied")
) {}

/** The user has no two-factor sign-in to verify, disable or confirm (or no enrolment under way). */
export class TwoFactorNotEnrolled extends DomainError<TwoFactorNotEnrolled>()(
  "TwoFactorNotEnrolled",
  {},
  errorCode(409, "Two-factor not enrolled", "two_factor_not_enrolled", "CONFLICT", "409_ACCT_051")
) {}

/** Enrolment while two-factor sign-in is already on: it is disabled first, with the password. */
export class TwoFactorAlreadyEnabled extends DomainError<TwoFactorAlreadyEnabled>()(
  "TwoFactorAlreadyEnabled",
  {},
  errorCode(409, "Two-factor already enabled", "two_factor_already_enabled", "CONFLICT", "409_ACCT_052")
) {}
