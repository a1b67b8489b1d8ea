import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Either } from "effect"
import { Webhook } from "standardwebhooks"
import { WebhookDeliveries } from "../../../src/services/checkout/WebhookDeliveries.js"
import { CompanyWebhooks } from "../../../src/services/company/CompanyWebhooks.js"
import { Signals } from "../../../src/services/platform/Signals.js"
import { createCompany, deleteWith, getWith, keyHeaders, postWith, raiseLimits } from "../../support/company.js"
import { eventually, settle } from "../../support/eventually.js"
import { httpsReceiver } from "../../support/receiver.js"
import { CompanyWebhooksTestLayer, signatureHeaders, startDeliveryWorker } from "../../support/webhooks.js"

/**
 * Company webhooks delivered by the one delivery engine (docs/decisions/0030-callbacks-and-delivery.md,
 * docs/decisions/0050-company-webhooks.md): endpoints made over HTTP, events emitted with `CompanyWebhooks.emit` in a
 * transaction, a Jobs worker running `webhook.deliver`, and a real HTTPS receiver on loopback whose requests are
 * verified with the `standardwebhooks` package. The clock is the real one, since that package refuses timestamps more
 * than 5 minutes off.
 */

const webhooks = "/public-api/v3/webhooks"

const newCompany = Effect.tap(createCompany(), (company) => raiseLimits(company.companyId))

const createEndpoint = (apiKey: string, url: string, eventTypes: ReadonlyArray<string>) =>
  Effect.map(postWith(webhooks, { url, eventTypes }, keyHeaders(apiKey)), (response) => {
    expect(response.status).toBe(201)
    return response.body.data as { readonly id: string; readonly secret: string }
  })

/** Emits in a transaction of its own, as a company service would in the transaction of its change. */
const emitCommitted = (event: Parameters<CompanyWebhooks["emit"]>[0]) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.flatMap(CompanyWebhooks, (w) => w.emit(event)))
  )

const deliveriesOf = (apiKey: string, endpointId: string) =>
  Effect.map(getWith(`${webhooks}/${endpointId}/deliveries`, keyHeaders(apiKey)), (response) => {
    expect(response.status).toBe(200)
    return response.body.data as ReadonlyArray<Record<string, any>>
  })

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe("CompanyWebhooks", () => {
  layer(CompanyWebhooksTestLayer, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.scoped("delivers an emitted event to each subscribed endpoint, signed v1 as Standard Webhooks verifies it", () =>
      Effect.gen(function* () {
        const receiver = yield* httpsReceiver()
        const company = yield* newCompany
        const url = receiver.url("/hooks/orders")
        const endpoint = yield* createEndpoint(company.apiKey, url, ["order-created", "order-status-changed"])
        const elsewhere = yield* createEndpoint(company.apiKey, receiver.url("/hooks/gifts"), ["gift-status-changed"])
        // Another company's endpoint for the same event type hears nothing of this company's events.
        const other = yield* newCompany
        const theirs = yield* createEndpoint(other.apiKey, receiver.url("/hooks/theirs"), ["order-status-changed"])

        const ids = yield* emitCommitted({
          companyId: company.companyId,
          environment: "test",
          accountId: company.accountId,
          eventType: "order-status-changed",
          subject: { orderId: "0123456789abcdef01234567" },
          eventData: { status: "completed" }
        })
        expect(ids).toHaveLength(1)
        yield* startDeliveryWorker
        const [row] = yield* eventually(
          deliveriesOf(company.apiKey, endpoint.id),
          (rows) => rows[0]?.status === "delivered",
          "the delivery"
        )

        expect(receiver.received).toHaveLength(1)
        const [request] = receiver.received
        expect(request.path).toBe("/hooks/orders")
        expect(request.headers["content-type"]).toBe("application/json")
        expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
        const verified = new Webhook(endpoint.secret).verify(request.body, signatureHeaders(request))
        expect(verified).toEqual({
          webhookData: {
            id: request.headers["webhook-id"],
            eventType: "order-status-changed",
            target: url,
            triggeredAt: expect.stringMatching(iso)
          },
          eventData: {
            companyId: company.companyId,
            accountId: company.accountId,
            orderId: "0123456789abcdef01234567",
            status: "completed"
          }
        })
        // Another endpoint's secret, or a changed body, does not verify.
        expect(() => new Webhook(elsewhere.secret).verify(request.body, signatureHeaders(request))).toThrow()
        expect(() =>
          new Webhook(endpoint.secret).verify(request.body.replace("completed", "cancelled"), signatureHeaders(request))
        ).toThrow()

        expect(row).toEqual({
          id: request.headers["webhook-id"],
          eventType: "order-status-changed",
          status: "delivered",
          attempts: 1,
          resends: 0,
          lastResponseStatus: 204,
          lastError: null,
          nextAttemptAt: null,
          createdAt: expect.stringMatching(iso),
          deliveredAt: expect.stringMatching(iso)
        })
        expect(yield* deliveriesOf(company.apiKey, elsewhere.id)).toEqual([])
        expect(yield* deliveriesOf(other.apiKey, theirs.id)).toEqual([])
      })
    )

    it.scoped("an event whose transaction rolls back is never delivered", () =>
      Effect.gen(function* () {
        const receiver = yield* httpsReceiver()
        const company = yield* newCompany
        const endpoint = yield* createEndpoint(company.apiKey, receiver.url("/hooks"), ["order-cancelled"])
        const event = {
          companyId: company.companyId,
          environment: "test",
          accountId: company.accountId,
          eventType: "order-cancelled",
          eventData: { status: "cancelled" }
        } as const
        const sql = yield* SqlClient.SqlClient
        const rolledBack = yield* sql
          .withTransaction(
            Effect.flatMap(CompanyWebhooks, (w) => w.emit({ ...event, subject: { orderId: "rolled-back" } })).pipe(
              Effect.zipRight(Effect.fail("the change failed" as const))
            )
          )
          .pipe(Effect.either)
        expect(rolledBack).toEqual(Either.left("the change failed"))
        expect(yield* deliveriesOf(company.apiKey, endpoint.id)).toEqual([])

        yield* emitCommitted({ ...event, subject: { orderId: "committed" } })
        yield* startDeliveryWorker
        yield* eventually(
          deliveriesOf(company.apiKey, endpoint.id),
          (rows) => rows[0]?.status === "delivered",
          "the committed delivery"
        )
        yield* settle
        expect(receiver.received.map((request) => JSON.parse(request.body).eventData.orderId)).toEqual(["committed"])
      })
    )

    it.scoped("410 Gone disables the endpoint: later events are recorded, not sent; a new endpoint starts afresh", () =>
      Effect.gen(function* () {
        const receiver = yield* httpsReceiver((_, index) => (index === 0 ? { status: 410 } : { status: 204 }))
        const company = yield* newCompany
        const url = receiver.url("/hooks/gone")
        const endpoint = yield* createEndpoint(company.apiKey, url, ["order-created"])
        const emit = (orderId: string) =>
          emitCommitted({
            companyId: company.companyId,
            environment: "test",
            accountId: company.accountId,
            eventType: "order-created",
            subject: { orderId },
            eventData: { status: "active" }
          })
        yield* emit("first")
        yield* startDeliveryWorker
        yield* eventually(
          deliveriesOf(company.apiKey, endpoint.id),
          (rows) => rows[0]?.status === "disabled",
          "the 410"
        )
        const shown = yield* getWith(`${webhooks}/${endpoint.id}`, keyHeaders(company.apiKey))
        expect(shown.body.data).toMatchObject({ status: "disabled", disabledReason: "gone" })

        yield* emit("second")
        yield* settle
        expect(receiver.received).toHaveLength(1)
        expect(yield* deliveriesOf(company.apiKey, endpoint.id)).toMatchObject([
          {
            status: "disabled",
            attempts: 0,
            lastResponseStatus: null,
            lastError: "not sent: this endpoint answered 410 Gone to an earlier delivery"
          },
          {
            status: "disabled",
            attempts: 1,
            lastResponseStatus: 410,
            lastError: "HTTP 410 Gone: this endpoint is disabled"
          }
        ])

        // The endpoint is disabled, not the URL: one made again for it receives.
        expect((yield* deleteWith(`${webhooks}/${endpoint.id}`, keyHeaders(company.apiKey))).status).toBe(204)
        const again = yield* createEndpoint(company.apiKey, url, ["order-created"])
        expect((yield* getWith(`${webhooks}/${again.id}`, keyHeaders(company.apiKey))).body.data.status).toBe("active")
        yield* emit("third")
        const [row] = yield* eventually(
          deliveriesOf(company.apiKey, again.id),
          (rows) => rows[0]?.status === "delivered",
          "the new endpoint's delivery"
        )
        expect(row.attempts).toBe(1)
        expect(receiver.received).toHaveLength(2)
        expect(
          new Webhook(again.secret).verify(receiver.received[1].body, signatureHeaders(receiver.received[1]))
        ).toMatchObject({ eventData: { orderId: "third" } })
      })
    )

    it.scoped("a failed attempt is retried on the engine's schedule, Retry-After honoured; deleting stops it", () =>
      Effect.gen(function* () {
        const receiver = yield* httpsReceiver((request) =>
          request.path === "/busy" ? { status: 503, headers: { "retry-after": "600" } } : { status: 500 }
        )
        const company = yield* newCompany
        const failing = yield* createEndpoint(company.apiKey, receiver.url("/failing"), [
          "order-fulfillment-status-changed"
        ])
        const busy = yield* createEndpoint(company.apiKey, receiver.url("/busy"), ["order-fulfillment-status-changed"])
        const [failingDelivery] = yield* emitCommitted({
          companyId: company.companyId,
          environment: "test",
          accountId: company.accountId,
          eventType: "order-fulfillment-status-changed",
          subject: { orderId: "0123456789abcdef01234567" },
          eventData: { fulfillmentStatus: "unfulfilled", shipmentStatus: "processing" }
        })
        yield* startDeliveryWorker
        const retried = (endpointId: string) =>
          eventually(
            deliveriesOf(company.apiKey, endpointId),
            (rows) => rows[0]?.attempts === 1 && rows[0]?.nextAttemptAt !== null,
            "the first attempt"
          ).pipe(Effect.map((rows) => rows[0]!))
        const afterFailure = yield* retried(failing.id)
        expect(afterFailure).toMatchObject({ status: "pending", lastResponseStatus: 500, lastError: "HTTP 500" })
        // The schedule's first delay (5 s, jittered by 0.8–1.2), well before its second (5 min).
        const wait = Date.parse(afterFailure.nextAttemptAt) - Date.parse(afterFailure.createdAt)
        expect(wait).toBeGreaterThanOrEqual(4000)
        expect(wait).toBeLessThan(60_000)
        const afterBusy = yield* retried(busy.id)
        expect(afterBusy).toMatchObject({ status: "pending", lastResponseStatus: 503 })
        expect(Date.parse(afterBusy.nextAttemptAt) - Date.parse(afterBusy.createdAt)).toBeGreaterThanOrEqual(600_000)

        // Deleting the endpoint disables what was still to be sent and erases its secret from the outbox.
        expect((yield* deleteWith(`${webhooks}/${failing.id}`, keyHeaders(company.apiKey))).status).toBe(204)
        const stopped = yield* Effect.flatMap(WebhookDeliveries, (engine) => engine.get(failingDelivery!))
        expect(stopped).toMatchObject({
          _tag: "Some",
          value: { status: "disabled", nextAttemptAt: null, lastError: "not sent: the endpoint was deleted" }
        })
        const sql = yield* SqlClient.SqlClient
        const secrets = yield* sql<{ secrets: number }>`SELECT count(signing_secret)::int AS secrets
          FROM webhook_deliveries WHERE endpoint_id = ${failing.id}`
        expect(secrets[0]!.secrets).toBe(0)
      })
    )
    it.scoped("a delivery whose job lost its lease while the receiver held it is not sent again", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const answer = yield* Deferred.make<void>()
        const receiver = yield* httpsReceiver(() => ({ status: 204, after: Effect.runPromise(Deferred.await(answer)) }))
        const company = yield* newCompany
        const endpoint = yield* createEndpoint(company.apiKey, receiver.url("/slow"), ["order-status-changed"])
        const [deliveryId] = yield* emitCommitted({
          companyId: company.companyId,
          environment: "test",
          accountId: company.accountId,
          eventType: "order-status-changed",
          subject: { orderId: "0123456789abcdef01234567" },
          eventData: { status: "completed" }
        })
        yield* startDeliveryWorker
        yield* eventually(
          Effect.sync(() => receiver.received.length),
          (n) => n === 1,
          "the first attempt to arrive"
        )

        // While the receiver holds it, the job's lease runs out (its worker could not renew it) and another
        // worker claims the job again.
        yield* sql`UPDATE jobs SET lease_expires_at = now() - interval '1 second'
          WHERE kind = 'webhook.deliver' AND key = ${deliveryId!}`
        yield* startDeliveryWorker
        const job = sql<{ status: string; attempts: number }>`SELECT status, attempts FROM jobs
          WHERE kind = 'webhook.deliver' AND key = ${deliveryId!}`
        yield* eventually(
          Effect.map(job, (rows) => ({ ...rows[0]!, sent: receiver.received.length })),
          (state) => state.sent > 1 || (state.attempts === 2 && state.status !== "running"),
          "the second run"
        )
        expect(receiver.received).toHaveLength(1)

        // The first attempt's response comes: it is recorded, and the job's next run finds it delivered.
        yield* Deferred.succeed(answer, undefined)
        yield* eventually(
          deliveriesOf(company.apiKey, endpoint.id),
          (rows) => rows[0]?.status === "delivered",
          "the first attempt's outcome"
        )
        yield* sql`UPDATE jobs SET run_at = now() WHERE kind = 'webhook.deliver' AND key = ${deliveryId!}`
        yield* Effect.flatMap(Signals, (signals) => signals.notify("jobs", "webhook.deliver"))
        yield* eventually(
          Effect.map(job, (rows) => rows[0]!.status),
          (status) => status === "succeeded",
          "the job"
        )
        expect(receiver.received).toHaveLength(1)
        const attempts = yield* Effect.flatMap(WebhookDeliveries, (engine) => engine.attempts(deliveryId!))
        expect(attempts).toMatchObject([{ attempt: 1, statusCode: 204, error: null }])
      })
    )
  })
})
