import { createHash, createHmac, hkdfSync, timingSafeEqual } from "node:crypto"
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Duration, Effect, Option } from "effect"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { TwoFactor } from "../../services/identity/TwoFactor.js"
import { SigningKeys } from "../../services/platform/SigningKeys.js"
import type { DashboardAuth } from "./session.js"

/**
 * A dashboard sign-in waiting for its second factor (docs/dashboard.md, "Account and security"). The password
 * was right and the person has two-factor sign-in on: no session yet, only a cookie saying whose sign-in it is,
 * for which company, until when, and for which browser. It is signed with an HMAC key derived (HKDF) from the
 * persisted signing key, so every instance can check it and nobody can make one; it lives five minutes and is
 * bound to the browser's signed-out cookie, which starting the session replaces, so it serves one sign-in.
 */

const PENDING_COOKIE = "ribbon_dashboard_second_step"

/** How long the second step waits for its code. */
export const secondStepMinutes = 5

/** The second step's page and form. */
export const secondStepPath = "/dashboard/sign-in/two-factor"

export interface PendingSignIn {
  readonly userId: string
  readonly companyId: string
}

interface PendingClaims extends PendingSignIn {
  /** When the step ends, in milliseconds since the epoch. */
  readonly expiresAt: number
  /** SHA-256 of the browser binding the sign-in was made in. */
  readonly browser: string
}

const digest = (value: string) => createHash("sha256").update(value).digest("base64url")

const sameText = (a: string, b: string) => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

const isClaims = (value: unknown): value is PendingClaims => {
  const claims = value as Partial<PendingClaims> | null
  return (
    typeof claims === "object" &&
    claims !== null &&
    typeof claims.userId === "string" &&
    typeof claims.companyId === "string" &&
    typeof claims.expiresAt === "number" &&
    typeof claims.browser === "string"
  )
}

export const makeSignInSecondStep = (auth: DashboardAuth) =>
  Effect.gen(function* () {
    const signingKeys = yield* SigningKeys
    const twoFactor = yield* TwoFactor
    const secure = (yield* PublicUrl).startsWith("https:")
    const cookieOptions = { httpOnly: true, sameSite: "lax", path: "/dashboard/sign-in", secure } as const

    /** The cookie's HMAC key: its own key, derived from the signing key, never the signing key itself. */
    const key = Effect.map(signingKeys.current(), ({ privatePkcs8 }) =>
      Buffer.from(hkdfSync("sha256", privatePkcs8, "", "ribbon dashboard sign-in second step", 32))
    )

    const sign = (payload: string) =>
      Effect.map(key, (secret) => createHmac("sha256", secret).update(payload).digest("base64url"))

    /**
     * After a right password: when the person has two-factor sign-in on, the redirect to the second step with
     * the pending sign-in's cookie; none when the session can start at once.
     */
    const afterPassword = (request: HttpServerRequest.HttpServerRequest, pending: PendingSignIn) =>
      Effect.gen(function* () {
        if (!(yield* twoFactor.isEnabled(pending.userId))) return Option.none<HttpServerResponse.HttpServerResponse>()
        const binding = auth.browserBinding(request)
        // The sign-in form's CSRF check needs the binding, so a request without one never gets here.
        if (binding === undefined) return yield* Effect.dieMessage("A sign-in without a browser binding")
        const claims: PendingClaims = {
          ...pending,
          expiresAt: (yield* Clock.currentTimeMillis) + secondStepMinutes * 60_000,
          browser: digest(binding)
        }
        const payload = Buffer.from(JSON.stringify(claims)).toString("base64url")
        const cookie = `${payload}.${yield* sign(payload)}`
        return Option.some(
          HttpServerResponse.unsafeSetCookie(
            HttpServerResponse.redirect(secondStepPath, { status: 303 }),
            PENDING_COOKIE,
            cookie,
            { ...cookieOptions, maxAge: Duration.minutes(secondStepMinutes) }
          )
        )
      })

    /** The sign-in waiting for a second factor in this browser: none when absent, forged, expired or elsewhere. */
    const pendingOf = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function* () {
        const cookie = request.cookies[PENDING_COOKIE]
        const binding = auth.browserBinding(request)
        const [payload, signature, ...rest] = (cookie ?? "").split(".")
        if (binding === undefined || payload === undefined || signature === undefined || rest.length > 0) {
          return Option.none<PendingSignIn>()
        }
        if (!sameText(yield* sign(payload), signature)) return Option.none<PendingSignIn>()
        let claims: unknown
        try {
          claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
        } catch {
          return Option.none<PendingSignIn>()
        }
        if (!isClaims(claims) || claims.expiresAt <= (yield* Clock.currentTimeMillis)) {
          return Option.none<PendingSignIn>()
        }
        if (!sameText(claims.browser, digest(binding))) return Option.none<PendingSignIn>()
        return Option.some<PendingSignIn>({ userId: claims.userId, companyId: claims.companyId })
      })

    /** Clears the pending sign-in's cookie on `response`. */
    const clear = (response: HttpServerResponse.HttpServerResponse) =>
      HttpServerResponse.unsafeSetCookie(response, PENDING_COOKIE, "", { ...cookieOptions, maxAge: Duration.zero })

    /** Whether the request carries a pending sign-in's cookie at all (to clear a stale one). */
    const hasCookie = (request: HttpServerRequest.HttpServerRequest) => (request.cookies[PENDING_COOKIE] ?? "") !== ""

    return { afterPassword, pendingOf, clear, hasCookie } as const
  })

export type SignInSecondStep = Effect.Effect.Success<ReturnType<typeof makeSignInSecondStep>>
