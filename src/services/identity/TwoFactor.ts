import { createHash } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { HOTP, Secret, TOTP } from "otpauth"
import QRCode from "qrcode"
import { TwoFactorAlreadyEnabled, TwoFactorInvalidCode, TwoFactorNotEnrolled } from "../../domain/identity/Errors.js"
import {
  recoveryCodeCount,
  TwoFactorEnrolment,
  TwoFactorStatus,
  TwoFactorVerification,
  totpParameters,
  totpWindowSteps
} from "../../domain/identity/TwoFactor.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { nowDate } from "../platform/Time.js"
import { TwoFactorRepo } from "./TwoFactorRepo.js"
import { Users } from "./Users.js"

/**
 * Two-factor sign-in (docs/decisions/0059-two-factor-sign-in.md): a TOTP authenticator app (RFC 6238, SHA-1,
 * 6 digits, 30 s) with ten one-time recovery codes. Enrolment is `begin` then `confirm` with a first code;
 * `verify` is the second step of a sign-in. Time is the effect `Clock`. Failed verifications are throttled
 * where the attempt's source is known, at the HTTP edge: `AuthFailures.guard` with the kind `two-factor`,
 * the user's id as the account, and `isFailedSecondFactor` picking what counts.
 */

const issuer = "Ribbon"

const periodMillis = totpParameters.periodSeconds * 1000

/** 20 bytes (160 bits), the key length RFC 4226 §4 recommends for HMAC-SHA-1. */
const secretBytes = 20

/** Crockford's base32 alphabet: no i, l, o or u, so a code read aloud or typed is not misread. */
const recoveryAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

/** 12 characters of 5 bits each: 60 bits, shown as `xxxx-xxxx-xxxx`. */
const recoveryCodeLength = 12

const totpPattern = /^\d{6}$/
const recoveryPattern = new RegExp(`^[${recoveryAlphabet}]{${recoveryCodeLength}}$`)

/** Which failures of `verify` and `confirm` count toward the edge's backoff: wrong, late or replayed codes. */
export const isFailedSecondFactor = (error: { readonly _tag: string }) => error._tag === "TwoFactorInvalidCode"

/** A code as typed: spaces and hyphens dropped, lower case, and Crockford's look-alikes read as digits. */
const normalizeCode = (input: string) =>
  input.replace(/[\s-]/g, "").toLowerCase().replace(/[il]/g, "1").replace(/o/g, "0")

const newRecoveryCode = () => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(recoveryCodeLength))
  const chars = Array.from(bytes, (byte) => recoveryAlphabet[byte & 31]).join("")
  return `${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8)}`
}

const hashRecoveryCode = (normalized: string) => createHash("sha256").update(normalized).digest("hex")

/** The steps in the window around `now` at which `token` is the code of `secret`, the current step first. */
const matchingSteps = (secret: string, token: string, nowMillis: number) => {
  const current = Math.floor(nowMillis / periodMillis)
  const key = Secret.fromBase32(secret)
  const steps = [current]
  for (let i = 1; i <= totpWindowSteps; i++) steps.push(current - i, current + i)
  return steps.filter(
    (step) =>
      step >= 0 &&
      HOTP.validate({
        token,
        secret: key,
        algorithm: totpParameters.algorithm,
        digits: totpParameters.digits,
        counter: step,
        window: 0
      }) === 0
  )
}

const wrongCode = () => new TwoFactorInvalidCode({ message: "This code is not right. Enter the current one." })

const notEnrolled = () => new TwoFactorNotEnrolled({ message: "Two-factor sign-in is not turned on." })

/** A secret as an app takes it: the base32 text, its `otpauth://` URI labelled `label`, and that URI's QR code. */
const enrolmentOf = (secret: string, label: string) =>
  Effect.gen(function* () {
    const otpauthUri = new TOTP({
      issuer,
      label,
      secret: Secret.fromBase32(secret),
      algorithm: totpParameters.algorithm,
      digits: totpParameters.digits,
      period: totpParameters.periodSeconds
    }).toString()
    const qrSvg = yield* Effect.promise(() => QRCode.toString(otpauthUri, { type: "svg", errorCorrectionLevel: "M" }))
    return TwoFactorEnrolment.make({ secret, otpauthUri, qrSvg })
  })

export class TwoFactor extends Effect.Service<TwoFactor>()("TwoFactor", {
  dependencies: [TwoFactorRepo.Default, Users.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* TwoFactorRepo
    const users = yield* Users

    /** A database error inside a transaction with typed failures is a defect, as everywhere else. */
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * The step of a valid TOTP code for the row's secret, never one at or before the last used step.
     * A code of a used step is refused with its own message; both count as failures.
     */
    const acceptedStep = (row: { readonly secret: string; readonly lastUsedStep: number | null }, token: string) =>
      Effect.gen(function* () {
        const steps = matchingSteps(row.secret, token, yield* Clock.currentTimeMillis)
        const fresh = steps.find((step) => row.lastUsedStep === null || step > row.lastUsedStep)
        if (fresh !== undefined) return fresh
        if (steps.length > 0) {
          return yield* new TwoFactorInvalidCode({ message: "This code was already used. Wait for the next one." })
        }
        return yield* wrongCode()
      })

    /** Ten new recovery codes for the user, replacing any others; in the caller's transaction. */
    const issueRecoveryCodes = (userId: string) =>
      Effect.gen(function* () {
        const codes = Array.from({ length: recoveryCodeCount }, newRecoveryCode)
        yield* repo.replaceRecoveryCodes(
          userId,
          codes.map((code) => hashRecoveryCode(normalizeCode(code)))
        )
        return codes
      })

    /**
     * Starts an enrolment: a new secret, its `otpauth://` URI (labelled `label`, usually the e-mail) and QR
     * code. Nothing changes for sign-in until `confirm`; starting again replaces an unconfirmed secret.
     */
    const begin = Effect.fn("TwoFactor.begin")(function* (userId: string, label: string) {
      const trimmed = label.trim()
      if (trimmed.length === 0 || trimmed.length > 200) {
        return yield* InvalidRequest.field("label", "Expected 1 to 200 characters")
      }
      const secret = new Secret({ size: secretBytes }).base32
      const started = yield* repo.upsertPending(userId, secret, yield* nowDate)
      if (Option.isNone(started)) {
        return yield* new TwoFactorAlreadyEnabled({
          message: "Two-factor sign-in is already on. Turn it off first to use another app."
        })
      }
      return yield* enrolmentOf(secret, trimmed)
    })

    /**
     * The enrolment under way (begun, not yet confirmed), shown again: none when there is none or two-factor
     * is already on. Lets a page show the same secret after a wrong first code.
     */
    const enrolment = Effect.fn("TwoFactor.enrolment")(function* (userId: string, label: string) {
      const row = Option.getOrUndefined(yield* repo.find(userId))
      if (row === undefined || row.confirmedAt !== null) return Option.none<TwoFactorEnrolment>()
      return Option.some(yield* enrolmentOf(row.secret, label.trim()))
    })

    /**
     * Ends the enrolment with a first code from the app: two-factor sign-in is on, and the ten recovery
     * codes are returned, the only time they are shown (only their hashes are kept).
     */
    const confirm = Effect.fn("TwoFactor.confirm")(function* (userId: string, code: string) {
      const row = Option.getOrUndefined(yield* repo.find(userId))
      if (row === undefined) {
        return yield* new TwoFactorNotEnrolled({ message: "No enrolment is under way. Start again." })
      }
      if (row.confirmedAt !== null) {
        return yield* new TwoFactorAlreadyEnabled({ message: "Two-factor sign-in is already on." })
      }
      const token = normalizeCode(code)
      if (!totpPattern.test(token)) return yield* wrongCode()
      const step = yield* acceptedStep(row, token)
      const at = yield* nowDate
      return yield* transaction(
        Effect.gen(function* () {
          const confirmed = yield* repo.spendStep(userId, step, { confirming: true, at })
          // Another request confirmed (or restarted) the enrolment since it was read.
          if (Option.isNone(confirmed)) return yield* wrongCode()
          return yield* issueRecoveryCodes(userId)
        })
      )
    })

    /**
     * The second step of a sign-in: a current TOTP code (±30 s, each step once) or an unused recovery code,
     * which is then spent.
     */
    const verify = Effect.fn("TwoFactor.verify")(function* (userId: string, codeOrRecoveryCode: string) {
      const row = Option.getOrUndefined(yield* repo.find(userId))
      if (row === undefined || row.confirmedAt === null) return yield* notEnrolled()
      const code = normalizeCode(codeOrRecoveryCode)
      if (totpPattern.test(code)) {
        const step = yield* acceptedStep(row, code)
        const spent = yield* repo.spendStep(userId, step, { confirming: false, at: yield* nowDate })
        // A concurrent request spent this step (or a later one) first.
        if (Option.isNone(spent)) return yield* wrongCode()
        return TwoFactorVerification.make({
          method: "totp",
          recoveryCodesLeft: yield* repo.countUnusedRecoveryCodes(userId)
        })
      }
      if (!recoveryPattern.test(code)) return yield* wrongCode()
      const spent = yield* repo.spendRecoveryCode(userId, hashRecoveryCode(code), yield* nowDate)
      if (Option.isNone(spent)) {
        return yield* new TwoFactorInvalidCode({ message: "This recovery code is not right or was already used." })
      }
      return TwoFactorVerification.make({
        method: "recovery-code",
        recoveryCodesLeft: yield* repo.countUnusedRecoveryCodes(userId)
      })
    })

    /** Whether the user's sign-ins need a second factor (an unconfirmed enrolment does not count). */
    const isEnabled = Effect.fn("TwoFactor.isEnabled")(function* (userId: string) {
      const row = yield* repo.find(userId)
      return Option.isSome(row) && row.value.confirmedAt !== null
    })

    /** Whether it is on, and how many recovery codes are left to use. */
    const status = Effect.fn("TwoFactor.status")(function* (userId: string) {
      const enabled = yield* isEnabled(userId)
      return TwoFactorStatus.make({
        enabled,
        recoveryCodesLeft: enabled ? yield* repo.countUnusedRecoveryCodes(userId) : 0
      })
    })

    /** Turns two-factor sign-in off after the password is given again; the secret and recovery codes go. */
    const disable = Effect.fn("TwoFactor.disable")(function* (userId: string, password: string) {
      yield* users.confirmPassword(userId, password)
      const deleted = yield* repo.deleteConfirmed(userId)
      if (Option.isNone(deleted)) return yield* notEnrolled()
    })

    /** Ten new recovery codes after the password is given again; the old ones stop working. */
    const regenerateRecoveryCodes = Effect.fn("TwoFactor.regenerateRecoveryCodes")(function* (
      userId: string,
      password: string
    ) {
      yield* users.confirmPassword(userId, password)
      return yield* transaction(
        Effect.gen(function* () {
          if (Option.isNone(yield* repo.lockConfirmed(userId))) return yield* notEnrolled()
          return yield* issueRecoveryCodes(userId)
        })
      )
    })

    return { begin, enrolment, confirm, verify, isEnabled, status, disable, regenerateRecoveryCodes } as const
  })
}) {}
