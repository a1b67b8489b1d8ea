import { SqlClient } from "@effect/sql"
import { Effect, Option, Schedule, Schema } from "effect"
import type { AddressInput } from "../../domain/catalog/Address.js"
import { VariantNotFound } from "../../domain/catalog/Errors.js"
import type { Account, AccountScope, RequestSource } from "../../domain/company/Company.js"
import {
  BillingMethodNotFound,
  CompanyOrderNotFound,
  NotShippableToCountry,
  OrderAlreadyClosed,
  OrderKeyReused,
  OrderNotCancellable,
  ShippingAddressInvalid,
  SimulationRefused,
  VariantUnavailable
} from "../../domain/company/Errors.js"
import {
  asPlaced,
  type CompanyOrderRecord,
  type CompanyOrderTimeline,
  cancellable,
  fulfillmentStatusOf,
  type Metadata,
  nextShipmentStatus,
  orderStatusOf,
  type ShipmentStatus,
  ShipmentStatus as ShipmentStatusSchema
} from "../../domain/company/Orders.js"
import type { CompanyEvent } from "../../domain/company/Webhooks.js"
import type { BookingRecord } from "../../domain/fulfillment/Orders.js"
import { InvalidRequest, ServiceUnavailable } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { Addresses } from "../catalog/Addresses.js"
import { Catalog } from "../catalog/Catalog.js"
import { landedAmounts, landedInput, Pricing, toUsd } from "../catalog/Pricing.js"
import { Fulfillment } from "../fulfillment/Fulfillment.js"
import { fingerprintOf, KeyTaken, withIdempotency } from "../platform/Idempotency.js"
import { JobKind, Jobs } from "../platform/Jobs.js"
import { nowDate } from "../platform/Time.js"
import { Accounts } from "./Accounts.js"
import { Audit } from "./Audit.js"
import { Billing, noDefaultMethod } from "./Billing.js"
import { CompanyOrdersRepo } from "./CompanyOrdersRepo.js"
import { CompanyWebhooks } from "./CompanyWebhooks.js"

/**
 * Company orders, version 3 (docs/decisions/0039-v3-orders.md, docs/company-api.md "Orders"): one variant for one
 * recipient, placed in one idempotent call. The checks run in the order docs/decisions/0039-v3-orders.md gives (the
 * body is the HTTP layer's): account and billing method (404), variant (404), ships to the country (422), address valid
 * for the country (422), funds (422); then the debit, the booking with the fulfillment partner (the Fulfillment
 * service) and the order row commit in one transaction.
 *
 * The shipment moves `orderReceived → processing → inTransit → outForDelivery → delivered`; each move but
 * `outForDelivery` (the carrier's last-mile scan) is a step of the partner's booking. `live` orders move
 * on their own, one step every `progressEvery` (the `company-order.advance` job); `test` orders move only
 * when the sandbox control says so (`simulate`), so an integration test decides what happens when.
 */

/** One step of a live order's shipment. */
export const AdvanceCompanyOrder = JobKind.make(
  "company-order.advance",
  Schema.Struct({ orderId: Schema.String, from: ShipmentStatusSchema })
)

export interface OrderRequest {
  readonly variantId: string
  readonly recipient: {
    readonly firstName: string
    readonly lastName: string
    readonly email: string
    readonly phone: string
  }
  readonly shippingAddress: {
    readonly address1: string
    readonly address2?: string | undefined
    readonly city: string
    readonly provinceCode?: string | undefined
    readonly postalCode?: string | undefined
    readonly countryCode: string
  }
  readonly idempotencyKey: string
  readonly billingMethodId?: string | undefined
  readonly accountId?: string | undefined
  readonly tags: ReadonlyArray<string>
  readonly metadata: Metadata | null
  /** The v2 gift whose claim this order is (`giftId` on the order). */
  readonly giftId?: string | undefined
  /** Whether the gift's campaign hides the recipient's address from the company as they give it. */
  readonly addressHidden?: boolean | undefined
  /** A swapped gift's order: the campaign's product the recipient swapped for this one, and its title. */
  readonly swappedFrom?: { readonly productId: string; readonly title: string } | undefined
}

/** Who places the order: the request's scope, the account its header named, and its `Request-Source`. */
export interface OrderCaller {
  readonly scope: AccountScope
  readonly account: Option.Option<Account>
  readonly source: RequestSource | null
}

/** The booking's step that each shipment move makes, if any. */
const supplierStep: Partial<Record<ShipmentStatus, "placed" | "processing" | "shipped">> = {
  processing: "placed",
  inTransit: "processing",
  delivered: "shipped"
}

export class CompanyOrders extends Effect.Service<CompanyOrders>()("CompanyOrders", {
  dependencies: [
    Accounts.Default,
    Billing.Default,
    Addresses.Default,
    Pricing.Default,
    Fulfillment.Default,
    Jobs.Default,
    CompanyWebhooks.Default,
    Catalog.Default,
    CompanyOrdersRepo.Default,
    Audit.Default
  ],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const billing = yield* Billing
    const addresses = yield* Addresses
    const pricing = yield* Pricing
    const fulfillment = yield* Fulfillment
    const jobs = yield* Jobs
    const webhooks = yield* CompanyWebhooks
    const catalog = yield* Catalog
    const repo = yield* CompanyOrdersRepo
    const audit = yield* Audit

    /** An order's row in the audit log. */
    const recordOrder = (order: CompanyOrderRecord, action: "order.created" | "order.cancelled" | "order.simulated") =>
      audit.record({
        companyId: order.companyId,
        environment: order.environment,
        accountId: order.accountId,
        action,
        target: order.id
      })

    /**
     * The webhook events of a change to an order (`before` null: it was placed), in the change's transaction:
     * `order-created`; `order-fulfillment-status-changed` when the shipment moved; `order-status-changed` when
     * the order's status did; `order-cancelled` when it was cancelled. Each carries the order's statuses now.
     */
    const emitChange = (before: CompanyOrderRecord | null, after: CompanyOrderRecord) => {
      const types = [
        ...(before === null ? (["order-created"] as const) : []),
        ...(before !== null && before.shipmentStatus !== after.shipmentStatus
          ? (["order-fulfillment-status-changed"] as const)
          : []),
        ...(before !== null && before.status !== after.status ? (["order-status-changed"] as const) : []),
        ...(before !== null && after.status === "cancelled" && before.status !== "cancelled"
          ? (["order-cancelled"] as const)
          : [])
      ]
      const eventData = {
        status: after.status,
        fulfillmentStatus: fulfillmentStatusOf(after.shipmentStatus),
        shipmentStatus: after.shipmentStatus
      }
      const of = { companyId: after.companyId, environment: after.environment, accountId: after.accountId }
      // A claimed gift's order also tells the gift's subscribers where its delivery stands.
      const giftDelivery: ReadonlyArray<CompanyEvent> =
        after.giftId !== null && before !== null && before.shipmentStatus !== after.shipmentStatus
          ? [
              {
                ...of,
                eventType: "gift-delivery-status-changed" as const,
                subject: { giftId: after.giftId },
                eventData
              }
            ]
          : []
      return Effect.asVoid(
        webhooks.emitAll([
          ...types.map((eventType): CompanyEvent => ({ ...of, eventType, subject: { orderId: after.id }, eventData })),
          ...giftDelivery
        ])
      )
    }

    /** The account the order is for: the header's, else the body's, else the only or default one in reach. */
    const accountFor = (caller: OrderCaller, request: OrderRequest) =>
      Effect.gen(function* () {
        if (Option.isSome(caller.account)) return caller.account.value
        if (request.accountId !== undefined) return yield* accounts.find(caller.scope, request.accountId)
        const reachable = yield* accounts.defaultIn(caller.scope)
        if (Option.isNone(reachable)) {
          return yield* InvalidRequest.field("accountId", "Name the account with Ribbon-Account-Id or accountId.")
        }
        return reachable.value
      })

    /**
     * The account the order is for and the billing method it is charged to (404 when either is not there):
     * the named method, or the account's default one, read with the account when no header named it.
     */
    const chargedTo = (caller: OrderCaller, request: OrderRequest) =>
      Effect.gen(function* () {
        if (request.billingMethodId !== undefined) {
          const account = yield* accountFor(caller, request)
          const method = yield* billing.find(caller.scope, request.billingMethodId)
          if (method.accountId !== account.id) {
            return yield* new BillingMethodNotFound({
              message: `Billing method ${method.id} does not belong to account ${account.id}.`,
              billingMethodId: method.id
            })
          }
          return { account, method }
        }
        if (Option.isSome(caller.account)) {
          const account = caller.account.value
          return { account, method: yield* billing.defaultOf(account.id) }
        }
        const found = yield* accounts.withDefaultMethod(caller.scope, request.accountId)
        if (Option.isNone(found)) {
          return yield* InvalidRequest.field("accountId", "Name the account with Ribbon-Account-Id or accountId.")
        }
        const { account, method } = found.value
        if (Option.isNone(method)) return yield* noDefaultMethod(account.id)
        return { account, method: method.value }
      })

    /** The variant as an order needs it (the catalog's `OrderVariant`), if there is one. */
    const variantFor = (variantId: string) => catalog.orderVariant(variantId)

    /**
     * The checks after the account and billing method (`chargedTo`), before anything is written, in the decided
     * order; what the order will be.
     */
    const prepare = (
      request: OrderRequest,
      { account, method }: Effect.Effect.Success<ReturnType<typeof chargedTo>>,
      recipientPhone: string
    ) =>
      Effect.gen(function* () {
        const { countryCode } = request.shippingAddress
        const found = yield* variantFor(request.variantId)
        if (Option.isNone(found)) {
          return yield* new VariantNotFound({
            message: `No variant ${request.variantId}.`,
            variantId: request.variantId
          })
        }
        const variant = found.value
        if (variant.shipsTo === null || !variant.shipsTo.includes(countryCode)) {
          return yield* new NotShippableToCountry({
            message: `Variant ${request.variantId} does not ship to ${countryCode}.`,
            variantId: request.variantId,
            countryCode
          })
        }
        // A digital item is delivered online: it needs only the country (as a digital-only checkout does).
        const validation = variant.isDigital
          ? { result: "verified" as const, address: { countryCode: countryCode.toUpperCase() } as AddressInput }
          : yield* addresses.validate(request.shippingAddress)
        if (validation.result !== "verified") {
          return yield* new ShippingAddressInvalid({ message: validation.message, issues: validation.issues })
        }
        // The landed price of one unit (docs/pricing.md), as `Pricing.quote` gives it, from the row read above.
        const reference = yield* pricing.reference()
        const country = reference.country.get(countryCode.toUpperCase())
        if (country === undefined) return yield* Effect.dieMessage(`Country ${countryCode} is not supported.`)
        const { priceUsd } = variant
        if (priceUsd === null) return yield* Effect.dieMessage(`Variant ${request.variantId} is not for sale.`)
        const unitPrice = landedAmounts(
          landedInput(
            reference,
            { ...variant, variantId: request.variantId, priceUsd, shipsTo: variant.shipsTo },
            country
          )
        ).total
        const charged = toUsd(unitPrice, country.fxRate, country.digits)
        // Judged again under the method's lock when debited; this answers before anything is written.
        yield* billing.ensureFunds(method, charged)
        return {
          account,
          method,
          productId: variant.productId,
          productTitle: variant.productTitle,
          variantTitle: variant.variantTitle,
          unitPrice,
          currency: country.currency,
          charged,
          recipientPhone,
          address: validation.address,
          digital: variant.isDigital
        }
      })

    /** The supplier's booking, retried on its transient failures; its refusals are the order's 422s. */
    const book = (orderId: string, request: OrderRequest, order: Effect.Effect.Success<ReturnType<typeof prepare>>) =>
      fulfillment
        // The key is made from the new order's id, so no booking has it yet: `bookNew` skips the lookup by key.
        // The request's own key is held by `withIdempotency`'s lock and the unique index of `company_orders`.
        .bookNew({
          idempotencyKey: `company-order:${orderId}`,
          variantId: request.variantId,
          productId: order.productId,
          productTitle: order.productTitle,
          variantTitle: order.variantTitle,
          quantity: 1,
          amount: order.unitPrice,
          currency: order.currency,
          countryCode: request.shippingAddress.countryCode
        })
        .pipe(
          Effect.retry({
            while: (e) => e._tag === "FulfillmentUnavailable",
            schedule: Schedule.exponential("100 millis").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(3)))
          }),
          Effect.catchTags({
            FulfillmentUnavailable: () =>
              new ServiceUnavailable({
                message: "The supplier is unavailable; retry with the same key.",
                retryAfterSeconds: 5
              }),
            FulfillmentRejected: (e) =>
              e.reason === "not_shippable"
                ? new NotShippableToCountry({
                    message: e.message,
                    variantId: request.variantId,
                    countryCode: request.shippingAddress.countryCode
                  })
                : new VariantUnavailable({ message: e.message, variantId: request.variantId })
          })
        )

    /** Places an order, or replays the one its idempotency key made (`replayed`). */
    const place = Effect.fn("CompanyOrders.place")(function* (caller: OrderCaller, request: OrderRequest) {
      const recipientPhone = yield* addresses
        .validatePhone(request.recipient.phone)
        .pipe(Effect.mapError((e) => InvalidRequest.field("recipient.phone", e.message)))
      // The account is resolved before the key is looked up, so that the fingerprint holds the account the
      // order is for rather than how the request named it (`Ribbon-Account-Id`, `accountId`, or neither). Whether
      // the address is hidden is the campaign's doing, not the request's: a replay after it changed is the same.
      const charged = yield* chargedTo(caller, request)
      const { accountId: _named, addressHidden: _hidden, ...asked } = request
      const fingerprint = fingerprintOf({ ...asked, accountId: charged.account.id })
      const made = yield* withIdempotency(
        {
          scope: `company:${caller.scope.companyId}:${caller.scope.environment}`,
          key: request.idempotencyKey,
          fingerprint,
          noun: "order",
          find: Effect.map(
            repo.findByKey(caller.scope, request.idempotencyKey),
            Option.map((order) => ({ fingerprint: order.fingerprint, result: asPlaced(order) }))
          )
        },
        (claimKey) =>
          Effect.gen(function* () {
            const order = yield* prepare(request, charged, recipientPhone)
            const id = yield* makeId
            const now = yield* nowDate
            // A digital order keeps its country alone: nothing is delivered to a street, and what a request gave
            // for one was never validated (docs/decisions/0073-gifts-that-reach-any-country.md).
            const given = order.digital ? undefined : request.shippingAddress
            const insert = Effect.gen(function* () {
              yield* claimKey
              const booking = yield* book(id, request, order)
              const written = yield* repo.insert({
                id,
                companyId: caller.scope.companyId,
                environment: caller.scope.environment,
                accountId: order.account.id,
                billingMethodId: order.method.id,
                idempotencyKey: request.idempotencyKey,
                fingerprint,
                status: "active",
                shipmentStatus: "orderReceived",
                supplierOrderId: booking.id,
                variantId: request.variantId,
                productId: order.productId,
                title: `${order.productTitle} — ${order.variantTitle}`,
                quantity: 1,
                unitPrice: order.unitPrice,
                total: order.unitPrice,
                currency: order.currency,
                charged: order.charged,
                recipientFirstName: request.recipient.firstName,
                recipientLastName: request.recipient.lastName,
                recipientEmail: request.recipient.email,
                recipientPhone: order.recipientPhone,
                address1: order.address.address1 ?? given?.address1 ?? null,
                address2: order.address.address2 ?? null,
                city: order.address.city ?? given?.city ?? null,
                provinceCode: order.address.provinceCode ?? null,
                postalCode: order.address.postalCode ?? null,
                countryCode: order.address.countryCode,
                tags: JSON.stringify(request.tags),
                metadata: request.metadata === null ? null : JSON.stringify(request.metadata),
                source: caller.source,
                giftId: request.giftId ?? null,
                addressHiddenAtClaim: request.addressHidden ?? false,
                swappedFromProductId: request.swappedFrom?.productId ?? null,
                swappedFromTitle: request.swappedFrom?.title ?? null,
                createdAt: now,
                updatedAt: now
              })
              if (Option.isNone(written)) return yield* new KeyTaken()
              const inserted = written.value
              yield* repo.recordStatus(inserted.id, "orderReceived", now)
              yield* emitChange(null, inserted)
              // A gift's order is recorded as the gift's claim, by the Gifts operation that placed it.
              if (request.giftId === undefined) yield* recordOrder(inserted, "order.created")
              if (caller.scope.environment === "live") yield* scheduleNext(inserted)
              // Last, so the billing method's row is locked only until the commit that follows.
              yield* billing.debit(order.method.id, order.charged, { type: "order", id, reason: "order placed" })
              return inserted
            })
            return yield* sql.withTransaction(insert).pipe(Effect.catchTag("SqlError", Effect.die))
          })
      ).pipe(
        Effect.catchTag("IdempotencyKeyReused", (e) =>
          Effect.fail(new OrderKeyReused({ message: e.message, idempotencyKey: request.idempotencyKey }))
        )
      )
      yield* Effect.annotateCurrentSpan({ "company_order.id": made.result.id, "idempotency.replayed": made.replayed })
      return made
    })

    /** An order on an account the scope reaches (404 otherwise). */
    const get = Effect.fn("CompanyOrders.get")(function* (scope: AccountScope, orderId: string) {
      const found = yield* repo.find(scope, orderId)
      if (Option.isNone(found)) return yield* new CompanyOrderNotFound({ message: `No order ${orderId}.`, orderId })
      return found.value
    })

    /**
     * An order on an account the scope reaches (404 otherwise) with when its shipment reached each status, oldest
     * first (docs/decisions/0066-dashboard-orders.md): every change since placement is recorded with its time.
     */
    const timeline = Effect.fn("CompanyOrders.timeline")(function* (scope: AccountScope, orderId: string) {
      const order = yield* get(scope, orderId)
      const statuses = yield* repo.statuses(order.id)
      return { order, statuses } satisfies CompanyOrderTimeline
    })

    /** The orders of the accounts the scope reaches, filtered, sorted and paged in SQL. */
    const page = Effect.fn("CompanyOrders.page")(function* (scope: AccountScope, query: V3Query) {
      return yield* repo.page(scope, query)
    })

    /** Locks the order's row for a change; the change sees it as it is now. */
    const locked = (orderId: string) => repo.lock(orderId)

    const update = (orderId: string, set: Record<string, unknown>) =>
      Effect.flatMap(nowDate, (now) => repo.update(orderId, set, now))

    /** Ends an order that will not be delivered: the booking released (if the supplier still can) and the money credited. */
    const close = (order: CompanyOrderRecord, to: "cancelled" | "failed", reason: string) =>
      Effect.gen(function* () {
        if (cancellable(order.shipmentStatus)) {
          yield* fulfillment.cancelBooking(order.supplierOrderId).pipe(Effect.catchAll(() => Effect.void))
        }
        yield* billing.credit(order.billingMethodId, order.charged, { type: "order", id: order.id, reason })
        const now = yield* nowDate
        const closed = yield* update(order.id, {
          shipmentStatus: to,
          status: orderStatusOf(to),
          cancelledAt: now,
          cancellationReason: reason
        })
        yield* repo.recordStatus(closed.id, to, closed.updatedAt)
        yield* emitChange(order, closed)
        return closed
      })

    /**
     * Cancels an order until its shipment is `inTransit` (then 422), crediting its billing method; a
     * cancelled or refunded order is a 422 too.
     */
    const cancel = Effect.fn("CompanyOrders.cancel")(function* (
      scope: AccountScope,
      orderId: string,
      reason: string | undefined
    ) {
      const found = yield* get(scope, orderId)
      return yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const order = yield* locked(found.id)
            if (order.status === "cancelled" || order.status === "refunded") {
              return yield* new OrderAlreadyClosed({
                message: `Order ${order.id} is already ${order.status}.`,
                orderId: order.id,
                status: order.status
              })
            }
            if (!cancellable(order.shipmentStatus)) {
              return yield* new OrderNotCancellable({
                message: `Order ${order.id} is ${order.shipmentStatus}; it can no longer be cancelled.`,
                orderId: order.id,
                fulfillmentStatus: order.shipmentStatus
              })
            }
            const closed = yield* close(order, "cancelled", reason ?? "Cancelled by the company")
            yield* recordOrder(closed, "order.cancelled")
            return closed
          })
        )
        .pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** Moves the shipment one step on (or to `failed`), with the partner's booking where a step has one. */
    const move = (order: CompanyOrderRecord, to: ShipmentStatus) =>
      Effect.gen(function* () {
        if (to === "failed") return yield* close(order, "failed", "The shipment failed; the order was refunded.")
        const from = supplierStep[to]
        const booking: Option.Option<BookingRecord> =
          from === undefined ? Option.none() : yield* fulfillment.advanceBooking(order.supplierOrderId, { from })
        const tracking = Option.match(booking, {
          onNone: () => ({}),
          onSome: (row) => ({
            carrier: row.carrier,
            trackingNumber: row.trackingNumber,
            trackingUrl: row.trackingUrl,
            shippedAt: row.shippedAt,
            deliveredAt: row.deliveredAt
          })
        })
        const moved = yield* update(order.id, { shipmentStatus: to, status: orderStatusOf(to), ...tracking })
        yield* repo.recordStatus(moved.id, to, moved.updatedAt)
        yield* emitChange(order, moved)
        if (order.environment === "live") yield* scheduleNext(moved)
        return moved
      })

    const scheduleNext = (order: CompanyOrderRecord) =>
      nextShipmentStatus(order.shipmentStatus) === undefined
        ? Effect.void
        : jobs.enqueue(
            AdvanceCompanyOrder,
            { orderId: order.id, from: order.shipmentStatus },
            { key: `${order.id}:${order.shipmentStatus}`, delay: fulfillment.progressEvery }
          )

    /** A live order's next step (the `company-order.advance` job), if it is still `from`. */
    const advance = Effect.fn("CompanyOrders.advance")(function* (orderId: string, from: ShipmentStatus) {
      return yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const order = yield* locked(orderId)
            const to = nextShipmentStatus(order.shipmentStatus)
            if (order.shipmentStatus !== from || to === undefined) return Option.none<CompanyOrderRecord>()
            return Option.some(yield* move(order, to))
          })
        )
        .pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * The sandbox control (`test` orders only): moves the shipment to `to`, which must be its next step, or
     * `failed` from any step before `delivered` (refunding the order).
     */
    const simulate = Effect.fn("CompanyOrders.simulate")(function* (
      scope: AccountScope,
      orderId: string,
      to: ShipmentStatus
    ) {
      const found = yield* get(scope, orderId)
      return yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const order = yield* locked(found.id)
            const next = nextShipmentStatus(order.shipmentStatus)
            const allowed = next !== undefined && (to === next || to === "failed")
            if (!allowed || order.status !== "active") {
              return yield* new SimulationRefused({
                message: `Order ${order.id} is ${order.shipmentStatus}; ${next === undefined ? "it cannot move any more" : `it can move to ${next} or failed`}.`,
                orderId: order.id,
                from: order.shipmentStatus,
                to
              })
            }
            const moved = yield* move(order, to)
            yield* recordOrder(moved, "order.simulated")
            return moved
          })
        )
        .pipe(Effect.catchTags({ SqlError: Effect.die, FulfillmentUnavailable: Effect.die }))
    })

    const handler = AdvanceCompanyOrder.handle(({ from, orderId }) => advance(orderId, from))

    return { place, get, timeline, page, cancel, simulate, advance, handler } as const
  })
}) {}
