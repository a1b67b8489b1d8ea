import { SqlClient } from "@effect/sql"
import { Clock, Effect, Metric, MetricBoundaries, Schedule } from "effect"
import { Checkouts, PlaceCheckout } from "./Checkouts.js"
import { Fulfillment, FulfillmentSettings } from "./Fulfillment.js"
import { Jobs } from "./Jobs.js"
import { Notifications } from "./Notifications.js"
import { AdvanceOrder, orderOf } from "./Orders.js"

/**
 * Placement of a paid checkout (DESIGN.md §4.5; docs/checkout.md), the `checkout.place` job: `paid` →
 * `placing`, one order per pending item through the Fulfillment simulator, then `confirmed`,
 * `partially_confirmed` or `failed`.
 *
 * Crash safety: each item is placed under the deterministic key `{checkoutId}:{index}`, which the
 * simulator books at most once, and each item moves from `pending` by a conditional update. A run that
 * stops anywhere (a crash, a shutdown, an expired lease) is resumed by the job runner and skips what is
 * already done, so every item ends with exactly one order or one refund.
 */

/** A transient supplier failure is retried in place: exponential from 100 ms, jittered, 5 retries. */
export const itemRetry = Schedule.exponential("100 millis", 2).pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(5))
)

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

export class Placement extends Effect.Service<Placement>()("Placement", {
  dependencies: [Checkouts.Default, Fulfillment.Default, Notifications.Default, Jobs.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const checkouts = yield* Checkouts
    const fulfillment = yield* Fulfillment
    const notifications = yield* Notifications
    const jobs = yield* Jobs
    const settings = yield* FulfillmentSettings

    const nowDate = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

    /**
     * Places every pending item of a paid (or resumed) checkout and settles its status. On the job's
     * `lastAttempt`, an item the supplier still cannot take fails and is refunded, so that no paid checkout
     * is left placing.
     */
    const place = Effect.fn("Placement.place")(function* (checkoutId: string, lastAttempt = false) {
      yield* Effect.annotateCurrentSpan("checkout.id", checkoutId)
      yield* checkouts.commit(
        checkoutId,
        Effect.gen(function* () {
          const claimed = yield* sql`
            UPDATE checkouts SET status = 'placing', updated_at = ${yield* nowDate}
            WHERE id = ${checkoutId} AND status = 'paid' RETURNING id`
          if (claimed.length > 0) yield* checkouts.record(checkoutId, "checkout.placing")
        })
      )
      const { row } = yield* checkouts.snapshot(checkoutId)
      if (row.status !== "placing") return
      const items = yield* checkouts.itemRows(checkoutId)
      for (const item of items) {
        if (item.status !== "pending") continue
        const placed = yield* fulfillment
          .place({
            idempotencyKey: placementKey(checkoutId, item.index),
            userId: row.userId,
            checkoutId,
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
            Effect.catchTag("FulfillmentRejected", (rejected) => Effect.succeed(rejected)),
            Effect.catchTag("FulfillmentUnavailable", (unavailable) =>
              lastAttempt
                ? Effect.succeed({
                    _tag: "Unavailable" as const,
                    message: "The supplier could not take the order in time; the item was refunded."
                  })
                : Effect.fail(unavailable)
            )
          )
        yield* checkouts.commit(
          checkoutId,
          Effect.gen(function* () {
            if ("_tag" in placed) {
              const failed = yield* sql`
                UPDATE checkout_items SET status = 'failed', failure_reason = ${placed.message}
                WHERE checkout_id = ${checkoutId} AND index = ${item.index} AND status = 'pending' RETURNING index`
              if (failed.length === 0) return
              // A failed item is refunded straight away (DESIGN.md §4.5).
              yield* sql`
                UPDATE checkouts SET refunded_amount = refunded_amount + ${item.amount}, updated_at = ${yield* nowDate}
                WHERE id = ${checkoutId}`
              yield* checkouts.record(checkoutId, "checkout.item_failed")
              return
            }
            const updated = yield* sql`
              UPDATE checkout_items SET status = 'placed', order_id = ${placed.id}
              WHERE checkout_id = ${checkoutId} AND index = ${item.index} AND status = 'pending' RETURNING index`
            if (updated.length === 0) return
            yield* checkouts.record(checkoutId, "checkout.item_placed", orderOf(placed, row.locale))
            yield* jobs.enqueue(
              AdvanceOrder,
              { orderId: placed.id, from: "placed" as const },
              { key: `${placed.id}:placed`, delay: settings.progressEvery }
            )
          })
        )
      }
      const outcome = yield* checkouts.commit(
        checkoutId,
        Effect.gen(function* () {
          const settled = yield* checkouts.itemRows(checkoutId)
          const placedCount = settled.filter((item) => item.status === "placed").length
          const status =
            placedCount === settled.length ? "confirmed" : placedCount === 0 ? "failed" : "partially_confirmed"
          const reasons = [
            ...new Set(settled.flatMap((item) => (item.failureReason === null ? [] : [item.failureReason])))
          ]
          const failureReason = reasons.length === 0 ? null : reasons.join(" ")
          const updated = yield* sql`
            UPDATE checkouts SET status = ${status}, failure_reason = ${failureReason}, updated_at = ${yield* nowDate}
            WHERE id = ${checkoutId} AND status = 'placing' RETURNING id`
          if (updated.length === 0) return undefined
          const final = yield* checkouts.record(checkoutId, `checkout.${status}`)
          yield* notifications.outcome(final.row, final.items)
          return final.row
        })
      )
      // Counted once the outcome has committed.
      if (outcome !== undefined) {
        yield* Metric.increment(Metric.tagged(checkoutsSettled, "status", outcome.status))
        if (outcome.paidAt !== null) {
          const seconds = (outcome.updatedAt.getTime() - outcome.paidAt.getTime()) / 1000
          yield* Metric.update(Metric.tagged(placementDuration, "status", outcome.status), seconds)
        }
      }
    })

    /** The `checkout.place` job handler. */
    const handler = PlaceCheckout.handle(({ checkoutId }, job) => place(checkoutId, job.attempt >= job.maxAttempts))

    return { place, handler } as const
  })
}) {}
