import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, RealPortServer, TimeTravel } from "../../support/auth.js"
import { csrfOf, DashboardBrowser, strongPassword } from "../../support/dashboard.js"
import { asMemberOf, ownerOf } from "../../support/dashboardMembers.js"
import {
  AuthenticatorApp,
  enrolOver,
  keyOf,
  liveSessions,
  passwordStep,
  recoveryCodesOf,
  secondStep
} from "../../support/twoFactor.js"

/**
 * The account and security pages over HTTP: enrolment with a first code and the recovery codes shown once; the
 * sign-in's second step (a TOTP code or a recovery code, once each; a wrong, expired, forged or other browser's
 * step refused, with no session); new codes and turning off behind the password; the person's sessions and
 * "sign out other sessions"; the company's requirement, set by its owner only, sending a member without
 * two-factor to enrol before any other page.
 */

/** How far the tests moved the server's clock (it is shared by the file's tests): codes are computed for its time. */
let serverAheadMillis = 0

const advance = (millis: number) =>
  Effect.flatMap(TimeTravel, (t) =>
    Effect.sync(() => {
      serverAheadMillis += millis
    }).pipe(Effect.zipRight(t.advance(millis)))
  )

const appFor = (page: { readonly text: string }) => {
  const app = new AuthenticatorApp(keyOf(page.text))
  app.offsetMillis = serverAheadMillis
  return app
}

const enrol = (browser: DashboardBrowser) => enrolOver(browser, serverAheadMillis)

const twoFactorRow = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ confirmed: boolean; codes: number }>`SELECT t.confirmed_at IS NOT NULL AS confirmed,
        (SELECT count(*)::int FROM user_recovery_codes r WHERE r.user_id = t.user_id AND r.used_at IS NULL) AS codes
        FROM user_two_factor t WHERE t.user_id = ${userId}`,
      (rows) => rows[0]
    )
  ).pipe(Effect.orDie)

describe("dashboard account and security", () => {
  it.layer(RealPortServer, { timeout: 180_000 })((it) => {
    it.effect("enrols with a first code; the recovery codes are shown once; sign-in asks for a code", () =>
      Effect.gen(function* () {
        const { browser, email, userId } = yield* ownerOf(yield* BaseUrl, "Two Steps")

        const before = yield* Effect.promise(() => browser.get("/dashboard/account"))
        expect(before.status).toBe(200)
        expect(before.text).toContain("Set up two-factor sign-in")
        // Nothing to enrol before it is begun: the enrolment page sends back.
        expect((yield* Effect.promise(() => browser.get("/dashboard/account/two-factor"))).location).toBe(
          "/dashboard/account"
        )

        yield* Effect.promise(() => browser.submit("/dashboard/account", {}, "/dashboard/account/two-factor/begin"))
        const enrolPage = yield* Effect.promise(() => browser.get("/dashboard/account/two-factor"))
        // The QR code is an <svg> element in the page (the CSP's img-src is not involved), beside the key as text.
        expect(enrolPage.text).toMatch(/<div class="qr" role="img" aria-label="[^"]+"><svg width="200"/)
        expect(enrolPage.text).not.toContain("data:image")
        expect(enrolPage.headers.get("cache-control")).toBe("no-store")
        const app = appFor(enrolPage)
        // The page shown again (a reload) shows the same key.
        expect(keyOf((yield* Effect.promise(() => browser.get("/dashboard/account/two-factor"))).text)).toBe(app.key)

        const wrong = yield* Effect.promise(() =>
          browser.post("/dashboard/account/two-factor/confirm", {
            csrf: csrfOf(enrolPage.text, "/dashboard/account/two-factor/confirm"),
            code: app.wrongCode()
          })
        )
        expect(wrong.status).toBe(400)
        expect(wrong.text).toContain("This code is not right")
        expect(keyOf(wrong.text)).toBe(app.key)
        expect((yield* twoFactorRow(userId))?.confirmed).toBe(false)

        const shown = yield* Effect.promise(() =>
          browser.post("/dashboard/account/two-factor/confirm", {
            csrf: csrfOf(enrolPage.text, "/dashboard/account/two-factor/confirm"),
            code: app.code()
          })
        )
        expect(shown.status).toBe(200)
        expect(shown.headers.get("cache-control")).toBe("no-store")
        expect(shown.text).toContain("Two-factor sign-in is on.")
        const codes = recoveryCodesOf(shown.text)
        expect(new Set(codes).size).toBe(10)
        expect(yield* twoFactorRow(userId)).toEqual({ confirmed: true, codes: 10 })
        const account = yield* Effect.promise(() => browser.get("/dashboard/account"))
        expect(account.text).toContain("10 recovery codes left.")
        for (const code of codes) expect(account.text).not.toContain(code)

        // Sign out, then in: the password alone starts no session.
        yield* Effect.promise(() => browser.submit("/dashboard", {}, "/dashboard/sign-out"))
        const stepPage = yield* passwordStep(browser, email)
        expect(stepPage.status).toBe(200)
        expect(stepPage.text).toContain("Two-factor sign-in")
        expect((yield* Effect.promise(() => browser.get("/dashboard"))).location).toBe("/dashboard/sign-in")

        const refused = yield* secondStep(browser, stepPage, app.wrongCode())
        expect(refused.status).toBe(401)
        expect(refused.text).toContain("This code is not right")
        expect(yield* liveSessions(userId)).toBe(0)

        const signedIn = yield* secondStep(browser, stepPage, app.code())
        expect(signedIn.status).toBe(303)
        expect(signedIn.location).toBe("/dashboard")
        expect(yield* liveSessions(userId)).toBe(1)
        expect((yield* Effect.promise(() => browser.get("/dashboard"))).text).toContain("<h1>Two Steps</h1>")
        // The step is spent with the sign-in: the same pending cookie and form cannot start another session.
        const again = yield* secondStep(browser, stepPage, app.wrongCode())
        expect(again.status).toBe(403)

        // A recovery code works once.
        yield* Effect.promise(() => browser.submit("/dashboard", {}, "/dashboard/sign-out"))
        const recoveryPage = yield* passwordStep(browser, email)
        const recovered = yield* secondStep(browser, recoveryPage, codes[0]!.toUpperCase())
        expect(recovered.location).toBe("/dashboard")
        expect((yield* Effect.promise(() => browser.get("/dashboard"))).text).toContain("recovery code; 9 left")
        yield* Effect.promise(() => browser.submit("/dashboard", {}, "/dashboard/sign-out"))
        const reusePage = yield* passwordStep(browser, email)
        const reused = yield* secondStep(browser, reusePage, codes[0]!)
        expect(reused.status).toBe(401)
        expect(reused.text).toContain("not right or was already used")
        expect(yield* liveSessions(userId)).toBe(0)
      })
    )

    it.effect("the second step expires after five minutes, and is refused from another browser or forged", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser, email, userId } = yield* ownerOf(baseUrl, "Pending")
        const { app } = yield* enrol(browser)
        yield* Effect.promise(() => browser.submit("/dashboard", {}, "/dashboard/sign-out"))
        const stepPage = yield* passwordStep(browser, email)

        // The pending cookie copied to a browser with its own binding cookie: not its sign-in.
        const thief = new DashboardBrowser(baseUrl)
        yield* Effect.promise(() => thief.get("/dashboard/sign-in"))
        thief.cookies.set("ribbon_dashboard_second_step", browser.cookies.get("ribbon_dashboard_second_step")!)
        const stolen = yield* Effect.promise(() => thief.get("/dashboard/sign-in/two-factor"))
        expect(stolen.location).toBe("/dashboard/sign-in")

        // A cookie whose claims are changed no longer matches its signature.
        const [payload, signature] = browser.cookies.get("ribbon_dashboard_second_step")!.split(".")
        const claims = JSON.parse(Buffer.from(payload!, "base64url").toString("utf8"))
        const forged = new DashboardBrowser(baseUrl)
        for (const [k, v] of browser.cookies) forged.cookies.set(k, v)
        forged.cookies.set(
          "ribbon_dashboard_second_step",
          `${Buffer.from(JSON.stringify({ ...claims, expiresAt: claims.expiresAt + 3_600_000 })).toString("base64url")}.${signature}`
        )
        const forgedPost = yield* secondStep(forged, stepPage, app.code())
        expect(forgedPost.location).toBe("/dashboard/sign-in")
        expect(yield* liveSessions(userId)).toBe(0)

        yield* advance(6 * 60_000)
        app.offsetMillis = serverAheadMillis
        const late = yield* secondStep(browser, stepPage, app.code())
        expect(late.status).toBe(303)
        expect(late.location).toBe("/dashboard/sign-in")
        expect(browser.cookies.has("ribbon_dashboard_second_step")).toBe(false)
        expect((yield* Effect.promise(() => browser.get("/dashboard/sign-in"))).text).toContain("took too long")
        expect(yield* liveSessions(userId)).toBe(0)
      })
    )

    it.effect("new recovery codes and turning off ask for the password again", () =>
      Effect.gen(function* () {
        const { browser, email, userId } = yield* ownerOf(yield* BaseUrl, "Passwords")
        const { codes } = yield* enrol(browser)

        const page = yield* Effect.promise(() => browser.get("/dashboard/account/recovery-codes"))
        expect(page.text).toContain("every code you have now stops working")
        const wrong = yield* Effect.promise(() =>
          browser.post("/dashboard/account/recovery-codes", {
            csrf: csrfOf(page.text, "/dashboard/account/recovery-codes"),
            password: "not-it"
          })
        )
        expect(wrong.status).toBe(401)
        expect(wrong.text).toContain("The password is not right.")
        const fresh = yield* Effect.promise(() =>
          browser.post("/dashboard/account/recovery-codes", {
            csrf: csrfOf(page.text, "/dashboard/account/recovery-codes"),
            password: strongPassword
          })
        )
        expect(fresh.status).toBe(200)
        const newCodes = recoveryCodesOf(fresh.text)
        expect(newCodes).toHaveLength(10)
        expect(newCodes.some((code) => codes.includes(code))).toBe(false)

        const disable = yield* Effect.promise(() => browser.get("/dashboard/account/two-factor/disable"))
        const action = "/dashboard/account/two-factor/disable"
        const refused = yield* Effect.promise(() =>
          browser.post(action, { csrf: csrfOf(disable.text, action), password: "" })
        )
        expect(refused.status).toBe(401)
        expect(yield* twoFactorRow(userId)).toEqual({ confirmed: true, codes: 10 })
        const noCsrf = yield* Effect.promise(() => browser.post(action, { password: strongPassword }))
        expect(noCsrf.status).toBe(403)
        expect(yield* twoFactorRow(userId)).toEqual({ confirmed: true, codes: 10 })
        const off = yield* Effect.promise(() =>
          browser.post(action, { csrf: csrfOf(disable.text, action), password: strongPassword })
        )
        expect(off.location).toBe("/dashboard/account")
        expect(yield* twoFactorRow(userId)).toBeUndefined()
        expect((yield* Effect.promise(() => browser.get("/dashboard/account"))).text).toContain(
          "Two-factor sign-in is off."
        )

        // Off, sign-in is the password alone.
        yield* Effect.promise(() => browser.submit("/dashboard", {}, "/dashboard/sign-out"))
        expect((yield* Effect.promise(() => browser.signIn(email))).location).toBe("/dashboard")
      })
    )

    it.effect("lists the person's sessions and signs out the others", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser: laptop, email, userId } = yield* ownerOf(baseUrl, "Sessions")
        const phone = new DashboardBrowser(baseUrl)
        yield* Effect.promise(() => phone.signIn(email))
        const account = yield* Effect.promise(() => laptop.get("/dashboard/account"))
        expect(account.text.match(/<tr>/g)?.length).toBe(3)
        expect(account.text).toContain("This session")

        const confirm = yield* Effect.promise(() => laptop.get("/dashboard/account/sessions/sign-out-others"))
        expect(confirm.text).toContain("Your 1 other session ends")
        const action = "/dashboard/account/sessions/sign-out-others"
        // Another browser's token: refused, nothing ended.
        const phoneToken = csrfOf((yield* Effect.promise(() => phone.get("/dashboard"))).text, "/dashboard/sign-out")
        expect((yield* Effect.promise(() => laptop.post(action, { csrf: phoneToken }))).status).toBe(403)
        expect(yield* liveSessions(userId)).toBe(2)

        const done = yield* Effect.promise(() => laptop.post(action, { csrf: csrfOf(confirm.text, action) }))
        expect(done.location).toBe("/dashboard/account")
        expect(yield* liveSessions(userId)).toBe(1)
        expect((yield* Effect.promise(() => phone.get("/dashboard"))).location).toBe("/dashboard/sign-in")
        const after = yield* Effect.promise(() => laptop.get("/dashboard/account"))
        expect(after.text).toContain("1 other session is signed out.")
        expect(after.text).toContain("This is your only session.")
      })
    )

    it.effect("the owner requires two-factor: a member without it is sent to enrol; others may not change it", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser: owner, companyId } = yield* ownerOf(baseUrl, "Strict")
        const person = yield* ownerOf(baseUrl, "Admin's own")
        const admin = yield* asMemberOf(person, companyId, "admin")
        const required = () =>
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            Effect.map(
              sql<{
                requireTwoFactor: boolean
              }>`SELECT require_two_factor FROM companies WHERE id = ${companyId}`,
              (rows) => rows[0]!.requireTwoFactor
            )
          ).pipe(Effect.orDie)

        // An admin does not see the setting, and its form is refused.
        const adminAccount = yield* Effect.promise(() => admin.get("/dashboard/account"))
        expect(adminAccount.text).not.toContain("Require two-factor for every member")
        const refused = yield* Effect.promise(() =>
          admin.post("/dashboard/account/company-security", {
            csrf: csrfOf(adminAccount.text, "/dashboard/account/two-factor/begin"),
            requireTwoFactor: "yes"
          })
        )
        expect(refused.status).toBe(403)
        expect(refused.text).toContain("Not allowed")
        expect(yield* required()).toBe(false)

        const ownerAccount = yield* Effect.promise(() => owner.get("/dashboard/account"))
        expect(ownerAccount.text).toContain("Require two-factor for every member")
        const bad = yield* Effect.promise(() =>
          owner.post("/dashboard/account/company-security", {
            csrf: csrfOf(ownerAccount.text, "/dashboard/account/company-security"),
            requireTwoFactor: "maybe"
          })
        )
        expect(bad.status).toBe(400)
        expect(yield* required()).toBe(false)
        // An owner without two-factor who requires it is sent to enrol, and may still take the requirement back.
        const setting = (value: "yes" | "no") =>
          Effect.promise(() =>
            owner.post("/dashboard/account/company-security", {
              csrf: csrfOf(ownerAccount.text, "/dashboard/account/company-security"),
              requireTwoFactor: value
            })
          )
        expect((yield* setting("yes")).location).toBe("/dashboard/account")
        expect(yield* required()).toBe(true)
        expect((yield* Effect.promise(() => owner.get("/dashboard"))).location).toBe("/dashboard/account")
        expect((yield* setting("no")).location).toBe("/dashboard/account")
        expect(yield* required()).toBe(false)
        yield* enrol(owner)
        const set = yield* Effect.promise(() =>
          owner.post("/dashboard/account/company-security", {
            csrf: csrfOf(ownerAccount.text, "/dashboard/account/company-security"),
            requireTwoFactor: "yes"
          })
        )
        expect(set.location).toBe("/dashboard/account")
        expect(yield* required()).toBe(true)
        expect((yield* Effect.promise(() => owner.get("/dashboard"))).status).toBe(200)

        // The admin, without two-factor: every page and form but enrolment and sign-out goes to the account page.
        for (const path of ["/dashboard", "/dashboard/members", "/dashboard/account/recovery-codes"]) {
          const sent = yield* Effect.promise(() => admin.get(path))
          expect(sent.status, path).toBe(303)
          expect(sent.location, path).toBe("/dashboard/account")
        }
        const notice = yield* Effect.promise(() => admin.get("/dashboard/account"))
        expect(notice.text).toContain("Strict requires two-factor sign-in. Turn it on to continue.")
        const { app } = yield* enrol(admin)
        expect((yield* Effect.promise(() => admin.get("/dashboard"))).status).toBe(200)

        // Signing in again, the admin gives a code and goes straight in.
        yield* Effect.promise(() => admin.submit("/dashboard", {}, "/dashboard/sign-out"))
        const stepPage = yield* passwordStep(admin, person.email)
        expect((yield* secondStep(admin, stepPage, app.code())).location).toBe("/dashboard")
      })
    )
  })
})
