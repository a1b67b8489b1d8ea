import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Webhook } from "standardwebhooks"
import { allAccounts } from "../../../src/domain/company/Company.js"
import { WebhookDeliveries } from "../../../src/services/checkout/WebhookDeliveries.js"
import { CompanyWebhooks } from "../../../src/services/company/CompanyWebhooks.js"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
import { Signals } from "../../../src/services/platform/Signals.js"
import {
  CompanyServicesLive,
  createCompany,
  deleteWith,
  getWith,
  keyHeaders,
  patchWith,
  postWith,
  postWithoutBody,
  raiseLimits,
  timestampPattern
} from "../../support/company.js"
import { eventually } from "../../support/eventually.js"
import { httpsReceiver } from "../../support/receiver.js"
import { CompanyWebhooksTestLayer, signatureHeaders, startDeliveryWorker } from "../../support/webhooks.js"

/**
 * Resending a delivery, test events, a delivery's detail and disabling an endpoint, over real HTTP
 * (docs/decisions/0058-webhook-resend-and-test-events.md): a Jobs worker runs `webhook.deliver` against a real HTTPS
 * receiver on loopback, and every request it gets is verified with the `standardwebhooks` package. The clock is the
 * real one, since that package refuses timestamps more than 5 minutes off.
 */

const webhooks = "/public-api/v3/webhooks"

/**
 * The served API enqueues on its own in-process signals, which this test's worker does not hear: wake it as the
 * jobs signal would have.
 */
const wakeWorker = Effect.flatMap(Signals, (signals) => signals.notify("jobs", "webhook.deliver"))

/** A POST that enqueues a delivery (resend, test), then the worker woken for it. */
const postAndWake = (url: string, headers: Record<string, string>) =>
  Effect.tap(postWithoutBody(url, headers), () => wakeWorker)

const newCompany = Effect.tap(createCompany(), (company) => raiseLimits(company.companyId))

const createEndpoint = (apiKey: string, url: string, eventTypes: ReadonlyArray<string>) =>
  Effect.map(postWith(webhooks, { url, eventTypes }, keyHeaders(apiKey)), (response) => {
    expect(response.status).toBe(201)
    return response.body.data as { readonly id: string; readonly secret: string }
  })

/** An order event of the company, emitted in a transaction of its own; the `webhook-id` of its one delivery. */
const emitOrderCreated = (company: { readonly companyId: string; readonly accountId: string }, orderId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.flatMap(CompanyWebhooks, (w) =>
        w.emit({
          companyId: company.companyId,
          environment: "test",
          accountId: company.accountId,
          eventType: "order-created",
          subject: { orderId },
          eventData: { status: "active" }
        })
      )
    )
  ).pipe(
    Effect.flatMap(([deliveryId]) => Effect.flatMap(WebhookDeliveries, (engine) => engine.get(deliveryId!))),
    Effect.map((found) => {
      expect(found._tag).toBe("Some")
      return found._tag === "Some" ? found.value.eventId : ""
    })
  )

const deliveryOf = (apiKey: string, endpointId: string, deliveryId: string) =>
  Effect.map(getWith(`${webhooks}/${endpointId}/deliveries/${deliveryId}`, keyHeaders(apiKey)), (response) => {
    expect(response.status, response.text).toBe(200)
    return response.body.data as Record<string, any>
  })

const settled = (apiKey: string, endpointId: string, deliveryId: string, status: string, attempts: number) =>
  eventually(
    deliveryOf(apiKey, endpointId, deliveryId),
    (delivery) => delivery.status === status && delivery.attempts === attempts,
    `delivery ${deliveryId} ${status} after ${attempts} attempts`
  )

const v3Error = (status: number, errorCode: string) => ({ status, errorCode, message: expect.any(String) })

const count = (query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql.unsafe<{ count: number }>(query), (rows) => rows[0]!.count)
  ).pipe(Effect.orDie)
const deliverJobs = count("SELECT count(*)::int AS count FROM jobs WHERE kind = 'webhook.deliver'")
const deliveryRows = count("SELECT count(*)::int AS count FROM webhook_deliveries")

describe("webhook resend, test events, delivery detail and disabling (/public-api/v3/webhooks)", () => {
  layer(CompanyWebhooksTestLayer, { excludeTestServices: true, timeout: "90 seconds" })((it) => {
    it.scoped(
      "a delivered event is resent with the same webhook-id and a valid signature; the detail shows both attempts",
      () =>
        Effect.gen(function* () {
          const receiver = yield* httpsReceiver((_, index) =>
            index === 0 ? { status: 200, body: "thanks" } : { status: 202, body: "y".repeat(3000) }
          )
          const company = yield* newCompany
          const url = receiver.url("/hooks/resend")
          const endpoint = yield* createEndpoint(company.apiKey, url, ["order-created"])
          const deliveryId = yield* emitOrderCreated(company, "0123456789abcdef01234567")
          yield* startDeliveryWorker
          yield* settled(company.apiKey, endpoint.id, deliveryId, "delivered", 1)

          const resent = yield* postAndWake(
            `${webhooks}/${endpoint.id}/deliveries/${deliveryId}/resend`,
            keyHeaders(company.apiKey)
          )
          expect(resent.status, resent.text).toBe(202)
          expect(resent.body.data).toMatchObject({
            id: deliveryId,
            eventType: "order-created",
            status: "pending",
            attempts: 1,
            resends: 1,
            deliveredAt: null
          })
          const detail = yield* settled(company.apiKey, endpoint.id, deliveryId, "delivered", 2)

          expect(receiver.received).toHaveLength(2)
          const [first, second] = receiver.received
          for (const request of [first!, second!]) {
            expect(request.headers["webhook-id"]).toBe(deliveryId)
            expect(new Webhook(endpoint.secret).verify(request.body, signatureHeaders(request))).toMatchObject({
              webhookData: { id: deliveryId, eventType: "order-created", target: url },
              eventData: { orderId: "0123456789abcdef01234567" }
            })
          }
          expect(second!.body).toBe(first!.body)

          expect(detail).toEqual({
            id: deliveryId,
            eventType: "order-created",
            status: "delivered",
            attempts: 2,
            resends: 1,
            lastResponseStatus: 202,
            lastError: null,
            nextAttemptAt: null,
            createdAt: expect.stringMatching(timestampPattern),
            deliveredAt: expect.stringMatching(timestampPattern),
            request: { url, body: first!.body },
            attemptLog: [1, 2].map((attempt) => ({
              attempt,
              startedAt: expect.stringMatching(timestampPattern),
              durationMs: expect.any(Number),
              requestHeaders: {
                "content-type": "application/json",
                "user-agent": "Ribbon-Webhooks/1",
                ...signatureHeaders(receiver.received[attempt - 1]!)
              },
              responseStatus: attempt === 1 ? 200 : 202,
              // A bounded excerpt of the body, and whether it went on.
              responseBody: attempt === 1 ? "thanks" : "y".repeat(1024),
              responseBodyTruncated: attempt === 2,
              error: null
            }))
          })
          for (const attempt of detail.attemptLog) expect(Number.isInteger(attempt.durationMs)).toBe(true)
          // Neither the detail nor the list shows the secret.
          const listed = yield* getWith(`${webhooks}/${endpoint.id}/deliveries`, keyHeaders(company.apiKey))
          const { request: _request, attemptLog: _attemptLog, ...row } = detail
          expect(listed.body.data).toEqual([row])
          for (const text of [JSON.stringify(detail), listed.text]) expect(text).not.toContain(endpoint.secret.slice(6))
        })
    )

    it.scoped("a delivery waiting for its retry is brought forward by a resend", () =>
      Effect.gen(function* () {
        const receiver = yield* httpsReceiver((_, index) =>
          index === 0 ? { status: 503, headers: { "retry-after": "600" } } : { status: 204 }
        )
        const company = yield* newCompany
        const endpoint = yield* createEndpoint(company.apiKey, receiver.url("/hooks/busy"), ["order-created"])
        const deliveryId = yield* emitOrderCreated(company, "0123456789abcdef01234567")
        yield* startDeliveryWorker
        const waiting = yield* eventually(
          deliveryOf(company.apiKey, endpoint.id, deliveryId),
          (delivery) => delivery.attempts === 1 && delivery.nextAttemptAt !== null,
          "the first attempt"
        )
        expect(waiting).toMatchObject({ status: "pending", lastResponseStatus: 503 })
        expect(Date.parse(waiting.nextAttemptAt) - Date.now()).toBeGreaterThan(300_000)
        const jobsBefore = yield* deliverJobs

        const resent = yield* postAndWake(
          `${webhooks}/${endpoint.id}/deliveries/${deliveryId}/resend`,
          keyHeaders(company.apiKey)
        )
        expect(resent.status).toBe(202)
        expect(resent.body.data).toMatchObject({ status: "pending", resends: 0 })
        expect(Date.parse(resent.body.data.nextAttemptAt)).toBeLessThanOrEqual(Date.now())
        // The waiting job runs now: no second job.
        expect(yield* deliverJobs).toBe(jobsBefore)
        yield* settled(company.apiKey, endpoint.id, deliveryId, "delivered", 2)
        expect(receiver.received.map((request) => request.headers["webhook-id"])).toEqual([deliveryId, deliveryId])
      })
    )

    it.scoped(
      "disabled by a 410 or by request: resend and test are 409 until it is enabled; what was missed can be resent",
      () =>
        Effect.gen(function* () {
          const receiver = yield* httpsReceiver((_, index) => (index === 0 ? { status: 410 } : { status: 204 }))
          const company = yield* newCompany
          const endpoint = yield* createEndpoint(company.apiKey, receiver.url("/hooks/gone"), ["order-created"])
          const one = `${webhooks}/${endpoint.id}`
          const gone = yield* emitOrderCreated(company, "0123456789abcdef01234567")
          yield* startDeliveryWorker
          yield* settled(company.apiKey, endpoint.id, gone, "disabled", 1)
          expect((yield* getWith(one, keyHeaders(company.apiKey))).body.data).toMatchObject({
            status: "disabled",
            disabledReason: "gone"
          })
          const jobsBefore = yield* deliverJobs
          const deliveriesBefore = yield* deliveryRows
          for (const response of [
            yield* postAndWake(`${one}/deliveries/${gone}/resend`, keyHeaders(company.apiKey)),
            yield* postAndWake(`${one}/test`, keyHeaders(company.apiKey))
          ]) {
            expect(response.status).toBe(409)
            expect(response.body).toEqual(v3Error(409, "409_WHKS_001"))
            expect(response.body.message).toMatch(/410 Gone/)
          }
          expect(yield* deliverJobs).toBe(jobsBefore)
          expect(yield* deliveryRows).toBe(deliveriesBefore)

          const enabled = yield* patchWith(one, { status: "active" }, keyHeaders(company.apiKey))
          expect(enabled.status).toBe(200)
          expect(enabled.body.data).toMatchObject({ id: endpoint.id, status: "active", disabledReason: null })
          const resent = yield* postAndWake(`${one}/deliveries/${gone}/resend`, keyHeaders(company.apiKey))
          expect(resent.status).toBe(202)
          yield* settled(company.apiKey, endpoint.id, gone, "delivered", 2)

          // Disabled by request: the next event is recorded, not sent.
          const disabled = yield* patchWith(one, { status: "disabled" }, keyHeaders(company.apiKey))
          expect(disabled.status).toBe(200)
          expect(disabled.body.data).toMatchObject({ status: "disabled", disabledReason: "requested" })
          const missed = yield* emitOrderCreated(company, "76543210fedcba9876543210")
          expect(yield* deliveryOf(company.apiKey, endpoint.id, missed)).toMatchObject({
            status: "disabled",
            attempts: 0,
            lastError: "not sent: the endpoint is disabled",
            nextAttemptAt: null
          })
          const refused = yield* postAndWake(`${one}/deliveries/${missed}/resend`, keyHeaders(company.apiKey))
          expect(refused.status).toBe(409)
          expect(refused.body.message).toMatch(/is disabled; enable it/)
          expect(receiver.received).toHaveLength(2)

          expect((yield* patchWith(one, { status: "active" }, keyHeaders(company.apiKey))).status).toBe(200)
          expect((yield* postAndWake(`${one}/deliveries/${missed}/resend`, keyHeaders(company.apiKey))).status).toBe(
            202
          )
          yield* settled(company.apiKey, endpoint.id, missed, "delivered", 1)
          expect(receiver.received.map((request) => request.headers["webhook-id"])).toEqual([gone, gone, missed])
        })
    )

    it.scoped("a test event goes to that endpoint alone, verifies, and is allowed to test and live keys", () =>
      Effect.gen(function* () {
        const receiver = yield* httpsReceiver()
        const company = yield* newCompany
        const url = receiver.url("/hooks/test")
        // Subscribed to other types: the test is sent whatever it subscribes to.
        const endpoint = yield* createEndpoint(company.apiKey, url, ["gift-status-changed"])
        const other = yield* createEndpoint(company.apiKey, receiver.url("/hooks/other"), ["gift-status-changed"])
        const sent = yield* postAndWake(`${webhooks}/${endpoint.id}/test`, keyHeaders(company.apiKey))
        expect(sent.status, sent.text).toBe(202)
        expect(sent.body.data).toMatchObject({
          id: expect.stringMatching(/^[0-9a-f]{24}$/),
          eventType: "webhook-test",
          status: "pending",
          attempts: 0,
          resends: 0
        })
        const deliveryId = sent.body.data.id
        yield* startDeliveryWorker
        yield* settled(company.apiKey, endpoint.id, deliveryId, "delivered", 1)
        expect(receiver.received).toHaveLength(1)
        const [request] = receiver.received
        expect(request!.path).toBe("/hooks/test")
        expect(new Webhook(endpoint.secret).verify(request!.body, signatureHeaders(request!))).toEqual({
          webhookData: {
            id: deliveryId,
            eventType: "webhook-test",
            target: url,
            triggeredAt: expect.stringMatching(timestampPattern)
          },
          eventData: { companyId: company.companyId, accountId: null, webhookId: endpoint.id }
        })
        expect((yield* getWith(`${webhooks}/${other.id}/deliveries`, keyHeaders(company.apiKey))).body.data).toEqual([])

        // A live key sends its live endpoint a test too.
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
        const liveEndpoint = yield* createEndpoint(live.apiKey, receiver.url("/hooks/live"), ["order-created"])
        const liveTest = yield* postAndWake(`${webhooks}/${liveEndpoint.id}/test`, keyHeaders(live.apiKey))
        expect(liveTest.status).toBe(202)
        yield* settled(live.apiKey, liveEndpoint.id, liveTest.body.data.id, "delivered", 1)
        expect(
          new Webhook(liveEndpoint.secret).verify(receiver.received[1]!.body, signatureHeaders(receiver.received[1]!))
        ).toMatchObject({ webhookData: { eventType: "webhook-test" } })
        // Each key reaches its own environment's endpoint only.
        const crossed = yield* postAndWake(`${webhooks}/${liveEndpoint.id}/test`, keyHeaders(company.apiKey))
        expect(crossed.status).toBe(404)
      })
    )

    it.scoped(
      "another company's, unknown, deleted and malformed ids are 404 or 400 in the v3 format, and enqueue nothing",
      () =>
        Effect.gen(function* () {
          const company = yield* newCompany
          const other = yield* newCompany
          const hook = "https://127.0.0.1:9/hooks"
          const mine = yield* createEndpoint(company.apiKey, hook, ["order-created"])
          const sibling = yield* createEndpoint(company.apiKey, `${hook}/sibling`, ["gift-status-changed"])
          const deliveryId = yield* emitOrderCreated(company, "0123456789abcdef01234567")
          const jobsBefore = yield* deliverJobs
          const deliveriesBefore = yield* deliveryRows
          const notFound = (response: { readonly status: number; readonly body: any }, errorCode: string) => {
            expect(response.status, JSON.stringify(response.body)).toBe(404)
            expect(response.body).toEqual(v3Error(404, errorCode))
          }

          // Another company's key: every operation on this company's endpoint is 404.
          const theirs = keyHeaders(other.apiKey)
          for (const response of [
            yield* postAndWake(`${webhooks}/${mine.id}/deliveries/${deliveryId}/resend`, theirs),
            yield* getWith(`${webhooks}/${mine.id}/deliveries/${deliveryId}`, theirs),
            yield* postAndWake(`${webhooks}/${mine.id}/test`, theirs),
            yield* patchWith(`${webhooks}/${mine.id}`, { status: "disabled" }, theirs)
          ]) {
            notFound(response, "404_WHKS_001")
          }
          // An unknown delivery, or one of another endpoint of the company.
          const own = keyHeaders(company.apiKey)
          for (const id of ["0123456789abcdef01234567", deliveryId]) {
            const endpointId = id === deliveryId ? sibling.id : mine.id
            notFound(yield* postAndWake(`${webhooks}/${endpointId}/deliveries/${id}/resend`, own), "404_WHKS_002")
            notFound(yield* getWith(`${webhooks}/${endpointId}/deliveries/${id}`, own), "404_WHKS_002")
          }
          // Malformed ids are 400 on the path.
          for (const [path, field] of [
            [`${webhooks}/nope/deliveries/${deliveryId}/resend`, "webhookId"],
            [`${webhooks}/${mine.id}/deliveries/nope/resend`, "deliveryId"],
            [`${webhooks}/nope/test`, "webhookId"]
          ] as const) {
            const response = yield* postAndWake(path, own)
            expect(response.status).toBe(400)
            expect(response.body).toMatchObject({ errorCode: "400_PBLC_001" })
            expect(response.body.errors[0].path).toBe(field)
          }
          // Bad PATCH bodies name the field.
          for (const [body, field] of [
            [{}, "status"],
            [{ status: "paused" }, "status"],
            [{ status: "disabled", url: hook }, "url"]
          ] as const) {
            const response = yield* patchWith(`${webhooks}/${mine.id}`, body, own)
            expect(response.status, JSON.stringify(body)).toBe(400)
            expect(response.body.errors.map((error: any) => error.path)).toContain(field)
          }
          expect((yield* getWith(`${webhooks}/${mine.id}`, own)).body.data.status).toBe("active")
          expect(yield* deliverJobs).toBe(jobsBefore)
          expect(yield* deliveryRows).toBe(deliveriesBefore)

          // A deleted endpoint is gone for these operations too.
          expect((yield* deleteWith(`${webhooks}/${mine.id}`, own)).status).toBe(204)
          notFound(yield* postAndWake(`${webhooks}/${mine.id}/deliveries/${deliveryId}/resend`, own), "404_WHKS_001")
          notFound(yield* postAndWake(`${webhooks}/${mine.id}/test`, own), "404_WHKS_001")
          notFound(yield* patchWith(`${webhooks}/${mine.id}`, { status: "active" }, own), "404_WHKS_001")
          expect(yield* deliverJobs).toBe(jobsBefore)
        })
    )
  })
})
