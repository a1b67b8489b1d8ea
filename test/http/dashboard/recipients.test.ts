import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { money } from "../../../src/http/dashboard/format.js"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { csrfOf, type DashboardBrowser, tableOf, textOf } from "../../support/dashboard.js"
import { memberOf, ownerOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"
import { alan, grace, type Person, seedRecipients } from "../../support/recipients.js"

/**
 * The dashboard's recipients and catalog over HTTP. Recipients: searched by name or e-mail in SQL and paged, masked
 * for a viewer and a developer exactly as the v2 API masks a key's reads (a masked search matching whole values
 * only), unmasked for an owner and a sender; erased after a confirm step (the v2 DELETE, audited), by a role holding
 * `recipients:delete` only; another company's recipient is a 404. Catalog: each product's landed price for the
 * chosen country is the v2 API's figure for its cheapest variant sent there, or "Not shippable there". And a sender
 * gets the 403 page on the API keys (billing's is in billing.test.ts).
 */

const promise = <A>(run: () => Promise<A>) => Effect.promise(run)

/** A new API key of the browser's company (test environment, all accounts) holding `permissions`, from the form. */
const apiKeyOf = (browser: DashboardBrowser, permissions: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const page = yield* promise(() => browser.get("/dashboard/api-keys/new"))
    const form = new URLSearchParams({
      csrf: csrfOf(page.text, "/dashboard/api-keys"),
      name: `Reads ${permissions.join(" ")}`,
      environment: "test",
      expirationInDays: "90",
      accounts: "all"
    })
    for (const permission of permissions) form.append("permissions", permission)
    const made = yield* promise(() =>
      browser.request("/dashboard/api-keys", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form.toString()
      })
    )
    const key = made.text.match(/id="api-key"[^>]*value="([0-9a-f]{24})"/)?.[1]
    if (key === undefined) return yield* Effect.die(new Error(`No key made (${made.status})`))
    return key
  })

const apiGet = (baseUrl: string, key: string, path: string) =>
  promise(async () => {
    const response = await fetch(`${baseUrl}${path}`, { headers: { "x-api-key": key } })
    return { status: response.status, body: (await response.json()) as Record<string, any> }
  })

const guests: ReadonlyArray<Person> = Array.from({ length: 21 }, (_, n) => ({
  firstName: "Guest",
  lastName: `Number${String(n + 1).padStart(2, "0")}`,
  email: `guest${n + 1}@example.com`,
  phone: null,
  externalId: null
}))

const auditOf = (companyId: string, recipientId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ actorType: string; actorId: string; action: string; targetId: string; environment: string }>`
      SELECT actor_type, actor_id, action, target_id, environment FROM audit_events
      WHERE company_id = ${companyId} AND action = 'recipient.deleted' AND target_id = ${recipientId}`.pipe(
      Effect.orDie
    )
  )

const recipientRow = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ email: string | null; deletedAt: Date | null }>`SELECT email, deleted_at FROM recipients WHERE id = ${id}`,
      (rows) => rows[0]!
    ).pipe(Effect.orDie)
  )

describe("dashboard recipients and catalog", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 240_000 })((it) => {
    it.effect(
      "lists and searches recipients in SQL, paged, masked for a viewer and a developer as the API masks",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const owner = yield* ownerOf(baseUrl, "Recipients Co")
          const [graceId] = yield* seedRecipients(owner.companyId, owner.userId, [grace, alan, ...guests])

          const first = yield* promise(() => owner.browser.get("/dashboard/recipients"))
          expect(first.status).toBe(200)
          const rows = tableOf(first)
          expect(rows).toHaveLength(20)
          expect(rows[0]).toEqual([
            "Grace Hopper",
            "grace.hopper@navy.example",
            "+14155552671",
            "US",
            "crm-1",
            "2026-03-01 12:00:00 UTC"
          ])
          expect(rows[1]).toEqual(["Alan Turing", "alan@bletchley.example", "—", "US", "—", "2026-03-01 11:59:00 UTC"])
          expect(first.text).toContain("Next page")
          const second = yield* promise(() => owner.browser.get("/dashboard/recipients?page=2"))
          expect(tableOf(second).map((row) => row[0])).toEqual(["Guest Number19", "Guest Number20", "Guest Number21"])

          // Searches: a piece of a name, of an e-mail, a whole name; case-insensitive; `%` and `_` taken literally.
          const names = (search: string, browser = owner.browser) =>
            Effect.map(
              promise(() => browser.get(`/dashboard/recipients?search=${encodeURIComponent(search)}`)),
              (page) => tableOf(page).map((row) => row[0])
            )
          expect(yield* names("hop")).toEqual(["Grace Hopper"])
          expect(yield* names("BLETCHLEY")).toEqual(["Alan Turing"])
          expect(yield* names("grace hopper")).toEqual(["Grace Hopper"])
          expect(yield* names("Number2")).toEqual(["Guest Number20", "Guest Number21"])
          expect(yield* names("%")).toEqual([])
          expect(yield* names("guest_")).toEqual([])
          const none = yield* promise(() => owner.browser.get("/dashboard/recipients?search=nobody"))
          expect(textOf(none.text)).toContain("No recipient matches “nobody”.")
          const long = yield* promise(() => owner.browser.get(`/dashboard/recipients?search=${"x".repeat(201)}`))
          expect(long.status).toBe(400)
          expect(long.text).toContain("Name or e-mail: at most 200 characters.")

          // A key reading masked shows Grace as the viewer's and the developer's pages show her.
          const maskedKey = yield* apiGet(
            baseUrl,
            yield* apiKeyOf(owner.browser, ["recipients:read:masked"]),
            `/public-api/v2/recipients/${graceId}`
          )
          expect(maskedKey.status).toBe(200)
          const masked = maskedKey.body
          expect(masked.email).toBe("g***@navy.example")
          const maskedRow = [
            `${masked.firstName} ${masked.lastName}`,
            masked.email,
            masked.mobilePhone,
            "US",
            "crm-1",
            "2026-03-01 12:00:00 UTC"
          ]
          for (const role of ["viewer", "developer"] as const) {
            const member = yield* memberOf(baseUrl, owner.companyId, role)
            const page = yield* promise(() => member.get("/dashboard/recipients"))
            expect(page.status, role).toBe(200)
            expect(tableOf(page)[0], role).toEqual(maskedRow)
            expect(page.text, role).not.toContain("Hopper")
            expect(page.text, role).not.toContain("grace.hopper")
            // A masked reader's search matches whole values only: no spelling a name out letter by letter.
            expect(yield* names("hop", member), role).toEqual([])
            expect(yield* names("G", member), role).toEqual([])
            expect(yield* names("GRACE.HOPPER@navy.example", member), role).toEqual([maskedRow[0]])
            expect(yield* names("hopper", member), role).toEqual([maskedRow[0]])
            const one = yield* promise(() => member.get(`/dashboard/recipients/${graceId}`))
            expect(one.status, role).toBe(200)
            expect(one.text, role).toContain(masked.mobilePhone)
            expect(one.text, role).not.toContain("Hopper")
          }
          // A sender reads unmasked (its role holds recipients:read:unmasked), as the owner does.
          const sender = yield* memberOf(baseUrl, owner.companyId, "sender")
          expect(tableOf(yield* promise(() => sender.get("/dashboard/recipients")))[0]![1]).toBe(
            "grace.hopper@navy.example"
          )
          // …but reaches neither the API keys nor (billing.test.ts) the billing settings.
          for (const path of ["/dashboard/api-keys", "/dashboard/api-keys/new"]) {
            const refused = yield* promise(() => sender.get(path))
            expect(refused.status, path).toBe(403)
            expect(refused.text, path).toContain("Not allowed")
          }
        }),
      // Four people sign up (a password hash each) and 23 recipients are made.
      120_000
    )

    it.effect(
      "erases a recipient after a confirm step, audited; a viewer cannot; another company's is 404",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const owner = yield* ownerOf(baseUrl, "Erasing Co")
          const [graceId, alanId] = yield* seedRecipients(owner.companyId, owner.userId, [grace, alan])
          const page = `/dashboard/recipients/${graceId}`

          const shown = yield* promise(() => owner.browser.get(page))
          expect(shown.status).toBe(200)
          expect(shown.text).toContain(`href="${page}/erase"`)
          const confirm = yield* promise(() => owner.browser.get(`${page}/erase`))
          expect(confirm.status).toBe(200)
          expect(textOf(confirm.text)).toContain("Erase this recipient's personal data?")
          const csrf = csrfOf(confirm.text, `${page}/erase`)

          // Refused, changing nothing: no CSRF token; a viewer; a sender (no recipients:delete); another company.
          expect((yield* promise(() => owner.browser.post(`${page}/erase`, {}))).status).toBe(403)
          const viewer = yield* memberOf(baseUrl, owner.companyId, "viewer")
          const viewerPage = yield* promise(() => viewer.get(page))
          expect(viewerPage.status).toBe(200)
          expect(viewerPage.text).not.toContain(`${page}/erase`)
          expect((yield* promise(() => viewer.get(`${page}/erase`))).status).toBe(403)
          const viewerCsrf = csrfOf(viewerPage.text, "/dashboard/sign-out")
          expect((yield* promise(() => viewer.post(`${page}/erase`, { csrf: viewerCsrf }))).status).toBe(403)
          const sender = yield* memberOf(baseUrl, owner.companyId, "sender")
          expect((yield* promise(() => sender.get(`${page}/erase`))).status).toBe(403)
          const other = yield* ownerOf(baseUrl, "Other Co")
          const otherHome = yield* promise(() => other.browser.get("/dashboard"))
          for (const path of [page, `${page}/erase`]) {
            expect((yield* promise(() => other.browser.get(path))).status, path).toBe(404)
          }
          const otherPost = yield* promise(() =>
            other.browser.post(`${page}/erase`, { csrf: csrfOf(otherHome.text, "/dashboard/sign-out") })
          )
          expect(otherPost.status).toBe(404)
          expect((yield* recipientRow(graceId)).deletedAt).toBeNull()
          expect(yield* auditOf(owner.companyId, graceId)).toEqual([])

          const erased = yield* promise(() => owner.browser.post(`${page}/erase`, { csrf }))
          expect(erased.status).toBe(303)
          expect(erased.location).toBe("/dashboard/recipients")
          const after = yield* promise(() => owner.browser.get("/dashboard/recipients"))
          expect(textOf(after.text)).toContain("The recipient's personal data is erased.")
          expect(tableOf(after).map((row) => row[0])).toEqual(["Alan Turing"])
          const row = yield* recipientRow(graceId)
          expect(row.email).toBeNull()
          expect(row.deletedAt).not.toBeNull()
          expect(yield* auditOf(owner.companyId, graceId)).toEqual([
            {
              actorType: "member",
              actorId: owner.userId,
              action: "recipient.deleted",
              targetId: graceId,
              environment: "test"
            }
          ])
          // Gone: its page and a second erasure are 404s; the other recipient stays.
          expect((yield* promise(() => owner.browser.get(page))).status).toBe(404)
          expect((yield* promise(() => owner.browser.post(`${page}/erase`, { csrf }))).status).toBe(404)
          expect((yield* recipientRow(alanId)).deletedAt).toBeNull()
        }),
      // Four people sign up, a password hash each.
      120_000
    )

    it.effect("prices each product for the chosen country as the API does, or says it cannot be sent there", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const sql = yield* SqlClient.SqlClient
        const owner = yield* ownerOf(baseUrl, "Catalog Co")
        const key = yield* apiKeyOf(owner.browser, ["products:read", "products:read:prices"])

        // A product with a title of its own, orderable in Germany and Japan and not in India.
        const orderableIn = (country: string) => sql`EXISTS (SELECT 1 FROM variants v
          JOIN variant_locations l ON l.variant_id = v.id WHERE v.product_id = p.id AND v.price_usd IS NOT NULL
            AND (l.stock IS NULL OR l.stock > 0) AND ${country} = ANY (l.ships_to))`
        const [product] = yield* sql<{ id: string; title: string }>`SELECT p.id, p.title FROM products p
          WHERE p.min_price_usd IS NOT NULL AND (SELECT count(*) FROM products q WHERE q.title = p.title) = 1
            AND ${orderableIn("DE")} AND ${orderableIn("JP")} AND NOT ${orderableIn("IN")}
          ORDER BY p.created_at DESC, p.id LIMIT 1`.pipe(Effect.orDie)
        expect(product).toBeDefined()

        /** The product's cell on the dashboard for the country (its search's pages walked until it shows). */
        const shownFor = (country: string) =>
          Effect.gen(function* () {
            for (let page = 1; page <= 10; page++) {
              const found = yield* promise(() =>
                owner.browser.get(
                  `/dashboard/catalog?search=${encodeURIComponent(product!.title)}&country=${country}&page=${page}`
                )
              )
              expect(found.status).toBe(200)
              const row = tableOf(found).find((cells) => cells[0]!.startsWith(product!.title))
              if (row !== undefined) return row[2]!
            }
            return yield* Effect.die(new Error(`${product!.title} not listed`))
          })
        /** What the API says a gift of the product costs sent there: its cheapest variant's landed total. */
        const apiFor = (country: string, digits: number) =>
          Effect.gen(function* () {
            const variants = yield* apiGet(
              baseUrl,
              key,
              `/public-api/v3/products/${product!.id}/variants?filter[country]=${country}`
            )
            expect(variants.status).toBe(200)
            const totals: Array<{ amount: number; currency: string }> = []
            for (const variant of variants.body.data as ReadonlyArray<{ id: string }>) {
              const read = yield* apiGet(baseUrl, key, `/public-api/v2/variants/${variant.id}?country=${country}`)
              const total = read.body.pricing?.[country]?.totalFinalCost
              if (total !== undefined) totals.push(total)
            }
            const least = totals.sort((a, b) => a.amount - b.amount)[0]!
            return money(least.amount, least.currency, digits)
          })

        const germany = yield* shownFor("DE")
        const japan = yield* shownFor("JP")
        expect(germany).toContain(yield* apiFor("DE", 2))
        expect(germany).toContain("EUR")
        expect(japan).toContain(yield* apiFor("JP", 0))
        expect(japan).toContain("JPY")
        expect(yield* shownFor("IN")).toBe("Not shippable there")

        // The swag catalog, paged; an unknown country is named and lists nothing.
        const [{ swag }] = yield* sql<{ swag: number }>`SELECT count(*)::int AS swag FROM products
          WHERE catalog = 'swag' AND min_price_usd IS NOT NULL`.pipe(Effect.orDie)
        const swagFirst = yield* promise(() => owner.browser.get("/dashboard/catalog?catalog=swag&country=US"))
        expect(tableOf(swagFirst)).toHaveLength(20)
        expect(new Set(tableOf(swagFirst).map((cells) => cells[1]))).toEqual(new Set(["Swag"]))
        expect(swagFirst.text).toContain("Next page")
        const swagLast = yield* promise(() => owner.browser.get("/dashboard/catalog?catalog=swag&country=US&page=3"))
        expect(tableOf(swagLast)).toHaveLength(swag! - 40)
        const unknown = yield* promise(() => owner.browser.get("/dashboard/catalog?country=ZZ"))
        expect(unknown.status).toBe(400)
        expect(unknown.text).toContain("Send to: ZZ is not a country gifts are sent to.")
        expect(tableOf(unknown)).toEqual([])
        // Every role reads the catalog.
        const viewer = yield* memberOf(baseUrl, owner.companyId, "viewer")
        expect((yield* promise(() => viewer.get("/dashboard/catalog?country=DE"))).status).toBe(200)
      })
    )
  })
})
