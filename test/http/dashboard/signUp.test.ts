import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, RealPortServer } from "../../support/auth.js"
import { DashboardBrowser, newEmail, strongPassword } from "../../support/dashboard.js"

/**
 * Sign-up on the dashboard over HTTP: a person, a sandbox company (its test default account, funded) and the
 * person as owner, and no API key; every bad form shows its problem beside the field and leaves no row.
 */

const counts = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ users: number; companies: number; accounts: number; members: number; sessions: number; keys: number }>`
      SELECT (SELECT count(*)::int FROM users) AS users, (SELECT count(*)::int FROM companies) AS companies,
        (SELECT count(*)::int FROM accounts) AS accounts, (SELECT count(*)::int FROM company_members) AS members,
        (SELECT count(*)::int FROM dashboard_sessions) AS sessions, (SELECT count(*)::int FROM api_keys) AS keys`,
    (rows) => rows[0]!
  )
).pipe(Effect.orDie)

describe("dashboard sign-up", () => {
  it.layer(RealPortServer, { timeout: 120_000 })((it) => {
    it.effect("makes the person, a sandbox company with a funded test account, and the person its owner", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const browser = new DashboardBrowser(yield* BaseUrl)
        const email = newEmail()
        const form = yield* Effect.promise(() => browser.get("/dashboard/sign-up"))
        expect(form.status).toBe(200)
        expect(form.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
        expect(form.headers.get("content-security-policy")).toContain("default-src 'none'")
        expect(form.headers.get("x-content-type-options")).toBe("nosniff")
        expect(form.headers.get("referrer-policy")).toBe("no-referrer")
        expect(form.headers.get("cache-control")).toBe("no-store")

        const before = yield* counts
        const { page } = yield* Effect.promise(() => browser.signUp("Acme Gifts", email))
        expect(page.location).toBe("/dashboard")
        const cookie = page.headers.getSetCookie().find((c) => c.startsWith("ribbon_dashboard="))!
        expect(cookie).toMatch(/HttpOnly/)
        expect(cookie).toMatch(/SameSite=Lax/)
        expect(cookie).toMatch(/Path=\/dashboard/)
        expect(cookie).not.toMatch(/Secure/)

        const after = yield* counts
        expect(after).toEqual({
          users: before.users + 1,
          companies: before.companies + 1,
          accounts: before.accounts + 1,
          members: before.members + 1,
          sessions: before.sessions + 1,
          keys: before.keys
        })
        const [made] = yield* sql<{ companyId: string; name: string; environment: string; role: string }>`
          SELECT c.id AS company_id, c.name, a.environment, m.role FROM users u
            JOIN company_members m ON m.user_id = u.id JOIN companies c ON c.id = m.company_id
            JOIN accounts a ON a.company_id = c.id AND a.is_default
          WHERE u.email = ${email}`
        expect(made).toMatchObject({ name: "Acme Gifts", environment: "test", role: "owner" })
        const [funds] = yield* sql<{
          spendingLimit: number | null
        }>`SELECT b.spending_limit::int AS spending_limit FROM billing_methods b
          JOIN accounts a ON a.id = b.account_id WHERE a.company_id = ${made!.companyId} AND b.is_default`
        expect(funds!.spendingLimit).toBeGreaterThan(0)

        const home = yield* Effect.promise(() => browser.get("/dashboard"))
        expect(home.status).toBe(200)
        expect(home.text).toContain("Acme Gifts")
        expect(home.text).toContain("Sandbox")
        expect(home.text).toContain("Your company is ready")
        expect(home.text).toMatch(/<dd>owner: /)
        // The flash is shown once.
        expect((yield* Effect.promise(() => browser.get("/dashboard"))).text).not.toContain("Your company is ready")
      })
    )

    it.effect("a bad form shows each problem beside its field and leaves nothing behind", () =>
      Effect.gen(function* () {
        const browser = new DashboardBrowser(yield* BaseUrl)
        const before = yield* counts
        const cases: ReadonlyArray<readonly [Record<string, string>, string, RegExp]> = [
          [{ email: "not-an-address", password: strongPassword, companyName: "Acme" }, "email", /e-mail address/],
          [{ email: newEmail(), password: "short", companyName: "Acme" }, "password", /8 to 200 characters/],
          [{ email: newEmail(), password: "password123", companyName: "Acme" }, "password", /Too common/],
          [{ email: newEmail(), password: strongPassword, companyName: "   " }, "companyName", /1 to 200 characters/],
          [
            { email: newEmail(), password: strongPassword, companyName: "x".repeat(201) },
            "companyName",
            /1 to 200 characters/
          ],
          [
            { email: `${"a".repeat(300)}@example.com`, password: strongPassword, companyName: "Acme" },
            "email",
            /e-mail/
          ]
        ]
        for (const [fields, field, message] of cases) {
          const page = yield* Effect.promise(() => browser.submit("/dashboard/sign-up", fields))
          expect(page.status, JSON.stringify(fields).slice(0, 80)).toBe(400)
          const error = page.text.match(new RegExp(`<p class="field-error" id="${field}-error">([^<]*)</p>`))
          expect(error?.[1], field).toMatch(message)
          expect(page.text).toMatch(new RegExp(`aria-describedby="[^"]*${field}-error"`))
          // What was typed is kept, the password never.
          if (field !== "email") expect(page.text).toContain(`value="${fields.email}"`)
          expect(page.text).not.toContain(strongPassword)
        }
        // Several problems at once are all shown.
        const all = yield* Effect.promise(() =>
          browser.submit("/dashboard/sign-up", { email: "nope", password: strongPassword, companyName: "" })
        )
        expect(all.text).toContain('id="email-error"')
        expect(all.text).toContain('id="companyName-error"')
        expect(yield* counts).toEqual(before)
      })
    )

    it.effect("an e-mail already registered is told to sign in, and nothing is made", () =>
      Effect.gen(function* () {
        const browser = new DashboardBrowser(yield* BaseUrl)
        const { email } = yield* Effect.promise(() => browser.signUp("First"))
        const before = yield* counts
        const other = new DashboardBrowser(yield* BaseUrl)
        const page = yield* Effect.promise(() =>
          other.submit("/dashboard/sign-up", {
            email: email.toUpperCase(),
            password: "another-password-entirely",
            companyName: "Second"
          })
        )
        expect(page.status).toBe(409)
        expect(page.text).toContain("This e-mail is already registered. Sign in instead.")
        expect(page.text).toContain('href="/dashboard/sign-in"')
        expect(yield* counts).toEqual(before)
      })
    )

    it.effect("a form sent as JSON, or too large, gets a page saying why, not a JSON error, and makes nothing", () =>
      Effect.gen(function* () {
        const browser = new DashboardBrowser(yield* BaseUrl)
        const before = yield* counts
        const json = yield* Effect.promise(() =>
          browser.request("/dashboard/sign-up", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ email: newEmail(), password: strongPassword, companyName: "Json" })
          })
        )
        expect(json.status).toBe(415)
        expect(json.headers.get("content-type")).toContain("text/html")
        expect(json.headers.get("content-security-policy")).toContain("default-src 'none'")
        expect(json.text).toContain("This request was refused")
        const large = yield* Effect.promise(() =>
          browser.post("/dashboard/sign-up", { companyName: "x".repeat(70 * 1024) })
        )
        expect(large.status).toBe(413)
        expect(large.headers.get("content-type")).toContain("text/html")
        expect(yield* counts).toEqual(before)
      })
    )
  })
})
