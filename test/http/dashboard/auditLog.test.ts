import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import type { Actor } from "../../../src/domain/company/Audit.js"
import { allAccounts, defaultExpirationInDays, permissions } from "../../../src/domain/company/Company.js"
import { csvCell } from "../../../src/http/dashboard/csv.js"
import { Audit, withActor } from "../../../src/services/company/Audit.js"
import { Companies } from "../../../src/services/company/Companies.js"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
import { BaseUrl, RealPortServer } from "../../support/auth.js"
import { keyHeaders, v3Keys } from "../../support/company.js"
import { csrfOf, DashboardBrowser, type Page, tableOf, textOf } from "../../support/dashboard.js"
import { ownerOf } from "../../support/dashboardMembers.js"

/**
 * The dashboard's audit log over HTTP: the member's company's events only, filtered by actor, action and dates in SQL
 * and paged; a CSV download with the same filters, quoted as RFC 4180 asks and with every formula neutralised,
 * capped at 10,000 rows and saying so; a bad filter named on the page; signed out, the sign-in page.
 */

/** On the wall clock, as the server is: the events the test makes through the services are of today. */
const onWallClock = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.withClock(effect, Clock.make())

/** Column 1 is "name type", column 2 the action. */
const actorsAndActions = (page: Page) => tableOf(page).map((cells) => [cells[1], cells[2]])

/** A CSV body split into its lines (CRLF) and naive cells, for lines without quoted commas. */
const csvLines = (text: string) => {
  expect(text.endsWith("\r\n")).toBe(true)
  return text.slice(0, -2).split("\r\n")
}

const today = () => new Date().toISOString().slice(0, 10)
const dayAfter = (day: string, days: number) =>
  new Date(new Date(`${day}T00:00:00Z`).getTime() + days * 86_400_000).toISOString().slice(0, 10)

describe("dashboard audit log", () => {
  it.layer(RealPortServer, { timeout: 240_000 })((it) => {
    it.effect("signed out, the page and the download send the browser to sign in", () =>
      onWallClock(
        Effect.gen(function* () {
          const browser = new DashboardBrowser(yield* BaseUrl)
          for (const path of ["/dashboard/audit-log", "/dashboard/audit-log.csv?action=api_key.created"]) {
            const page = yield* Effect.promise(() => browser.get(path))
            expect(page.status, path).toBe(303)
            expect(page.location).toBe("/dashboard/sign-in")
          }
        })
      )
    )

    it.effect("lists its company's events with their actors, filters them, and downloads them as safe CSV", () =>
      onWallClock(
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const { browser, userId, companyId, accountId } = yield* ownerOf(baseUrl, "Auditors")
          const member: Actor = {
            type: "member",
            id: userId,
            name: "Member",
            sourceAddress: "203.0.113.5",
            requestId: "req-dashboard"
          }
          // A key the member makes, named as a spreadsheet formula, which then acts through the API.
          const formula = '=HYPERLINK("https://evil.example","open")'
          const made = yield* withActor(member)(
            Effect.flatMap(KeyStore, (keys) =>
              keys.create({
                companyId,
                environment: "test",
                name: formula,
                expirationInDays: defaultExpirationInDays,
                enforceMtls: false,
                permissions: [...permissions],
                accountsAccess: allAccounts,
                requestSource: null
              })
            )
          ).pipe(Effect.orDie)
          const quoted = 'Ops, "night" key'
          const second = yield* Effect.promise(() =>
            fetch(`${baseUrl}${v3Keys}`, {
              method: "POST",
              headers: { ...keyHeaders(made.apiKey), "content-type": "application/json" },
              body: JSON.stringify({ name: quoted, permissions: ["products:read"] })
            }).then(async (response) => ({ status: response.status, body: await response.json() }))
          )
          expect(second.status).toBe(201)
          // The member leaves a second factor to each member (a company-wide event; requiring it would send them to enrol).
          yield* withActor(member)(
            Effect.flatMap(Companies, (companies) => companies.requireTwoFactor(companyId, false))
          )
          // Another company's events never show.
          const theirs = yield* ownerOf(baseUrl, "Elsewhere")
          yield* Effect.flatMap(KeyStore, (keys) =>
            keys.create({
              companyId: theirs.companyId,
              environment: "test",
              name: "Their key",
              expirationInDays: defaultExpirationInDays,
              enforceMtls: false,
              permissions: ["products:read"],
              accountsAccess: allAccounts,
              requestSource: null
            })
          ).pipe(Effect.orDie)

          const page = yield* Effect.promise(() => browser.get("/dashboard/audit-log"))
          expect(page.status).toBe(200)
          expect(page.headers.get("cache-control")).toBe("no-store")
          expect(actorsAndActions(page).sort()).toEqual(
            [
              ["Member member", "api_key.created"],
              [`${formula} key`, "api_key.created"],
              ["Member member", "company.two_factor_not_required"]
            ].sort()
          )
          const [keyRow] = tableOf(page).filter((cells) => cells[1] === `${formula} key`)
          expect(keyRow).toEqual([
            expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/),
            `${formula} key`,
            "api_key.created",
            `api_key ${second.body.data.id}`,
            "none",
            "Test (sandbox)",
            expect.stringMatching(/^(127\.0\.0\.1|0:0:0:0::\/64)$/),
            expect.stringMatching(/^[0-9a-f-]{36}$/)
          ])
          const [companyRow] = tableOf(page).filter((cells) => cells[2] === "company.two_factor_not_required")
          expect(companyRow!.slice(3)).toEqual([
            `company ${companyId}`,
            "none",
            "Company-wide",
            "203.0.113.5",
            "req-dashboard"
          ])
          expect(page.text).not.toContain("Their key")
          // The action filter is a select of every action; a sandbox has no environment switch.
          expect(page.text).toContain('<option value="member.invited">member.invited</option>')
          expect(page.text).not.toContain('name="environment"')

          // Filters: by action, by actor (name or id), by dates.
          const byAction = yield* Effect.promise(() =>
            browser.get("/dashboard/audit-log?action=company.two_factor_not_required")
          )
          expect(actorsAndActions(byAction)).toEqual([["Member member", "company.two_factor_not_required"]])
          const byName = yield* Effect.promise(() =>
            browser.get(`/dashboard/audit-log?actor=${encodeURIComponent("hyperlink")}`)
          )
          expect(actorsAndActions(byName)).toEqual([[`${formula} key`, "api_key.created"]])
          const byId = yield* Effect.promise(() => browser.get(`/dashboard/audit-log?actor=${userId.toUpperCase()}`))
          expect(actorsAndActions(byId).map(([actor]) => actor)).toEqual(["Member member", "Member member"])
          const day = today()
          const within = yield* Effect.promise(() => browser.get(`/dashboard/audit-log?from=${day}&to=${day}`))
          expect(tableOf(within)).toHaveLength(3)
          const before = yield* Effect.promise(() => browser.get(`/dashboard/audit-log?to=${dayAfter(day, -1)}`))
          expect(tableOf(before)).toEqual([])
          expect(before.text).toContain("No events match these filters.")
          const after = yield* Effect.promise(() => browser.get(`/dashboard/audit-log?from=${dayAfter(day, 1)}`))
          expect(tableOf(after)).toEqual([])

          // A filter that cannot be used is named, with no rows.
          for (const [query, problem] of [
            ["action=key.stolen", "Action: choose one from the list."],
            ["from=yesterday", "From: expected a date as YYYY-MM-DD."],
            ["to=2026-02-30", "To: expected a date as YYYY-MM-DD."],
            [`from=${day}&to=${dayAfter(day, -1)}`, "From: must not be after To."]
          ] as const) {
            for (const path of ["/dashboard/audit-log", "/dashboard/audit-log.csv"]) {
              const refused = yield* Effect.promise(() => browser.get(`${path}?${query}`))
              expect(refused.status, query).toBe(400)
              expect(refused.headers.get("content-type")).toMatch(/^text\/html/)
              expect(textOf(refused.text)).toContain(problem)
              expect(tableOf(refused)).toEqual([])
            }
          }

          // The download: the same rows as the page, every cell a spreadsheet shows as text.
          const csv = yield* Effect.promise(() => browser.get("/dashboard/audit-log.csv"))
          expect(csv.status).toBe(200)
          expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8")
          expect(csv.headers.get("content-disposition")).toBe('attachment; filename="audit-log-test.csv"')
          expect(csv.headers.get("cache-control")).toBe("no-store")
          expect(csv.headers.get("ribbon-rows-truncated")).toBeNull()
          const lines = csvLines(csv.text)
          expect(lines[0]).toBe(
            "occurred_at,actor_type,actor_id,actor_name,action,target_type,target_id,account_id,environment,source_address,request_id"
          )
          expect(lines).toHaveLength(4)
          const keyLine = lines.find((line) => line.includes(second.body.data.id))!
          // The formula is prefixed with ' (and quoted, for its quotes and comma): a spreadsheet shows it as text.
          expect(keyLine).toContain(
            `,key,${made.record.id},"'=HYPERLINK(""https://evil.example"",""open"")",api_key.created,`
          )
          expect(csv.text).not.toMatch(/(^|,)=/m)
          const companyLine = lines.find((line) => line.includes("company.two_factor_not_required"))!
          expect(companyLine.split(",").slice(1)).toEqual([
            "member",
            userId,
            "Member",
            "company.two_factor_not_required",
            "company",
            companyId,
            "",
            "",
            "203.0.113.5",
            "req-dashboard"
          ])
          expect(csv.text).not.toContain("Their key")
          // With the page's filters; the second key's name, with its comma and quotes, quoted.
          const filtered = yield* Effect.promise(() =>
            browser.get(`/dashboard/audit-log.csv?actor=${made.record.id}&action=api_key.created`)
          )
          const filteredLines = csvLines(filtered.text)
          expect(filteredLines).toHaveLength(2)
          expect(filteredLines[1]).toContain(`,api_key,${second.body.data.id},,test,`)
          expect(accountId).toMatch(/^[0-9a-f]{24}$/)
        })
      )
    )

    it.effect("an invitation made on the Members page is the signed-in member's, company-wide", () =>
      onWallClock(
        Effect.gen(function* () {
          const { browser, userId } = yield* ownerOf(yield* BaseUrl, "Inviters")
          const members = yield* Effect.promise(() => browser.get("/dashboard/members"))
          const invited = yield* Effect.promise(() =>
            browser.post("/dashboard/members/invitations", {
              csrf: csrfOf(members.text, "/dashboard/members/invitations"),
              email: "invitee@example.com",
              role: "viewer",
              accounts: "all"
            })
          )
          expect(invited.status, invited.text).toBeLessThan(400)
          const page = yield* Effect.promise(() => browser.get("/dashboard/audit-log?action=member.invited"))
          const rows = tableOf(page)
          expect(rows).toHaveLength(1)
          expect(rows[0]!.slice(1, 6)).toEqual([
            "Member member",
            "member.invited",
            expect.stringMatching(/^invitation [0-9a-f]{24}$/),
            "none",
            "Company-wide"
          ])
          const csv = csvLines(
            (yield* Effect.promise(() => browser.get("/dashboard/audit-log.csv?action=member.invited"))).text
          )
          expect(csv[1]).toContain(`,member,${userId},Member,member.invited,invitation,`)
          expect(csv.join("\n")).not.toContain("invitee@example.com")
        })
      )
    )

    it.effect("pages 50 events at a time, through links that keep the filters", () =>
      onWallClock(
        Effect.gen(function* () {
          const { browser, userId, companyId, accountId } = yield* ownerOf(yield* BaseUrl, "Busy")
          const audit = yield* Audit
          const member: Actor = {
            type: "member",
            id: userId,
            name: "Pat",
            sourceAddress: "203.0.113.5",
            requestId: "r"
          }
          for (let n = 0; n < 55; n++) {
            yield* withActor(member)(
              audit.record({
                companyId,
                environment: "test",
                accountId,
                action: "campaign.updated",
                target: n.toString(16).padStart(24, "0")
              })
            )
          }
          const first = yield* Effect.promise(() => browser.get("/dashboard/audit-log?action=campaign.updated"))
          expect(tableOf(first)).toHaveLength(50)
          const next = /<a href="([^"]+)">Next page<\/a>/.exec(first.text)?.[1]?.replace(/&amp;/g, "&")
          expect(next).toBe("/dashboard/audit-log?environment=test&action=campaign.updated&page=2")
          const second = yield* Effect.promise(() => browser.get(next!))
          expect(tableOf(second)).toHaveLength(5)
          expect(second.text).not.toContain("Next page")
          const targets = [...tableOf(first), ...tableOf(second)].map((cells) => cells[3])
          expect(new Set(targets).size).toBe(55)
        })
      )
    )

    it.effect("a download holds the 10,000 newest events at most, and says it was cut", () =>
      onWallClock(
        Effect.gen(function* () {
          const { browser, companyId } = yield* ownerOf(yield* BaseUrl, "Prolific")
          const sql = yield* SqlClient.SqlClient
          // 10,001 events more than a day old, written as the log writes them (the newest first sorts by time).
          yield* sql`INSERT INTO audit_events (id, company_id, occurred_at, actor_type, actor_id, actor_name, action,
            target_type, target_id, account_id, environment, source_address, request_id)
          SELECT lpad(to_hex(n), 24, '0') || '', ${companyId}, now() - interval '2 days' - n * interval '1 second',
            'operator', NULL, 'operator', 'campaign.created', 'campaign', lpad(to_hex(n), 24, '0'), NULL, 'test',
            NULL, NULL
          FROM generate_series(1, 10001) AS n`.pipe(Effect.orDie)
          const all = yield* Effect.promise(() => browser.get("/dashboard/audit-log.csv"))
          expect(all.status).toBe(200)
          expect(all.headers.get("ribbon-rows-truncated")).toBe("10000")
          const lines = csvLines(all.text)
          expect(lines).toHaveLength(10_001)
          // The newest: the sign-up's none, then event 1; the oldest, event 10,001, is the one left out.
          expect(lines[1]).toContain(`,${"1".padStart(24, "0")},`)
          expect(all.text).not.toContain(`,${(10_001).toString(16).padStart(24, "0")},`)
          const page = yield* Effect.promise(() => browser.get("/dashboard/audit-log"))
          expect(textOf(page.text)).toContain("the 10,000 newest at most")
        })
      )
    )

    it.effect("a cell is neutralised when a spreadsheet would read a formula, and quoted as RFC 4180 asks", () =>
      Effect.sync(() => {
        expect(csvCell("plain")).toBe("plain")
        expect(csvCell(null)).toBe("")
        expect(csvCell("=1+2")).toBe("'=1+2")
        expect(csvCell("+1")).toBe("'+1")
        expect(csvCell("-1")).toBe("'-1")
        expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)")
        expect(csvCell("\tTAB")).toBe("'\tTAB")
        expect(csvCell("\r=1")).toBe('"\'\r=1"')
        expect(csvCell("a,b")).toBe('"a,b"')
        expect(csvCell('say "hi"')).toBe('"say ""hi"""')
        expect(csvCell("two\nlines")).toBe('"two\nlines"')
        expect(csvCell("a=b")).toBe("a=b")
      })
    )
  })
})
