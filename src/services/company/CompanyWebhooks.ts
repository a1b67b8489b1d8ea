import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { type AccountScope, formatTimestamp } from "../../domain/company/Company.js"
import { WebhookEndpointLimitReached, WebhookEndpointNotFound } from "../../domain/company/Errors.js"
import {
  type CompanyEvent,
  type CompanyEventData,
  type CompanyEventType,
  maxWebhookEndpoints,
  type WebhookEndpointRecord,
  type WebhookEndpointStatus
} from "../../domain/company/Webhooks.js"
import { type Id, makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { WebhookDeliveries } from "../checkout/WebhookDeliveries.js"
import { OutboundHttp } from "../platform/OutboundHttp.js"
import { nowDate } from "../platform/Time.js"
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

/** A new `whsec_` secret: 32 random bytes, base64 (the Standard Webhooks form). */
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`

/** An endpoint with whether a 410 Gone from its receiver has disabled it. */
export interface WebhookEndpoint extends WebhookEndpointRecord {
  readonly status: WebhookEndpointStatus
}

export class CompanyWebhooks extends Effect.Service<CompanyWebhooks>()("CompanyWebhooks", {
  dependencies: [CompanyWebhooksRepo.Default, CompaniesRepo.Default, WebhookDeliveries.Default, OutboundHttp.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* CompanyWebhooksRepo
    const companies = yield* CompaniesRepo
    const webhooks = yield* WebhookDeliveries
    const outbound = yield* OutboundHttp

    const withStatus = Effect.fn("CompanyWebhooks.withStatus")(function* (
      endpoints: ReadonlyArray<WebhookEndpointRecord>
    ) {
      const disabled = yield* webhooks.disabledEndpoints(endpoints.map((endpoint) => endpoint.id))
      return endpoints.map(
        (endpoint): WebhookEndpoint => ({ ...endpoint, status: disabled.has(endpoint.id) ? "disabled" : "active" })
      )
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
        return { endpoint, secret }
      })
      return yield* sql.withTransaction(insert).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    const findRecord = (scope: AccountScope, webhookId: string) =>
      Effect.gen(function* () {
        const found = yield* repo.find(scope, webhookId.toLowerCase())
        if (Option.isNone(found)) {
          return yield* new WebhookEndpointNotFound({ message: `No webhook endpoint ${webhookId}.`, webhookId })
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
          return yield* new WebhookEndpointNotFound({ message: `No webhook endpoint ${webhookId}.`, webhookId })
        }
        yield* webhooks.closeEndpoint(id)
      })
      return yield* sql.withTransaction(close).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** An endpoint's deliveries, newest first (404 if the endpoint is not the scope's). */
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
      endpoint: { readonly id: string; readonly url: string; readonly secret: string },
      eventType: CompanyEventType,
      eventData: { readonly [key: string]: unknown },
      triggeredAt: string
    ) =>
      Effect.flatMap(makeId, (id) =>
        webhooks.enqueue({
          url: endpoint.url,
          eventId: id,
          eventType,
          payload: { webhookData: { id, eventType, target: endpoint.url, triggeredAt }, eventData },
          endpoint: { id: endpoint.id, secret: endpoint.secret }
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

    return { create, find, page, remove, deliveries, emit, emitAll, broadcast } as const
  })
}) {}
