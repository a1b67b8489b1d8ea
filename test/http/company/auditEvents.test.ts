import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { type Context, Effect, TestClock } from "effect"
import { allAccounts, defaultExpirationInDays } from "../../../src/domain/company/Company.js"
import { withActor } from "../../../src/services/company/Audit.js"
import { Companies } from "../../../src/services/company/Companies.js"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
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
  v2Keys,
  v3Keys
} from "../../support/company.js"
import type { RawResponse } from "../../support/http.js"
import { SeededTestServer } from "../../support/http.js"

/** Runs `use` with one of the company services, on the test server's database. */
const companyServices = <S, I, A, E>(tag: Context.Tag<I, S>, use: (service: S) => Effect.Effect<A, E>) =>
  Effect.flatMap(tag, use).pipe(Effect.provide(CompanyServicesLive), Effect.orDie)

/**
 * The company audit log over real HTTP (docs/decisions/0057-audit-log.md): each mutating operation writes exactly one
 * row, in its transaction, naming the key, the request id its response carried and the source address; a refused
 * operation writes none; `GET /v3/audit-events` needs `audit:read`, shows a company its own rows only, filters and
 * pages; and no row holds a secret or a recipient's personal data.
 */

const auditEvents = "/public-api/v3/audit-events"
const sqlClient = SqlClient.SqlClient

interface AuditRow {
  readonly id: string
  readonly actorType: string
  readonly actorId: string | null
  readonly actorName: string
  readonly action: string
  readonly targetType: string
  readonly targetId: string
  readonly accountId: string | null
  readonly environment: string
  readonly sourceAddress: string | null
  readonly requestId: string | null
}

const rowsOf = (companyId: string) =>
  Effect.flatMap(sqlClient, (sql) =>
    sql<AuditRow>`SELECT * FROM audit_events WHERE company_id = ${companyId} ORDER BY occurred_at, id`.pipe(
      Effect.orDie
    )
  )

/** The company's rows, and the whole table as text (every column of every row). */
const tableDump = Effect.flatMap(sqlClient, (sql) =>
  Effect.map(
    sql<{ dump: string | null }>`SELECT string_agg(row_to_json(a)::text, '\n') AS dump FROM audit_events a`,
    (rows) => rows[0]!.dump ?? ""
  ).pipe(Effect.orDie)
)

/** A test company whose limits never bite, and a product that ships to GB with stock to spare. */
const setup = Effect.gen(function* () {
  const company = yield* createCompany()
  yield* raiseLimits(company.companyId)
  const sql = yield* sqlClient
  const [chosen] = yield* sql<{ productId: string; variantId: string }>`
    SELECT p.id AS product_id, v.id AS variant_id FROM products p JOIN variants v ON v.product_id = p.id
      JOIN variant_locations l ON l.variant_id = v.id
    WHERE v.price_usd IS NOT NULL AND NOT v.is_digital AND l.stock > 100 AND 'GB' = ANY (l.ships_to)
      AND (SELECT count(*) FROM variants w WHERE w.product_id = p.id) = 1
    ORDER BY p.id LIMIT 1`.pipe(Effect.orDie)
  return { ...company, ...chosen!, headers: keyHeaders(company.apiKey) }
})

const recipient = { firstName: "Ada", lastName: "Lovelace", email: "ada.audit@example.com", phone: "+44 20 7946 0958" }
const londonAddress = { countryCode: "GB", address1: "10 Downing Street", city: "London", postalCode: "SW1A 2AA" }
const orderRecipient = {
  firstName: "Ada",
  lastName: "Lovelace",
  email: "ada.audit@example.com",
  phone: "+44 20 7946 0958",
  country: "GB",
  address: { addressLine1: "10 Downing Street", city: "London", zipcode: "SW1A 2AA" }
}

describe("audit log (/public-api/v3/audit-events)", () => {
  it.layer(SeededTestServer, { timeout: 240_000 })((it) => {
    it.effect("each mutating operation writes one row naming the key, its request id and source; refusals none", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const actor = { actorType: "key", actorId: company.apiKeyId, actorName: "Default key" }
        // The company's first key was made by the operator (the command line): no key, no request.
        expect(yield* rowsOf(company.companyId)).toEqual([
          expect.objectContaining({
            actorType: "operator",
            actorId: null,
            actorName: "operator",
            action: "api_key.created",
            targetId: company.apiKeyId,
            sourceAddress: null,
            requestId: null
          })
        ])
        let sourceAddress: string | undefined
        /** The rows the response's request wrote: exactly `expected`, and nothing else since the last check. */
        let seen = 1
        const wrote = (response: RawResponse, ...expected: ReadonlyArray<Partial<AuditRow>>) =>
          Effect.gen(function* () {
            expect(response.status, JSON.stringify(response.body)).toBeLessThan(300)
            const requestId = response.headers["x-request-id"]
            expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
            const rows = yield* rowsOf(company.companyId)
            expect(rows.length - seen, JSON.stringify(rows.slice(seen))).toBe(expected.length)
            seen = rows.length
            // Rows of one transaction share their time: compare them in the order of their actions.
            const byAction = (x: Partial<AuditRow>, y: Partial<AuditRow>) => x.action!.localeCompare(y.action!)
            const mine = rows.filter((row) => row.requestId === requestId).sort(byAction)
            expect(mine).toHaveLength(expected.length)
            sourceAddress ??= mine[0]!.sourceAddress!
            expect(sourceAddress).toMatch(/^(127\.0\.0\.1|0:0:0:0::\/64)$/)
            for (const [index, row] of [...expected].sort(byAction).entries()) {
              expect(mine[index]).toMatchObject({
                ...actor,
                environment: "test",
                sourceAddress,
                targetType: row.action!.split(".")[0],
                ...row
              })
            }
          })
        /** A request that changed nothing (refused, or a replay): its status, and no row. */
        const unchanged = (response: RawResponse, status: number) =>
          Effect.gen(function* () {
            expect(response.status, JSON.stringify(response.body)).toBe(status)
            expect((yield* rowsOf(company.companyId)).length).toBe(seen)
          })
        const { headers } = company

        // Accounts.
        const account = yield* postWith("/public-api/v3/accounts", { name: "Second" }, headers)
        const accountId = account.body.data.id
        yield* wrote(account, { action: "account.created", targetId: accountId, accountId })
        yield* unchanged(yield* postWith("/public-api/v3/accounts", { name: "Second" }, headers), 409)
        yield* unchanged(yield* postWith("/public-api/v3/accounts", {}, headers), 400)

        // Keys: created on v2 and v3, rotated (two keys changed, two rows), revoked on both lines.
        const v2Key = yield* postWith(v2Keys, { name: "v2 key", permissions: ["products:read"] }, headers)
        yield* wrote(v2Key, { action: "api_key.created", targetId: v2Key.body.id, accountId: null })
        const v3Key = yield* postWith(v3Keys, { name: "v3 key", permissions: ["products:read"] }, headers)
        yield* wrote(v3Key, { action: "api_key.created", targetId: v3Key.body.data.id })
        const rotated = yield* postWith(
          v3Keys,
          {
            name: "v3 key, rotated",
            permissions: ["products:read"],
            rotation: { apiKeyId: v3Key.body.data.id, expiresInHours: 0 }
          },
          headers
        )
        yield* wrote(
          rotated,
          { action: "api_key.created", targetId: rotated.body.data.id },
          { action: "api_key.rotated", targetId: v3Key.body.data.id }
        )
        // A key may not grant what it lacks (403).
        yield* unchanged(
          yield* postWith(v3Keys, { name: "wider", permissions: ["orders:create"] }, keyHeaders(v2Key.body.apiKey)),
          403
        )
        yield* wrote(yield* deleteWith(`${v2Keys}/${v2Key.body.id}`, headers), {
          action: "api_key.revoked",
          targetId: v2Key.body.id
        })
        yield* wrote(yield* deleteWith(`${v3Keys}/${rotated.body.data.id}`, headers), {
          action: "api_key.revoked",
          targetId: rotated.body.data.id
        })
        yield* unchanged(yield* deleteWith(`${v3Keys}/${rotated.body.data.id}`, headers), 404)
        // A taken name: 400.
        yield* unchanged(yield* postWith(v3Keys, { name: "Default key" }, headers), 400)

        // Webhook endpoints: the company's, on no account.
        const endpoint = yield* postWith(
          "/public-api/v3/webhooks",
          { url: "https://127.0.0.1:9/hooks/audit", eventTypes: ["order-created"] },
          headers
        )
        const secret: string = endpoint.body.data.secret
        yield* wrote(endpoint, { action: "webhook_endpoint.created", targetId: endpoint.body.data.id, accountId: null })
        const hook = `/public-api/v3/webhooks/${endpoint.body.data.id}`
        yield* wrote(yield* patchWith(hook, { status: "disabled" }, headers), {
          action: "webhook_endpoint.disabled",
          targetId: endpoint.body.data.id
        })
        // Nothing is sent to a disabled endpoint: its test event is refused.
        yield* unchanged(yield* postWith(`${hook}/test`, {}, headers), 409)
        yield* wrote(yield* patchWith(hook, { status: "active" }, headers), {
          action: "webhook_endpoint.enabled",
          targetId: endpoint.body.data.id
        })
        const tested = yield* postWith(`${hook}/test`, {}, headers)
        yield* wrote(tested, { action: "webhook_endpoint.tested", targetId: endpoint.body.data.id })
        yield* wrote(yield* postWith(`${hook}/deliveries/${tested.body.data.id}/resend`, {}, headers), {
          action: "webhook_delivery.resent",
          targetId: tested.body.data.id
        })
        yield* wrote(yield* deleteWith(`/public-api/v3/webhooks/${endpoint.body.data.id}`, headers), {
          action: "webhook_endpoint.deleted",
          targetId: endpoint.body.data.id
        })

        // Orders: placed (a replay changes nothing), moved in the sandbox, cancelled (a second cancel is refused).
        const orderBody = {
          variantId: company.variantId,
          recipient,
          shippingAddress: londonAddress,
          idempotencyKey: "o-1"
        }
        const order = yield* postWith("/public-api/v3/orders", orderBody, headers)
        const orderId = order.body.data.id
        yield* wrote(order, { action: "order.created", targetId: orderId, accountId: company.accountId })
        yield* unchanged(yield* postWith("/public-api/v3/orders", orderBody, headers), 201)
        const moved = yield* postWith(
          `/public-api/v3/orders/${orderId}/simulate`,
          { fulfillmentStatus: "processing" },
          headers
        )
        yield* wrote(moved, { action: "order.simulated", targetId: orderId })
        yield* unchanged(
          yield* postWith(`/public-api/v3/orders/${orderId}/simulate`, { fulfillmentStatus: "delivered" }, headers),
          422
        )
        yield* wrote(yield* postWith(`/public-api/v3/orders/${orderId}/cancel`, {}, headers), {
          action: "order.cancelled",
          targetId: orderId
        })
        yield* unchanged(yield* postWith(`/public-api/v3/orders/${orderId}/cancel`, {}, headers), 422)

        // Campaigns.
        const campaign = yield* postWith(
          "/public-api/v2/campaigns",
          {
            name: "Audit",
            customization: {
              giftProperties: {
                selectedGiftType: "product",
                productId: company.productId,
                budget: { min: 1, max: 20000 }
              }
            }
          },
          headers
        )
        const campaignId = campaign.body.id
        yield* wrote(campaign, { action: "campaign.created", targetId: campaignId, accountId: company.accountId })
        yield* wrote(yield* patchWith(`/public-api/v2/campaigns/${campaignId}`, { name: "Audit, renamed" }, headers), {
          action: "campaign.updated",
          targetId: campaignId
        })
        yield* unchanged(
          yield* patchWith(`/public-api/v2/campaigns/${campaignId}`, { status: "nonsense" }, headers),
          400
        )

        // Recipients: created, changed, deleted; a second with the same e-mail is refused.
        const created = yield* postWith(
          "/public-api/v2/recipients",
          { firstName: "Grace", lastName: "Hopper", email: "grace.audit@example.com" },
          headers
        )
        const recipientId = created.body.id
        yield* wrote(created, { action: "recipient.created", targetId: recipientId, accountId: company.accountId })
        yield* unchanged(
          yield* postWith(
            "/public-api/v2/recipients",
            { firstName: "Grace", lastName: "Hopper", email: "grace.audit@example.com" },
            headers
          ),
          409
        )
        yield* wrote(yield* patchWith(`/public-api/v2/recipients/${recipientId}`, { lastName: "Murray" }, headers), {
          action: "recipient.updated",
          targetId: recipientId
        })
        yield* wrote(yield* deleteWith(`/public-api/v2/recipients/${recipientId}`, headers), {
          action: "recipient.deleted",
          targetId: recipientId
        })
        yield* unchanged(yield* deleteWith(`/public-api/v2/recipients/${recipientId}`, headers), 404)

        // Gifts: one row per gift (its new recipient is part of it), changed, cancelled, expired, claimed.
        const send = (key: string) =>
          postWith(
            "/public-api/v2/gifts",
            {
              campaignId,
              recipients: [{ firstname: "Alan", lastname: "Turing", email: `${key}.audit@example.com`, key }]
            },
            headers
          )
        const gifts: Array<string> = []
        for (const key of ["g-1", "g-2", "g-3"]) {
          const sent = yield* send(key)
          const giftId = sent.body.results[0].id
          gifts.push(giftId)
          yield* wrote(sent, { action: "gift.created", targetId: giftId, accountId: company.accountId })
        }
        // Sent again, the same key finds the same gift: nothing changed.
        yield* unchanged(yield* send("g-1"), 200)
        const [first, second, third] = gifts
        yield* wrote(yield* patchWith(`/public-api/v2/gifts/${first}`, { metadata: { crm: "7" } }, headers), {
          action: "gift.updated",
          targetId: first
        })
        yield* wrote(yield* postWith(`/public-api/v2/gifts/${first}/cancel`, {}, headers), {
          action: "gift.cancelled",
          targetId: first
        })
        yield* unchanged(yield* postWith(`/public-api/v2/gifts/${first}/cancel`, {}, headers), 422)
        yield* wrote(yield* postWith(`/public-api/v2/gifts/${second}/expire`, {}, headers), {
          action: "gift.expired",
          targetId: second
        })
        // A claim places an order: one row, the gift's.
        yield* wrote(
          yield* postWith(
            `/public-api/v2/gifts/${third}/claim`,
            { variantId: company.variantId, orderRecipient },
            headers
          ),
          { action: "gift.claimed", targetId: third }
        )
        // POST /v2/orders: a gift made and claimed, recorded as its order; a replay records nothing.
        const v2OrderBody = {
          campaignId,
          variantId: company.variantId,
          recipient: { firstname: "Eve", lastname: "Example", email: "eve.audit@example.com", key: "eve" },
          orderRecipient
        }
        const v2Order = yield* postWith("/public-api/v2/orders", v2OrderBody, headers)
        yield* wrote(v2Order, { action: "order.created", targetId: v2Order.body.orderId })
        yield* unchanged(yield* postWith("/public-api/v2/orders", v2OrderBody, headers), 200)

        // A catalog export's start.
        const started = yield* postWith("/public-api/v3/products/exports", { locations: ["GB"] }, headers)
        yield* wrote(started, { action: "export.started", targetId: started.body.data.id })
        yield* unchanged(yield* postWith("/public-api/v3/products/exports", { locations: ["GB"] }, headers), 409)

        // No secret and no personal data anywhere in the table: not the keys' values, the endpoint's secret, the
        // recipients' names, e-mails or phone.
        const dump = yield* tableDump
        for (const forbidden of [
          company.apiKey,
          v2Key.body.apiKey,
          v3Key.body.data.apiKey,
          rotated.body.data.apiKey,
          secret,
          "Lovelace",
          "Hopper",
          "Turing",
          "audit@example.com",
          // The phone as given and as E.164 stores it; a shorter piece could turn up by chance in an id's hex.
          "7946 0958",
          "2079460958"
        ]) {
          expect(dump).not.toContain(forbidden)
        }
      })
    )

    it.effect("the list needs audit:read, shows a company its own rows in the v3 style, filters and pages", () =>
      Effect.gen(function* () {
        const a = yield* setup
        const b = yield* setup
        // Company A: two keys made and one revoked, by its default key; one account.
        // The server runs on the test's clock: a second between changes orders them.
        const later = <A, E, R>(change: Effect.Effect<A, E, R>) => Effect.zipRight(TestClock.adjust("1 second"), change)
        const reader = yield* later(postWith(v3Keys, { name: "auditor", permissions: ["audit:read"] }, a.headers))
        const other = yield* later(postWith(v3Keys, { name: "no audit", permissions: ["products:read"] }, a.headers))
        yield* later(deleteWith(`${v3Keys}/${other.body.data.id}`, a.headers))
        const account = yield* later(postWith("/public-api/v3/accounts", { name: "Elsewhere" }, a.headers))
        const readerHeaders = keyHeaders(reader.body.data.apiKey)

        // Without audit:read: 403, in the v3 format.
        const bare = yield* later(postWith(v3Keys, { name: "bare", permissions: [] }, a.headers))
        const denied = yield* getWith(auditEvents, keyHeaders(bare.body.data.apiKey))
        expect(denied.status).toBe(403)
        expect(denied.body).toMatchObject({ errorCode: expect.stringMatching(/^403_/), message: expect.any(String) })

        const all = yield* getWith(auditEvents, readerHeaders)
        expect(all.status, JSON.stringify(all.body)).toBe(200)
        // Newest first: bare, account, revoke, two creations, then the operator's first key.
        expect(all.body.data.map((event: { action: string }) => event.action)).toEqual([
          "api_key.created",
          "account.created",
          "api_key.revoked",
          "api_key.created",
          "api_key.created",
          "api_key.created"
        ])
        expect(all.body.data[1]).toEqual({
          id: expect.stringMatching(/^[0-9a-f]{24}$/),
          occurredAt: expect.stringMatching(timestampPattern),
          actor: { type: "key", id: a.apiKeyId, name: "Default key" },
          action: "account.created",
          target: { type: "account", id: account.body.data.id },
          accountId: account.body.data.id,
          environment: "test",
          sourceAddress: expect.any(String),
          requestId: account.headers["x-request-id"]
        })
        expect(all.body.data[5]).toMatchObject({
          actor: { type: "operator", id: null, name: "operator" },
          sourceAddress: null,
          requestId: null
        })

        // Company B sees only its own: its operator's first key.
        const mine = yield* getWith(auditEvents, b.headers)
        expect(mine.body.data).toEqual([
          expect.objectContaining({ action: "api_key.created", target: { type: "api_key", id: b.apiKeyId } })
        ])

        // Filters: by action, by actor, by time.
        const revoked = yield* getWith(`${auditEvents}?filter[action]=api_key.revoked`, readerHeaders)
        expect(revoked.body.data).toEqual([
          expect.objectContaining({ target: { type: "api_key", id: other.body.data.id } })
        ])
        const byOperator = yield* getWith(`${auditEvents}?filter[actorId]=${a.apiKeyId}`, readerHeaders)
        expect(byOperator.body.data).toHaveLength(5)
        const newest = all.body.data[0].occurredAt
        const since = yield* getWith(
          `${auditEvents}?filter[occurredAt][gte]=${encodeURIComponent(newest)}`,
          readerHeaders
        )
        expect(since.body.data.map((event: { id: string }) => event.id)).toContain(all.body.data[0].id)
        expect(since.body.data.every((event: { occurredAt: string }) => event.occurredAt >= newest)).toBe(true)
        const oldest = all.body.data[5]
        const until = yield* getWith(
          `${auditEvents}?filter[occurredAt][lte]=${encodeURIComponent(oldest.occurredAt)}`,
          readerHeaders
        )
        expect(until.body.data).toEqual([oldest])

        // Pages of two, following links.next.
        const seen: Array<string> = []
        let next: string | null = `${auditEvents}?page[size]=2`
        while (next !== null) {
          const page: RawResponse = yield* getWith(next, readerHeaders)
          expect(page.status).toBe(200)
          expect(page.body.data.length).toBeLessThanOrEqual(2)
          seen.push(...page.body.data.map((event: { id: string }) => event.id))
          next = page.body.links.next
        }
        expect(seen).toEqual(all.body.data.map((event: { id: string }) => event.id))

        // A bad filter is a 400 naming it.
        for (const query of [
          "filter[action]=key.stolen",
          "filter[actorId]=nope",
          "filter[occurredAt][gte]=yesterday"
        ]) {
          const bad = yield* getWith(`${auditEvents}?${query}`, readerHeaders)
          expect(bad.status, query).toBe(400)
        }
      })
    )

    it.effect("a key limited to some accounts reads their rows and the company-wide ones, not other accounts'", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const second = yield* postWith("/public-api/v3/accounts", { name: "Second" }, company.headers)
        const third = yield* postWith("/public-api/v3/accounts", { name: "Third" }, company.headers)
        const limited = yield* postWith(
          v3Keys,
          {
            name: "second only",
            permissions: ["audit:read"],
            accountsAccess: { scope: "selected-accounts", ids: [second.body.data.id] }
          },
          company.headers
        )
        const read = yield* getWith(auditEvents, keyHeaders(limited.body.data.apiKey))
        expect(read.status).toBe(200)
        const targets = read.body.data.map((event: { target: { id: string } }) => event.target.id)
        expect(targets).toContain(second.body.data.id)
        expect(targets).toContain(limited.body.data.id)
        expect(targets).not.toContain(third.body.data.id)
      })
    )

    it.effect("the company-wide rows (no environment) are read by every key of the company, not by another's", () =>
      Effect.gen(function* () {
        const company = yield* setup
        const other = yield* setup
        // The operator activates the company; a member requires a second factor of everyone.
        const { created } = yield* companyServices(Companies, (companies) => companies.activate(company.companyId))
        expect(created).toBe(true)
        const member = {
          type: "member",
          id: "aaaaaaaaaaaaaaaaaaaaaaaa",
          name: "Olivia",
          sourceAddress: "203.0.113.9",
          requestId: "req-2fa"
        } as const
        // A second later, so that the list's order is the changes' order.
        yield* TestClock.adjust("1 second")
        yield* companyServices(Companies, (companies) =>
          withActor(member)(companies.requireTwoFactor(company.companyId, true))
        )
        const live = yield* companyServices(KeyStore, (keys) =>
          keys.create({
            companyId: company.companyId,
            environment: "live",
            name: "live auditor",
            expirationInDays: defaultExpirationInDays,
            enforceMtls: false,
            permissions: ["audit:read"],
            accountsAccess: allAccounts,
            requestSource: null
          })
        )
        const limited = yield* postWith(
          v3Keys,
          {
            name: "default account only",
            permissions: ["audit:read"],
            accountsAccess: { scope: "selected-accounts", ids: [company.accountId] }
          },
          company.headers
        )
        const expected = [
          {
            actor: { type: "member", id: member.id, name: "Olivia" },
            action: "company.two_factor_required",
            target: { type: "company", id: company.companyId },
            accountId: null,
            environment: null,
            sourceAddress: "203.0.113.9",
            requestId: "req-2fa"
          },
          {
            actor: { type: "operator", id: null, name: "operator" },
            action: "company.activated",
            target: { type: "company", id: company.companyId },
            accountId: null,
            environment: null,
            sourceAddress: null,
            requestId: null
          }
        ]
        const companyWide = (response: RawResponse) => {
          expect(response.status, JSON.stringify(response.body)).toBe(200)
          return response.body.data.filter((event: { environment: string | null }) => event.environment === null)
        }
        for (const apiKey of [company.apiKey, live.apiKey, limited.body.data.apiKey]) {
          expect(companyWide(yield* getWith(auditEvents, keyHeaders(apiKey)))).toEqual(
            expected.map((event) => expect.objectContaining(event))
          )
        }
        // The live key reads the company-wide rows, and none of the test environment's.
        const liveRead = yield* getWith(auditEvents, keyHeaders(live.apiKey))
        expect(liveRead.body.data.map((event: { environment: string | null }) => event.environment)).not.toContain(
          "test"
        )
        expect(companyWide(yield* getWith(auditEvents, other.headers))).toEqual([])
      })
    )
  })
})
