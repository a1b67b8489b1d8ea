import { Context, Data, type Duration, type Effect, type Option } from "effect"
import type { OrderStatus } from "../../domain/checkout/Checkout.js"
import type { BookingRecord, Tracking } from "../../domain/fulfillment/Orders.js"

/**
 * The fulfillment partner: the supplier that ships what Ribbon orders (docs/operations.md, "Payment and
 * fulfillment providers"). A port: the Fulfillment service calls it and keeps the orders; an adapter
 * implements it for one supplier. The one shipped is the simulator (`src/services/simulators/FulfillmentSimulator.ts`),
 * chosen in src/layers by `FULFILLMENT_PARTNER`.
 */

/** The partner could not take the request just now: retry later (with a Schedule). */
export class FulfillmentUnavailable extends Data.TaggedError("FulfillmentUnavailable")<{
  readonly variantId: string
  readonly message: string
}> {}

/**
 * Why the partner refuses for good: it has not the stock (`out_of_stock`), does not ship there
 * (`not_shippable`), or, asked to cancel, has already sent the order (`shipped`).
 */
export type FulfillmentRejectionReason = "out_of_stock" | "not_shippable" | "shipped"

/** The partner refuses the request for good. */
export class FulfillmentRejected extends Data.TaggedError("FulfillmentRejected")<{
  readonly reason: FulfillmentRejectionReason
  readonly variantId: string
  readonly message: string
}> {}

/** What the partner is asked to ship. */
export interface PartnerOrder {
  /** The same key always names the same order: a submission retried with it must not ship twice. */
  readonly idempotencyKey: string
  readonly variantId: string
  readonly productId: string
  readonly productTitle: string
  readonly variantTitle: string
  /** A positive integer. */
  readonly quantity: number
  /** Minor units of `currency`. */
  readonly amount: number
  readonly currency: string
  /** Where the order ships. */
  readonly countryCode: string
}

/** Where an order has got to at the partner: a later status, and how it ships once `shipped`. */
export interface Progress {
  readonly status: OrderStatus
  /** Set when `status` is `shipped` (the tracking is kept from then on). */
  readonly tracking: Option.Option<Tracking>
}

export interface FulfillmentPartnerShape {
  /** How often Ribbon asks for an order's progress (the `order.advance` and `company-order.advance` jobs). */
  readonly progressEvery: Duration.Duration
  /**
   * Takes an order, idempotently by its key. Fails with `FulfillmentUnavailable` (transient: Ribbon retries
   * with the same key) or `FulfillmentRejected` (`out_of_stock`, `not_shippable`).
   */
  readonly submit: (order: PartnerOrder) => Effect.Effect<void, FulfillmentUnavailable | FulfillmentRejected>
  /**
   * Where the order stands now, if it has moved on from the status Ribbon knows (`order.status`); none when
   * there is no news. Ribbon asks every `progressEvery` until the order is delivered or cancelled.
   */
  readonly progress: (order: BookingRecord) => Effect.Effect<Option.Option<Progress>, FulfillmentUnavailable>
  /**
   * Cancels an order that is `placed` or `processing` at Ribbon; cancelling one already cancelled succeeds.
   * `FulfillmentRejected` (`shipped`) when it has left the partner.
   */
  readonly cancel: (order: BookingRecord) => Effect.Effect<void, FulfillmentUnavailable | FulfillmentRejected>
}

export class FulfillmentPartner extends Context.Tag("FulfillmentPartner")<
  FulfillmentPartner,
  FulfillmentPartnerShape
>() {}
