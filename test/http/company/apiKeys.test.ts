import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import {
  createCompany,
  deleteWith,
  getWith,
  insertAccount,
  keyHeaders,
  postWith,
  raiseLimits,
  timestampPattern,
  v2Keys,
  v3Keys
} from "../../support/company.js"
import { RibbonTestServer } from "../../support/http.js"

/** API-key management and the API-key middleware on both company lines, over real HTTP. */

const countKeys = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM api_keys`, (rows) => rows[0]!.n)
).pipe(Effect.orDie)

const v2Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })
const v3Error = v2Error

describe("API keys (/public-api/v2, /public-api/v3)", () => {
  it.layer(RibbonTestServer, { timeout: 120_000 })((it) => {
    it.effect("a created key comes back with every field and works at once on v2 and v3", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const created = yield* postWith(
          v2Keys,
          { name: "integration", permissions: ["products:read", "orders:create"] },
          keyHeaders(company.apiKey)
        )
        expect(created.status).toBe(200)
        const body = created.body
        expect(Object.keys(body).sort()).toEqual(
          [
            "accountsAccess",
            "apiKey",
            "companyId",
            "createdAt",
            "enforceMtls",
            "expirationDate",
            "id",
            "name",
            "permissions"
          ].sort()
        )
        expect(body).toMatchObject({
          name: "integration",
          companyId: company.companyId,
          enforceMtls: false,
          permissions: ["products:read", "orders:create"],
          accountsAccess: { scope: "all-accounts", ids: [] }
        })
        expect(body.id).toMatch(/^[0-9a-f]{24}$/)
        expect(body.apiKey).toMatch(/^[0-9a-f]{24}$/)
        expect(body.createdAt).toMatch(timestampPattern)
        expect(body.expirationDate).toMatch(timestampPattern)
        // Default expiry: 90 days.
        expect(Date.parse(body.expirationDate) - Date.parse(body.createdAt)).toBe(90 * 24 * 3600 * 1000)

        const v2List = yield* getWith(v2Keys, keyHeaders(body.apiKey))
        expect(v2List.status).toBe(200)
        expect(v2List.body.results.map((k: any) => k.name).sort()).toEqual(["Default key", "integration"])
        for (const item of v2List.body.results) {
          expect(Object.keys(item).sort()).toEqual(["createdAt", "enforceMtls", "expirationDate", "id", "name"])
        }
        const v3List = yield* getWith(v3Keys, keyHeaders(body.apiKey))
        expect(v3List.status).toBe(200)
        expect(v3List.body.data.map((k: any) => k.id)).toContain(body.id)
        expect(v3List.body.links).toMatchObject({ prev: null, next: null })
        // The rate-limit state rides on successful responses too.
        expect(v3List.headers.ratelimit).toMatch(/^"authentication:read";r=\d+;t=\d+$/)
        expect(v3List.headers["ratelimit-policy"]).toContain('"global";q=200;w=8')
      })
    )

    it.effect("v3 creates with 201 in {data}, and the database holds no key in plain text", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const created = yield* postWith(
          v3Keys,
          { name: "v3 key", expirationInDays: 365, enforceMtls: false },
          keyHeaders(company.apiKey)
        )
        expect(created.status).toBe(201)
        expect(created.body.data).toMatchObject({ name: "v3 key", companyId: company.companyId, rotatedApiKey: null })
        expect(Date.parse(created.body.data.expirationDate) - Date.parse(created.body.data.createdAt)).toBe(
          365 * 24 * 3600 * 1000
        )
        const sql = yield* SqlClient.SqlClient
        const dump = yield* sql<{ row: string }>`SELECT row_to_json(k)::text AS row FROM api_keys k`.pipe(Effect.orDie)
        const all = dump.map((r) => r.row).join("\n")
        for (const value of [company.apiKey, created.body.data.apiKey]) {
          expect(all).not.toContain(value)
          expect(all.toLowerCase()).not.toContain(value.toLowerCase())
        }
      })
    )

    it.effect("401 on both lines: missing, malformed, unknown, deleted and expired keys", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const short = yield* postWith(v2Keys, { name: "short", expirationInDays: 30 }, keyHeaders(company.apiKey))
        expect(short.status).toBe(200)
        const doomed = yield* postWith(v2Keys, { name: "doomed" }, keyHeaders(company.apiKey))
        const deleted = yield* deleteWith(`${v2Keys}/${doomed.body.id}`, keyHeaders(company.apiKey))
        expect(deleted.status).toBe(204)
        expect(deleted.text).toBe("")

        const cases: Array<[string, Record<string, string>, string]> = [
          ["missing", {}, "401_KEYS_001"],
          ["malformed", keyHeaders("not-a-key"), "401_KEYS_002"],
          ["unknown", keyHeaders("0123456789abcdef01234567"), "401_KEYS_002"],
          ["deleted", keyHeaders(doomed.body.apiKey), "401_KEYS_002"]
        ]
        for (const [label, headers, v3Code] of cases) {
          const v2 = yield* getWith(v2Keys, headers)
          expect(v2.status, label).toBe(401)
          expect(v2.body, label).toEqual(v2Error(401, "UNAUTHORIZED"))
          const v3 = yield* getWith(v3Keys, headers)
          expect(v3.status, label).toBe(401)
          expect(v3.body, label).toEqual(v3Error(401, v3Code))
        }

        expect((yield* getWith(v3Keys, keyHeaders(short.body.apiKey))).status).toBe(200)
        yield* TestClock.adjust("30 days")
        const expired = yield* getWith(v3Keys, keyHeaders(short.body.apiKey))
        expect(expired.status).toBe(401)
        expect(expired.body).toEqual(v3Error(401, "401_KEYS_003"))
        expect((yield* getWith(v2Keys, keyHeaders(short.body.apiKey))).body).toEqual(v2Error(401, "UNAUTHORIZED"))
        // The company's first key (90 days) still works.
        expect((yield* getWith(v2Keys, keyHeaders(company.apiKey))).status).toBe(200)
      })
    )

    it.effect("a deleted key is refused at once; deleting it again is a 404 on both lines", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const created = yield* postWith(v3Keys, { name: "temp" }, keyHeaders(company.apiKey))
        const id = created.body.data.id
        expect((yield* getWith(v3Keys, keyHeaders(created.body.data.apiKey))).status).toBe(200)
        expect((yield* deleteWith(`${v3Keys}/${id}`, keyHeaders(company.apiKey))).status).toBe(204)
        expect((yield* getWith(v3Keys, keyHeaders(created.body.data.apiKey))).status).toBe(401)
        const v2 = yield* deleteWith(`${v2Keys}/${id}`, keyHeaders(company.apiKey))
        expect(v2.status).toBe(404)
        expect(v2.body).toEqual(v2Error(404, "NOT_FOUND"))
        const v3 = yield* deleteWith(`${v3Keys}/${id}`, keyHeaders(company.apiKey))
        expect(v3.body).toEqual(v3Error(404, "404_KEYS_001"))
        // Another company's key id is as absent as an unknown one.
        const other = yield* createCompany()
        const foreign = yield* deleteWith(`${v3Keys}/${other.apiKeyId}`, keyHeaders(company.apiKey))
        expect(foreign.status).toBe(404)
        expect((yield* getWith(v3Keys, keyHeaders(other.apiKey))).status).toBe(200)
      })
    )

    it.effect("a key deleted elsewhere (another instance, the CLI) stops working within the 1 s cache", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const created = yield* postWith(v3Keys, { name: "cached" }, keyHeaders(company.apiKey))
        const headers = keyHeaders(created.body.data.apiKey)
        expect((yield* getWith(v3Keys, headers)).status).toBe(200)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${created.body.data.id}`.pipe(Effect.orDie)
        yield* TestClock.adjust("1 second")
        expect((yield* getWith(v3Keys, headers)).status).toBe(401)
      })
    )

    it.effect("at most 3 active keys: the 4th is a 422 on both lines; deleting one makes room", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const headers = keyHeaders(company.apiKey)
        expect((yield* postWith(v2Keys, { name: "two" }, headers)).status).toBe(200)
        const third = yield* postWith(v2Keys, { name: "three" }, headers)
        expect(third.status).toBe(200)
        const before = yield* countKeys
        const v2 = yield* postWith(v2Keys, { name: "four" }, headers)
        expect(v2.status).toBe(422)
        expect(v2.body).toEqual(v2Error(422, "UNPROCESSABLE_ENTITY"))
        const v3 = yield* postWith(v3Keys, { name: "four" }, headers)
        expect(v3.status).toBe(422)
        expect(v3.body).toEqual(v3Error(422, "422_KEYS_001"))
        expect(yield* countKeys).toBe(before)
        expect((yield* deleteWith(`${v2Keys}/${third.body.id}`, headers)).status).toBe(204)
        expect((yield* postWith(v2Keys, { name: "four" }, headers)).status).toBe(200)
      })
    )

    it.effect("10 parallel creations at 2 active keys: exactly one succeeds", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        yield* raiseLimits(company.companyId)
        const headers = keyHeaders(company.apiKey)
        expect((yield* postWith(v2Keys, { name: "second" }, headers)).status).toBe(200)
        const results = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => postWith(v2Keys, { name: `parallel ${i}` }, headers)),
          { concurrency: "unbounded" }
        )
        const statuses = results.map((r) => r.status).sort()
        expect(statuses).toEqual([200, 422, 422, 422, 422, 422, 422, 422, 422, 422])
        const sql = yield* SqlClient.SqlClient
        const active = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM api_keys
          WHERE company_id = ${company.companyId} AND revoked_at IS NULL`.pipe(Effect.orDie)
        expect(active[0]!.n).toBe(3)
      })
    )

    it.effect("v3 rotation creates the new key and schedules the old one's expiry in one call", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const headers = keyHeaders(company.apiKey)
        expect((yield* postWith(v3Keys, { name: "b" }, headers)).status).toBe(201)
        const old = yield* postWith(v3Keys, { name: "c" }, headers)
        // At the limit of 3, rotating still works: the rotated key no longer counts.
        const rotated = yield* postWith(
          v3Keys,
          { name: "c2", rotation: { apiKeyId: old.body.data.id, expiresInHours: 24 } },
          headers
        )
        expect(rotated.status).toBe(201)
        expect(rotated.body.data.rotatedApiKey.id).toBe(old.body.data.id)
        expect(Date.parse(rotated.body.data.rotatedApiKey.expirationDate)).toBe(
          Date.parse(rotated.body.data.createdAt) + 24 * 3600 * 1000
        )
        expect((yield* getWith(v3Keys, keyHeaders(old.body.data.apiKey))).status).toBe(200)
        yield* TestClock.adjust("24 hours")
        expect((yield* getWith(v3Keys, keyHeaders(old.body.data.apiKey))).status).toBe(401)
        expect((yield* getWith(v3Keys, keyHeaders(rotated.body.data.apiKey))).status).toBe(200)
        // Rotating a key that is not active is a 404, and nothing is created.
        const before = yield* countKeys
        const again = yield* postWith(
          v3Keys,
          { name: "c3", rotation: { apiKeyId: old.body.data.id, expiresInHours: 0 } },
          headers
        )
        expect(again.status).toBe(404)
        expect(again.body.errorCode).toBe("404_KEYS_001")
        expect(yield* countKeys).toBe(before)
      })
    )

    it.effect("v3 list: filters, sort, page links followed verbatim; filter[accountId] is a 400", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const headers = keyHeaders(company.apiKey)
        yield* postWith(v3Keys, { name: "alpha" }, headers)
        yield* postWith(v3Keys, { name: "beta", enforceMtls: true }, headers)
        const first = yield* getWith(`${v3Keys}?sort=name&page[size]=2`, headers)
        expect(first.status).toBe(200)
        expect(first.body.data.map((k: any) => k.name)).toEqual(["Default key", "alpha"])
        expect(first.body.links.prev).toBeNull()
        const second = yield* getWith(first.body.links.next, headers)
        expect(second.body.data.map((k: any) => k.name)).toEqual(["beta"])
        expect(second.body.links.next).toBeNull()
        expect(second.body.links.prev).toContain("page%5Bnumber%5D=1")

        const filtered = yield* getWith(`${v3Keys}?filter[enforceMtls]=true`, headers)
        expect(filtered.body.data.map((k: any) => k.name)).toEqual(["beta"])

        const unknown = yield* getWith(`${v3Keys}?filter[accountId]=${company.accountId}`, headers)
        expect(unknown.status).toBe(400)
        expect(unknown.body).toEqual({
          message: expect.stringContaining("filter[accountId]"),
          errorCode: "400_PBLC_001",
          errors: [{ path: "filter[accountId]", errorCode: "400_PBLC_001", message: expect.any(String) }]
        })
        const badPage = yield* getWith(`${v3Keys}?page[size]=0&sort=colour`, headers)
        expect(badPage.status).toBe(400)
        expect(badPage.body.errors.map((e: any) => e.path).sort()).toEqual(["page[size]", "sort"])
      })
    )

    it.effect("bad input is a 400 in each line's format naming the field, and stores nothing", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        yield* raiseLimits(company.companyId)
        const headers = keyHeaders(company.apiKey)
        yield* postWith(v2Keys, { name: "taken" }, headers)
        const before = yield* countKeys
        const bodies: Array<[string, unknown, string, string?]> = [
          ["empty name", { name: "" }, "name"],
          ["missing name", { permissions: [] }, "name"],
          ["name not a string", { name: 7 }, "name"],
          ["duplicate name", { name: "taken" }, "name"],
          ["expiration not permitted", { name: "x", expirationInDays: 45 }, "expirationInDays", "30, 60, 90, 180, 365"],
          ["expiration in bounds but fractional", { name: "x", expirationInDays: 0.5 }, "expirationInDays"],
          ["expiration below the bounds", { name: "x", expirationInDays: 0.0001 }, "expirationInDays"],
          ["expiration above the bounds", { name: "x", expirationInDays: 366 }, "expirationInDays"],
          ["expiration as text", { name: "x", expirationInDays: "90" }, "expirationInDays"],
          ["enforceMtls not boolean", { name: "x", enforceMtls: "yes" }, "enforceMtls"],
          [
            "unknown permission",
            { name: "x", permissions: ["products:read", "bogus:perm"] },
            "permissions[1]",
            "bogus:perm"
          ],
          ["permissions not an array", { name: "x", permissions: "products:read" }, "permissions"],
          ["bad account scope", { name: "x", accountsAccess: { scope: "some", ids: [] } }, "accountsAccess.scope"],
          [
            "unknown account",
            { name: "x", accountsAccess: { scope: "selected-accounts", ids: ["0123456789abcdef01234567"] } },
            "accountsAccess.ids[0]"
          ],
          ["not JSON", "{", ""]
        ]
        for (const [label, body, path, mention] of bodies) {
          const v2 = yield* postWith(v2Keys, body, headers)
          expect(v2.status, label).toBe(400)
          expect(v2.body, label).toEqual({ path, errorCode: "INVALID_REQUEST", message: expect.any(String) })
          if (mention !== undefined) expect(v2.body.message, label).toContain(mention)
          const v3 = yield* postWith(v3Keys, body, headers)
          expect(v3.status, label).toBe(400)
          expect(v3.body, label).toEqual({
            message: expect.any(String),
            errorCode: "400_PBLC_001",
            errors: [{ path, errorCode: "400_PBLC_001", message: expect.any(String) }]
          })
        }
        const queries: Array<[string, string, string]> = [
          ["GET", `${v2Keys}?companyId=ab`, "companyId"],
          ["GET", `${v2Keys}?accountIds=nothex`, "accountIds[0]"],
          ["DELETE", `${v2Keys}/xyz`, "apiKeyId"],
          ["DELETE", `${v3Keys}/0123456789abcdef0123456`, "apiKeyId"]
        ]
        for (const [method, url, path] of queries) {
          const response = method === "GET" ? yield* getWith(url, headers) : yield* deleteWith(url, headers)
          expect(response.status, url).toBe(400)
          if (url.startsWith(v2Keys)) expect(response.body.path, url).toBe(path)
          else expect(response.body.errors[0].path, url).toBe(path)
        }
        const source = yield* postWith(v2Keys, { name: "y" }, { ...headers, "request-source": "api_carrier_pigeon" })
        expect(source.status).toBe(400)
        expect(source.body.path).toBe("Request-Source")
        expect(yield* countKeys).toBe(before)
      })
    )

    it.effect("403s: granting a permission the key lacks, another company's id, an mTLS key on the plain port", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const narrow = yield* postWith(
          v2Keys,
          { name: "narrow", permissions: ["products:read"] },
          keyHeaders(company.apiKey)
        )
        const escalate = yield* postWith(
          v2Keys,
          { name: "wider", permissions: ["products:read", "orders:create"] },
          keyHeaders(narrow.body.apiKey)
        )
        expect(escalate.status).toBe(403)
        expect(escalate.body).toEqual(v2Error(403, "FORBIDDEN"))
        expect(escalate.body.message).toContain("orders:create")
        const v3 = yield* postWith(
          v3Keys,
          { name: "wider", permissions: ["orders:create"] },
          keyHeaders(narrow.body.apiKey)
        )
        expect(v3.body).toEqual(v3Error(403, "403_KEYS_001"))

        const other = yield* createCompany()
        const foreign = yield* getWith(`${v2Keys}?companyId=${other.companyId}`, keyHeaders(company.apiKey))
        expect(foreign.status).toBe(403)
        expect(foreign.body).toEqual(v2Error(403, "FORBIDDEN"))
        const own = yield* getWith(`${v3Keys}?companyId=${company.companyId}`, keyHeaders(company.apiKey))
        expect(own.status).toBe(200)

        const mtls = yield* postWith(v3Keys, { name: "mtls only", enforceMtls: true }, keyHeaders(company.apiKey))
        const plain = yield* getWith(v3Keys, keyHeaders(mtls.body.data.apiKey))
        expect(plain.status).toBe(403)
        expect(plain.body).toEqual(v3Error(403, "403_KEYS_003"))
        expect(plain.body.message).toContain("mTLS root")
        const plainV2 = yield* getWith(v2Keys, keyHeaders(mtls.body.data.apiKey))
        expect(plainV2.body).toEqual(v2Error(403, "MTLS_REQUIRED"))
      })
    )

    it.effect("Ribbon-Account-Id: reachable accounts pass, others are 404, the other environment's is 403", () =>
      Effect.gen(function* () {
        const company = yield* createCompany("test")
        const headers = keyHeaders(company.apiKey)
        const live = "aaaaaaaaaaaaaaaaaaaaaaaa"
        const second = "bbbbbbbbbbbbbbbbbbbbbbbb"
        yield* insertAccount(company.companyId, "live", live)
        yield* insertAccount(company.companyId, "test", second)

        expect((yield* getWith(v3Keys, { ...headers, "ribbon-account-id": company.accountId })).status).toBe(200)
        const unknown = yield* getWith(v2Keys, { ...headers, "ribbon-account-id": "0123456789abcdef01234567" })
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual(v2Error(404, "NOT_FOUND"))
        const unknownV3 = yield* getWith(v3Keys, { ...headers, "ribbon-account-id": "nonsense" })
        expect(unknownV3.body).toEqual(v3Error(404, "404_ACCT_001"))
        const otherEnv = yield* getWith(v3Keys, { ...headers, "ribbon-account-id": live })
        expect(otherEnv.status).toBe(403)
        expect(otherEnv.body).toEqual(v3Error(403, "403_KEYS_002"))

        // A key limited to one account cannot reach another of the same company.
        const scoped = yield* postWith(
          v2Keys,
          { name: "scoped", accountsAccess: { scope: "selected-accounts", ids: [second] } },
          headers
        )
        expect(scoped.status).toBe(200)
        expect(scoped.body.accountsAccess).toEqual({ scope: "selected-accounts", ids: [second] })
        const scopedHeaders = keyHeaders(scoped.body.apiKey)
        expect((yield* getWith(v3Keys, { ...scopedHeaders, "ribbon-account-id": second })).status).toBe(200)
        const unreachable = yield* getWith(v3Keys, { ...scopedHeaders, "ribbon-account-id": company.accountId })
        expect(unreachable.status).toBe(404)
        // accountIds narrows the v2 list to keys that reach one of them.
        const listed = yield* getWith(`${v2Keys}?accountIds=${second}`, headers)
        expect(listed.body.results.map((k: any) => k.name).sort()).toEqual(["Default key", "scoped"])
        const first = yield* getWith(`${v2Keys}?accountIds=${company.accountId}`, headers)
        expect(first.body.results.map((k: any) => k.name)).toEqual(["Default key"])
      })
    )

    it.effect("a key limited to some accounts cannot create or rotate a key reaching further (v2 and v3)", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        yield* raiseLimits(company.companyId)
        const second = "cccccccccccccccccccccccc"
        yield* insertAccount(company.companyId, "test", second)
        const scoped = yield* postWith(
          v3Keys,
          {
            name: "scoped",
            permissions: ["orders:read:unmasked", "products:read"],
            accountsAccess: { scope: "selected-accounts", ids: [second] }
          },
          keyHeaders(company.apiKey)
        )
        expect(scoped.status).toBe(201)
        const headers = keyHeaders(scoped.body.data.apiKey)
        const before = yield* countKeys
        const wider: Array<[string, unknown]> = [
          ["all accounts", { scope: "all-accounts", ids: [] }],
          ["another account", { scope: "selected-accounts", ids: [company.accountId] }],
          ["its own and another", { scope: "selected-accounts", ids: [second, company.accountId] }]
        ]
        for (const [label, accountsAccess] of wider) {
          const body = { name: `wide ${label}`, permissions: ["orders:read:unmasked"], accountsAccess }
          const v3 = yield* postWith(v3Keys, body, headers)
          expect(v3.status, label).toBe(403)
          expect(v3.body, label).toEqual(v3Error(403, "403_KEYS_005"))
          const v2 = yield* postWith(v2Keys, body, headers)
          expect(v2.status, label).toBe(403)
          expect(v2.body, label).toEqual(v2Error(403, "FORBIDDEN"))
        }
        // Without accountsAccess a key reaches every account: refused alike, with a message that says so.
        const implicit = yield* postWith(v3Keys, { name: "implicit" }, headers)
        expect(implicit.body).toEqual(v3Error(403, "403_KEYS_005"))
        expect(implicit.body.message).toContain("all accounts")
        // Rotating the admin key (every permission, every account) is refused, and its expiry stays.
        const rotate = yield* postWith(
          v3Keys,
          {
            name: "rotated admin",
            accountsAccess: { scope: "selected-accounts", ids: [second] },
            rotation: { apiKeyId: company.apiKeyId, expiresInHours: 0 }
          },
          headers
        )
        expect(rotate.status).toBe(403)
        expect(rotate.body).toEqual(v3Error(403, "403_KEYS_001"))
        expect(yield* countKeys).toBe(before)
        expect((yield* getWith(v3Keys, keyHeaders(company.apiKey))).status).toBe(200)

        // Within its reach it still creates, and rotates a key it could have created.
        const narrow = yield* postWith(
          v3Keys,
          {
            name: "narrow",
            permissions: ["products:read"],
            accountsAccess: { scope: "selected-accounts", ids: [second] }
          },
          headers
        )
        expect(narrow.status).toBe(201)
        const rotated = yield* postWith(
          v3Keys,
          {
            name: "narrow 2",
            permissions: ["products:read"],
            accountsAccess: { scope: "selected-accounts", ids: [second.toUpperCase()] },
            rotation: { apiKeyId: narrow.body.data.id, expiresInHours: 1 }
          },
          headers
        )
        expect(rotated.status).toBe(201)
        expect(rotated.body.data.rotatedApiKey.id).toBe(narrow.body.data.id)
      })
    )

    it.effect("a key revokes only keys within its reach, and always itself (v2 and v3)", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        yield* raiseLimits(company.companyId)
        const second = "dddddddddddddddddddddddd"
        yield* insertAccount(company.companyId, "test", second)
        const admin = keyHeaders(company.apiKey)
        const bare = yield* postWith(v3Keys, { name: "bare", permissions: [] }, admin)
        const scoped = yield* postWith(
          v3Keys,
          { name: "scoped", permissions: [], accountsAccess: { scope: "selected-accounts", ids: [second] } },
          admin
        )
        const bareHeaders = keyHeaders(bare.body.data.apiKey)
        const scopedHeaders = keyHeaders(scoped.body.data.apiKey)

        // A key without permissions cannot revoke the admin key, which holds every permission.
        const v3 = yield* deleteWith(`${v3Keys}/${company.apiKeyId}`, bareHeaders)
        expect(v3.status).toBe(403)
        expect(v3.body).toEqual(v3Error(403, "403_KEYS_001"))
        const v2 = yield* deleteWith(`${v2Keys}/${company.apiKeyId}`, bareHeaders)
        expect(v2.status).toBe(403)
        expect(v2.body).toEqual(v2Error(403, "FORBIDDEN"))
        // A key limited to one account cannot revoke one that reaches every account.
        const wider = yield* deleteWith(`${v3Keys}/${bare.body.data.id}`, scopedHeaders)
        expect(wider.body).toEqual(v3Error(403, "403_KEYS_005"))
        const widerV2 = yield* deleteWith(`${v2Keys}/${bare.body.data.id}`, scopedHeaders)
        expect(widerV2.body).toEqual(v2Error(403, "FORBIDDEN"))
        const sql = yield* SqlClient.SqlClient
        const revoked = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM api_keys
          WHERE company_id = ${company.companyId} AND revoked_at IS NOT NULL`.pipe(Effect.orDie)
        expect(revoked[0]!.n).toBe(0)
        expect((yield* getWith(v3Keys, admin)).status).toBe(200)

        // The other way round it works, and a key may always revoke itself.
        expect((yield* deleteWith(`${v2Keys}/${scoped.body.data.id}`, bareHeaders)).status).toBe(204)
        expect((yield* deleteWith(`${v3Keys}/${bare.body.data.id}`, bareHeaders)).status).toBe(204)
        expect((yield* getWith(v3Keys, bareHeaders)).status).toBe(401)
      })
    )

    it.effect("v3 key creation refuses unknown properties (a typo is not an all-accounts key); v2 ignores them", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        yield* raiseLimits(company.companyId)
        const headers = keyHeaders(company.apiKey)
        const before = yield* countKeys
        const typo = yield* postWith(
          v3Keys,
          { name: "typo", accountAccess: { scope: "selected-accounts", ids: [company.accountId] } },
          headers
        )
        expect(typo.status).toBe(400)
        expect(typo.body).toEqual({
          message: expect.any(String),
          errorCode: "400_PBLC_001",
          errors: [{ path: "accountAccess", errorCode: "400_PBLC_001", message: expect.stringContaining("unexpected") }]
        })
        const nested = yield* postWith(
          v3Keys,
          { name: "nested", rotation: { apiKeyId: company.apiKeyId, expiresInHour: 1 } },
          headers
        )
        expect(nested.status).toBe(400)
        expect(nested.body.errors[0].path).toBe("rotation.expiresInHour")
        expect(yield* countKeys).toBe(before)
        const v2 = yield* postWith(v2Keys, { name: "lenient", colour: "blue" }, headers)
        expect(v2.status).toBe(200)
      })
    )

    it.effect("v2 list: accountIds must name accounts the key reaches (404 otherwise)", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const other = yield* createCompany()
        const live = "eeeeeeeeeeeeeeeeeeeeeeee"
        yield* insertAccount(company.companyId, "live", live)
        const headers = keyHeaders(company.apiKey)
        for (const accountId of [other.accountId, live]) {
          const listed = yield* getWith(`${v2Keys}?accountIds=${company.accountId}&accountIds=${accountId}`, headers)
          expect(listed.status, accountId).toBe(404)
          expect(listed.body, accountId).toEqual(v2Error(404, "NOT_FOUND"))
          expect(listed.body.message, accountId).toContain(accountId)
        }
        const own = yield* getWith(`${v2Keys}?accountIds=${company.accountId}`, headers)
        expect(own.body.results.map((k: any) => k.name)).toEqual(["Default key"])
      })
    )

    it.effect("Request-Source is recorded on the key a request creates", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const created = yield* postWith(
          v2Keys,
          { name: "from zapier" },
          keyHeaders(company.apiKey, { "request-source": "api_zapier" })
        )
        expect(created.status).toBe(200)
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ requestSource: string }>`SELECT request_source FROM api_keys
          WHERE id = ${created.body.id}`.pipe(Effect.orDie)
        expect(rows[0]!.requestSource).toBe("api_zapier")
      })
    )

    it.effect("test and live keys are distinct: a key lists and deletes only its own environment's keys", () =>
      Effect.gen(function* () {
        const company = yield* createCompany("live")
        const sql = yield* SqlClient.SqlClient
        const envs = yield* sql<{ environment: string }>`SELECT environment FROM api_keys
          WHERE company_id = ${company.companyId}`.pipe(Effect.orDie)
        expect(envs).toEqual([{ environment: "live" }])
        const created = yield* postWith(v3Keys, { name: "live two" }, keyHeaders(company.apiKey))
        expect(created.status).toBe(201)
        // Flip the new key to test: the live key now meets a test resource.
        yield* sql`UPDATE api_keys SET environment = 'test' WHERE id = ${created.body.data.id}`.pipe(Effect.orDie)
        const list = yield* getWith(v3Keys, keyHeaders(company.apiKey))
        expect(list.body.data.map((k: any) => k.id)).toEqual([company.apiKeyId])
        const del = yield* deleteWith(`${v3Keys}/${created.body.data.id}`, keyHeaders(company.apiKey))
        expect(del.status).toBe(403)
        expect(del.body).toEqual(v3Error(403, "403_KEYS_002"))
      })
    )
  })
})
