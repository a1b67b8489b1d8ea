import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { allAccounts } from "../../../src/domain/company/Company.js"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
import {
  CompanyServicesLive,
  createCompany,
  deleteWith,
  getWith,
  keyHeaders,
  postWith,
  raiseLimits,
  timestampPattern,
  v2Keys
} from "../../support/company.js"
import { RibbonTestServer } from "../../support/http.js"

/**
 * Company webhook endpoints over real HTTP (docs/decisions/0050-company-webhooks.md): creation with a secret shown
 * once, reads that never show it, every bound a 400 that stores nothing, 404 outside the key's company, the limit of
 * 10. Deliveries are test/services/company/CompanyWebhooks.test.ts's.
 */

const webhooks = "/public-api/v3/webhooks"

/** Creation checks the URL as deliveries will (loopback is allowed in tests); nothing listens there. */
const hookUrl = "https://127.0.0.1:9/hooks/ribbon"

const endpointCount = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ count: number }>`SELECT count(*)::int AS count FROM company_webhook_endpoints`,
    (rows) => rows[0]!.count
  )
).pipe(Effect.orDie)

const v3Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })

const newCompany = Effect.tap(createCompany(), (company) => raiseLimits(company.companyId))

describe("company webhooks (/public-api/v3/webhooks)", () => {
  it.layer(RibbonTestServer, { timeout: 120_000 })((it) => {
    it.effect("creates an endpoint whose secret is shown only in the 201; reads show it without", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const created = yield* postWith(
          webhooks,
          { url: hookUrl, eventTypes: ["order-created", "order-status-changed"] },
          keyHeaders(company.apiKey)
        )
        expect(created.status).toBe(201)
        expect(created.body).toEqual({
          data: {
            id: expect.stringMatching(/^[0-9a-f]{24}$/),
            url: hookUrl,
            eventTypes: ["order-created", "order-status-changed"],
            // 32 random bytes in base64.
            secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
            createdAt: expect.stringMatching(timestampPattern)
          }
        })
        const { id, secret, createdAt } = created.body.data
        const shown = {
          id,
          url: hookUrl,
          eventTypes: ["order-created", "order-status-changed"],
          status: "active",
          disabledReason: null,
          createdAt
        }

        const one = yield* getWith(`${webhooks}/${id}`, keyHeaders(company.apiKey))
        expect(one.status).toBe(200)
        expect(one.body).toEqual({ data: shown })
        const listed = yield* getWith(webhooks, keyHeaders(company.apiKey))
        expect(listed.status).toBe(200)
        expect(listed.body).toEqual({
          data: [shown],
          links: { self: `${webhooks}?page%5Bnumber%5D=1&page%5Bsize%5D=20`, next: null, prev: null }
        })
        const deliveries = yield* getWith(`${webhooks}/${id}/deliveries`, keyHeaders(company.apiKey))
        expect(deliveries.status).toBe(200)
        expect(deliveries.body).toMatchObject({ data: [], links: { next: null, prev: null } })
        for (const response of [one, listed, deliveries]) expect(response.text).not.toContain(secret.slice(6))
        // A second endpoint is listed after the first; both secrets differ.
        yield* TestClock.adjust("1 second")
        const second = yield* postWith(
          webhooks,
          { url: hookUrl, eventTypes: ["order-cancelled"] },
          keyHeaders(company.apiKey)
        )
        expect(second.status).toBe(201)
        expect(second.body.data.secret).not.toBe(secret)
        const both = yield* getWith(webhooks, keyHeaders(company.apiKey))
        expect(both.body.data.map((endpoint: any) => endpoint.id)).toEqual([id, second.body.data.id])
      })
    )

    it.effect("any key of the company manages them; Ribbon-Account-Id does not narrow them", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const account = yield* postWith("/public-api/v3/accounts", { name: "Second" }, keyHeaders(company.apiKey))
        const bare = yield* postWith(v2Keys, { name: "no permissions", permissions: [] }, keyHeaders(company.apiKey))
        expect(bare.status).toBe(200)
        const created = yield* postWith(
          webhooks,
          { url: hookUrl, eventTypes: ["gift-status-changed"] },
          keyHeaders(bare.body.apiKey, { "ribbon-account-id": account.body.data.id })
        )
        expect(created.status).toBe(201)
        for (const accountId of [company.accountId, account.body.data.id]) {
          const listed = yield* getWith(webhooks, keyHeaders(company.apiKey, { "ribbon-account-id": accountId }))
          expect(listed.body.data.map((endpoint: any) => endpoint.id)).toEqual([created.body.data.id])
        }
      })
    )

    it.effect("every bad body is a 400 naming the field, and stores nothing", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const before = yield* endpointCount
        const eventTypes = ["order-created"]
        const cases: ReadonlyArray<[unknown, string, RegExp?]> = [
          [{ eventTypes }, "url"],
          [{ url: hookUrl }, "eventTypes"],
          [{ url: "", eventTypes }, "url"],
          [{ url: `https://127.0.0.1/${"x".repeat(2048)}`, eventTypes }, "url"],
          [{ url: 42, eventTypes }, "url"],
          [{ url: "not a url", eventTypes }, "url", /not a valid URL/],
          [{ url: "http://127.0.0.1:9/hooks", eventTypes }, "url", /must be https/],
          [{ url: "https://user:secret@127.0.0.1:9/hooks", eventTypes }, "url", /credentials/],
          // The SSRF rules of deliveries, applied at creation.
          [{ url: "https://10.0.0.7/hooks", eventTypes }, "url", /private/],
          [{ url: "https://169.254.169.254/latest/meta-data", eventTypes }, "url", /link-local/],
          [{ url: "https://[::ffff:192.168.1.1]/hooks", eventTypes }, "url", /private/],
          [{ url: hookUrl, eventTypes: [] }, "eventTypes"],
          [{ url: hookUrl, eventTypes: "order-created" }, "eventTypes"],
          [
            { url: hookUrl, eventTypes: ["order-created", "order-shipped"] },
            "eventTypes[1]",
            /^must be one of order-created, /
          ],
          [
            { url: hookUrl, eventTypes: ["order-created", "order-created"] },
            "eventTypes",
            /order-created is listed twice/
          ],
          [
            {
              url: hookUrl,
              eventTypes: [
                "order-created",
                "order-status-changed",
                "order-fulfillment-status-changed",
                "order-cancelled",
                "gift-status-changed",
                "gift-delivery-status-changed",
                "stock-availability-updates",
                "order-created"
              ]
            },
            "eventTypes"
          ],
          // v3 bodies are strict.
          [{ url: hookUrl, eventTypes, secret: "whsec_mine" }, "secret"]
        ]
        for (const [body, path, message] of cases) {
          const response = yield* postWith(webhooks, body, keyHeaders(company.apiKey))
          expect(response.status, JSON.stringify(body)).toBe(400)
          expect(response.body).toMatchObject({ errorCode: "400_PBLC_001", message: expect.any(String) })
          const issue = response.body.errors.find((error: any) => error.path === path)
          expect(issue, `${JSON.stringify(body)}: ${JSON.stringify(response.body.errors)}`).toBeDefined()
          if (message !== undefined) expect(issue.message).toMatch(message)
        }
        expect(yield* endpointCount).toBe(before)
        // The seven event types, once each, are accepted.
        const all = yield* postWith(
          webhooks,
          {
            url: hookUrl,
            eventTypes: [
              "order-created",
              "order-status-changed",
              "order-fulfillment-status-changed",
              "order-cancelled",
              "gift-status-changed",
              "gift-delivery-status-changed",
              "stock-availability-updates"
            ]
          },
          keyHeaders(company.apiKey)
        )
        expect(all.status).toBe(201)
      })
    )

    it.effect("an unknown id, another company's or the other environment's, is 404 on every operation", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const other = yield* newCompany
        const theirs = yield* postWith(
          webhooks,
          { url: hookUrl, eventTypes: ["order-created"] },
          keyHeaders(other.apiKey)
        )
        expect(theirs.status).toBe(201)
        for (const id of ["0123456789abcdef01234567", theirs.body.data.id]) {
          for (const response of [
            yield* getWith(`${webhooks}/${id}`, keyHeaders(company.apiKey)),
            yield* getWith(`${webhooks}/${id}/deliveries`, keyHeaders(company.apiKey)),
            yield* deleteWith(`${webhooks}/${id}`, keyHeaders(company.apiKey))
          ]) {
            expect(response.status).toBe(404)
            expect(response.body).toEqual(v3Error(404, "404_WHKS_001"))
          }
        }
        const mine = yield* getWith(webhooks, keyHeaders(company.apiKey))
        expect(mine.body.data).toEqual([])
        // The company's own endpoint is out of reach of its key for the other environment.
        const own = yield* postWith(
          webhooks,
          { url: hookUrl, eventTypes: ["order-created"] },
          keyHeaders(company.apiKey)
        )
        const live = yield* Effect.flatMap(KeyStore, (keys) =>
          keys.create({
            companyId: company.companyId,
            environment: "live",
            name: "live key",
            expirationInDays: 90,
            enforceMtls: false,
            permissions: [],
            accountsAccess: allAccounts,
            requestSource: null
          })
        ).pipe(Effect.provide(CompanyServicesLive))
        const fromLive = yield* getWith(`${webhooks}/${own.body.data.id}`, keyHeaders(live.apiKey))
        expect(fromLive.status).toBe(404)
        expect(fromLive.body).toEqual(v3Error(404, "404_WHKS_001"))
        expect((yield* getWith(webhooks, keyHeaders(live.apiKey))).body.data).toEqual([])
        // Theirs is untouched.
        expect((yield* getWith(`${webhooks}/${theirs.body.data.id}`, keyHeaders(other.apiKey))).status).toBe(200)
        // A malformed id is a 400 on the path.
        const malformed = yield* getWith(`${webhooks}/nope`, keyHeaders(company.apiKey))
        expect(malformed.status).toBe(400)
        expect(malformed.body.errors[0].path).toBe("webhookId")
      })
    )

    it.effect("at most 10 endpoints per company and environment (422); a deleted one frees its place", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const ids: Array<string> = []
        for (let n = 0; n < 10; n++) {
          yield* TestClock.adjust("1 second")
          const created = yield* postWith(
            webhooks,
            { url: `${hookUrl}/${n}`, eventTypes: ["order-created"] },
            keyHeaders(company.apiKey)
          )
          expect(created.status).toBe(201)
          ids.push(created.body.data.id)
        }
        const before = yield* endpointCount
        const eleventh = yield* postWith(
          webhooks,
          { url: hookUrl, eventTypes: ["order-created"] },
          keyHeaders(company.apiKey)
        )
        expect(eleventh.status).toBe(422)
        expect(eleventh.body).toEqual(v3Error(422, "422_WHKS_001"))
        expect(yield* endpointCount).toBe(before)
        // Another company has its own 10.
        const other = yield* newCompany
        const theirs = yield* postWith(
          webhooks,
          { url: hookUrl, eventTypes: ["order-created"] },
          keyHeaders(other.apiKey)
        )
        expect(theirs.status).toBe(201)

        const deleted = yield* deleteWith(`${webhooks}/${ids[0]}`, keyHeaders(company.apiKey))
        expect(deleted.status).toBe(204)
        expect(deleted.text).toBe("")
        expect((yield* getWith(`${webhooks}/${ids[0]}`, keyHeaders(company.apiKey))).status).toBe(404)
        expect((yield* deleteWith(`${webhooks}/${ids[0]}`, keyHeaders(company.apiKey))).status).toBe(404)
        const listed = yield* getWith(`${webhooks}?page[size]=100`, keyHeaders(company.apiKey))
        expect(listed.body.data.map((endpoint: any) => endpoint.id)).toEqual(ids.slice(1))
        const again = yield* postWith(
          webhooks,
          { url: hookUrl, eventTypes: ["order-created"] },
          keyHeaders(company.apiKey)
        )
        expect(again.status).toBe(201)
      })
    )

    it.effect("12 creations at once: exactly 10 succeed, under the company row lock", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const responses = yield* Effect.all(
          Array.from({ length: 12 }, () =>
            postWith(webhooks, { url: hookUrl, eventTypes: ["order-created"] }, keyHeaders(company.apiKey))
          ),
          { concurrency: "unbounded" }
        )
        expect(responses.map((response) => response.status).sort()).toEqual([...Array(10).fill(201), 422, 422])
        const listed = yield* getWith(`${webhooks}?page[size]=100`, keyHeaders(company.apiKey))
        expect(listed.body.data).toHaveLength(10)
      })
    )

    it.effect("lists page by number", () =>
      Effect.gen(function* () {
        const company = yield* newCompany
        const ids: Array<string> = []
        for (let n = 0; n < 3; n++) {
          yield* TestClock.adjust("1 second")
          const created = yield* postWith(
            webhooks,
            { url: hookUrl, eventTypes: ["order-created"] },
            keyHeaders(company.apiKey)
          )
          ids.push(created.body.data.id)
        }
        const first = yield* getWith(`${webhooks}?page[size]=2`, keyHeaders(company.apiKey))
        expect(first.body.data.map((endpoint: any) => endpoint.id)).toEqual(ids.slice(0, 2))
        expect(first.body.links.next).toBe(`${webhooks}?page%5Bnumber%5D=2&page%5Bsize%5D=2`)
        const second = yield* getWith(first.body.links.next, keyHeaders(company.apiKey))
        expect(second.body.data.map((endpoint: any) => endpoint.id)).toEqual(ids.slice(2))
        expect(second.body.links.next).toBeNull()
        const unknown = yield* getWith(`${webhooks}?filter[url]=x`, keyHeaders(company.apiKey))
        expect(unknown.status).toBe(400)
        expect(unknown.body.errors[0].path).toBe("filter[url]")
      })
    )
  })
})
