import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  createCompany,
  getWith,
  keyHeaders,
  postWith,
  raiseLimits,
  timestampPattern,
  v2Keys
} from "../../support/company.js"
import { RibbonTestServer } from "../../support/http.js"

/**
 * v3 accounts and billing methods over real HTTP (docs/decisions/0041-v3-accounts-and-billing.md, spec "Versioning"
 * 3.1).
 */

const accounts = "/public-api/v3/accounts"
const billingMethods = "/public-api/v3/billing-methods"

const counts = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ accounts: number; methods: number }>`SELECT (SELECT count(*)::int FROM accounts) AS accounts,
      (SELECT count(*)::int FROM billing_methods) AS methods`,
    (rows) => rows[0]!
  )
).pipe(Effect.orDie)

/** A company with a second key holding `permissions` (and reaching `accountsAccess`). */
const companyWithKey = (permissions: ReadonlyArray<string>, accountsAccess?: unknown) =>
  Effect.gen(function* () {
    const company = yield* createCompany()
    yield* raiseLimits(company.companyId)
    const created = yield* postWith(
      v2Keys,
      { name: "scoped", permissions, ...(accountsAccess === undefined ? {} : { accountsAccess }) },
      keyHeaders(company.apiKey)
    )
    expect(created.status).toBe(200)
    return { ...company, scopedKey: created.body.apiKey as string }
  })

const v3Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })

describe("accounts and billing methods (/public-api/v3)", () => {
  it.layer(RibbonTestServer, { timeout: 120_000 })((it) => {
    it.effect("a new test company's default account has funded test money as its default billing method", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const listed = yield* getWith(billingMethods, keyHeaders(company.apiKey))
        expect(listed.status).toBe(200)
        expect(listed.body.data).toEqual([
          {
            id: expect.stringMatching(/^[0-9a-f]{24}$/),
            accountId: company.accountId,
            name: "Test funds",
            type: "prepaid",
            status: "active",
            isDefault: true,
            spendingLimit: { amount: 100_000_00, currency: "USD", remaining: 100_000_00 },
            createdAt: expect.stringMatching(timestampPattern)
          }
        ])
        const one = yield* getWith(`${billingMethods}/${listed.body.data[0].id}`, keyHeaders(company.apiKey))
        expect(one.body).toEqual({ data: listed.body.data[0] })

        const live = yield* createCompany("live")
        const liveMethods = yield* getWith(billingMethods, keyHeaders(live.apiKey))
        expect(liveMethods.body.data).toMatchObject([{ type: "invoice", isDefault: true, spendingLimit: null }])
      })
    )

    it.effect("creates an account with its first billing method; reads show only id and name", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const created = yield* postWith(
          accounts,
          {
            name: "Sales team",
            billingMethod: { name: "Sales budget", type: "prepaid", spendingLimit: { amount: 5000_00 } }
          },
          keyHeaders(company.apiKey)
        )
        expect(created.status).toBe(201)
        expect(created.body).toEqual({ data: { id: expect.stringMatching(/^[0-9a-f]{24}$/), name: "Sales team" } })
        const id = created.body.data.id

        const one = yield* getWith(`${accounts}/${id}`, keyHeaders(company.apiKey))
        expect(one.status).toBe(200)
        expect(one.body).toEqual({ data: { id, name: "Sales team" } })
        const listed = yield* getWith(`${accounts}?sort=name`, keyHeaders(company.apiKey))
        expect(listed.body.data.map((a: any) => Object.keys(a).sort())).toEqual([
          ["id", "name"],
          ["id", "name"]
        ])
        expect(listed.body.data.map((a: any) => a.name)).toContain("Sales team")
        const byName = yield* getWith(`${accounts}?filter[name]=sales`, keyHeaders(company.apiKey))
        expect(byName.body.data).toEqual([{ id, name: "Sales team" }])

        const methods = yield* getWith(`${billingMethods}?filter[accountId]=${id}`, keyHeaders(company.apiKey))
        expect(methods.body.data).toMatchObject([
          {
            accountId: id,
            name: "Sales budget",
            type: "prepaid",
            isDefault: true,
            spendingLimit: { amount: 5000_00, currency: "USD", remaining: 5000_00 }
          }
        ])

        const bare = yield* postWith(accounts, { name: "No billing" }, keyHeaders(company.apiKey))
        expect(bare.status).toBe(201)
        const none = yield* getWith(
          `${billingMethods}?filter[accountId]=${bare.body.data.id}`,
          keyHeaders(company.apiKey)
        )
        expect(none.body.data).toEqual([])
      })
    )

    it.effect("a taken name is a 409 and every bad body a 400 naming the field; nothing is stored", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const first = yield* postWith(accounts, { name: "Marketing" }, keyHeaders(company.apiKey))
        expect(first.status).toBe(201)
        const before = yield* counts

        const taken = yield* postWith(accounts, { name: "Marketing" }, keyHeaders(company.apiKey))
        expect(taken.status).toBe(409)
        expect(taken.body).toEqual(v3Error(409, "409_ACCT_001"))

        const cases: ReadonlyArray<[unknown, string]> = [
          [{}, "name"],
          [{ name: "" }, "name"],
          [{ name: "x".repeat(101) }, "name"],
          [{ name: "A", billingMethod: { name: "B", type: "prepaid" } }, "billingMethod.spendingLimit"],
          [{ name: "A", billingMethod: { type: "prepaid", spendingLimit: { amount: 1 } } }, "billingMethod.name"],
          [
            { name: "A", billingMethod: { name: "B", type: "card", spendingLimit: { amount: 1 } } },
            "billingMethod.type"
          ],
          [
            { name: "A", billingMethod: { name: "B", type: "prepaid", spendingLimit: { amount: -1 } } },
            "billingMethod.spendingLimit.amount"
          ],
          [
            { name: "A", billingMethod: { name: "B", type: "prepaid", spendingLimit: { amount: 1.5 } } },
            "billingMethod.spendingLimit.amount"
          ],
          // 3.0's `billingMethod.amount` was renamed `billingMethod.spendingLimit.amount` in 3.1.
          [
            { name: "A", billingMethod: { name: "B", type: "prepaid", amount: 1, spendingLimit: { amount: 1 } } },
            "billingMethod.amount"
          ],
          // v3 bodies are strict: a property the operation does not define is named.
          [{ name: "A", companyId: company.companyId }, "companyId"]
        ]
        for (const [body, path] of cases) {
          const response = yield* postWith(accounts, body, keyHeaders(company.apiKey))
          expect(response.status, JSON.stringify(body)).toBe(400)
          expect(response.body).toMatchObject({ errorCode: "400_PBLC_001", message: expect.any(String) })
          expect(response.body.errors.map((e: any) => e.path)).toContain(path)
        }
        expect(yield* counts).toEqual(before)
      })
    )

    it.effect("reads need accounts:read and creation accounts:create (403)", () =>
      Effect.gen(function* () {
        const company = yield* companyWithKey(["products:read"])
        for (const url of [accounts, `${accounts}/${company.accountId}`, billingMethods]) {
          const response = yield* getWith(url, keyHeaders(company.scopedKey))
          expect(response.status, url).toBe(403)
          expect(response.body).toEqual(v3Error(403, "403_KEYS_001"))
        }
        const before = yield* counts
        const refused = yield* postWith(accounts, { name: "Nope" }, keyHeaders(company.scopedKey))
        expect(refused.status).toBe(403)
        expect(yield* counts).toEqual(before)
      })
    )

    it.effect("a key reaches only its accounts: others, and other companies', are 404", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        yield* raiseLimits(company.companyId)
        const other = yield* postWith(
          accounts,
          { name: "Other", billingMethod: { name: "Other money", type: "invoice", spendingLimit: { amount: 100 } } },
          keyHeaders(company.apiKey)
        )
        const otherId = other.body.data.id
        const scoped = yield* postWith(
          v2Keys,
          {
            name: "default only",
            permissions: ["accounts:read"],
            accountsAccess: { scope: "selected-accounts", ids: [company.accountId] }
          },
          keyHeaders(company.apiKey)
        )
        const key = scoped.body.apiKey as string

        const listed = yield* getWith(accounts, keyHeaders(key))
        expect(listed.body.data.map((a: any) => a.id)).toEqual([company.accountId])
        const hidden = yield* getWith(`${accounts}/${otherId}`, keyHeaders(key))
        expect(hidden.status).toBe(404)
        expect(hidden.body).toEqual(v3Error(404, "404_ACCT_001"))

        const all = yield* getWith(billingMethods, keyHeaders(company.apiKey))
        const otherMethod = all.body.data.find((m: any) => m.accountId === otherId)
        expect(otherMethod).toBeDefined()
        const methods = yield* getWith(billingMethods, keyHeaders(key))
        expect(methods.body.data.map((m: any) => m.accountId)).toEqual([company.accountId])
        const hiddenMethod = yield* getWith(`${billingMethods}/${otherMethod.id}`, keyHeaders(key))
        expect(hiddenMethod.status).toBe(404)
        expect(hiddenMethod.body).toEqual(v3Error(404, "404_BILL_001"))

        // Another company's account and billing method are as absent as unknown ones.
        const stranger = yield* createCompany()
        expect((yield* getWith(`${accounts}/${otherId}`, keyHeaders(stranger.apiKey))).status).toBe(404)
        expect((yield* getWith(`${billingMethods}/${otherMethod.id}`, keyHeaders(stranger.apiKey))).status).toBe(404)
        // With Ribbon-Account-Id, the list narrows to that account.
        const narrowed = yield* getWith(billingMethods, keyHeaders(company.apiKey, { "ribbon-account-id": otherId }))
        expect(narrowed.body.data.map((m: any) => m.id)).toEqual([otherMethod.id])
      })
    )

    it.effect("lists page by number with links, and refuse what they do not accept (400)", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        yield* raiseLimits(company.companyId)
        for (const name of ["B team", "C team", "A team"]) {
          expect((yield* postWith(accounts, { name }, keyHeaders(company.apiKey))).status).toBe(201)
        }
        const seen: Array<string> = []
        let url: string | null = `${accounts}?sort=-name&page[size]=2`
        while (url !== null) {
          const page: any = yield* getWith(url, keyHeaders(company.apiKey))
          expect(page.status).toBe(200)
          seen.push(...page.body.data.map((a: any) => a.name))
          url = page.body.links.next
        }
        expect(seen).toEqual([...seen].sort().reverse())
        expect(seen).toHaveLength(4)

        for (const query of ["filter[companyId]=x", "sort=id", "page[size]=101", "page[cursor]=abc"]) {
          const response = yield* getWith(`${accounts}?${query}`, keyHeaders(company.apiKey))
          expect(response.status, query).toBe(400)
          expect(response.body.errorCode).toBe("400_PBLC_001")
        }
        const badStatus = yield* getWith(`${billingMethods}?filter[status]=closed`, keyHeaders(company.apiKey))
        expect(badStatus.status).toBe(400)
      })
    )
  })
})
