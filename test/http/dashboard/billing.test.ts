import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Billing } from "../../../src/services/company/Billing.js"
import { BaseUrl, RealPortServer } from "../../support/auth.js"
import { csrfOf, DashboardBrowser, type Page, tableOf } from "../../support/dashboard.js"
import { memberOf, ownerOf } from "../../support/dashboardMembers.js"

/**
 * The dashboard's billing over HTTP: the methods of the member's accounts with what remains; a method's ledger newest
 * first with the order or gift of each entry and the running total spent after it (computed over the whole ledger, so paging and
 * date filters do not change it), paged and filtered by dates; the same entries as CSV; owners and admins only
 * (a sender and a viewer get the 403 page); another company's method is a 404.
 */

/** Each ledger row as [kind, subject, spent to date]. */
const ledgerOf = (page: Page) => tableOf(page).map((cells) => [cells[1], cells[3], cells[5]])

/** Four dated entries in January 2026, then `extra` debits of 0.01 on 1 February. */
const seedLedger = (methodId: string, extra: number) =>
  Effect.gen(function* () {
    const billing = yield* Billing
    const sql = yield* SqlClient.SqlClient
    yield* billing.debit(methodId, 1000, { type: "order", id: "ord-1", reason: "order placed" })
    yield* billing.debit(methodId, 2000, { type: "gift", id: "gift-2", reason: "gift sent" })
    yield* billing.debit(methodId, 500, { type: "order", id: "ord-3", reason: "order placed" })
    yield* billing.credit(methodId, 2000, { type: "gift", id: "gift-2", reason: "gift expired" })
    yield* sql`UPDATE billing_entries SET created_at = TIMESTAMPTZ '2026-01-01T12:00:00Z' + (
        (SELECT count(*) FROM billing_entries e WHERE e.billing_method_id = ${methodId} AND e.id < billing_entries.id)
        * INTERVAL '1 day')
      WHERE billing_method_id = ${methodId}`
    for (let n = 0; n < extra; n++) {
      yield* billing.debit(methodId, 1, { type: "order", id: `ord-x${n}`, reason: "order placed" })
    }
    yield* sql`UPDATE billing_entries SET created_at = TIMESTAMPTZ '2026-02-01T12:00:00Z'
      WHERE billing_method_id = ${methodId} AND subject_id LIKE 'ord-x%'`
  }).pipe(Effect.orDie)

describe("dashboard billing", () => {
  it.layer(RealPortServer, { timeout: 240_000 })((it) => {
    it.effect("lists methods with remaining funds and a ledger with running balances, paged, filtered, as CSV", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser: owner, accountId, methodId } = yield* ownerOf(baseUrl, "Billed")
        yield* seedLedger(methodId, 50)

        const methods = yield* Effect.promise(() => owner.get("/dashboard/billing"))
        expect(methods.status).toBe(200)
        expect(methods.headers.get("cache-control")).toBe("no-store")
        expect(tableOf(methods)).toEqual([
          [accountId, "Test funds default", "prepaid", "active", "100,000.00 USD", "99,984.50 USD"]
        ])
        expect(methods.text).not.toContain(">Live<")

        const first = yield* Effect.promise(() => owner.get(`/dashboard/billing/${methodId}`))
        expect(first.status).toBe(200)
        expect(ledgerOf(first)).toHaveLength(50)
        expect(ledgerOf(first)[0]).toEqual(["debit", "order ord-x49", "15.50 USD"])
        expect(ledgerOf(first)[49]).toEqual(["debit", "order ord-x0", "15.01 USD"])
        expect(first.text).toContain("Next page")
        const second = yield* Effect.promise(() => owner.get(`/dashboard/billing/${methodId}?page=2`))
        expect(ledgerOf(second)).toEqual([
          ["credit", "gift gift-2", "15.00 USD"],
          ["debit", "order ord-3", "35.00 USD"],
          ["debit", "gift gift-2", "30.00 USD"],
          ["debit", "order ord-1", "10.00 USD"]
        ])

        // Dates are whole days in UTC, both included; the running total is the whole ledger's.
        const filtered = yield* Effect.promise(() =>
          owner.get(`/dashboard/billing/${methodId}?from=2026-01-02&to=2026-01-03`)
        )
        expect(ledgerOf(filtered)).toEqual([
          ["debit", "order ord-3", "35.00 USD"],
          ["debit", "gift gift-2", "30.00 USD"]
        ])
        const none = yield* Effect.promise(() =>
          owner.get(`/dashboard/billing/${methodId}?from=2025-01-01&to=2025-12-31`)
        )
        expect(none.text).toContain("No entries match these dates.")
        const bad = yield* Effect.promise(() => owner.get(`/dashboard/billing/${methodId}?from=2026-02-30&to=soon`))
        expect(bad.status).toBe(400)
        expect(bad.text).toContain("From: expected a date as YYYY-MM-DD.")
        expect(bad.text).toContain("To: expected a date as YYYY-MM-DD.")
        expect(tableOf(bad)).toEqual([])

        const csv = yield* Effect.promise(() =>
          owner.get(`/dashboard/billing/${methodId}/ledger.csv?from=2026-01-02&to=2026-01-04`)
        )
        expect(csv.status).toBe(200)
        expect(csv.headers.get("content-type")).toContain("text/csv")
        expect(csv.headers.get("content-disposition")).toBe(`attachment; filename="ledger-${methodId}.csv"`)
        expect(csv.text).toBe(
          [
            "created_at,kind,amount,currency,subject_type,subject_id,reason,spent_to_date",
            "2026-01-04T12:00:00.000Z,credit,2000,USD,gift,gift-2,gift expired,1500",
            "2026-01-03T12:00:00.000Z,debit,500,USD,order,ord-3,order placed,3500",
            "2026-01-02T12:00:00.000Z,debit,2000,USD,gift,gift-2,gift sent,3000",
            ""
          ].join("\r\n")
        )

        // Another company's method is not found, as page and as download.
        const theirs = yield* ownerOf(baseUrl, "Elsewhere")
        for (const path of [
          `/dashboard/billing/${theirs.methodId}`,
          `/dashboard/billing/${theirs.methodId}/ledger.csv`
        ]) {
          const page = yield* Effect.promise(() => owner.get(path))
          expect(page.status, path).toBe(404)
        }
      })
    )

    it.effect("a sender and a viewer get the 403 page; an admin sees billing", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { companyId, methodId } = yield* ownerOf(baseUrl, "Guarded Billing")
        for (const role of ["sender", "viewer"] as const) {
          const member = yield* memberOf(baseUrl, companyId, role)
          for (const path of [
            "/dashboard/billing",
            `/dashboard/billing/${methodId}`,
            `/dashboard/billing/${methodId}/ledger.csv`
          ]) {
            const page = yield* Effect.promise(() => member.get(path))
            expect(page.status, `${role} ${path}`).toBe(403)
            expect(page.text).not.toContain("Test funds")
          }
        }
        const admin = yield* memberOf(baseUrl, companyId, "admin")
        const page = yield* Effect.promise(() => admin.get(`/dashboard/billing/${methodId}`))
        expect(page.status).toBe(200)
        expect(page.text).toContain("No entries yet.")
      })
    )

    it.effect(
      "adds test funds to a test method, with its CSRF token, within bounds, audited; never to a live one",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const sql = yield* SqlClient.SqlClient
          const { browser: owner, companyId, methodId } = yield* ownerOf(baseUrl, "Funded")
          const path = `/dashboard/billing/${methodId}`
          const limitOf = (id: string) =>
            Effect.map(
              sql<{ spendingLimit: number | null }>`SELECT spending_limit::int AS spending_limit
              FROM billing_methods WHERE id = ${id}`,
              (rows) => rows[0]!.spendingLimit
            ).pipe(Effect.orDie)
          const auditCount = Effect.map(
            sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_events
            WHERE company_id = ${companyId} AND action = 'billing_method.test_funds_added'`,
            (rows) => rows[0]!.n
          ).pipe(Effect.orDie)

          const page = yield* Effect.promise(() => owner.get(path))
          expect(page.text).toContain("Add test funds")
          const csrf = csrfOf(page.text, `${path}/test-funds`)

          const added = yield* Effect.promise(() => owner.post(`${path}/test-funds`, { csrf, amount: "250.50" }))
          expect(added.status).toBe(303)
          expect(added.location).toBe(path)
          expect(yield* limitOf(methodId)).toBe(100_000_00 + 250_50)
          expect(yield* auditCount).toBe(1)
          const after = yield* Effect.promise(() => owner.get(path))
          expect(after.text).toContain("Added test funds: 100,250.50 USD remain.")

          // Refused, changing nothing: no CSRF token, a bad amount, too much, a limit past the ceiling.
          const forged = yield* Effect.promise(() => owner.post(`${path}/test-funds`, { csrf: "forged", amount: "10" }))
          expect(forged.status).toBe(403)
          for (const amount of ["", "-5", "abc", "0", "10000.01", "1.234"]) {
            const bad = yield* Effect.promise(() => owner.post(`${path}/test-funds`, { csrf, amount }))
            expect(bad.status, amount).toBe(303)
            const shown = yield* Effect.promise(() => owner.get(path))
            expect(shown.text, amount).toContain("Amount: expected a sum from 0.01 to 10,000.00 USD")
          }
          yield* sql`UPDATE billing_methods SET spending_limit = 99999000 WHERE id = ${methodId}`.pipe(Effect.orDie)
          yield* Effect.promise(() => owner.post(`${path}/test-funds`, { csrf, amount: "100" }))
          expect(yield* limitOf(methodId)).toBe(99_999_000)
          expect((yield* Effect.promise(() => owner.get(path))).text).toContain("No funds were added")
          expect(yield* auditCount).toBe(1)

          // A live method (the company's once it is live) takes no test funds: it is not found there.
          const liveId = "live-method-" + methodId
          yield* sql`INSERT INTO accounts (id, company_id, environment, name, is_default, created_at)
            SELECT ${`live-acc-${methodId}`}, company_id, 'live', 'Live', false, created_at FROM accounts
            WHERE id = (SELECT account_id FROM billing_methods WHERE id = ${methodId})`.pipe(Effect.orDie)
          yield* sql`INSERT INTO billing_methods (id, account_id, name, type, status, is_default, currency, spending_limit,
            created_at) VALUES (${liveId}, ${`live-acc-${methodId}`}, 'Prepaid', 'prepaid', 'active', true, 'USD', 500,
            now())`.pipe(Effect.orDie)
          const live = yield* Effect.promise(() =>
            owner.post(`/dashboard/billing/${liveId}/test-funds`, { csrf, amount: "10" })
          )
          expect(live.status).toBe(404)
          expect(yield* limitOf(liveId)).toBe(500)
          expect(yield* auditCount).toBe(1)
          const sender = yield* memberOf(baseUrl, companyId, "sender")
          const home = yield* Effect.promise(() => sender.get("/dashboard"))
          const refused = yield* Effect.promise(() =>
            sender.post(`${path}/test-funds`, { csrf: csrfOf(home.text, "/dashboard/switch-company"), amount: "10" })
          )
          expect(refused.status).toBe(403)
          expect(yield* limitOf(methodId)).toBe(99_999_000)
        })
    )

    it.effect("signed out, the pages send the browser to sign in", () =>
      Effect.gen(function* () {
        const browser = new DashboardBrowser(yield* BaseUrl)
        const page = yield* Effect.promise(() => browser.get("/dashboard/billing"))
        expect(page.status).toBe(303)
        expect(page.location).toBe("/dashboard/sign-in")
      })
    )
  })
})
