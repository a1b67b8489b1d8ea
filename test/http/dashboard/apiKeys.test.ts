import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { AccountsAccess } from "../../../src/domain/company/Company.js"
import { Companies } from "../../../src/services/company/Companies.js"
import { BaseUrl, RealPortServer, TimeTravel } from "../../support/auth.js"
import { csrfOf, type DashboardBrowser } from "../../support/dashboard.js"
import { memberOf, ownerOf } from "../../support/dashboardMembers.js"
import { eventually, settle } from "../../support/eventually.js"

/**
 * The dashboard's API keys section over HTTP: a key made from the dashboard is shown once and then only by its
 * first characters, works on the company API, records its last use at most once a minute, and once revoked is
 * refused (401). A viewer reaches none of it; a developer gives no permission its role lacks; every refused or
 * malformed form leaves no key behind; another company's key is not found.
 */

interface KeyRow {
  readonly id: string
  readonly name: string
  readonly environment: string
  readonly permissions: ReadonlyArray<string>
  readonly accountsAccess: AccountsAccess
  readonly enforceMtls: boolean
  readonly prefix: string | null
  readonly lastUsedAt: Date | null
  readonly revokedAt: Date | null
}

const keysOf = (companyId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<KeyRow>`SELECT id, name, environment, permissions, accounts_access, enforce_mtls, key_prefix AS prefix,
        last_used_at, revoked_at
      FROM api_keys WHERE company_id = ${companyId} ORDER BY created_at`
  ).pipe(Effect.orDie)

/** Every key row of every company: a refused form changes none of them. */
const allKeys = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ id: string; revokedAt: Date | null }>`SELECT id, revoked_at FROM api_keys ORDER BY id`
).pipe(Effect.orDie)

/** The company API's account list with `apiKey`: its status. */
const accountsWith = (baseUrl: string, apiKey: string) =>
  Effect.promise(() => fetch(`${baseUrl}/public-api/v3/accounts`, { headers: { "x-api-key": apiKey } })).pipe(
    Effect.map((response) => response.status)
  )

const keyOnPage = (html: string) => html.match(/id="api-key"[^>]*value="([0-9a-f]{24})"/)?.[1]

/** The fields of a valid creation form. */
const keyForm = (fields: Record<string, string | ReadonlyArray<string>>) => {
  const form = new URLSearchParams()
  for (const [name, value] of Object.entries(fields)) {
    for (const one of typeof value === "string" ? [value] : value) form.append(name, one)
  }
  return form
}

const postForm = (browser: DashboardBrowser, path: string, form: URLSearchParams) =>
  Effect.promise(() =>
    browser.request(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form.toString()
    })
  )

/** Opens the creation form and sends it with `fields` (and the form's own CSRF token). */
const createKey = (browser: DashboardBrowser, fields: Record<string, string | ReadonlyArray<string>>) =>
  Effect.gen(function* () {
    const page = yield* Effect.promise(() => browser.get("/dashboard/api-keys/new"))
    expect(page.status).toBe(200)
    const form = keyForm({
      csrf: csrfOf(page.text, "/dashboard/api-keys"),
      environment: "test",
      expirationInDays: "90",
      accounts: "all",
      ...fields
    })
    return yield* postForm(browser, "/dashboard/api-keys", form)
  })

describe("dashboard API keys", () => {
  it.layer(RealPortServer, { timeout: 240_000 })((it) => {
    it.effect("creates a key shown once, lists it by prefix, records its use once a minute, revokes it (401)", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser: owner, userId, companyId, accountId } = yield* ownerOf(baseUrl, "Key Makers")

        const empty = yield* Effect.promise(() => owner.get("/dashboard/api-keys"))
        expect(empty.status).toBe(200)
        expect(empty.text).toContain("No test keys yet.")
        const form = yield* Effect.promise(() => owner.get("/dashboard/api-keys/new"))
        // Every permission with its description, from the one source docs/permissions.md is made from.
        expect(form.text).toContain("<code>orders:read:unmasked</code>: Read orders with their personal data in full")
        expect(form.text).not.toContain("(not in your role)")

        const created = yield* createKey(owner, {
          name: "Warehouse sync",
          expirationInDays: "30",
          permissions: ["accounts:read", "campaigns:read"],
          accounts: "selected",
          accountIds: [accountId],
          enforceMtls: ""
        })
        expect(created.status).toBe(201)
        expect(created.headers.get("cache-control")).toBe("no-store")
        const apiKey = keyOnPage(created.text)!
        expect(apiKey).toMatch(/^[0-9a-f]{24}$/)
        expect(created.text).toContain("this is the only time it is shown")
        const [row] = yield* keysOf(companyId)
        expect(row).toMatchObject({
          name: "Warehouse sync",
          environment: "test",
          permissions: ["accounts:read", "campaigns:read"],
          accountsAccess: { scope: "selected-accounts", ids: [accountId] },
          enforceMtls: false,
          prefix: apiKey.slice(0, 6),
          lastUsedAt: null,
          revokedAt: null
        })

        // Afterwards only its first characters are ever shown.
        const list = yield* Effect.promise(() => owner.get("/dashboard/api-keys"))
        expect(list.text).toContain("Warehouse sync")
        expect(list.text).toContain(`<code>${apiKey.slice(0, 6)}…</code>`)
        expect(list.text).not.toContain(apiKey)
        expect(list.text).toContain("Never")

        // The key works, and its use is recorded off the request's path.
        expect(yield* accountsWith(baseUrl, apiKey)).toBe(200)
        const lastUse = Effect.map(keysOf(companyId), ([key]) => key!.lastUsedAt)
        const firstUse = (yield* eventually(lastUse, (at) => at !== null, "the first use recorded"))!
        expect((yield* Effect.promise(() => owner.get("/dashboard/api-keys"))).text).not.toContain("Never")
        // Within the minute, another use writes nothing.
        expect(yield* accountsWith(baseUrl, apiKey)).toBe(200)
        yield* settle
        expect(yield* lastUse).toEqual(firstUse)
        // A minute on, it is recorded again.
        yield* Effect.flatMap(TimeTravel, (time) => time.advance("61 seconds"))
        expect(yield* accountsWith(baseUrl, apiKey)).toBe(200)
        const secondUse = (yield* eventually(
          lastUse,
          (at) => at !== null && at.getTime() > firstUse.getTime(),
          "the use a minute later recorded"
        ))!
        expect(secondUse.getTime() - firstUse.getTime()).toBeGreaterThanOrEqual(60_000)

        // Revocation: a confirm step, then the key is refused at once.
        const confirm = yield* Effect.promise(() => owner.get(`/dashboard/api-keys/${row!.id}/revoke`))
        expect(confirm.status).toBe(200)
        expect(confirm.text).toContain("Revoke this key?")
        expect(yield* accountsWith(baseUrl, apiKey)).toBe(200)
        const revoked = yield* Effect.promise(() =>
          owner.post(`/dashboard/api-keys/${row!.id}/revoke`, {
            csrf: csrfOf(confirm.text, `/dashboard/api-keys/${row!.id}/revoke`)
          })
        )
        expect(revoked.status).toBe(303)
        expect(revoked.location).toBe("/dashboard/api-keys?environment=test")
        expect(yield* accountsWith(baseUrl, apiKey)).toBe(401)
        const after = yield* Effect.promise(() => owner.get("/dashboard/api-keys"))
        expect(after.text).toContain("The key “Warehouse sync” is revoked")
        expect(after.text).toContain("No test keys yet.")
        // The audit log names the member as the one who made and revoked the key.
        const audited = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql<{ action: string; actorType: string; actorId: string }>`SELECT action, actor_type, actor_id
            FROM audit_events WHERE company_id = ${companyId} AND target_id = ${row!.id} ORDER BY occurred_at`
        ).pipe(Effect.orDie)
        expect(audited).toEqual([
          { action: "api_key.created", actorType: "member", actorId: userId },
          { action: "api_key.revoked", actorType: "member", actorId: userId }
        ])
        // Revoked once, it is gone: a second revocation finds nothing.
        const again = yield* Effect.promise(() =>
          owner.post(`/dashboard/api-keys/${row!.id}/revoke`, {
            csrf: csrfOf(confirm.text, `/dashboard/api-keys/${row!.id}/revoke`)
          })
        )
        expect(again.status).toBe(404)
      })
    )

    it.effect("a viewer reaches no key page and changes nothing", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser: owner, companyId } = yield* ownerOf(baseUrl, "Viewed Keys")
        const made = yield* createKey(owner, { name: "Owner's key", permissions: ["accounts:read"] })
        const apiKey = keyOnPage(made.text)!
        const [key] = yield* keysOf(companyId)

        const viewer = yield* memberOf(baseUrl, companyId, "viewer")
        const before = yield* allKeys
        for (const path of [
          "/dashboard/api-keys",
          "/dashboard/api-keys/new",
          `/dashboard/api-keys/${key!.id}/revoke`
        ]) {
          const page = yield* Effect.promise(() => viewer.get(path))
          expect(page.status, path).toBe(403)
          expect(page.text, path).toContain("Not allowed")
          expect(page.text, path).not.toContain("Owner&#39;s key")
        }
        // With the viewer's own valid CSRF token, the forms are refused all the same.
        const home = yield* Effect.promise(() => viewer.get("/dashboard"))
        const csrf = csrfOf(home.text, "/dashboard/sign-out")
        const create = yield* postForm(
          viewer,
          "/dashboard/api-keys",
          keyForm({ csrf, environment: "test", name: "Viewer's", expirationInDays: "90", accounts: "all" })
        )
        expect(create.status).toBe(403)
        const revoke = yield* Effect.promise(() => viewer.post(`/dashboard/api-keys/${key!.id}/revoke`, { csrf }))
        expect(revoke.status).toBe(403)
        expect(yield* allKeys).toEqual(before)
        expect(yield* accountsWith(baseUrl, apiKey)).toBe(200)
      })
    )

    it.effect("a developer gives no permission or account beyond its own: a form error, no key", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { companyId, accountId } = yield* ownerOf(baseUrl, "Developers' Keys")
        const developer = yield* memberOf(baseUrl, companyId, "developer")

        const form = yield* Effect.promise(() => developer.get("/dashboard/api-keys/new"))
        expect(form.status).toBe(200)
        // The role's missing permissions are shown, and cannot be ticked.
        expect(form.text).toMatch(/value="orders:read:unmasked"[^>]*disabled/)
        const before = yield* allKeys
        const refused = yield* createKey(developer, {
          name: "Too much",
          permissions: ["accounts:read", "orders:read:unmasked"]
        })
        expect(refused.status).toBe(403)
        expect(refused.text).toContain(
          "You cannot create a key holding orders:read:unmasked, a permission you do not hold."
        )
        expect(refused.text).toContain('id="permissions-error"')
        // What was filled in comes back.
        expect(refused.text).toContain('value="Too much"')
        expect(yield* allKeys).toEqual(before)

        // Within the role, the developer makes the key.
        const made = yield* createKey(developer, { name: "Masked reads", permissions: ["orders:read:masked"] })
        expect(made.status).toBe(201)

        // A developer limited to one account cannot give all of them.
        const limited = yield* memberOf(baseUrl, companyId, "developer", {
          scope: "selected-accounts",
          ids: [accountId]
        })
        const beforeLimited = yield* allKeys
        const all = yield* createKey(limited, { name: "Everywhere", accounts: "all" })
        expect(all.status).toBe(403)
        expect(all.text).toContain("You reach only selected accounts; you cannot create a key reaching all accounts.")
        expect(yield* allKeys).toEqual(beforeLimited)
        const one = yield* createKey(limited, { name: "Just one", accounts: "selected", accountIds: [accountId] })
        expect(one.status).toBe(201)
      })
    )

    it.effect("every malformed form is answered beside its field and makes no key; the limit is said", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser: owner, companyId } = yield* ownerOf(baseUrl, "Careful Keys")
        const before = yield* allKeys
        const cases: ReadonlyArray<readonly [Record<string, string | ReadonlyArray<string>>, string, string]> = [
          [{ name: "  " }, "name-error", "Give the key a name."],
          [{ name: "x".repeat(101) }, "name-error", "At most 100 characters."],
          [{ name: "Odd", expirationInDays: "45" }, "expirationInDays-error", "Pick one of 30, 60, 90, 180, 365 days."],
          [
            { name: "Odd", permissions: ["gifts:fly"] },
            "permissions-error",
            "There is no permission &quot;gifts:fly&quot;."
          ],
          [
            { name: "Odd", accounts: "selected" },
            "accounts-error",
            "Tick at least one account, or choose all accounts."
          ],
          [
            { name: "Odd", accounts: "selected", accountIds: ["0123456789abcdef01234567"] },
            "accounts-error",
            "No such account in this company."
          ],
          [{ name: "Odd", environment: "live" }, "", "The company is not live yet: it has test keys only."]
        ]
        for (const [fields, errorId, message] of cases) {
          const page = yield* createKey(owner, fields)
          expect(page.status, message).toBe(400)
          expect(page.text, message).toContain(message)
          if (errorId !== "") expect(page.text, message).toContain(`id="${errorId}"`)
        }
        // Without its CSRF token, a valid form is refused.
        const noCsrf = yield* postForm(
          owner,
          "/dashboard/api-keys",
          keyForm({ environment: "test", name: "No token", expirationInDays: "90", accounts: "all" })
        )
        expect(noCsrf.status).toBe(403)
        expect(yield* allKeys).toEqual(before)

        // A name taken, then the company's limit of three active keys.
        expect((yield* createKey(owner, { name: "One" })).status).toBe(201)
        const taken = yield* createKey(owner, { name: "One" })
        expect(taken.status).toBe(400)
        expect(taken.text).toContain("An API key named &quot;One&quot; already exists.")
        expect((yield* createKey(owner, { name: "Two" })).status).toBe(201)
        expect((yield* createKey(owner, { name: "Three" })).status).toBe(201)
        const fourth = yield* createKey(owner, { name: "Four" })
        expect(fourth.status).toBe(422)
        expect(fourth.text).toContain("A company has at most 3 active API keys")
        expect((yield* keysOf(companyId)).map((key) => key.name)).toEqual(["One", "Two", "Three"])
      })
    )

    it.effect("another company's key is not found; a revocation without its token changes nothing", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser: alice } = yield* ownerOf(baseUrl, "Alice's Keys")
        const { browser: bob, companyId: bobCompanyId } = yield* ownerOf(baseUrl, "Bob's Keys")
        const made = yield* createKey(bob, { name: "Bob's key", permissions: ["accounts:read"] })
        const bobKey = keyOnPage(made.text)!
        const [key] = yield* keysOf(bobCompanyId)

        const confirm = yield* Effect.promise(() => alice.get(`/dashboard/api-keys/${key!.id}/revoke`))
        expect(confirm.status).toBe(404)
        expect(confirm.text).not.toContain("Bob")
        const home = yield* Effect.promise(() => alice.get("/dashboard"))
        const csrf = csrfOf(home.text, "/dashboard/sign-out")
        expect(
          (yield* Effect.promise(() => alice.post(`/dashboard/api-keys/${key!.id}/revoke`, { csrf }))).status
        ).toBe(404)
        expect((yield* Effect.promise(() => alice.get("/dashboard/api-keys/not-a-key/revoke"))).status).toBe(404)
        expect((yield* Effect.promise(() => bob.post(`/dashboard/api-keys/${key!.id}/revoke`, {}))).status).toBe(403)
        expect(yield* accountsWith(baseUrl, bobKey)).toBe(200)
        expect((yield* Effect.promise(() => alice.get("/dashboard/api-keys"))).text).not.toContain("Bob&#39;s key")
      })
    )

    it.effect("a live company lists and makes keys per environment", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser: owner, companyId } = yield* ownerOf(baseUrl, "Live Keys")
        yield* Effect.flatMap(Companies, (companies) => companies.activate(companyId))

        const list = yield* Effect.promise(() => owner.get("/dashboard/api-keys"))
        expect(list.text).toContain("No live keys yet.")
        const form = yield* Effect.promise(() => owner.get("/dashboard/api-keys/new?environment=live"))
        const made = yield* postForm(
          owner,
          "/dashboard/api-keys",
          keyForm({
            csrf: csrfOf(form.text, "/dashboard/api-keys"),
            environment: "live",
            name: "Production",
            expirationInDays: "365",
            permissions: ["accounts:read"],
            accounts: "all",
            enforceMtls: "on"
          })
        )
        expect(made.status).toBe(201)
        expect(yield* keysOf(companyId)).toMatchObject([{ name: "Production", environment: "live", enforceMtls: true }])
        expect((yield* Effect.promise(() => owner.get("/dashboard/api-keys?environment=live"))).text).toContain(
          "Production"
        )
        expect((yield* Effect.promise(() => owner.get("/dashboard/api-keys?environment=test"))).text).not.toContain(
          "Production"
        )
      })
    )
  })
})
