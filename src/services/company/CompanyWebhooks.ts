import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { AuditAction } from "../../domain/company/Audit.js"
import { type AccountScope, formatTimestamp } from "../../domain/company/Company.js"
import {
  WebhookDeliveryNotFound,
  WebhookEndpointDisabled,
  WebhookEndpointLimitReached,
  WebhookEndpointNotFound
} from "../../domain/company/Errors.js"
import {
  type CompanyDeliveryEventType,
  type CompanyEvent,
  type CompanyEventData,
  type CompanyEventType,
  maxWebhookEndpoints,
  type WebhookDisabledReason,
  type WebhookEndpointRecord,
  type WebhookEndpointStatus,
  webhookTestEventType
} from "../../domain/company/Webhooks.js"
import { type Id, makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { WebhookDeliveries } from "../checkout/WebhookDeliveries.js"
import { OutboundHttp } from "../platform/OutboundHttp.js"
import { nowDate } from "../platform/Time.js"
import { Audit } from "./Audit.js"
import { CompaniesRepo } from "./CompaniesRepo.js"
import { CompanyWebhooksRepo } from "./CompanyWebhooksRepo.js"

/**
 * Company webhooks (docs/decisions/0050-company-webhooks.md, docs/company-api.md "Webhooks"): a company's endpoints in
 * one environment, and `emit`, which the company's services call in the transaction of the change an event
 * reports. Each subscribed endpoint gets one delivery in the outbox of the one delivery engine
 * (`Webhooks`, docs/webhooks.md), signed `v1` with the endpoint's `whsec_` secret.
 *
 * Endpoints belong to the company and environment of the key: `Ribbon-Account-Id` does not narrow them.
 * The rows are `CompanyWebhooksRepo`'s.
 */

const endpointNotFound = (webhookId: string) =>
  new WebhookEndpointNotFound({ message: `No webhook endpoint ${webhookId}.`, webhookId })

/** A new `whsec_` secret: 32 random bytes, base64 (the Standard Webhooks form). */
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`

/** An endpoint with whether it is disabled, and why: by its company's request, or by its receiver's 410 Gone. */
export interface WebhookEndpoint extends WebhookEndpointRecord {
  readonly status: WebhookEndpointStatus
  readonly disabledReason: WebhookDisabledReason | null
}

/** Why an endpoint is disabled (its company's request first), or null. */
const disabledReasonOf = (endpoint: WebhookEndpointRecord, gone: boolean): WebhookDisabledReason | null =>
  endpoint.disabledAt !== null ? "requested" : gone ? "gone" : null

export class CompanyWebhooks extends Effect.Service<CompanyWebhooks>()("CompanyWebhooks", {
  dependencies: [
    CompanyWebhooksRepo.Default,
    CompaniesRepo.Default,
    WebhookDeliveries.Default,
    OutboundHttp.Default,
    Audit.Default
  ],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* CompanyWebhooksRepo
    const companies = yield* CompaniesRepo
    const webhooks = yield* WebhookDeliveries
    const outbound = yield* OutboundHttp
    const audit = yield* Audit
    /**
     * An endpoint's (or one of its deliveries') row in the audit log: endpoints belong to the company and
     * environment, not to an account.
     */
    const recordEndpoint = (scope: AccountScope, id: string, action: Extract<AuditAction, `webhook_${string}`>) =>
      audit.record({ companyId: scope.companyId, environment: scope.environment, accountId: null, action, target: id })

    const withStatus = Effect.fn("CompanyWebhooks.withStatus")(function* (
      endpoints: ReadonlyArray<WebhookEndpointRecord>
    ) {
      const gone = yield* webhooks.goneEndpoints(endpoints.map((endpoint) => endpoint.id))
      return endpoints.map((endpoint): WebhookEndpoint => {
        const disabledReason = disabledReasonOf(endpoint, gone.has(endpoint.id))
        return { ...endpoint, status: disabledReason === null ? "active" : "disabled", disabledReason }
      })
    })

    /**
     * A new endpoint for the scope's company and environment, with its secret (returned only here). At
     * most `maxWebhookEndpoints`, counted under the company row's lock so parallel creations cannot overshoot.
     */
    const create = Effect.fn("CompanyWebhooks.create")(function* (
      scope: AccountScope,
      input: { readonly url: string; readonly eventTypes: ReadonlyArray<CompanyEventType> }
    ) {
      // Outside the transaction: DNS may take a while, and nothing should wait on it holding a lock.
      yield* outbound.screen("url", input.url)
      const id = yield* makeId
      const secret = newSecret()
      const now = yield* nowDate
      const insert = Effect.gen(function* () {
        yield* companies.lock(scope.companyId)
        const count = yield* repo.count(scope)
        if (count >= maxWebhookEndpoints) {
          return yield* new WebhookEndpointLimitReached({
            message: `This company already has ${maxWebhookEndpoints} webhook endpoints in the ${scope.environment} environment; delete one first.`,
            limit: maxWebhookEndpoints
          })
        }
        const endpoint = yield* repo.insert({
          id,
          scope,
          url: input.url,
          eventTypes: input.eventTypes,
          secret,
          at: now
        })
        yield* recordEndpoint(scope, endpoint.id, "webhook_endpoint.created")
        return { endpoint, secret }
      })
      return yield* sql.withTransaction(insert).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    const findRecord = (scope: AccountScope, webhookId: string) =>
      Effect.gen(function* () {
        const found = yield* repo.find(scope, webhookId.toLowerCase())
        if (Option.isNone(found)) {
          return yield* endpointNotFound(webhookId)
        }
        return found.value
      })

    /** An endpoint of the scope's company and environment (404 otherwise). */
    const find = Effect.fn("CompanyWebhooks.find")(function* (scope: AccountScope, webhookId: string) {
      const [endpoint] = yield* withStatus([yield* findRecord(scope, webhookId)])
      return endpoint!
    })

    /** The endpoints of the scope's company and environment, oldest first, paged in SQL. */
    const page = Effect.fn("CompanyWebhooks.page")(function* (scope: AccountScope, query: V3Query) {
      const found = yield* repo.page(scope, query)
      return { ...found, rows: yield* withStatus(found.rows) }
    })

    /** Deletes an endpoint (404 if not the scope's): nothing more is sent to it, pending deliveries included. */
    const remove = Effect.fn("CompanyWebhooks.remove")(function* (scope: AccountScope, webhookId: string) {
      const now = yield* nowDate
      const id = webhookId.toLowerCase()
      const close = Effect.gen(function* () {
        if (!(yield* repo.remove(scope, id, now))) {
          return yield* endpointNotFound(webhookId)
        }
        yield* webhooks.closeEndpoint(id, "deleted")
        yield* recordEndpoint(scope, id, "webhook_endpoint.deleted")
      })
      return yield* sql.withTransaction(close).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * Disables an endpoint at its company's request, or enables it (404 if not the scope's). Disabling pauses it as
     * a 410 Gone does: its pending deliveries are disabled, and later events are recorded `disabled`, not sent.
     * Enabling sends later events again, also after a 410 Gone; what was disabled meanwhile is sent only when
     * resent. The endpoint as it now stands.
     */
    const setStatus = Effect.fn("CompanyWebhooks.setStatus")(function* (
      scope: AccountScope,
      webhookId: string,
      status: WebhookEndpointStatus
    ) {
      const now = yield* nowDate
      const id = webhookId.toLowerCase()
      const change = Effect.gen(function* () {
        const updated = yield* repo.setDisabled(scope, id, status === "disabled" ? now : null)
        if (Option.isNone(updated)) {
          return yield* endpointNotFound(webhookId)
        }
        yield* status === "disabled" ? webhooks.closeEndpoint(id, "disabled") : webhooks.reopenEndpoint(id)
        yield* recordEndpoint(
          scope,
          id,
          status === "disabled" ? "webhook_endpoint.disabled" : "webhook_endpoint.enabled"
        )
        const [endpoint] = yield* withStatus([updated.value])
        return endpoint!
      })
      return yield* sql.withTransaction(change).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * The scope's endpoint, with its secret, locked for the caller's transaction (so its status cannot change
     * meanwhile): 404 if not the scope's, 409 if it is disabled, since nothing would be sent to it.
     */
    const openEndpoint = (scope: AccountScope, webhookId: string) =>
      Effect.gen(function* () {
        const found = yield* repo.findSigning(scope, webhookId.toLowerCase())
        if (Option.isNone(found)) {
          return yield* endpointNotFound(webhookId)
        }
        const endpoint = found.value
        const gone = yield* webhooks.goneEndpoints([endpoint.id])
        const reason = disabledReasonOf(endpoint, gone.has(endpoint.id))
        if (reason !== null) {
          return yield* new WebhookEndpointDisabled({
            message:
              reason === "requested"
                ? `Webhook endpoint ${webhookId} is disabled; enable it (status "active") first.`
                : `Webhook endpoint ${webhookId} is disabled: its receiver answered 410 Gone. Enable it (status "active") first.`,
            webhookId,
            reason
          })
        }
        return endpoint
      })

    /** A delivery of the endpoint, by its `webhook-id` (404 when either is not the scope's). */
    const findDelivery = (endpointId: string, webhookId: string, deliveryId: string) =>
      Effect.flatMap(webhooks.endpointDelivery(endpointId, deliveryId.toLowerCase()), (found) =>
        Option.match(found, {
          onNone: () =>
            new WebhookDeliveryNotFound({
              message: `No delivery ${deliveryId} to webhook endpoint ${webhookId}.`,
              webhookId,
              deliveryId
            }),
          onSome: Effect.succeed
        })
      )

    /**
     * One delivery of an endpoint, by its `webhook-id`, with its attempts, oldest first: each with the headers it
     * was sent with, its latency and its response (404 when the endpoint or the delivery is not the scope's).
     */
    const delivery = Effect.fn("CompanyWebhooks.delivery")(function* (
      scope: AccountScope,
      webhookId: string,
      deliveryId: string
    ) {
      const endpoint = yield* findRecord(scope, webhookId)
      const found = yield* findDelivery(endpoint.id, webhookId, deliveryId)
      return { delivery: found, attempts: yield* webhooks.attempts(found.id) }
    })

    /**
     * Sends a delivery of the endpoint again, with the same `webhook-id` (docs/decisions/0058-webhook-resend-and-test-events.md),
     * whatever its outcome was: through the delivery engine's job, once this transaction commits. 404 when the
     * endpoint or the delivery is not the scope's, 409 when the endpoint is disabled. The delivery as it now stands.
     */
    const resend = Effect.fn("CompanyWebhooks.resend")(function* (
      scope: AccountScope,
      webhookId: string,
      deliveryId: string
    ) {
      const again = Effect.gen(function* () {
        const endpoint = yield* openEndpoint(scope, webhookId)
        const found = yield* findDelivery(endpoint.id, webhookId, deliveryId)
        const resent = yield* webhooks.resend(found.id)
        yield* recordEndpoint(scope, found.eventId, "webhook_delivery.resent")
        return yield* Option.match(resent, {
          onNone: () => Effect.dieMessage(`CompanyWebhooks.resend: delivery ${found.id} vanished`),
          onSome: Effect.succeed
        })
      })
      return yield* sql.withTransaction(again).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * Records a `webhook-test` event for this endpoint alone, whatever types it subscribes to, delivered as any
     * other event (404 if not the scope's, 409 if disabled). `eventData` is `{companyId, accountId: null,
     * webhookId}`. The new delivery.
     */
    const sendTest = Effect.fn("CompanyWebhooks.sendTest")(function* (scope: AccountScope, webhookId: string) {
      const test = Effect.gen(function* () {
        const endpoint = yield* openEndpoint(scope, webhookId)
        const triggeredAt = formatTimestamp(yield* nowDate)
        const id = yield* enqueueFor(
          endpoint,
          webhookTestEventType,
          { companyId: endpoint.companyId, accountId: null, webhookId: endpoint.id },
          triggeredAt
        )
        yield* recordEndpoint(scope, endpoint.id, "webhook_endpoint.tested")
        const made = yield* webhooks.get(id)
        return yield* Option.match(made, {
          onNone: () => Effect.dieMessage(`CompanyWebhooks.sendTest: delivery ${id} vanished`),
          onSome: Effect.succeed
        })
      })
      return yield* sql.withTransaction(test).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * An endpoint's deliveries, newest first, with each one's latest latency (`latencies`, by delivery id); 404
     * if the endpoint is not the scope's.
     */
    const deliveries = Effect.fn("CompanyWebhooks.deliveries")(function* (
      scope: AccountScope,
      webhookId: string,
      query: V3Query
    ) {
      const endpoint = yield* findRecord(scope, webhookId)
      return yield* webhooks.endpointDeliveries(endpoint.id, query)
    })

    /**
     * One delivery of an event to one endpoint, in the outbox of the one delivery engine: the body is
     * `{webhookData: {id, eventType, target, triggeredAt}, eventData}`, `id` the delivery's own (and its
     * `webhook-id` header), signed `v1` with the endpoint's secret.
     */
    const enqueueFor = (
      endpoint: {
        readonly id: string
        readonly url: string
        readonly secret: string
        readonly disabledAt: Date | null
      },
      eventType: CompanyDeliveryEventType,
      eventData: { readonly [key: string]: unknown },
      triggeredAt: string
    ) =>
      Effect.flatMap(makeId, (id) =>
        webhooks.enqueue({
          url: endpoint.url,
          eventId: id,
          eventType,
          payload: { webhookData: { id, eventType, target: endpoint.url, triggeredAt }, eventData },
          endpoint: { id: endpoint.id, secret: endpoint.secret, disabled: endpoint.disabledAt !== null }
        })
      )

    /**
     * Records a company-wide event of the catalog (`stock-availability-updates`) for every endpoint of every
     * company and environment subscribed to its type, in the caller's transaction. `eventData` gets each
     * endpoint's `companyId` and a null `accountId`. The deliveries' ids.
     */
    const broadcast = Effect.fn("CompanyWebhooks.broadcast")(function* (
      eventType: CompanyEventType,
      data: CompanyEventData
    ) {
      yield* Effect.annotateCurrentSpan({ "webhook.event_type": eventType })
      const endpoints = yield* repo.subscribedTo(eventType)
      if (endpoints.length === 0) return []
      const triggeredAt = formatTimestamp(yield* nowDate)
      return yield* Effect.forEach(endpoints, (endpoint) =>
        enqueueFor(endpoint, eventType, { companyId: endpoint.companyId, accountId: null, ...data }, triggeredAt)
      )
    })

    /**
     * The deliveries of `events` (of one company and environment), in the caller's transaction: the endpoints
     * subscribed to any of their types read once, then for each event in turn one delivery to each endpoint
     * subscribed to its type, oldest endpoint first. The deliveries' ids.
     */
    const deliver = (events: ReadonlyArray<CompanyEvent>) =>
      Effect.gen(function* () {
        const first = events[0]
        if (first === undefined) return []
        if (events.some((event) => event.companyId !== first.companyId || event.environment !== first.environment)) {
          return yield* Effect.dieMessage("CompanyWebhooks: events of one change belong to one company and environment")
        }
        const types = [...new Set(events.map((event) => event.eventType))]
        const endpoints = yield* repo.subscribedIn(first.companyId, first.environment, types)
        if (endpoints.length === 0) return []
        const triggeredAt = formatTimestamp(yield* nowDate)
        const ids: Array<Id> = []
        for (const event of events) {
          const eventData = {
            companyId: event.companyId,
            accountId: event.accountId,
            ...event.subject,
            ...event.eventData
          }
          for (const endpoint of endpoints) {
            if (!endpoint.eventTypes.includes(event.eventType)) continue
            ids.push(yield* enqueueFor(endpoint, event.eventType, eventData, triggeredAt))
          }
        }
        return ids
      })

    /**
     * Records `event` for every endpoint of its company and environment subscribed to its type: one
     * delivery each, in the caller's transaction, so it is delivered if and only if the change commits.
     * The body is `{webhookData: {id, eventType, target, triggeredAt}, eventData: {companyId, accountId,
     * orderId | giftId, …eventData}}`; `id` (also the `webhook-id` header) is the delivery's own. Returns
     * the deliveries' ids.
     */
    const emit = Effect.fn("CompanyWebhooks.emit")(function* (event: CompanyEvent) {
      yield* Effect.annotateCurrentSpan({ "webhook.event_type": event.eventType })
      return yield* deliver([event])
    })

    /**
     * Records the events of one change (one company and environment), as `emit` does each, in their order,
     * with one read of the endpoints for all of them.
     */
    const emitAll = Effect.fn("CompanyWebhooks.emitAll")(function* (events: ReadonlyArray<CompanyEvent>) {
      yield* Effect.annotateCurrentSpan({ "webhook.event_type": events.map((event) => event.eventType).join(",") })
      return yield* deliver(events)
    })

    return {
      create,
      find,
      page,
      remove,
      setStatus,
      deliveries,
      delivery,
      resend,
      sendTest,
      emit,
      emitAll,
      broadcast
    } as const
  })
}) {}
