import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { DashboardSessions } from "../../../src/services/company/DashboardSessions.js"
import { Members } from "../../../src/services/company/Members.js"
import { BaseUrl, RealPortServer, TimeTravel } from "../../support/auth.js"
import { csrfOf, DashboardBrowser, strongPassword } from "../../support/dashboard.js"

/**
 * Dashboard sessions over HTTP: sign-in, sign-out, idle expiry and revocation end a session at its next request;
 * every form's CSRF token is checked before anything runs; a session sees only its own company, and a company id
 * of another company in a form gets the 404 page.
 */

const promise = <A>(run: () => Promise<A>) => Effect.promise(run)

/** The ids of a signed-up person and company, by the person's e-mail. */
const idsOf = (email: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ userId: string; companyId: string }>`SELECT u.id AS user_id, m.company_id FROM users u
        JOIN company_members m ON m.user_id = u.id WHERE u.email = ${email} ORDER BY m.created_at LIMIT 1`,
      (rows) => rows[0]!
    )
  ).pipe(Effect.orDie)

const liveSessions = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`SELECT count(*)::int AS n FROM dashboard_sessions
        WHERE user_id = ${userId} AND revoked_at IS NULL`,
      (rows) => rows[0]!.n
    )
  ).pipe(Effect.orDie)

describe("dashboard sessions", () => {
  it.layer(RealPortServer, { timeout: 180_000 })((it) => {
    it.effect("sign-out ends the session row; sign-in starts a new one; a wrong password is refused", () =>
      Effect.gen(function* () {
        const browser = new DashboardBrowser(yield* BaseUrl)
        const { email } = yield* promise(() => browser.signUp("Signers"))
        const { userId } = yield* idsOf(email)
        const oldCookie = browser.cookies.get("ribbon_dashboard")!
        const home = yield* promise(() => browser.get("/dashboard"))

        const out = yield* promise(() =>
          browser.post("/dashboard/sign-out", { csrf: csrfOf(home.text, "/dashboard/sign-out") })
        )
        expect(out.status).toBe(303)
        expect(out.location).toBe("/dashboard/sign-in")
        expect(browser.cookies.has("ribbon_dashboard")).toBe(false)
        expect(yield* liveSessions(userId)).toBe(0)
        const signInPage = yield* promise(() => browser.get("/dashboard/sign-in"))
        expect(signInPage.text).toContain("You are signed out.")
        expect((yield* promise(() => browser.get("/dashboard"))).location).toBe("/dashboard/sign-in")

        // The old cookie, sent again, is no session.
        const replay = new DashboardBrowser(yield* BaseUrl)
        replay.cookies.set("ribbon_dashboard", oldCookie)
        expect((yield* promise(() => replay.get("/dashboard"))).location).toBe("/dashboard/sign-in")

        const wrong = yield* promise(() => browser.signIn(email, "not-the-password"))
        expect(wrong.status).toBe(401)
        expect(wrong.text).toContain("The e-mail or password is not right.")
        expect(yield* liveSessions(userId)).toBe(0)

        const signedIn = yield* promise(() => browser.signIn(email.toUpperCase(), strongPassword))
        expect(signedIn.status).toBe(303)
        expect(signedIn.location).toBe("/dashboard")
        expect((yield* promise(() => browser.get("/dashboard"))).text).toContain("Signers")
        expect(yield* liveSessions(userId)).toBe(1)
        // Signed in, the sign-in page sends the browser home.
        expect((yield* promise(() => browser.get("/dashboard/sign-in"))).location).toBe("/dashboard")
      })
    )

    it.effect("a form without its CSRF token, or with another browser's, is refused and changes nothing", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const browser = new DashboardBrowser(baseUrl)
        const { email } = yield* promise(() => browser.signUp("Guarded"))
        const { userId } = yield* idsOf(email)
        const other = new DashboardBrowser(baseUrl)
        yield* promise(() => other.signUp("Elsewhere"))
        const othersToken = csrfOf((yield* promise(() => other.get("/dashboard"))).text, "/dashboard/sign-out")

        for (const csrf of [undefined, "", "forged", othersToken]) {
          const fields: Record<string, string> = csrf === undefined ? {} : { csrf }
          const out = yield* promise(() => browser.post("/dashboard/sign-out", fields))
          expect(out.status, String(csrf)).toBe(403)
          expect(out.text).toContain("This form has expired")
          expect(yield* liveSessions(userId)).toBe(1)
        }

        // Signed out forms too: a sign-up whose token is not this browser's makes nothing.
        const stranger = new DashboardBrowser(baseUrl)
        yield* promise(() => stranger.get("/dashboard/sign-up"))
        const signUpToken = csrfOf((yield* promise(() => new DashboardBrowser(baseUrl).get("/dashboard/sign-up"))).text)
        const sql = yield* SqlClient.SqlClient
        const [before] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`
        const forged = yield* promise(() =>
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
        const signIn = yield* promise(() => stranger.post("/dashboard/sign-in", { email, password: strongPassword }))
        expect(signIn.status).toBe(403)
        expect(stranger.cookies.has("ribbon_dashboard")).toBe(false)
      })
    )

    it.effect("a session sees only its company; another company's id in a form gets the 404 page", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const alice = new DashboardBrowser(baseUrl)
        const bob = new DashboardBrowser(baseUrl)
        const aliceEmail = (yield* promise(() => alice.signUp("Alice Alpha"))).email
        const bobEmail = (yield* promise(() => bob.signUp("Bob Beta"))).email
        const a = yield* idsOf(aliceEmail)
        const b = yield* idsOf(bobEmail)

        const home = yield* promise(() => alice.get("/dashboard?environment=test"))
        expect(home.text).toContain("Alice Alpha")
        expect(home.text).not.toContain("Bob Beta")
        expect(home.text).not.toContain(b.companyId)

        const csrf = csrfOf(home.text, "/dashboard/sign-out")
        const switched = yield* promise(() => alice.post("/dashboard/switch-company", { csrf, companyId: b.companyId }))
        expect(switched.status).toBe(404)
        expect(switched.text).not.toContain("Bob Beta")
        const still = yield* promise(() => alice.get("/dashboard"))
        expect(still.text).toContain("Alice Alpha")

        // Once a member of Bob's company too, Alice may switch to it.
        yield* Effect.flatMap(Members, (members) =>
          members.add({ companyId: b.companyId, userId: a.userId, role: "viewer" })
        )
        const withSwitcher = yield* promise(() => alice.get("/dashboard"))
        expect(withSwitcher.text).toContain('action="/dashboard/switch-company"')
        const moved = yield* promise(() =>
          alice.post("/dashboard/switch-company", {
            csrf: csrfOf(withSwitcher.text, "/dashboard/switch-company"),
            companyId: b.companyId
          })
        )
        expect(moved.status).toBe(303)
        const there = yield* promise(() => alice.get("/dashboard"))
        expect(there.text).toContain("<h1>Bob Beta</h1>")
        expect(there.text).toMatch(/<dd>viewer: /)
      })
    )

    it.effect("a revoked session, or one idle for 12 hours, is signed out at its next request", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const browser = new DashboardBrowser(baseUrl)
        const { email } = yield* promise(() => browser.signUp("Revoked"))
        const { userId, companyId } = yield* idsOf(email)
        const home = yield* promise(() => browser.get("/dashboard"))
        expect(home.status).toBe(200)

        // As removing the member from the company does.
        expect(yield* Effect.flatMap(DashboardSessions, (s) => s.revokeAllFor(userId, companyId))).toBe(1)
        const post = yield* promise(() =>
          browser.post("/dashboard/sign-out", { csrf: csrfOf(home.text, "/dashboard/sign-out") })
        )
        expect(post.status).toBe(403)
        expect(post.text).toContain("You are signed out")
        const next = yield* promise(() => browser.get("/dashboard"))
        expect(next.status).toBe(303)
        expect(next.location).toBe("/dashboard/sign-in")

        yield* promise(() => browser.signIn(email))
        expect((yield* promise(() => browser.get("/dashboard"))).status).toBe(200)
        yield* Effect.flatMap(TimeTravel, (t) => t.advance("12 hours"))
        expect((yield* promise(() => browser.get("/dashboard"))).location).toBe("/dashboard/sign-in")
      })
    )

    it.effect("a member removed from the company is signed out of it at the next request", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const owner = new DashboardBrowser(baseUrl)
        const viewer = new DashboardBrowser(baseUrl)
        const ownerEmail = (yield* promise(() => owner.signUp("Removing"))).email
        const viewerEmail = (yield* promise(() => viewer.signUp("Viewer's own"))).email
        const company = yield* idsOf(ownerEmail)
        const person = yield* idsOf(viewerEmail)
        const members = yield* Members
        yield* members.add({ companyId: company.companyId, userId: person.userId, role: "viewer" })
        const home = yield* promise(() => viewer.get("/dashboard"))
        yield* promise(() =>
          viewer.post("/dashboard/switch-company", {
            csrf: csrfOf(home.text, "/dashboard/switch-company"),
            companyId: company.companyId
          })
        )
        expect((yield* promise(() => viewer.get("/dashboard"))).text).toContain("<h1>Removing</h1>")

        yield* members.remove({ companyId: company.companyId, by: { userId: company.userId }, userId: person.userId })
        expect((yield* promise(() => viewer.get("/dashboard"))).location).toBe("/dashboard/sign-in")
      })
    )

    it.effect("an unknown dashboard page is the dashboard's 404 when signed in, sign-in otherwise", () =>
      Effect.gen(function* () {
        const browser = new DashboardBrowser(yield* BaseUrl)
        expect((yield* promise(() => browser.get("/dashboard/no-such-page"))).location).toBe("/dashboard/sign-in")
        yield* promise(() => browser.signUp("Lost"))
        const page = yield* promise(() => browser.get("/dashboard/no-such-page"))
        expect(page.status).toBe(404)
        expect(page.headers.get("content-type")).toContain("text/html")
        expect(page.text).toContain("There is no such page")
      })
    )
  })
})
