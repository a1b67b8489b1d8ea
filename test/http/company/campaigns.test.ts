import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
import {
  CompanyServicesLive,
  createCompany,
  getWith,
  keyHeaders,
  patchWith,
  postWith,
  raiseLimits,
  timestampPattern,
  v2Keys
} from "../../support/company.js"
import { SeededTestServer } from "../../support/http.js"

/** v2 campaigns over real HTTP (docs/decisions/0045-v2-campaigns.md; docs/company-api.md "Campaigns"). */

const campaigns = "/public-api/v2/campaigns"
const hexId = /^[0-9a-f]{24}$/

const campaignCount = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM campaigns`, (rows) => rows[0]!.n)
).pipe(Effect.orDie)

/** A product and a collection of the seeded catalog, and an id that is neither. */
const catalog = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [product] = yield* sql<{ id: string }>`SELECT id FROM products ORDER BY id LIMIT 1`
  const [collection] = yield* sql<{ id: string }>`SELECT id FROM collections ORDER BY id LIMIT 1`
  return { productId: product!.id, collectionId: collection!.id }
}).pipe(Effect.orDie)

const unknownId = "0123456789abcdef01234567"

const setup = (environment: "test" | "live" = "test") =>
  Effect.gen(function* () {
    const company = yield* createCompany(environment)
    yield* raiseLimits(company.companyId)
    const methods = yield* getWith("/public-api/v3/billing-methods", keyHeaders(company.apiKey))
    return { ...company, methodId: methods.body.data[0].id as string, ...(yield* catalog) }
  })

const productCampaign = (productId: string, extra: Record<string, unknown> = {}) => ({
  name: "Welcome gifts",
  customization: { giftProperties: { selectedGiftType: "product", productId, budget: { min: 10, max: 75.5 } } },
  ...extra
})

/** A key of the company with only `permissions`. */
const keyWith = (apiKey: string, permissions: ReadonlyArray<string>) =>
  Effect.map(
    postWith(v2Keys, { name: `k-${Math.random()}`, permissions }, keyHeaders(apiKey)),
    (response) => response.body.apiKey as string
  )

const v2Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })
const v2Invalid = (path: string) => ({ path, errorCode: "INVALID_REQUEST", message: expect.any(String) })

describe("campaigns (/public-api/v2)", () => {
  it.layer(SeededTestServer, { timeout: 180_000 })((it) => {
    it.effect(
      "creates a product campaign: 201 with every field, the account's default method, readable and listed",
      () =>
        Effect.gen(function* () {
          const company = yield* setup()
          const created = yield* postWith(
            campaigns,
            productCampaign(company.productId, {
              customization: {
                giftProperties: {
                  selectedGiftType: "product",
                  productId: company.productId.toUpperCase(),
                  budget: { min: 10, max: 75.5 },
                  expiration: { daysFromSend: 14 }
                },
                notificationPolicy: { sendingChannels: ["email", "sms"], disableReminders: true },
                message: "Thank you for a great year!"
              }
            }),
            keyHeaders(company.apiKey, { "request-source": "api_zapier" })
          )
          expect(created.status).toBe(201)
          expect(created.body).toEqual({
            id: expect.stringMatching(hexId),
            name: "Welcome gifts",
            status: "active",
            type: "oneOffs",
            source: "api_zapier",
            accountId: company.accountId,
            billingMethodId: company.methodId,
            hideRecipientAddress: true,
            customization: {
              giftProperties: {
                selectedGiftType: "product",
                productId: company.productId,
                budget: { min: 10, max: 75.5 },
                swap: "within_budget",
                expiration: { daysFromSend: 14 }
              },
              notificationPolicy: { sendingChannels: ["email", "sms"], disableReminders: true },
              message: "Thank you for a great year!"
            },
            createdAt: expect.stringMatching(timestampPattern),
            updatedAt: created.body.createdAt
          })
          const one = yield* getWith(`${campaigns}/${created.body.id}`, keyHeaders(company.apiKey))
          expect(one.status).toBe(200)
          expect(one.body).toEqual(created.body)
          const listed = yield* getWith(campaigns, keyHeaders(company.apiKey))
          expect(listed.body).toEqual({ results: [created.body], skip: 0, limit: 20 })
        })
    )

    it.effect("a collection campaign with an expiration date; defaults: active, min 1, 30 days, e-mail, no note", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const now = yield* Clock.currentTimeMillis
        const date = new Date(now + 10 * 24 * 3600 * 1000).toISOString()
        const created = yield* postWith(
          campaigns,
          {
            name: "Holiday",
            status: "draft",
            customization: {
              giftProperties: {
                selectedGiftType: "collection",
                collectionId: company.collectionId,
                budget: { max: 100 },
                expiration: { date }
              }
            }
          },
          keyHeaders(company.apiKey)
        )
        expect(created.status).toBe(201)
        expect(created.body).toMatchObject({
          status: "draft",
          source: null,
          customization: {
            giftProperties: {
              selectedGiftType: "collection",
              collectionId: company.collectionId,
              budget: { min: 1, max: 100 },
              swap: "disabled",
              expiration: { date }
            },
            notificationPolicy: { sendingChannels: ["email"], disableReminders: false },
            message: null
          }
        })
        expect(created.body.customization.giftProperties.productId).toBeUndefined()
        const defaults = yield* postWith(campaigns, productCampaign(company.productId), keyHeaders(company.apiKey))
        expect(defaults.body).toMatchObject({
          status: "active",
          customization: { giftProperties: { expiration: { daysFromSend: 30 } } }
        })
        // A date alone means the end of that day, in UTC.
        const day = new Date(now + 5 * 24 * 3600 * 1000).toISOString().slice(0, 10)
        const byDay = yield* postWith(
          campaigns,
          productCampaign(company.productId, {
            customization: {
              giftProperties: {
                selectedGiftType: "product",
                productId: company.productId,
                budget: { max: 20000 },
                expiration: { date: day }
              }
            }
          }),
          keyHeaders(company.apiKey)
        )
        expect(byDay.status).toBe(201)
        expect(byDay.body.customization.giftProperties.expiration).toEqual({ date: `${day}T23:59:59.999Z` })
      })
    )

    it.effect("takes the account Ribbon-Account-Id or accountId names, with its default billing method", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const second = yield* postWith(
          "/public-api/v3/accounts",
          {
            name: "Sales",
            billingMethod: { name: "Sales budget", type: "prepaid", spendingLimit: { amount: 500_00 } }
          },
          keyHeaders(company.apiKey)
        )
        const salesId = second.body.data.id as string
        const salesMethods = yield* getWith(
          `/public-api/v3/billing-methods?filter[accountId]=${salesId}`,
          keyHeaders(company.apiKey)
        )
        const salesMethodId = salesMethods.body.data[0].id as string

        const byHeader = yield* postWith(
          campaigns,
          productCampaign(company.productId),
          keyHeaders(company.apiKey, { "ribbon-account-id": salesId })
        )
        expect(byHeader.body).toMatchObject({ accountId: salesId, billingMethodId: salesMethodId })
        const byBody = yield* postWith(
          campaigns,
          productCampaign(company.productId, { accountId: salesId }),
          keyHeaders(company.apiKey)
        )
        expect(byBody.body).toMatchObject({ accountId: salesId, billingMethodId: salesMethodId })
        // The header wins over the body.
        const both = yield* postWith(
          campaigns,
          productCampaign(company.productId, { accountId: salesId }),
          keyHeaders(company.apiKey, { "ribbon-account-id": company.accountId })
        )
        expect(both.body).toMatchObject({ accountId: company.accountId, billingMethodId: company.methodId })
        // A named method must be the account's own.
        const named = yield* postWith(
          campaigns,
          productCampaign(company.productId, { accountId: salesId, billingMethodId: company.methodId }),
          keyHeaders(company.apiKey)
        )
        expect(named.status).toBe(404)
        expect(named.body).toEqual(v2Error(404, "NOT_FOUND"))

        // An account with no billing method: 404, nothing stored.
        const bare = yield* postWith("/public-api/v3/accounts", { name: "Bare" }, keyHeaders(company.apiKey))
        const before = yield* campaignCount
        const noMethod = yield* postWith(
          campaigns,
          productCampaign(company.productId, { accountId: bare.body.data.id }),
          keyHeaders(company.apiKey)
        )
        expect(noMethod.status).toBe(404)
        expect(noMethod.body).toEqual(v2Error(404, "NOT_FOUND"))
        expect(noMethod.body.message).toContain("billing method")
        const unknownAccount = yield* postWith(
          campaigns,
          productCampaign(company.productId, { accountId: unknownId }),
          keyHeaders(company.apiKey)
        )
        expect(unknownAccount.status).toBe(404)
        expect(yield* campaignCount).toBe(before)

        // The list narrows to an account with `accountId`.
        const narrowed = yield* getWith(`${campaigns}?accountId=${salesId}`, keyHeaders(company.apiKey))
        expect(narrowed.body.results.map((c: { accountId: string }) => c.accountId)).toEqual([salesId, salesId])
        const otherCompany = yield* setup()
        const unreachable = yield* getWith(
          `${campaigns}?accountId=${otherCompany.accountId}`,
          keyHeaders(company.apiKey)
        )
        expect(unreachable.status).toBe(404)
      })
    )

    it.effect("a product or collection that is not in the catalog is the catalog's 404; nothing is stored", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const before = yield* campaignCount
        const product = yield* postWith(campaigns, productCampaign(unknownId), keyHeaders(company.apiKey))
        expect(product.status).toBe(404)
        expect(product.body).toEqual(v2Error(404, "NOT_FOUND"))
        expect(product.body.message).toContain(unknownId)
        const collection = yield* postWith(
          campaigns,
          {
            name: "x",
            customization: {
              giftProperties: { selectedGiftType: "collection", collectionId: unknownId, budget: { max: 10 } }
            }
          },
          keyHeaders(company.apiKey)
        )
        expect(collection.status).toBe(404)
        expect(collection.body.message).toContain(unknownId)
        expect(yield* campaignCount).toBe(before)
      })
    )

    it.effect("every bound of the body is a v2 400 naming the field, and nothing is stored", () =>
      Effect.gen(function* () {
        // The server's Clock (the TestClock here) judges dates.
        yield* TestClock.setTime(Date.parse("2026-03-01T00:00:00Z"))
        const company = yield* setup()
        const gift = (giftProperties: Record<string, unknown>) => ({
          name: "Bounds",
          customization: {
            giftProperties: {
              selectedGiftType: "product",
              productId: company.productId,
              budget: { min: 10, max: 50 },
              ...giftProperties
            }
          }
        })
        const withPolicy = (notificationPolicy: unknown) => ({
          ...gift({}),
          customization: { ...gift({}).customization, notificationPolicy }
        })
        const now = yield* Clock.currentTimeMillis
        const past = new Date(now - 3600 * 1000).toISOString()
        const tooFar = new Date(now + 400 * 24 * 3600 * 1000).toISOString()
        const cases: ReadonlyArray<readonly [unknown, string]> = [
          [{ ...gift({}), name: undefined }, "name"],
          [{ ...gift({}), name: "" }, "name"],
          [{ ...gift({}), name: "x".repeat(101) }, "name"],
          [{ ...gift({}), name: 42 }, "name"],
          [{ ...gift({}), status: "paused" }, "status"],
          [{ ...gift({}), type: "recurring" }, "type"],
          [{ ...gift({}), accountId: "nope" }, "accountId"],
          [{ ...gift({}), billingMethodId: "nope" }, "billingMethodId"],
          [{ name: "x" }, "customization"],
          [{ name: "x", customization: {} }, "customization.giftProperties"],
          [gift({ selectedGiftType: "voucher" }), "customization.giftProperties.selectedGiftType"],
          [gift({ selectedGiftType: undefined }), "customization.giftProperties.selectedGiftType"],
          [gift({ productId: undefined }), "customization.giftProperties.productId"],
          [gift({ productId: "abc" }), "customization.giftProperties.productId"],
          [gift({ collectionId: company.collectionId }), "customization.giftProperties.collectionId"],
          [gift({ selectedGiftType: "collection", productId: undefined }), "customization.giftProperties.collectionId"],
          [gift({ budget: undefined }), "customization.giftProperties.budget"],
          [gift({ budget: { min: 10 } }), "customization.giftProperties.budget.max"],
          [gift({ budget: { max: 0.5 } }), "customization.giftProperties.budget.max"],
          [gift({ budget: { max: 20000.01 } }), "customization.giftProperties.budget.max"],
          [gift({ budget: { max: 10.005 } }), "customization.giftProperties.budget.max"],
          [gift({ budget: { max: "50" } }), "customization.giftProperties.budget.max"],
          [gift({ budget: { min: 0, max: 50 } }), "customization.giftProperties.budget.min"],
          [gift({ budget: { min: 60, max: 50 } }), "customization.giftProperties.budget.min"],
          [gift({ expiration: {} }), "customization.giftProperties.expiration"],
          [gift({ expiration: { daysFromSend: 5, date: tooFar } }), "customization.giftProperties.expiration"],
          [gift({ expiration: { daysFromSend: 0 } }), "customization.giftProperties.expiration.daysFromSend"],
          [gift({ expiration: { daysFromSend: 366 } }), "customization.giftProperties.expiration.daysFromSend"],
          [gift({ expiration: { daysFromSend: 1.5 } }), "customization.giftProperties.expiration.daysFromSend"],
          [gift({ expiration: { date: "tomorrow" } }), "customization.giftProperties.expiration.date"],
          [gift({ expiration: { date: "2026-02-30T25:00:00Z" } }), "customization.giftProperties.expiration.date"],
          [gift({ expiration: { date: past } }), "customization.giftProperties.expiration.date"],
          [gift({ expiration: { date: tooFar } }), "customization.giftProperties.expiration.date"],
          [withPolicy({}), "customization.notificationPolicy.sendingChannels"],
          [withPolicy({ sendingChannels: [] }), "customization.notificationPolicy.sendingChannels"],
          [withPolicy({ sendingChannels: ["fax"] }), "customization.notificationPolicy.sendingChannels[0]"],
          [withPolicy({ sendingChannels: ["email", "email"] }), "customization.notificationPolicy.sendingChannels"],
          [
            withPolicy({ sendingChannels: ["email"], disableReminders: "yes" }),
            "customization.notificationPolicy.disableReminders"
          ],
          [
            { ...gift({}), customization: { ...gift({}).customization, message: "x".repeat(1001) } },
            "customization.message"
          ]
        ]
        const before = yield* campaignCount
        for (const [body, path] of cases) {
          const response = yield* postWith(campaigns, body, keyHeaders(company.apiKey))
          expect({ path, status: response.status, body: response.body }).toEqual({
            path,
            status: 400,
            body: v2Invalid(path)
          })
        }
        expect(yield* campaignCount).toBe(before)
        // At the bounds: accepted.
        const edge = yield* postWith(
          campaigns,
          gift({
            budget: { min: 1, max: 20000 },
            expiration: { daysFromSend: 365 },
            message: undefined
          }),
          keyHeaders(company.apiKey)
        )
        expect(edge.status).toBe(201)
        const edgeMessage = yield* postWith(
          campaigns,
          { ...gift({}), customization: { ...gift({}).customization, message: "x".repeat(1000) } },
          keyHeaders(company.apiKey)
        )
        expect(edgeMessage.status).toBe(201)
        // The list's paging bounds.
        for (const query of ["limit=0", "limit=101", "skip=-1", "limit=abc", "accountId=zz"]) {
          const response = yield* getWith(`${campaigns}?${query}`, keyHeaders(company.apiKey))
          expect(response.status).toBe(400)
          expect(response.body).toEqual(v2Invalid(query.split("=")[0]!))
        }
      })
    )

    it.effect("pages with skip and limit, newest first", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const ids: Array<string> = []
        for (let i = 0; i < 5; i++) {
          const created = yield* postWith(
            campaigns,
            productCampaign(company.productId, { name: `C${i}` }),
            keyHeaders(company.apiKey)
          )
          ids.unshift(created.body.id)
          yield* TestClock.adjust("1 second")
        }
        const first = yield* getWith(`${campaigns}?limit=2`, keyHeaders(company.apiKey))
        expect(first.body.skip).toBe(0)
        expect(first.body.limit).toBe(2)
        const second = yield* getWith(`${campaigns}?skip=2&limit=2`, keyHeaders(company.apiKey))
        const third = yield* getWith(`${campaigns}?skip=4&limit=2`, keyHeaders(company.apiKey))
        const seen = [...first.body.results, ...second.body.results, ...third.body.results].map(
          (c: { id: string }) => c.id
        )
        expect(seen).toEqual(ids)
        expect(third.body).toMatchObject({ skip: 4, limit: 2 })
      })
    )

    it.effect("PATCH changes name, note, gift and policy; statuses move only along their transitions", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const created = yield* postWith(
          campaigns,
          productCampaign(company.productId, { status: "draft" }),
          keyHeaders(company.apiKey)
        )
        const url = `${campaigns}/${created.body.id}`
        const renamed = yield* patchWith(
          url,
          {
            name: "Renamed",
            customization: {
              message: "Enjoy",
              giftProperties: { budget: { min: 20, max: 30 } },
              notificationPolicy: { sendingChannels: ["link"] }
            }
          },
          keyHeaders(company.apiKey)
        )
        expect(renamed.status).toBe(200)
        expect(renamed.body).toMatchObject({
          name: "Renamed",
          status: "draft",
          customization: {
            giftProperties: {
              selectedGiftType: "product",
              productId: company.productId,
              budget: { min: 20, max: 30 },
              expiration: { daysFromSend: 30 }
            },
            notificationPolicy: { sendingChannels: ["link"], disableReminders: false },
            message: "Enjoy"
          }
        })
        // To a collection: it needs collectionId, and the product id goes.
        const noCollection = yield* patchWith(
          url,
          { customization: { giftProperties: { selectedGiftType: "collection" } } },
          keyHeaders(company.apiKey)
        )
        expect(noCollection.body).toEqual(v2Invalid("customization.giftProperties.collectionId"))
        const wrongId = yield* patchWith(
          url,
          { customization: { giftProperties: { collectionId: company.collectionId } } },
          keyHeaders(company.apiKey)
        )
        expect(wrongId.body).toEqual(v2Invalid("customization.giftProperties.collectionId"))
        expect(wrongId.body.message).toContain("only for selectedGiftType collection")
        const toCollection = yield* patchWith(
          url,
          {
            customization: {
              message: null,
              giftProperties: { selectedGiftType: "collection", collectionId: company.collectionId }
            }
          },
          keyHeaders(company.apiKey)
        )
        expect(toCollection.status).toBe(200)
        expect(toCollection.body.customization.giftProperties).toEqual({
          selectedGiftType: "collection",
          collectionId: company.collectionId,
          budget: { min: 20, max: 30 },
          swap: "disabled",
          expiration: { daysFromSend: 30 }
        })
        expect(toCollection.body.customization.message).toBeNull()
        const unknownProduct = yield* patchWith(
          url,
          { customization: { giftProperties: { selectedGiftType: "product", productId: unknownId } } },
          keyHeaders(company.apiKey)
        )
        expect(unknownProduct.status).toBe(404)

        // Refused bodies change nothing.
        for (const [body, path] of [
          [{ name: "" }, "name"],
          [{ status: "deleted" }, "status"],
          [
            { customization: { giftProperties: { budget: { min: 40, max: 30 } } } },
            "customization.giftProperties.budget.min"
          ],
          [
            { customization: { giftProperties: { expiration: { daysFromSend: 400 } } } },
            "customization.giftProperties.expiration.daysFromSend"
          ],
          [{ customization: { message: "x".repeat(1001) } }, "customization.message"]
        ] as const) {
          const refused = yield* patchWith(url, body, keyHeaders(company.apiKey))
          expect(refused.body).toEqual(v2Invalid(path))
        }
        const unchanged = yield* getWith(url, keyHeaders(company.apiKey))
        expect(unchanged.body).toEqual(toCollection.body)

        // draft → active → paused → active → completed → archived; back to draft is refused.
        const move = (status: string) => patchWith(url, { status }, keyHeaders(company.apiKey))
        const refusedDraft = yield* move("paused")
        expect(refusedDraft.status).toBe(422)
        expect(refusedDraft.body).toEqual(v2Error(422, "UNPROCESSABLE_ENTITY"))
        for (const status of ["active", "paused", "active", "completed"]) {
          const moved = yield* move(status)
          expect(moved.status).toBe(200)
          expect(moved.body.status).toBe(status)
        }
        expect((yield* move("active")).status).toBe(422)
        expect((yield* move("draft")).status).toBe(422)
        expect((yield* move("archived")).body.status).toBe("archived")
        // Archived: no change but staying archived.
        expect((yield* move("archived")).status).toBe(200)
        const renameArchived = yield* patchWith(url, { name: "Again" }, keyHeaders(company.apiKey))
        expect(renameArchived.status).toBe(422)
        expect(renameArchived.body.message).toContain("archived")
      })
    )

    it.effect("another company's or environment's campaign is a 404, as is an unknown one", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const created = yield* postWith(campaigns, productCampaign(company.productId), keyHeaders(company.apiKey))
        const url = `${campaigns}/${created.body.id}`
        const other = yield* setup()
        const otherRead = yield* getWith(url, keyHeaders(other.apiKey))
        expect(otherRead.status).toBe(404)
        expect(otherRead.body).toEqual(v2Error(404, "NOT_FOUND"))
        expect((yield* patchWith(url, { name: "Mine" }, keyHeaders(other.apiKey))).status).toBe(404)
        expect((yield* getWith(campaigns, keyHeaders(other.apiKey))).body.results).toEqual([])
        // A live key of the same company.
        const live = yield* Effect.flatMap(KeyStore, (keys) =>
          keys.create({
            companyId: company.companyId,
            environment: "live",
            name: "live",
            expirationInDays: 30,
            enforceMtls: false,
            permissions: ["campaigns:read", "campaigns:update"],
            accountsAccess: { scope: "all-accounts", ids: [] },
            requestSource: null
          })
        ).pipe(Effect.provide(CompanyServicesLive))
        expect((yield* getWith(url, keyHeaders(live.apiKey))).status).toBe(404)
        expect((yield* patchWith(url, { name: "Live" }, keyHeaders(live.apiKey))).status).toBe(404)
        expect((yield* getWith(campaigns, keyHeaders(live.apiKey))).body.results).toEqual([])
        expect((yield* getWith(`${campaigns}/${unknownId}`, keyHeaders(company.apiKey))).status).toBe(404)
        expect((yield* getWith(`${campaigns}/nope`, keyHeaders(company.apiKey))).body).toEqual(v2Invalid("campaignId"))
      })
    )

    it.effect("each operation needs its permission: 403 in the v2 format", () =>
      Effect.gen(function* () {
        const company = yield* setup()
        const created = yield* postWith(campaigns, productCampaign(company.productId), keyHeaders(company.apiKey))
        const url = `${campaigns}/${created.body.id}`
        const readOnly = yield* keyWith(company.apiKey, ["campaigns:read"])
        const writeOnly = yield* keyWith(company.apiKey, ["campaigns:create", "campaigns:update"])
        const forbidden = (permission: string) => ({
          status: 403,
          errorCode: "FORBIDDEN",
          message: expect.stringContaining(permission)
        })
        expect((yield* postWith(campaigns, productCampaign(company.productId), keyHeaders(readOnly))).body).toEqual(
          forbidden("campaigns:create")
        )
        expect((yield* patchWith(url, { name: "x" }, keyHeaders(readOnly))).body).toEqual(forbidden("campaigns:update"))
        expect((yield* getWith(url, keyHeaders(writeOnly))).body).toEqual(forbidden("campaigns:read"))
        expect((yield* getWith(campaigns, keyHeaders(writeOnly))).body).toEqual(forbidden("campaigns:read"))
        expect((yield* getWith(url, keyHeaders(readOnly))).status).toBe(200)
        expect((yield* patchWith(url, { name: "Allowed" }, keyHeaders(writeOnly))).status).toBe(200)
      })
    )
  })
})
