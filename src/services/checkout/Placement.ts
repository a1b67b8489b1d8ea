import { Context, Effect, Exit, FiberSet, Metric, MetricBoundaries, Option, Schedule } from "effect"
import type { CheckoutItemRecord, CheckoutRecord } from "../../domain/checkout/Records.js"
import type { OrderRecord } from "../../domain/fulfillment/Orders.js"
import type { Id } from "../../domain/platform/Ids.js"
import { Fulfillment } from "../fulfillment/Fulfillment.js"
import type { FulfillmentUnavailable } from "../fulfillment/FulfillmentPartner.js"
import { Jobs } from "../platform/Jobs.js"
import { AdvanceOrder } from "./AgentOrders.js"
import { CheckoutPresenter, Checkouts, type ItemOutcome, PlaceCheckout } from "./Checkouts.js"

/**
 * Placement of a paid checkout (docs/decisions/0027-placement-and-orders.md; docs/checkout.md), the `checkout.place`
 * job: `paid` → `placing`, one order per pending item through the Fulfillment service (and so the fulfillment
 * partner), then `confirmed`,
 * `partially_confirmed` or `failed`.
 *
 * Crash safety: each item is placed under the deterministic key `{checkoutId}:{index}`, which the
 * Fulfillment service books at most once, and each item moves from `pending` by a conditional update. A run that
 * stops anywhere (a crash, a shutdown, an expired lease) is resumed by the job runner and skips what is
 * already done, so every item ends with exactly one order or one refund.
 */

/** A transient supplier failure is retried in place: exponential from 100 ms, jittered, 5 retries. */
export const itemRetry = Schedule.exponential("100 millis", 2).pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(5))
)

/** Items of one checkout sent to the supplier at once. */
const itemConcurrency = 4

export const placementKey = (checkoutId: string, index: number) => `${checkoutId}:${index}`

/** Checkouts that finished placement, by final `status` (confirmed, partially_confirmed, failed). */
export const checkoutsSettled = Metric.counter("ribbon_checkouts_settled_total", {
  description: "Checkouts whose placement finished, by final status",
  incremental: true
})

/** From payment to the final status, in seconds, by final `status`. */
export const placementDuration = Metric.histogram(
  "ribbon_checkout_placement_duration",
  MetricBoundaries.fromIterable([0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900]),
  "Seconds from a checkout's payment to its final status"
).pipe(Metric.tagged("unit", "s"))

/**
 * Checkouts one instance holds from payment to the end of their placement (`PAYMENTS_IN_FLIGHT`); further
 * payments wait for one to finish. A Reference, so tests need not set it.
 */
export class PaymentsInFlight extends Context.Reference<PaymentsInFlight>()("ribbon/PaymentsInFlight", {
  defaultValue: () => 8
}) {}

export class Placement extends Effect.Service<Placement>()("Placement", {
  dependencies: [Checkouts.Default, Fulfillment.Default, Jobs.Default],
  scoped: Effect.gen(function* () {
    const checkouts = yield* Checkouts
    const presenter = yield* CheckoutPresenter
    const fulfillment = yield* Fulfillment
    const jobs = yield* Jobs

    /** What the supplier said of one pending item. */
    type Outcome =
      | { readonly _tag: "Placed"; readonly order: OrderRecord }
      | { readonly _tag: "Failed"; readonly message: string }
      | { readonly _tag: "Later"; readonly error: FulfillmentUnavailable }

    /**
     * One item to the supplier, under its deterministic key. A transient failure is retried in place; if it
     * persists, the item stays pending for the job's next attempt, except on the last one, where it fails
     * (and is refunded) so that no paid checkout is left placing.
     */
    const placeItem = (row: CheckoutRecord, item: CheckoutItemRecord, lastAttempt: boolean) =>
      fulfillment
        .place({
          idempotencyKey: placementKey(row.id, item.index),
          userId: row.userId,
          checkoutId: row.id,
          itemIndex: item.index,
          variantId: item.variantId,
          productId: item.productId,
          productTitle: item.productTitle,
          variantTitle: item.variantTitle,
          quantity: item.quantity,
          amount: item.amount,
          currency: row.currency,
          countryCode: row.countryCode
        })
        .pipe(
          Effect.retry({ schedule: itemRetry, while: (e) => e._tag === "FulfillmentUnavailable" }),
          Effect.map((order): Outcome => ({ _tag: "Placed", order })),
          Effect.catchTags({
            FulfillmentRejected: (rejected): Effect.Effect<Outcome> =>
              Effect.succeed({ _tag: "Failed", message: rejected.message }),
            FulfillmentUnavailable: (unavailable): Effect.Effect<Outcome> =>
              Effect.succeed(
                lastAttempt
                  ? { _tag: "Failed", message: "The supplier could not take the order in time; the item was refunded." }
                  : { _tag: "Later", error: unavailable }
              )
          })
        )

    /**
     * Places every pending item of a paid (or resumed) checkout and settles its status: `placing` commits
     * first; then every pending item goes to the supplier; then one transaction records each item's outcome
     * (an event each) and, when none is left pending, the final status. An item the supplier could not take
     * yet stays pending and the job fails, to be retried.
     */
    const place = Effect.fn("Placement.place")(function* (checkoutId: string, lastAttempt = false) {
      yield* Effect.annotateCurrentSpan("checkout.id", checkoutId)
      const started = yield* checkouts.startPlacing(checkoutId)
      if (Option.isNone(started)) return
      const { row, items } = started.value
      const pending = items.filter((item) => item.status === "pending")
      const outcomes = yield* Effect.forEach(pending, (item) => placeItem(row, item, lastAttempt), {
        concurrency: itemConcurrency
      })
      const answered = outcomes.flatMap((outcome, n): ReadonlyArray<ItemOutcome> => {
        const index = pending[n]!.index
        if (outcome._tag === "Later") return []
        return outcome._tag === "Placed"
          ? [{ _tag: "Placed", index, orderId: outcome.order.id, order: presenter.order(outcome.order, row.locale) }]
          : [{ _tag: "Failed", index, message: outcome.message }]
      })
      // Each placed order starts its progress in the transaction that records it.
      const progress = (orderIds: ReadonlyArray<string>) =>
        jobs.enqueueAll(
          AdvanceOrder,
          orderIds.map((orderId) => ({
            payload: { orderId, from: "placed" as const },
            options: { key: `${orderId}:placed`, delay: fulfillment.progressEvery }
          }))
        )
      const settled = Option.getOrUndefined(yield* checkouts.settleItems(checkoutId, answered, progress))
      // Counted once the outcome has committed.
      if (settled !== undefined) {
        yield* Metric.increment(Metric.tagged(checkoutsSettled, "status", settled.status))
        if (settled.paidAt !== null) {
          const seconds = (settled.updatedAt.getTime() - settled.paidAt.getTime()) / 1000
          yield* Metric.update(Metric.tagged(placementDuration, "status", settled.status), seconds)
        }
      }
      // What the supplier could not take yet: the job's next attempt tries again.
      const later = outcomes.find((outcome) => outcome._tag === "Later")
      if (later !== undefined) return yield* later.error
    })

    /** The `checkout.place` job handler. */
    const handler = PlaceCheckout.handle(({ checkoutId }, job) => place(checkoutId, job.attempt >= job.maxAttempts))

    const slots = yield* Effect.makeSemaphore(yield* PaymentsInFlight)
    const placing = yield* FiberSet.make()

    /**
     * Takes a payment, then places what it paid for at once, on this instance: `payment` runs once one of
     * the `PaymentsInFlight` slots is free (waiting, it holds no connection and no lock) and returns the
     * placement job it enqueued when it paid; that job then runs here in the background (`Jobs.runNow`),
     * holding the slot until it ends. So a burst of payments queues in front of the payment, never between
     * payment and placement, and each payment can still wait on a slow card processor beside the others.
     * Should this instance stop first, the job's own `run_at` hands it to any worker.
     */
    const payThenPlace = <A, E, R>(payment: Effect.Effect<A, E, R>, placementJob: (paid: A) => Option.Option<Id>) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          yield* restore(slots.take(1))
          // Not interruptible once started (a client that goes away must not cut a payment between the
          // charge and its commit), so a payment that paid always starts its placement here.
          const exit = yield* Effect.exit(payment)
          const job = Exit.isSuccess(exit) ? placementJob(exit.value) : Option.none()
          if (Option.isNone(job)) yield* slots.release(1)
          else {
            // Forked interruptible: a fiber forked here would otherwise inherit this uninterruptible region.
            const run = Effect.interruptible(jobs.runNow(handler, job.value))
            yield* FiberSet.run(placing, Effect.ensuring(run, slots.release(1)))
          }
          return yield* exit
        })
      )

    return { place, handler, payThenPlace } as const
  })
}) {}
