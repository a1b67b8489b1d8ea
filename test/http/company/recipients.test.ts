import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { AccountScope } from "../../../src/domain/company/Company.js"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
import { Recipients } from "../../../src/services/company/Recipients.js"
import {
  CompanyServicesLive,
  createCompany,
  deleteWith,
  getWith,
  keyHeaders,
  patchWith,
  postWith,
  raiseLimits,
  timestampPattern,
  v2Keys
} from "../../support/company.js"
import { RibbonTestServer } from "../../support/http.js"

/** v2 recipients over real HTTP (docs/decisions/0046-v2-recipients.md; docs/company-api.md "Recipients"). */

const recipients = "/public-api/v2/recipients"
const hexId = /^[0-9a-f]{24}$/
const unknownId = "0123456789abcdef01234567"

const recipientCount = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM recipients`, (rows) => rows[0]!.n)
).pipe(Effect.orDie)

const setup = () =>
  Effect.gen(function* () {
    const company = yield* createCompany()
    yield* raiseLimits(company.companyId)
    return company
  })

/** A key of the company with only `permissions` (reaching `accountsAccess`). */
const keyWith = (apiKey: string, permissions: ReadonlyArray<string>, accountsAccess?: unknown) =>
  Effect.map(
    postWith(
      v2Keys,
      { name: `k-${Math.random()}`, permissions, ...(accountsAccess === undefined ? {} : { accountsAccess }) },
      keyHeaders(apiKey)
    ),
    (response) => response.body.apiKey as string
  )

const ada = {
  firstName: "Ada",
  lastName: "Lovelace",
  email: "Ada.Lovelace@example.com",
  mobilePhone: "+44 20 7946 0958",
  country: "gb",
  externalId: "emp-1815"
}

const v2Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })
const v2Invalid = (path: string) => ({ path, errorCode: "INVALID_REQUEST", message: expect.any(String) })

describe("recipients (/public-api/v2)", () => {
  it.layer(RibbonTestServer, { timeout: 180_000 })((it) => {
    it.effect("creates a recipient: 201 with every field (phone in E.164), readable unmasked and masked", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const created = yield* postWith(recipients, ada, keyHeaders(company.apiKey, { "request-source": "api_make" }))
        expect(created.status).toBe(201)
        const unmasked = {
          id: expect.stringMatching(hexId),
          firstName: "Ada",
          lastName: "Lovelace",
          email: "Ada.Lovelace@example.com",
          mobilePhone: "+442079460958",
          country: "GB",
          externalId: "emp-1815",
          accounts: [company.accountId],
          source: "api_make",
          createdAt: expect.stringMatching(timestampPattern),
          updatedAt: created.body.createdAt
        }
        expect(created.body).toEqual(unmasked)
        const url = `${recipients}/${created.body.id}`
        expect((yield* getWith(url, keyHeaders(company.apiKey))).body).toEqual(created.body)
        expect((yield* getWith(recipients, keyHeaders(company.apiKey))).body).toEqual({
          results: [created.body],
          skip: 0,
          limit: 20
        })

        // With only recipients:read:masked: names, e-mail and phone masked; the rest as it is.
        const maskedKey = yield* keyWith(company.apiKey, ["recipients:read:masked"])
        const masked = {
          ...created.body,
          firstName: "A**",
          lastName: "L*******",
          email: "A***@example.com",
          mobilePhone: "+44******0958"
        }
        expect((yield* getWith(url, keyHeaders(maskedKey))).body).toEqual(masked)
        expect((yield* getWith(recipients, keyHeaders(maskedKey))).body.results).toEqual([masked])
        // Creating needs recipients:create only; the answer is masked unless the key reads unmasked.
        const createOnly = yield* keyWith(company.apiKey, ["recipients:create"])
        const second = yield* postWith(
          recipients,
          { firstName: "Grace", lastName: "Hopper", email: "grace@example.com" },
          keyHeaders(createOnly)
        )
        expect(second.status).toBe(201)
        expect(second.body).toMatchObject({
          firstName: "G****",
          lastName: "H*****",
          email: "g***@example.com",
          mobilePhone: null,
          country: null,
          externalId: null,
          source: null
        })
      })
    )

    it.effect("the same externalId, or the same e-mail in any case, is a 409 within an account", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const first = yield* postWith(recipients, ada, keyHeaders(company.apiKey))
        expect(first.status).toBe(201)
        const before = yield* recipientCount
        const sameExternal = yield* postWith(
          recipients,
          { firstName: "B", lastName: "C", externalId: "emp-1815" },
          keyHeaders(company.apiKey)
        )
        expect(sameExternal.status).toBe(409)
        expect(sameExternal.body).toEqual(v2Error(409, "CONFLICT"))
        expect(sameExternal.body.message).toContain("externalId")
        const sameEmail = yield* postWith(
          recipients,
          { firstName: "B", lastName: "C", email: "ADA.LOVELACE@EXAMPLE.COM" },
          keyHeaders(company.apiKey)
        )
        expect(sameEmail.status).toBe(409)
        expect(sameEmail.body.message).toContain("e-mail")
        expect(yield* recipientCount).toBe(before)

        // Another company, or a live key of the same company, may use them.
        const other = yield* setup()
        expect((yield* postWith(recipients, ada, keyHeaders(other.apiKey))).status).toBe(201)

        // PATCH onto another recipient's values is a 409 too, and changes nothing.
        const grace = yield* postWith(
          recipients,
          { firstName: "Grace", lastName: "Hopper", email: "grace@example.com", externalId: "emp-1906" },
          keyHeaders(company.apiKey)
        )
        const graceUrl = `${recipients}/${grace.body.id}`
        const taken = yield* patchWith(graceUrl, { email: "ada.lovelace@example.com" }, keyHeaders(company.apiKey))
        expect(taken.status).toBe(409)
        const takenExternal = yield* patchWith(graceUrl, { externalId: "emp-1815" }, keyHeaders(company.apiKey))
        expect(takenExternal.status).toBe(409)
        expect(takenExternal.body.message).toContain("externalId")
        expect((yield* getWith(graceUrl, keyHeaders(company.apiKey))).body).toEqual(grace.body)
        // Its own values again are no conflict.
        const same = yield* patchWith(graceUrl, { email: "GRACE@example.com" }, keyHeaders(company.apiKey))
        expect(same.status).toBe(200)
        expect(same.body.email).toBe("GRACE@example.com")
      })
    )

    it.effect("externalId and e-mail are unique per account: another account may hold them, not share them", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const sales = yield* postWith("/public-api/v3/accounts", { name: "Sales" }, keyHeaders(company.apiKey))
        const salesId = sales.body.data.id as string
        const first = yield* postWith(recipients, ada, keyHeaders(company.apiKey))
        expect(first.status).toBe(201)
        // Sales holds its own Ada: a key limited to Sales learns nothing of the default account's.
        const salesOnly = yield* keyWith(company.apiKey, ["recipients:create", "recipients:read:unmasked"], {
          scope: "selected-accounts",
          ids: [salesId]
        })
        const own = yield* postWith(recipients, { ...ada, firstName: "Eve" }, keyHeaders(salesOnly))
        expect(own.status, JSON.stringify(own.body)).toBe(201)
        expect(own.body).toMatchObject({ firstName: "Eve", accounts: [salesId] })
        expect((yield* postWith(recipients, ada, keyHeaders(salesOnly))).status).toBe(409)
        // A recipient listing both accounts would share them: 409, and nothing changes.
        const before = yield* recipientCount
        const both = yield* postWith(
          recipients,
          { firstName: "B", lastName: "C", email: "ada.lovelace@EXAMPLE.com", accounts: [company.accountId, salesId] },
          keyHeaders(company.apiKey)
        )
        expect(both).toMatchObject({ status: 409, body: v2Error(409, "CONFLICT") })
        expect(both.body.message).toContain("e-mail")
        expect(yield* recipientCount).toBe(before)
        const widened = yield* patchWith(
          `${recipients}/${first.body.id}`,
          { accounts: [company.accountId, salesId] },
          keyHeaders(company.apiKey)
        )
        expect(widened).toMatchObject({ status: 409, body: v2Error(409, "CONFLICT") })
        expect(widened.body.message).toContain("externalId")
        expect((yield* getWith(`${recipients}/${first.body.id}`, keyHeaders(company.apiKey))).body).toEqual(first.body)
        // Once Sales' Ada is gone, the first can list Sales too.
        expect((yield* deleteWith(`${recipients}/${own.body.id}`, keyHeaders(company.apiKey))).status).toBe(204)
        const joined = yield* patchWith(
          `${recipients}/${first.body.id}`,
          { accounts: [company.accountId, salesId] },
          keyHeaders(company.apiKey)
        )
        expect(joined.status).toBe(200)
      })
    )

    it.effect("parallel creates with one e-mail: exactly one is made, the others get 409", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const before = yield* recipientCount
        const responses = yield* Effect.all(
          Array.from({ length: 6 }, (_, i) =>
            postWith(
              recipients,
              { firstName: "Twin", lastName: `${i}`, email: i % 2 === 0 ? "twin@example.com" : "TWIN@example.com" },
              keyHeaders(company.apiKey)
            )
          ),
          { concurrency: "unbounded" }
        )
        expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409])
        const external = yield* Effect.all(
          Array.from({ length: 4 }, (_, i) =>
            postWith(recipients, { firstName: "X", lastName: `${i}`, externalId: "same" }, keyHeaders(company.apiKey))
          ),
          { concurrency: "unbounded" }
        )
        expect(external.map((r) => r.status).sort()).toEqual([201, 409, 409, 409])
        expect(yield* recipientCount).toBe(before + 2)
      })
    )

    it.effect("every bound of the body is a v2 400 naming the field, and nothing is stored", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const cases: ReadonlyArray<readonly [unknown, string]> = [
          [{ ...ada, firstName: undefined }, "firstName"],
          [{ ...ada, firstName: "" }, "firstName"],
          [{ ...ada, firstName: "x".repeat(101) }, "firstName"],
          [{ ...ada, lastName: undefined }, "lastName"],
          [{ ...ada, lastName: 7 }, "lastName"],
          [{ ...ada, email: "not-an-email" }, "email"],
          [{ ...ada, email: `${"x".repeat(250)}@example.com` }, "email"],
          [{ ...ada, email: null }, "email"],
          [{ ...ada, mobilePhone: "12345" }, "mobilePhone"],
          [{ ...ada, mobilePhone: "020 7946 0958" }, "mobilePhone"],
          [{ ...ada, mobilePhone: "+1 555" }, "mobilePhone"],
          [{ ...ada, country: "GBR" }, "country"],
          [{ ...ada, country: "1A" }, "country"],
          [{ ...ada, externalId: "" }, "externalId"],
          [{ ...ada, externalId: "x".repeat(121) }, "externalId"],
          [{ ...ada, externalId: "a\nb" }, "externalId"],
          [{ ...ada, accounts: [] }, "accounts"],
          [{ ...ada, accounts: ["nope"] }, "accounts[0]"],
          [{ ...ada, accounts: "x" }, "accounts"]
        ]
        const before = yield* recipientCount
        for (const [body, path] of cases) {
          const response = yield* postWith(recipients, body, keyHeaders(company.apiKey))
          expect({ path, status: response.status, body: response.body }).toEqual({
            path,
            status: 400,
            body: v2Invalid(path)
          })
        }
        // An account the key does not reach: 404.
        const other = yield* setup()
        const unreachable = yield* postWith(
          recipients,
          { ...ada, accounts: [other.accountId] },
          keyHeaders(company.apiKey)
        )
        expect(unreachable.status).toBe(404)
        expect(yield* recipientCount).toBe(before)

        // PATCH: the same bounds, and nothing changes.
        const created = yield* postWith(recipients, ada, keyHeaders(company.apiKey))
        const url = `${recipients}/${created.body.id}`
        for (const [body, path] of [
          [{ firstName: "" }, "firstName"],
          [{ firstName: null }, "firstName"],
          [{ email: "nope" }, "email"],
          [{ mobilePhone: "555" }, "mobilePhone"],
          [{ country: "gbr" }, "country"],
          [{ externalId: "" }, "externalId"],
          [{ accounts: [] }, "accounts"]
        ] as const) {
          const refused = yield* patchWith(url, body, keyHeaders(company.apiKey))
          expect({ path, body: refused.body }).toEqual({ path, body: v2Invalid(path) })
        }
        expect((yield* getWith(url, keyHeaders(company.apiKey))).body).toEqual(created.body)
        // The list's bounds.
        for (const query of ["limit=0", "limit=101", "skip=x", "email=nope", "accountId=1"]) {
          const response = yield* getWith(`${recipients}?${query}`, keyHeaders(company.apiKey))
          expect(response.body).toEqual(v2Invalid(query.split("=")[0]!))
        }
      })
    )

    it.effect("PATCH changes fields; null clears an optional one; accounts replaced within the key's reach", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const sales = yield* postWith("/public-api/v3/accounts", { name: "Sales" }, keyHeaders(company.apiKey))
        const salesId = sales.body.data.id as string
        const created = yield* postWith(recipients, ada, keyHeaders(company.apiKey))
        const url = `${recipients}/${created.body.id}`
        const changed = yield* patchWith(
          url,
          { lastName: "King", mobilePhone: null, country: null, externalId: "emp-1", accounts: [salesId, salesId] },
          keyHeaders(company.apiKey)
        )
        expect(changed.status).toBe(200)
        expect(changed.body).toMatchObject({
          firstName: "Ada",
          lastName: "King",
          email: "Ada.Lovelace@example.com",
          mobilePhone: null,
          country: null,
          externalId: "emp-1",
          accounts: [salesId]
        })
        // The default account no longer reaches it: a key limited to it gets 404.
        const defaultOnly = yield* keyWith(company.apiKey, ["recipients:read:unmasked", "recipients:update"], {
          scope: "selected-accounts",
          ids: [company.accountId]
        })
        expect((yield* getWith(url, keyHeaders(defaultOnly))).status).toBe(404)
        expect((yield* getWith(recipients, keyHeaders(defaultOnly))).body.results).toEqual([])
        // A key limited to Sales replaces only what it reaches: the account it cannot see stays.
        const salesOnly = yield* keyWith(company.apiKey, ["recipients:read:unmasked", "recipients:update"], {
          scope: "selected-accounts",
          ids: [salesId]
        })
        yield* patchWith(url, { accounts: [salesId, company.accountId] }, keyHeaders(company.apiKey))
        const narrowed = yield* patchWith(url, { accounts: [salesId] }, keyHeaders(salesOnly))
        expect(narrowed.status).toBe(200)
        expect([...narrowed.body.accounts].sort()).toEqual([company.accountId, salesId].sort())
        const outOfReach = yield* patchWith(url, { accounts: [company.accountId] }, keyHeaders(salesOnly))
        expect(outOfReach.status).toBe(404)
        // The list narrows with accountId, and finds by externalId or e-mail (any case).
        const grace = yield* postWith(
          recipients,
          { firstName: "Grace", lastName: "Hopper", email: "grace@example.com" },
          keyHeaders(company.apiKey)
        )
        const bySales = yield* getWith(`${recipients}?accountId=${salesId}`, keyHeaders(company.apiKey))
        expect(bySales.body.results.map((r: { id: string }) => r.id)).toEqual([created.body.id])
        const byExternal = yield* getWith(`${recipients}?externalId=emp-1`, keyHeaders(company.apiKey))
        expect(byExternal.body.results.map((r: { id: string }) => r.id)).toEqual([created.body.id])
        const byEmail = yield* getWith(`${recipients}?email=GRACE%40example.com`, keyHeaders(company.apiKey))
        expect(byEmail.body.results.map((r: { id: string }) => r.id)).toEqual([grace.body.id])
        const paged = yield* getWith(`${recipients}?skip=1&limit=1`, keyHeaders(company.apiKey))
        expect(paged.body).toMatchObject({ skip: 1, limit: 1 })
        expect(paged.body.results).toHaveLength(1)
      })
    )

    it.effect("DELETE erases the personal data and keeps a tombstone; reads then answer 404", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const created = yield* postWith(recipients, ada, keyHeaders(company.apiKey))
        const url = `${recipients}/${created.body.id}`
        const deleted = yield* deleteWith(url, keyHeaders(company.apiKey))
        expect(deleted.status).toBe(204)
        expect(deleted.text).toBe("")
        expect((yield* getWith(url, keyHeaders(company.apiKey))).body).toEqual(v2Error(404, "NOT_FOUND"))
        expect((yield* getWith(recipients, keyHeaders(company.apiKey))).body.results).toEqual([])
        expect((yield* patchWith(url, { firstName: "Back" }, keyHeaders(company.apiKey))).status).toBe(404)
        expect((yield* deleteWith(url, keyHeaders(company.apiKey))).status).toBe(404)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<Record<string, unknown>>`SELECT * FROM recipients WHERE id = ${created.body.id}`
        expect(row).toMatchObject({
          firstName: null,
          lastName: null,
          email: null,
          mobilePhone: null,
          externalId: null,
          country: "GB",
          accountIds: [company.accountId]
        })
        expect(row!.deletedAt).toBeInstanceOf(Date)
        // What was erased is free again.
        expect((yield* postWith(recipients, ada, keyHeaders(company.apiKey))).status).toBe(201)
      })
    )

    it.effect(
      "findOrCreate (what gifts call): by externalId, else e-mail, else new; the account added when missing",
      () =>
        Effect.gen(function* () {
          const company = yield* setup()
          const sales = yield* postWith("/public-api/v3/accounts", { name: "Sales" }, keyHeaders(company.apiKey))
          const salesId = sales.body.data.id as string
          const caller = {
            scope: { companyId: company.companyId, environment: "test", accountIds: "all" } as unknown as AccountScope,
            account: Option.none(),
            source: null
          }
          const input = {
            firstName: "Ada",
            lastName: "Lovelace",
            email: "ada@example.com",
            mobilePhone: null,
            country: null,
            externalId: "emp-1",
            accountIds: []
          }
          const recipientsService = yield* Effect.provide(Recipients, Recipients.Default)
          const first = yield* recipientsService.findOrCreate(caller, input)
          expect(first.created).toBe(true)
          expect(first.recipient.accountIds).toEqual([company.accountId])
          const byExternal = yield* recipientsService.findOrCreate(caller, { ...input, email: "other@example.com" })
          expect(byExternal).toMatchObject({ created: false, recipient: { id: first.recipient.id } })
          const byEmail = yield* recipientsService.findOrCreate(caller, {
            ...input,
            externalId: null,
            email: "ADA@example.com",
            accountIds: [salesId]
          })
          expect(byEmail.created).toBe(false)
          expect(byEmail.recipient.id).toBe(first.recipient.id)
          expect([...byEmail.recipient.accountIds].sort()).toEqual([company.accountId, salesId].sort())
          // Racing: one recipient.
          const raced = yield* Effect.all(
            Array.from({ length: 4 }, () =>
              recipientsService.findOrCreate(caller, { ...input, externalId: "emp-2", email: "race@example.com" })
            ),
            { concurrency: "unbounded" }
          )
          expect(new Set(raced.map((r) => r.recipient.id)).size).toBe(1)
          expect(raced.filter((r) => r.created)).toHaveLength(1)
          // A deleted recipient is a tombstone: read with includeDeleted, never found again.
          yield* recipientsService.remove(caller.scope, first.recipient.id)
          const tombstone = yield* recipientsService.get(caller.scope, first.recipient.id, { includeDeleted: true })
          expect(tombstone).toMatchObject({ firstName: null, email: null, externalId: null })
          const fresh = yield* recipientsService.findOrCreate(caller, input)
          expect(fresh.created).toBe(true)
          expect(fresh.recipient.id).not.toBe(first.recipient.id)
        })
    )

    it.effect("another company's or environment's recipient is a 404, as is an unknown one", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const created = yield* postWith(recipients, ada, keyHeaders(company.apiKey))
        const url = `${recipients}/${created.body.id}`
        const other = yield* setup()
        for (const apiKey of [other.apiKey]) {
          expect((yield* getWith(url, keyHeaders(apiKey))).status).toBe(404)
          expect((yield* patchWith(url, { firstName: "X" }, keyHeaders(apiKey))).status).toBe(404)
          expect((yield* deleteWith(url, keyHeaders(apiKey))).status).toBe(404)
        }
        const live = yield* Effect.flatMap(KeyStore, (keys) =>
          keys.create({
            companyId: company.companyId,
            environment: "live",
            name: "live",
            expirationInDays: 30,
            enforceMtls: false,
            permissions: ["recipients:read:unmasked", "recipients:update", "recipients:delete"],
            accountsAccess: { scope: "all-accounts", ids: [] },
            requestSource: null
          })
        ).pipe(Effect.provide(CompanyServicesLive))
        expect((yield* getWith(url, keyHeaders(live.apiKey))).status).toBe(404)
        expect((yield* patchWith(url, { firstName: "X" }, keyHeaders(live.apiKey))).status).toBe(404)
        expect((yield* deleteWith(url, keyHeaders(live.apiKey))).status).toBe(404)
        expect((yield* getWith(recipients, keyHeaders(live.apiKey))).body.results).toEqual([])
        expect((yield* getWith(`${recipients}/${unknownId}`, keyHeaders(company.apiKey))).status).toBe(404)
        expect((yield* getWith(url, keyHeaders(company.apiKey))).body).toEqual(created.body)
      })
    )

    it.effect("each operation needs its permission: 403 in the v2 format", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const created = yield* postWith(recipients, ada, keyHeaders(company.apiKey))
        const url = `${recipients}/${created.body.id}`
        const none = yield* keyWith(company.apiKey, ["campaigns:read"])
        const forbidden = (permission: string) => ({
          status: 403,
          errorCode: "FORBIDDEN",
          message: expect.stringContaining(permission)
        })
        expect((yield* postWith(recipients, ada, keyHeaders(none))).body).toEqual(forbidden("recipients:create"))
        expect((yield* getWith(url, keyHeaders(none))).body).toEqual(forbidden("recipients:read:masked"))
        expect((yield* getWith(recipients, keyHeaders(none))).body).toEqual(forbidden("recipients:read:unmasked"))
        expect((yield* patchWith(url, { firstName: "X" }, keyHeaders(none))).body).toEqual(
          forbidden("recipients:update")
        )
        expect((yield* deleteWith(url, keyHeaders(none))).body).toEqual(forbidden("recipients:delete"))
        const deleter = yield* keyWith(company.apiKey, ["recipients:delete"])
        expect((yield* deleteWith(url, keyHeaders(deleter))).status).toBe(204)
      })
    )
  })
})
