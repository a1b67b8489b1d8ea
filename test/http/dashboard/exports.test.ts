import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { allAccounts, defaultExpirationInDays, permissions } from "../../../src/domain/company/Company.js"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
import { BaseUrl } from "../../support/auth.js"
import { makeCheckoutRealPortServer } from "../../support/checkout.js"
import { keyHeaders, raiseLimits } from "../../support/company.js"
import { csrfOf, type DashboardBrowser, tableOf, textOf } from "../../support/dashboard.js"
import { memberOf, ownerOf } from "../../support/dashboardMembers.js"
import { eventually } from "../../support/eventually.js"

/**
 * The dashboard's exports over HTTP, with the background worker: a products and a collections export started from
 * the forms, each followed to `completed` on its page, its file downloaded through the dashboard byte for byte the
 * file the API's signed link serves for the same export; the list newest first; the start audited as the member's.
 * A sender and a viewer get the 403 page; bad options are named beside their field and store nothing; another
 * company's export is the 404 page.
 */

const promise = <A>(run: () => Promise<A>) => Effect.promise(run)

const query = <A extends object>(run: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, run).pipe(Effect.orDie)

/** The company's exports, and the export jobs of any company, as stored. */
const storedOf = (companyId: string) =>
  Effect.map(
    query(
      (sql) => sql<{ exports: number; jobs: number }>`SELECT
        (SELECT count(*)::int FROM catalog_exports WHERE company_id = ${companyId}) AS exports,
        (SELECT count(*)::int FROM jobs WHERE kind = 'catalog-export.run') AS jobs`
    ),
    (rows) => rows[0]!
  )

/** Posts a start form from the exports page with its CSRF token. */
const start = (browser: DashboardBrowser, kind: "products" | "collections", fields: Record<string, string>) =>
  promise(async () => {
    const page = await browser.get("/dashboard/exports")
    const action = `/dashboard/exports/${kind}`
    return browser.request(action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams([
        ["csrf", csrfOf(page.text, action)],
        ["environment", "test"],
        ...Object.entries(fields).flatMap(([name, value]) =>
          value.split("|").map((one) => [name, one] as [string, string])
        )
      ]).toString()
    })
  })

/** An export's page, read until it says the export has completed. */
const completed = (browser: DashboardBrowser, path: string) =>
  eventually(
    promise(() => browser.get(path)),
    (page) => textOf(page.text).includes("Status completed"),
    `${path} to complete`
  )

/** An API key of the company (every permission), for reading the same export through the API. */
const apiKeyOf = (companyId: string) =>
  Effect.flatMap(KeyStore, (keys) =>
    keys.create({
      companyId,
      environment: "test",
      name: "Exports",
      expirationInDays: defaultExpirationInDays,
      enforceMtls: false,
      permissions: [...permissions],
      accountsAccess: allAccounts,
      requestSource: null
    })
  ).pipe(Effect.orDie)

const fetched = (url: string, headers: Record<string, string> = {}) =>
  promise(() =>
    fetch(url, { headers }).then(async (response) => ({
      status: response.status,
      headers: response.headers,
      text: await response.text()
    }))
  )

describe("dashboard exports", () => {
  it.layer(makeCheckoutRealPortServer(), { timeout: 300_000 })((it) => {
    it.effect("starts both kinds, follows them to completed, and downloads the API's own file", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const owner = yield* ownerOf(baseUrl, "Exporting Gifts")
        const empty = yield* promise(() => owner.browser.get("/dashboard/exports"))
        expect(empty.status).toBe(200)
        expect(empty.text).toContain('href="/dashboard/exports" aria-current="page"')
        expect(textOf(empty.text)).toContain("No exports yet.")

        const started = yield* start(owner.browser, "products", {
          locations: "us, gb",
          catalog: "marketplace",
          priceGte: "1000",
          include: "brand|tags",
          fields: "priceRange"
        })
        expect(started.status, textOf(started.text).slice(0, 500)).toBe(303)
        const productsPath = started.location!
        expect(productsPath).toMatch(/^\/dashboard\/exports\/[0-9a-f]{24}$/)
        const productsId = productsPath.split("/").pop()!
        const running = yield* promise(() => owner.browser.get(productsPath))
        expect(textOf(running.text)).toContain("The products export has started.")
        expect(textOf(running.text)).toContain("price gte = 1000")

        const done = yield* completed(owner.browser, productsPath)
        expect(textOf(done.text)).toContain("Progress 100%")
        expect(done.text).not.toContain("data-running")

        // The same export through the API: its signed link serves exactly the file the dashboard streams.
        yield* raiseLimits(owner.companyId)
        const key = yield* apiKeyOf(owner.companyId)
        const read = yield* fetched(`${baseUrl}/public-api/v3/products/exports/${productsId}`, keyHeaders(key.apiKey))
        expect(read.status).toBe(200)
        const urls = JSON.parse(read.text).data.downloadUrls
        expect(Object.keys(urls)).toEqual(["US", "GB"])
        for (const location of ["US", "GB"]) {
          const api = yield* fetched(urls[location])
          const dashboard = yield* promise(() => owner.browser.get(`${productsPath}/files/${location}`))
          expect(dashboard.status).toBe(200)
          expect(dashboard.headers.get("content-type")).toBe("application/x-ndjson")
          expect(dashboard.headers.get("content-disposition")).toBe(api.headers.get("content-disposition"))
          expect(api.text.split("\n").length).toBeGreaterThan(20)
          expect(dashboard.text).toBe(api.text)
        }
        const noFile = yield* promise(() => owner.browser.get(`${productsPath}/files/FR`))
        expect(noFile.status).toBe(404)

        const collectionIds = yield* query(
          (sql) => sql<{ id: string }>`SELECT collection_id AS id FROM collection_products
            GROUP BY collection_id HAVING count(*) >= 3 ORDER BY collection_id LIMIT 2`
        )
        const list = yield* promise(() => owner.browser.get("/dashboard/exports"))
        for (const { id } of collectionIds) expect(list.text).toContain(`value="${id}"`)
        const collections = yield* start(owner.browser, "collections", {
          collectionIds: collectionIds.map((row) => row.id).join("|"),
          locations: "US"
        })
        expect(collections.status, textOf(collections.text).slice(0, 500)).toBe(303)
        const collectionsPath = collections.location!
        yield* completed(owner.browser, collectionsPath)
        const file = yield* promise(() => owner.browser.get(`${collectionsPath}/files/US`))
        const lines = file.text
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line))
        expect(new Set(lines.map((line) => line.collectionId))).toEqual(new Set(collectionIds.map((row) => row.id)))

        // Newest first, each with its status and countries.
        const listed = yield* promise(() => owner.browser.get("/dashboard/exports"))
        expect(tableOf(listed).map((cells) => cells.slice(1))).toEqual([
          ["Collections", "completed", "100%", "US"],
          ["Products", "completed", "100%", "US, GB"]
        ])

        // Each start is in the audit log as the member's doing.
        const audited = yield* query(
          (sql) => sql<{ actorType: string; targetId: string }>`SELECT actor_type, target_id FROM audit_events
            WHERE company_id = ${owner.companyId} AND action = 'export.started' ORDER BY occurred_at`
        )
        expect(audited).toEqual([
          { actorType: "member", targetId: productsId },
          { actorType: "member", targetId: collectionsPath.split("/").pop() }
        ])
      })
    )

    it.effect("refuses other roles, bad options (storing nothing) and another company's export", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const owner = yield* ownerOf(baseUrl, "Careful Exports")
        const before = yield* storedOf(owner.companyId)

        const bad = yield* start(owner.browser, "products", { locations: "US, ZZ", priceGte: "cheap" })
        expect(bad.status).toBe(400)
        expect(bad.text).toMatch(/id="products-priceGte-error">[^<]+</)
        expect(textOf(bad.text)).toContain("Please correct the fields marked below.")
        const unknownCountry = yield* start(owner.browser, "products", { locations: "US, ZZ" })
        expect(unknownCountry.status).toBe(400)
        expect(textOf(unknownCountry.text)).toContain("ZZ is not a supported country.")
        expect(unknownCountry.text).toContain('value="US, ZZ"')
        const noCollection = yield* start(owner.browser, "collections", { locations: "US" })
        expect(noCollection.status).toBe(400)
        expect(textOf(noCollection.text)).toContain("Choose at least one collection.")
        const unknownCollection = yield* start(owner.browser, "collections", { collectionIds: "f".repeat(24) })
        expect(unknownCollection.status).toBe(404)
        expect(textOf(unknownCollection.text)).toContain(`No collection ${"f".repeat(24)}.`)
        const notAnId = yield* start(owner.browser, "collections", { collectionIds: "nope" })
        expect(notAnId.status).toBe(400)
        expect(notAnId.text).toContain('id="collections-collectionIds-error"')
        expect(yield* storedOf(owner.companyId)).toEqual(before)

        for (const role of ["sender", "viewer"] as const) {
          const member = yield* memberOf(baseUrl, owner.companyId, role)
          expect((yield* promise(() => member.get("/dashboard/exports"))).status).toBe(403)
          const home = yield* promise(() => member.get("/dashboard"))
          const refused = yield* promise(() =>
            member.post("/dashboard/exports/products", { csrf: csrfOf(home.text), environment: "test" })
          )
          expect(refused.status).toBe(403)
        }
        expect(yield* storedOf(owner.companyId)).toEqual(before)

        // Another company's export, and its file, are not found.
        const started = yield* start(owner.browser, "products", { search: "mug" })
        expect(started.status).toBe(303)
        yield* completed(owner.browser, started.location!)
        const other = yield* ownerOf(baseUrl, "Elsewhere Exports")
        expect((yield* promise(() => other.browser.get(started.location!))).status).toBe(404)
        expect((yield* promise(() => other.browser.get(`${started.location!}/files/US`))).status).toBe(404)
        expect((yield* promise(() => other.browser.get("/dashboard/exports/not-an-id"))).status).toBe(404)
        expect(tableOf(yield* promise(() => other.browser.get("/dashboard/exports")))).toEqual([])

        // While an export of the company is still pending, another start is refused with a link to it.
        const pendingId = "0123456789abcdef01234567"
        yield* query(
          (sql) => sql`INSERT INTO catalog_exports (id, company_id, environment, kind, request, status, download_secret,
              created_at)
            VALUES (${pendingId}, ${other.companyId}, 'test', 'products',
              ${JSON.stringify({ filters: {}, collectionIds: [], locations: ["US"], include: [], fields: [], prices: true })}::jsonb,
              'pending', 'secret', now()) RETURNING id`
        )
        const beforeBusy = yield* storedOf(other.companyId)
        const busy = yield* start(other.browser, "products", {})
        expect(busy.status).toBe(409)
        expect(textOf(busy.text)).toContain("Another export of the company is still running")
        expect(busy.text).toContain(`href="/dashboard/exports/${pendingId}"`)
        expect(yield* storedOf(other.companyId)).toEqual(beforeBusy)
      })
    )
  })
})
