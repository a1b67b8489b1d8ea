import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

/** A recorded change of a variant's availability in a country, with its variant's product (none once deleted). */
export const StockChange = Schema.Struct({
  seq: Schema.NumberFromString,
  variantId: Schema.String,
  productId: Schema.NullOr(Schema.String),
  countryCode: Schema.String,
  available: Schema.Boolean
})
export type StockChange = typeof StockChange.Type

/**
 * The `stock_availability_changes` table, written by the trigger of migration 0017 on `variant_locations`.
 * Only the StockAvailability service uses it.
 */
export class StockAvailabilityRepo extends Effect.Service<StockAvailabilityRepo>()("StockAvailabilityRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const take = SqlSchema.findAll({
      Request: Schema.Number,
      Result: StockChange,
      execute: (limit) => sql`
          WITH taken AS (
            DELETE FROM stock_availability_changes WHERE id IN (
              SELECT id FROM stock_availability_changes ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
            RETURNING id, variant_id, country_code, available)
          SELECT t.id::text AS seq, t.variant_id, v.product_id, t.country_code, t.available
          FROM taken t LEFT JOIN variants v ON v.id = t.variant_id`
    })

    /**
     * Deletes and returns up to `limit` recorded changes, oldest first, skipping rows another transaction holds
     * (run it in the transaction that sends them, so that a failed send leaves them).
     */
    const takeChanges = Effect.fn("StockAvailabilityRepo.takeChanges")((limit: number) => Effect.orDie(take(limit)))

    return { takeChanges } as const
  })
}) {}
