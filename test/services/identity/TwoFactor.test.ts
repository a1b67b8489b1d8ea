import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, TestClock } from "effect"
import { Secret, TOTP } from "otpauth"
import { AuthFailureLimits, makeAuthFailures } from "../../../src/http/AuthFailures.js"
import { RateLimiterMemoryLive } from "../../../src/layers/Redis.js"
import { isFailedSecondFactor, TwoFactor } from "../../../src/services/identity/TwoFactor.js"
import { Users } from "../../../src/services/identity/Users.js"
import { TestDatabase } from "../../support/database.js"

/**
 * Two-factor sign-in (src/services/identity/TwoFactor.ts) on a real database, its time driven by TestClock:
 * RFC 6238's test vectors, the ±1 step window, replays, recovery codes, and the edge's backoff around it.
 */

const password = "two factors please"

/** RFC 6238 Appendix B: the SHA-1 seed (ASCII "12345678901234567890"), times in seconds and 8-digit codes. */
const rfcSeed = Secret.fromLatin1("12345678901234567890")
const rfcVectors: ReadonlyArray<readonly [number, string]> = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"]
]

/** The 6-digit code an authenticator app shows for `secret` at `millis`. */
const codeAt = (secret: string, millis: number) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30, timestamp: millis })

/** 2030-01-01T00:00:10Z: ten seconds into a step, so ±30 s stays in the neighbouring steps. */
const now = Date.UTC(2030, 0, 1, 0, 0, 10)

let counter = 0

const newUser = Effect.flatMap(Users, (users) =>
  users.create({ email: `two-factor-${++counter}-${Math.random().toString(36).slice(2, 8)}@example.com`, password })
).pipe(Effect.orDie)

/** A user with two-factor sign-in on at `now`: their id, secret and recovery codes. */
const enrolledUser = Effect.gen(function* () {
  const twoFactor = yield* TwoFactor
  yield* TestClock.setTime(now)
  const user = yield* newUser
  const { secret } = yield* twoFactor.begin(user.id, user.email)
  const recoveryCodes = yield* twoFactor.confirm(user.id, codeAt(secret, now))
  return { user, secret, recoveryCodes }
})

/** What a user's two-factor rows hold, to show that a refused attempt changed nothing. */
const stateOf = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ secret: string; confirmed: boolean; lastUsedStep: string | null; unused: number; used: number }>`
      SELECT t.secret, t.confirmed_at IS NOT NULL AS confirmed, t.last_used_step::text AS last_used_step,
        (SELECT count(*)::int FROM user_recovery_codes c WHERE c.user_id = t.user_id AND c.used_at IS NULL) AS unused,
        (SELECT count(*)::int FROM user_recovery_codes c WHERE c.user_id = t.user_id AND c.used_at IS NOT NULL) AS used
      FROM user_two_factor t WHERE t.user_id = ${userId}`.pipe(Effect.orDie)
  )

const failureOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.flip(effect), (error) => error as E & { readonly _tag: string; readonly message: string })

describe("RFC 6238 Appendix B, SHA-1", () => {
  it("gives the spec's 8-digit codes at the spec's times", () => {
    for (const [seconds, expected] of rfcVectors) {
      const code = TOTP.generate({
        secret: rfcSeed,
        algorithm: "SHA1",
        digits: 8,
        period: 30,
        timestamp: seconds * 1000
      })
      expect(code, `T = ${seconds}`).toBe(expected)
    }
  })
})

describe("TwoFactor", () => {
  it.layer(
    Layer.mergeAll(TwoFactor.Default, Users.Default, RateLimiterMemoryLive).pipe(Layer.provideMerge(TestDatabase)),
    {
      timeout: 120_000
    }
  )((it) => {
    it.effect("accepts the spec's codes (their last 6 digits) with the spec's seed, the time read from the Clock", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const twoFactor = yield* TwoFactor
        const user = yield* newUser
        yield* twoFactor.begin(user.id, user.email)
        // The spec's seed in place of the random one, as an app that scanned it would hold it.
        yield* sql`UPDATE user_two_factor SET secret = ${rfcSeed.base32} WHERE user_id = ${user.id}`
        yield* TestClock.setTime(1111111109 * 1000)
        const codes = yield* twoFactor.confirm(user.id, "081804")
        expect(codes).toHaveLength(10)
        yield* TestClock.setTime(1234567890 * 1000)
        expect(yield* twoFactor.verify(user.id, "005924")).toMatchObject({ method: "totp", recoveryCodesLeft: 10 })
        yield* TestClock.setTime(2000000000 * 1000)
        expect((yield* twoFactor.verify(user.id, "279037")).method).toBe("totp")
        yield* TestClock.setTime(20000000000 * 1000)
        expect((yield* twoFactor.verify(user.id, "353130")).method).toBe("totp")
      })
    )

    it.effect("shows an enrolment under way again, the same secret; none before begin or once confirmed", () =>
      Effect.gen(function* () {
        const twoFactor = yield* TwoFactor
        yield* TestClock.setTime(now)
        const user = yield* newUser
        expect(yield* twoFactor.enrolment(user.id, user.email)).toEqual(Option.none())
        const begun = yield* twoFactor.begin(user.id, user.email)
        expect(Option.getOrThrow(yield* twoFactor.enrolment(user.id, user.email))).toEqual(begun)
        yield* twoFactor.confirm(user.id, codeAt(begun.secret, now))
        expect(yield* twoFactor.enrolment(user.id, user.email)).toEqual(Option.none())
      })
    )

    it.effect("enrols with a base32 secret, an otpauth URI and an SVG QR code; nothing counts before confirm", () =>
      Effect.gen(function* () {
        const twoFactor = yield* TwoFactor
        yield* TestClock.setTime(now)
        const user = yield* newUser
        const enrolment = yield* twoFactor.begin(user.id, ` ${user.email} `)
        expect(enrolment.secret).toMatch(/^[A-Z2-7]{32}$/)
        const uri = new URL(enrolment.otpauthUri)
        expect(uri.protocol).toBe("otpauth:")
        expect(uri.host).toBe("totp")
        expect(decodeURIComponent(uri.pathname)).toBe(`/Ribbon:${user.email}`)
        expect(Object.fromEntries(uri.searchParams)).toEqual({
          issuer: "Ribbon",
          secret: enrolment.secret,
          algorithm: "SHA1",
          digits: "6",
          period: "30"
        })
        expect(enrolment.qrSvg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
        expect(yield* twoFactor.isEnabled(user.id)).toBe(false)
        expect((yield* failureOf(twoFactor.verify(user.id, codeAt(enrolment.secret, now))))._tag).toBe(
          "TwoFactorNotEnrolled"
        )

        // Starting again replaces the unconfirmed secret: the first app's code no longer confirms.
        const again = yield* twoFactor.begin(user.id, user.email)
        expect(again.secret).not.toBe(enrolment.secret)
        expect((yield* failureOf(twoFactor.confirm(user.id, codeAt(enrolment.secret, now))))._tag).toBe(
          "TwoFactorInvalidCode"
        )
        const codes = yield* twoFactor.confirm(user.id, codeAt(again.secret, now))
        expect(codes).toHaveLength(10)
        expect(new Set(codes).size).toBe(10)
        for (const code of codes)
          expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$/)
        expect(yield* twoFactor.status(user.id)).toMatchObject({ enabled: true, recoveryCodesLeft: 10 })
        // Only hashes are kept.
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{
          codeHash: string
        }>`SELECT code_hash FROM user_recovery_codes WHERE user_id = ${user.id}`
        expect(stored).toHaveLength(10)
        for (const { codeHash } of stored) expect(codeHash).toMatch(/^[0-9a-f]{64}$/)

        // On, it cannot be enrolled again without turning it off first.
        const already = yield* failureOf(twoFactor.begin(user.id, user.email))
        expect(already._tag).toBe("TwoFactorAlreadyEnabled")
        expect((yield* stateOf(user.id))[0]?.secret).toBe(again.secret)
        expect((yield* failureOf(twoFactor.confirm(user.id, codeAt(again.secret, now))))._tag).toBe(
          "TwoFactorAlreadyEnabled"
        )
      })
    )

    it.effect("refuses an empty label, and a confirmation with a wrong code leaves the enrolment as it was", () =>
      Effect.gen(function* () {
        const twoFactor = yield* TwoFactor
        yield* TestClock.setTime(now)
        const user = yield* newUser
        const empty = yield* failureOf(twoFactor.begin(user.id, "  "))
        expect(empty).toMatchObject({ _tag: "InvalidRequest", errors: [{ path: "label" }] })
        expect(yield* stateOf(user.id)).toEqual([])

        const { secret } = yield* twoFactor.begin(user.id, user.email)
        const before = yield* stateOf(user.id)
        for (const wrong of [codeAt(secret, now - 60_000), "12345", "abcdef", "", "0000-0000-0000"]) {
          expect((yield* failureOf(twoFactor.confirm(user.id, wrong)))._tag, wrong).toBe("TwoFactorInvalidCode")
        }
        expect(yield* stateOf(user.id)).toEqual(before)
        expect(before[0]).toMatchObject({ confirmed: false, lastUsedStep: null, unused: 0 })
        expect(yield* twoFactor.isEnabled(user.id)).toBe(false)
      })
    )

    it.effect("accepts a code from 30 s earlier or later, refuses one 60 s off, and a wrong code changes nothing", () =>
      Effect.gen(function* () {
        const twoFactor = yield* TwoFactor
        const { user, secret } = yield* enrolledUser
        // The confirming code spent the current step; the next ones are read further on.
        yield* TestClock.adjust("30 seconds")
        const at = now + 30_000
        const before = yield* stateOf(user.id)
        for (const off of [-60_000, 60_000, 90_000]) {
          const refused = yield* failureOf(twoFactor.verify(user.id, codeAt(secret, at + off)))
          expect(refused, `${off / 1000} s`).toMatchObject({ _tag: "TwoFactorInvalidCode" })
          expect(refused.message).toContain("not right")
        }
        expect(yield* stateOf(user.id)).toEqual(before)

        // A code from the step before (typed late), then one from the step after (a clock running fast).
        yield* TestClock.adjust("30 seconds")
        expect((yield* twoFactor.verify(user.id, codeAt(secret, now + 30_000))).method).toBe("totp")
        expect((yield* twoFactor.verify(user.id, codeAt(secret, now + 90_000))).method).toBe("totp")
        expect((yield* stateOf(user.id))[0]?.lastUsedStep).toBe(String(Math.floor((now + 90_000) / 30_000)))
      })
    )

    it.effect("never accepts a step twice, nor a step before the last one used; of two at once only one passes", () =>
      Effect.gen(function* () {
        const twoFactor = yield* TwoFactor
        const { user, secret } = yield* enrolledUser
        // The code that confirmed the enrolment does not sign in.
        const confirming = yield* failureOf(twoFactor.verify(user.id, codeAt(secret, now)))
        expect(confirming).toMatchObject({ _tag: "TwoFactorInvalidCode" })
        expect(confirming.message).toContain("already used")

        yield* TestClock.adjust("30 seconds")
        const code = codeAt(secret, now + 30_000)
        expect((yield* twoFactor.verify(user.id, code)).method).toBe("totp")
        const replayed = yield* failureOf(twoFactor.verify(user.id, code))
        expect(replayed).toMatchObject({ _tag: "TwoFactorInvalidCode" })
        expect(replayed.message).toContain("already used")
        // Within its window the previous step's code is refused too, once a later step was used.
        yield* TestClock.adjust("15 seconds")
        expect((yield* failureOf(twoFactor.verify(user.id, codeAt(secret, now))))._tag).toBe("TwoFactorInvalidCode")

        // The same fresh code in two requests at once: one signs in, the other is refused.
        yield* TestClock.adjust("45 seconds")
        const fresh = codeAt(secret, now + 90_000)
        const results = yield* Effect.all([twoFactor.verify(user.id, fresh), twoFactor.verify(user.id, fresh)], {
          concurrency: "unbounded",
          mode: "either"
        })
        expect(results.filter(Either.isRight)).toHaveLength(1)
        expect(results.filter(Either.isLeft).map((r) => r.left._tag)).toEqual(["TwoFactorInvalidCode"])
      })
    )

    it.effect("takes each recovery code once, however it is typed; new ones replace the old", () =>
      Effect.gen(function* () {
        const twoFactor = yield* TwoFactor
        const { user, recoveryCodes } = yield* enrolledUser
        const [first, second, third] = recoveryCodes as [string, string, string]
        expect(yield* twoFactor.verify(user.id, first)).toMatchObject({ method: "recovery-code", recoveryCodesLeft: 9 })
        const again = yield* failureOf(twoFactor.verify(user.id, first))
        expect(again).toMatchObject({ _tag: "TwoFactorInvalidCode" })
        expect(again.message).toContain("already used")
        // Upper case, spaces instead of hyphens, no separators at all.
        expect((yield* twoFactor.verify(user.id, ` ${second.toUpperCase().replaceAll("-", " ")} `)).method).toBe(
          "recovery-code"
        )
        expect((yield* twoFactor.verify(user.id, third.replaceAll("-", ""))).recoveryCodesLeft).toBe(7)
        expect(yield* stateOf(user.id)).toMatchObject([{ unused: 7, used: 3 }])

        // A wrong one changes nothing.
        const before = yield* stateOf(user.id)
        expect((yield* failureOf(twoFactor.verify(user.id, "zzzz-zzzz-zzzz")))._tag).toBe("TwoFactorInvalidCode")
        expect(yield* stateOf(user.id)).toEqual(before)

        // New codes need the password; a wrong one leaves the old codes working.
        const wrongPassword = yield* failureOf(twoFactor.regenerateRecoveryCodes(user.id, "not the password"))
        expect(wrongPassword._tag).toBe("InvalidCredentials")
        expect(yield* stateOf(user.id)).toEqual(before)
        const renewed = yield* twoFactor.regenerateRecoveryCodes(user.id, password)
        expect(renewed).toHaveLength(10)
        expect(renewed).not.toContain(recoveryCodes[3])
        expect((yield* failureOf(twoFactor.verify(user.id, recoveryCodes[3]!)))._tag).toBe("TwoFactorInvalidCode")
        expect(yield* twoFactor.verify(user.id, renewed[0]!)).toMatchObject({ recoveryCodesLeft: 9 })
      })
    )

    it.effect("a user without two-factor sign-in has nothing to verify, disable or renew", () =>
      Effect.gen(function* () {
        const twoFactor = yield* TwoFactor
        yield* TestClock.setTime(now)
        const user = yield* newUser
        expect(yield* twoFactor.isEnabled(user.id)).toBe(false)
        expect(yield* twoFactor.status(user.id)).toMatchObject({ enabled: false, recoveryCodesLeft: 0 })
        const attempts: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
          twoFactor.verify(user.id, "123456"),
          twoFactor.verify(user.id, "abcd-efgh-jkmn"),
          twoFactor.confirm(user.id, "123456"),
          twoFactor.disable(user.id, password),
          twoFactor.regenerateRecoveryCodes(user.id, password)
        ]
        for (const attempt of attempts) {
          expect((yield* failureOf(attempt))._tag).toBe("TwoFactorNotEnrolled")
        }
        expect(yield* stateOf(user.id)).toEqual([])
      })
    )

    it.effect("turns off with the password only, taking the secret and recovery codes with it", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const twoFactor = yield* TwoFactor
        const { user, secret, recoveryCodes } = yield* enrolledUser
        const before = yield* stateOf(user.id)
        expect((yield* failureOf(twoFactor.disable(user.id, "not the password")))._tag).toBe("InvalidCredentials")
        expect(yield* stateOf(user.id)).toEqual(before)

        yield* twoFactor.disable(user.id, password)
        expect(yield* twoFactor.isEnabled(user.id)).toBe(false)
        expect(yield* stateOf(user.id)).toEqual([])
        const [codes] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM user_recovery_codes WHERE user_id = ${user.id}`
        expect(codes?.n).toBe(0)
        yield* TestClock.adjust("30 seconds")
        expect((yield* failureOf(twoFactor.verify(user.id, codeAt(secret, now + 30_000))))._tag).toBe(
          "TwoFactorNotEnrolled"
        )
        expect((yield* failureOf(twoFactor.verify(user.id, recoveryCodes[0]!)))._tag).toBe("TwoFactorNotEnrolled")
        expect((yield* failureOf(twoFactor.disable(user.id, password)))._tag).toBe("TwoFactorNotEnrolled")

        // It can be turned on again, with a new secret.
        const enrolment = yield* twoFactor.begin(user.id, user.email)
        expect(enrolment.secret).not.toBe(secret)
        yield* twoFactor.confirm(user.id, codeAt(enrolment.secret, now + 30_000))
        expect(yield* twoFactor.isEnabled(user.id)).toBe(true)
      })
    )

    it.effect("at the edge, wrong codes count against the user from any source, then even the right one waits", () =>
      Effect.gen(function* () {
        const twoFactor = yield* TwoFactor
        const { guard } = yield* makeAuthFailures.pipe(
          Effect.provideService(AuthFailureLimits, {
            perSource: { free: 10, window: "10 minutes", firstWait: "10 seconds", maxWait: "1 minute" },
            perAccount: { free: 2, window: "10 minutes", firstWait: "30 seconds", maxWait: "2 minutes" }
          })
        )
        const { user, secret } = yield* enrolledUser
        const attempt = (source: string, code: string) =>
          guard({ kind: "two-factor", source, account: user.id }, twoFactor.verify(user.id, code), isFailedSecondFactor)
        yield* TestClock.adjust("30 seconds")
        const right = codeAt(secret, now + 30_000)
        const wrong = right === "000000" ? "000001" : "000000"
        expect((yield* failureOf(attempt("192.0.2.1", wrong)))._tag).toBe("TwoFactorInvalidCode")
        expect((yield* failureOf(attempt("192.0.2.2", wrong)))._tag).toBe("TwoFactorInvalidCode")
        expect((yield* failureOf(attempt("192.0.2.3", wrong)))._tag).toBe("TwoFactorInvalidCode")
        // The third failure is beyond the user's two free ones: the right code waits 30 s, from anywhere.
        expect(yield* failureOf(attempt("198.51.100.9", right))).toMatchObject({
          _tag: "RateLimited",
          retryAfterSeconds: 30
        })
        yield* TestClock.adjust("30 seconds")
        expect((yield* attempt("198.51.100.9", codeAt(secret, now + 60_000))).method).toBe("totp")
        // Not being enrolled is no failure to count.
        const other = yield* newUser
        for (let i = 0; i < 4; i++) {
          const result = yield* failureOf(
            guard(
              { kind: "two-factor", source: "192.0.2.1", account: other.id },
              twoFactor.verify(other.id, wrong),
              isFailedSecondFactor
            )
          )
          expect(result._tag).toBe("TwoFactorNotEnrolled")
        }
      })
    )
  })
})
