import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { Secret, TOTP } from "otpauth"
import { csrfOf, type DashboardBrowser } from "./dashboard.js"

/**
 * An authenticator app for tests: the key read from the dashboard's enrolment page, and codes computed for the
 * server's time (wall clock plus whatever `TimeTravel` moved it), each of a step later than the last one used,
 * since the service accepts each step once.
 */

const periodMillis = 30_000

/** The key the enrolment page shows for typing by hand (grouped by four), without its spaces. */
export const keyOf = (html: string): string => {
  const key = html.match(/<code id="two-factor-key">([A-Z2-7 ]+)<\/code>/)?.[1]
  if (key === undefined) throw new Error("No two-factor key on the page")
  return key.replace(/ /g, "")
}

/** The recovery codes a page shows once. */
export const recoveryCodesOf = (html: string): ReadonlyArray<string> =>
  [...html.matchAll(/<li><code>([0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4})<\/code><\/li>/g)].map((m) => m[1]!)

export class AuthenticatorApp {
  private lastStep = -1
  /** How far the server's clock is ahead of the wall clock. */
  offsetMillis = 0

  constructor(readonly key: string) {}

  private codeOf(step: number) {
    return TOTP.generate({
      secret: Secret.fromBase32(this.key),
      algorithm: "SHA1",
      digits: 6,
      period: 30,
      timestamp: step * periodMillis
    })
  }

  /**
   * A code the server accepts now: of the current step, or of the next (the window allows one step either
   * side) when the current one was used. Throws when both were: move the server's clock on first.
   */
  code(): string {
    const current = Math.floor((Date.now() + this.offsetMillis) / periodMillis)
    const step = Math.max(current, this.lastStep + 1)
    if (step > current + 1) throw new Error("Both usable steps are spent: advance the server's clock")
    this.lastStep = step
    return this.codeOf(step)
  }

  /** A valid-looking code that is not the app's for any step near now. */
  wrongCode(): string {
    const current = Math.floor((Date.now() + this.offsetMillis) / periodMillis)
    const near = new Set([-2, -1, 0, 1, 2].map((d) => this.codeOf(current + d)))
    for (let n = 0; ; n++) {
      const candidate = String(n).padStart(6, "0")
      if (!near.has(candidate)) return candidate
    }
  }
}

// Driving the dashboard's two-factor pages over HTTP.

/** How many unrevoked dashboard sessions the person has. */
export const liveSessions = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{
        n: number
      }>`SELECT count(*)::int AS n FROM dashboard_sessions WHERE user_id = ${userId} AND revoked_at IS NULL`,
      (rows) => rows[0]!.n
    )
  ).pipe(Effect.orDie)

/**
 * Turns two-factor on from the account page of a signed-in browser (the server's clock `serverAheadMillis`
 * ahead of the wall clock): the app, the recovery codes and the page that showed them.
 */
export const enrolOver = (browser: DashboardBrowser, serverAheadMillis = 0) =>
  Effect.gen(function* () {
    const begun = yield* Effect.promise(() =>
      browser.submit("/dashboard/account", {}, "/dashboard/account/two-factor/begin")
    )
    expect(begun.status).toBe(303)
    expect(begun.location).toBe("/dashboard/account/two-factor")
    const enrolPage = yield* Effect.promise(() => browser.get("/dashboard/account/two-factor"))
    const app = new AuthenticatorApp(keyOf(enrolPage.text))
    app.offsetMillis = serverAheadMillis
    const shown = yield* Effect.promise(() =>
      browser.post("/dashboard/account/two-factor/confirm", {
        csrf: csrfOf(enrolPage.text, "/dashboard/account/two-factor/confirm"),
        code: app.code()
      })
    )
    expect(shown.status).toBe(200)
    const codes = recoveryCodesOf(shown.text)
    expect(codes).toHaveLength(10)
    return { app, codes, shown, enrolPage }
  })

/** The password step of a sign-in with two-factor on: it leads to the second step, and no session starts. */
export const passwordStep = (browser: DashboardBrowser, email: string) =>
  Effect.gen(function* () {
    const step = yield* Effect.promise(() => browser.signIn(email))
    expect(step.status).toBe(303)
    expect(step.location).toBe("/dashboard/sign-in/two-factor")
    expect(browser.cookies.has("ribbon_dashboard")).toBe(false)
    return yield* Effect.promise(() => browser.get("/dashboard/sign-in/two-factor"))
  })

export const secondStep = (browser: DashboardBrowser, page: { readonly text: string }, code: string) =>
  Effect.promise(() => browser.post("/dashboard/sign-in/two-factor", { csrf: csrfOf(page.text), code }))
