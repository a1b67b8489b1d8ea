import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, RealPortServer } from "../../support/auth.js"
import { DashboardBrowser } from "../../support/dashboard.js"

/** The dashboard's outbox outside production (the test server's default): a live company's shows too. */

describe("dashboard outbox (outside production)", () => {
  it.layer(RealPortServer, { timeout: 120_000 })((it) => {
    it.effect("a live company's outbox shows, with its navigation link", () =>
      Effect.gen(function* () {
        const browser = new DashboardBrowser(yield* BaseUrl)
        const { email } = yield* Effect.promise(() => browser.signUp("Live"))
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO accounts (id, company_id, environment, name, is_default, created_at)
          SELECT 'live-' || m.company_id, m.company_id, 'live', 'Live', true, now()
          FROM company_members m JOIN users u ON u.id = m.user_id WHERE u.email = ${email}`.pipe(Effect.orDie)
        const page = yield* Effect.promise(() => browser.get("/dashboard/outbox"))
        expect(page.status).toBe(200)
        expect(page.text).not.toContain(">Sandbox<")
        expect(page.text).toContain('<a href="/dashboard/outbox"')
      })
    )
  })
})
