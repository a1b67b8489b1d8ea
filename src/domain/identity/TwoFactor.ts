import { Schema } from "effect"

/**
 * Two-factor sign-in with a TOTP authenticator app and recovery codes (RFC 6238;
 * docs/decisions/0059-two-factor-sign-in.md).
 */

/** The TOTP parameters every authenticator app understands: HMAC-SHA-1, 6 digits, a 30-second step. */
export const totpParameters = { algorithm: "SHA1", digits: 6, periodSeconds: 30 } as const

/** Steps either side of the current one a code is still accepted from (clock drift, a code typed late). */
export const totpWindowSteps = 1

/** How many recovery codes a user holds: each works once, in place of a TOTP code. */
export const recoveryCodeCount = 10

/** An enrolment under way: the secret to add to an authenticator app, by hand, by link or by QR code. */
export class TwoFactorEnrolment extends Schema.Class<TwoFactorEnrolment>("TwoFactorEnrolment")({
  /** The shared secret in base32, for typing into the app. */
  secret: Schema.String,
  /** The `otpauth://totp/…` URI the QR code carries. */
  otpauthUri: Schema.String,
  /** The QR code of `otpauthUri` as an SVG document. */
  qrSvg: Schema.String
}) {}

/** A successful second factor: how it was given, and how many unused recovery codes are left. */
export class TwoFactorVerification extends Schema.Class<TwoFactorVerification>("TwoFactorVerification")({
  method: Schema.Literal("totp", "recovery-code"),
  recoveryCodesLeft: Schema.Int
}) {}

/** A user's two-factor state, for a settings page. */
export class TwoFactorStatus extends Schema.Class<TwoFactorStatus>("TwoFactorStatus")({
  enabled: Schema.Boolean,
  recoveryCodesLeft: Schema.Int
}) {}
