import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { DashboardSessions } from "../../../src/services/company/DashboardSessions.js"
import { Members } from "../../../src/services/company/Members.js"
import { BaseUrl, RealPortServer, TimeTravel } from "../../support/auth.js"
import { csrfOf, DashboardBrowser, strongPassword } from "../../support/dashboard.js"
import { asMemberOf, ownerOf } from "../../support/dashboardMembers.js"
import { liveSessions } from "../../support/twoFactor.js"

/**
 * Dashboard sessions over HTTP: sign-in, sign-out, idle expiry and revocation end a session at its next request;
 * every form's CSRF token is checked before anything runs; a session sees only its own company, and a company id
 * of another company in a form gets the 404 page.
 */

describe("dashboard sessions", () => {
  it.layer(RealPortServer, { timeout: 180_000 })((it) => {
    it.effect("sign-out ends the session row; sign-in starts a new one; a wrong password is refused", () =>
      Effect.gen(function* () {
        const { browser, email, userId } = yield* ownerOf(yield* BaseUrl, "Signers")
        const oldCookie = browser.cookies.get("ribbon_dashboard")!
        const home = yield* Effect.promise(() => browser.get("/dashboard"))

        const out = yield* Effect.promise(() =>
          browser.post("/dashboard/sign-out", { csrf: csrfOf(home.text, "/dashboard/sign-out") })
        )
        expect(out.status).toBe(303)
        expect(out.location).toBe("/dashboard/sign-in")
        expect(browser.cookies.has("ribbon_dashboard")).toBe(false)
        expect(yield* liveSessions(userId)).toBe(0)
        const signInPage = yield* Effect.promise(() => browser.get("/dashboard/sign-in"))
        expect(signInPage.text).toContain("You are signed out.")
        expect((yield* Effect.promise(() => browser.get("/dashboard"))).location).toBe("/dashboard/sign-in")

        // The old cookie, sent again, is no session.
        const replay = new DashboardBrowser(yield* BaseUrl)
        replay.cookies.set("ribbon_dashboard", oldCookie)
        expect((yield* Effect.promise(() => replay.get("/dashboard"))).location).toBe("/dashboard/sign-in")

        const wrong = yield* Effect.promise(() => browser.signIn(email, "not-the-password"))
        expect(wrong.status).toBe(401)
        expect(wrong.text).toContain("The e-mail or password is not right.")
        expect(yield* liveSessions(userId)).toBe(0)

        const signedIn = yield* Effect.promise(() => browser.signIn(email.toUpperCase(), strongPassword))
        expect(signedIn.status).toBe(303)
        expect(signedIn.location).toBe("/dashboard")
        expect((yield* Effect.promise(() => browser.get("/dashboard"))).text).toContain("Signers")
        expect(yield* liveSessions(userId)).toBe(1)
        // Signed in, the sign-in page sends the browser home.
        expect((yield* Effect.promise(() => browser.get("/dashboard/sign-in"))).location).toBe("/dashboard")
      })
    )

    it.effect("a form without its CSRF token, or with another browser's, is refused and changes nothing", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser, email, userId } = yield* ownerOf(baseUrl, "Guarded")
        const other = new DashboardBrowser(baseUrl)
        yield* Effect.promise(() => other.signUp("Elsewhere"))
        const othersToken = csrfOf((yield* Effect.promise(() => other.get("/dashboard"))).text, "/dashboard/sign-out")

        for (const csrf of [undefined, "", "forged", othersToken]) {
          const fields: Record<string, string> = csrf === undefined ? {} : { csrf }
          const out = yield* Effect.promise(() => browser.post("/dashboard/sign-out", fields))
          expect(out.status, String(csrf)).toBe(403)
          expect(out.text).toContain("This form has expired")
          expect(yield* liveSessions(userId)).toBe(1)
        }

        // Signed out forms too: a sign-up whose token is not this browser's makes nothing.
        const stranger = new DashboardBrowser(baseUrl)
        yield* Effect.promise(() => stranger.get("/dashboard/sign-up"))
        const signUpToken = csrfOf(
          (yield* Effect.promise(() => new DashboardBrowser(baseUrl).get("/dashboard/sign-up"))).text
        )
        const sql = yield* SqlClient.SqlClient
        const [before] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`
        const forged = yield* Effect.promise(() =>
          stranger.post("/dashboard/sign-up", {
            csrf: signUpToken,
            email: "forged@example.com",
            password: strongPassword,
            companyName: "Forged"
          })
        )
        expect(forged.status).toBe(403)
        const [after] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`
        expect(after).toEqual(before)
        const signIn = yield* Effect.promise(() =>
          stranger.post("/dashboard/sign-in", { email, password: strongPassword })
        )
        expect(signIn.status).toBe(403)
        expect(stranger.cookies.has("ribbon_dashboard")).toBe(false)
      })
    )

    it.effect("a session sees only its company; another company's id in a form gets the 404 page", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const a = yield* ownerOf(baseUrl, "Alice Alpha")
        const b = yield* ownerOf(baseUrl, "Bob Beta")
        const alice = a.browser

        const home = yield* Effect.promise(() => alice.get("/dashboard?environment=test"))
        expect(home.text).toContain("Alice Alpha")
        expect(home.text).not.toContain("Bob Beta")
        expect(home.text).not.toContain(b.companyId)

        const csrf = csrfOf(home.text, "/dashboard/sign-out")
        const switched = yield* Effect.promise(() =>
          alice.post("/dashboard/switch-company", { csrf, companyId: b.companyId })
        )
        expect(switched.status).toBe(404)
        expect(switched.text).not.toContain("Bob Beta")
        const still = yield* Effect.promise(() => alice.get("/dashboard"))
        expect(still.text).toContain("Alice Alpha")

        // Once a member of Bob's company too, Alice may switch to it.
        yield* Effect.flatMap(Members, (members) =>
          members.add({ companyId: b.companyId, userId: a.userId, role: "viewer" })
        )
        const withSwitcher = yield* Effect.promise(() => alice.get("/dashboard"))
        expect(withSwitcher.text).toContain('action="/dashboard/switch-company"')
        const moved = yield* Effect.promise(() =>
          alice.post("/dashboard/switch-company", {
            csrf: csrfOf(withSwitcher.text, "/dashboard/switch-company"),
            companyId: b.companyId
          })
        )
        expect(moved.status).toBe(303)
        const there = yield* Effect.promise(() => alice.get("/dashboard"))
        expect(there.text).toContain("<h1>Bob Beta</h1>")
        expect(there.text).toMatch(/<dd>viewer: /)
      })
    )

    it.effect("a revoked session, or one idle for 12 hours, is signed out at its next request", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser, email, userId, companyId } = yield* ownerOf(baseUrl, "Revoked")
        const home = yield* Effect.promise(() => browser.get("/dashboard"))
        expect(home.status).toBe(200)

        // As removing the member from the company does.
        expect(yield* Effect.flatMap(DashboardSessions, (s) => s.revokeAllFor(userId, companyId))).toBe(1)
        const post = yield* Effect.promise(() =>
          browser.post("/dashboard/sign-out", { csrf: csrfOf(home.text, "/dashboard/sign-out") })
        )
        expect(post.status).toBe(403)
        expect(post.text).toContain("You are signed out")
        const next = yield* Effect.promise(() => browser.get("/dashboard"))
        expect(next.status).toBe(303)
        expect(next.location).toBe("/dashboard/sign-in")

        yield* Effect.promise(() => browser.signIn(email))
        expect((yield* Effect.promise(() => browser.get("/dashboard"))).status).toBe(200)
        yield* Effect.flatMap(TimeTravel, (t) => t.advance("12 hours"))
        expect((yield* Effect.promise(() => browser.get("/dashboard"))).location).toBe("/dashboard/sign-in")
      })
    )

    it.effect("a member removed from the company is signed out of it at the next request", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const company = yield* ownerOf(baseUrl, "Removing")
        const person = yield* ownerOf(baseUrl, "Viewer's own")
        const viewer = yield* asMemberOf(person, company.companyId, "viewer")
        expect((yield* Effect.promise(() => viewer.get("/dashboard"))).text).toContain("<h1>Removing</h1>")

        yield* Effect.flatMap(Members, (members) =>
          members.remove({ companyId: company.companyId, by: { userId: company.userId }, userId: person.userId })
        )
        expect((yield* Effect.promise(() => viewer.get("/dashboard"))).location).toBe("/dashboard/sign-in")
      })
    )

    it.effect("an unknown dashboard page is the dashboard's 404 when signed in, sign-in otherwise", () =>
      Effect.gen(function* () {
        const browser = new DashboardBrowser(yield* BaseUrl)
        expect((yield* Effect.promise(() => browser.get("/dashboard/no-such-page"))).location).toBe(
          "/dashboard/sign-in"
        )
        yield* Effect.promise(() => browser.signUp("Lost"))
        const page = yield* Effect.promise(() => browser.get("/dashboard/no-such-page"))
        expect(page.status).toBe(404)
        expect(page.headers.get("content-type")).toContain("text/html")
        expect(page.text).toContain("There is no such page")
      })
    )
  })
})
