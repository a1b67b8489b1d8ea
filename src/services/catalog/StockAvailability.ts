import { SqlClient } from "@effect/sql"
import { Array as Arr, Context, type Duration, Effect, Layer, Option, Schedule } from "effect"
import { VariantNotFound } from "../../domain/catalog/Errors.js"
import type { AccountScope } from "../../domain/company/Company.js"
import type { StockAvailabilityChange } from "../../domain/company/Webhooks.js"
import { CompanyWebhooks } from "../company/CompanyWebhooks.js"
import { CatalogRepo } from "./CatalogRepo.js"
import { StockAvailabilityRepo, type StockChange } from "./StockAvailabilityRepo.js"

/**
 * `stock-availability-updates` webhooks (docs/decisions/0050-company-webhooks.md, docs/webhooks.md "Stock
 * availability"): the catalog's stock, told to the companies through their webhooks (CompanyWebhooks).
 *
 * The trigger of migration 0017 records every change of a variant's availability in a country in
 * `stock_availability_changes`, whoever changed the stock. `notify` takes those rows, nets them per variant
 * and country (out of stock and back within one window is no change), and broadcasts them, at most
 * `changesPerEvent` per event, to every endpoint subscribed, in the transaction that deletes them: each
 * change is sent once, and a failed send leaves it for the next window. `layerNotifier` runs it every
 * window on every instance; `FOR UPDATE SKIP LOCKED` keeps two instances off the same rows.
 *
 * The catalog is shared by both environments, so the sandbox does not change stock: `simulate` sends the
 * calling company's `test` endpoints the event a new stock level would cause, and changes nothing.
 */

/** How long changes gather before they are sent (one event per window, or more past `changesPerEvent`). */
export class StockAvailabilityWindow extends Context.Reference<StockAvailabilityWindow>()(
  "ribbon/StockAvailabilityWindow",
  { defaultValue: (): Duration.DurationInput => "5 seconds" }
) {}

/** Changes per event, so one restock of a large catalog is several bodies of bounded size. */
export const changesPerEvent = 500

/** Rows taken per transaction. */
const rowsPerNotify = 5000

/**
 * The net changes of rows recorded in this order: per variant and country, the last state, kept only when
 * it differs from the state before the first (the opposite of the first change).
 */
export const netChanges = (rows: ReadonlyArray<StockChange>): ReadonlyArray<StockAvailabilityChange> => {
  const byKey = new Map<string, { first: boolean; last: StockChange }>()
  for (const row of [...rows].sort((a, b) => a.seq - b.seq)) {
    const key = `${row.variantId} ${row.countryCode}`
    const seen = byKey.get(key)
    byKey.set(key, { first: seen?.first ?? row.available, last: row })
  }
  return [...byKey.values()].flatMap(({ first, last }) =>
    // Before the window the variant was `!first`; it ends `last.available`. A variant since deleted has no product.
    last.available === !first || last.productId === null
      ? []
      : [
          {
            variantId: last.variantId,
            productId: last.productId,
            countryCode: last.countryCode,
            available: last.available
          }
        ]
  )
}

export class StockAvailability extends Effect.Service<StockAvailability>()("StockAvailability", {
  dependencies: [CompanyWebhooks.Default, CatalogRepo.Default, StockAvailabilityRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* StockAvailabilityRepo
    const catalog = yield* CatalogRepo
    const webhooks = yield* CompanyWebhooks

    /** Sends the changes recorded so far (up to `rowsPerNotify` rows). How many net changes were sent. */
    const notify = Effect.fn("StockAvailability.notify")(function* () {
      const send = Effect.gen(function* () {
        const rows = yield* repo.takeChanges(rowsPerNotify)
        const changes = netChanges(rows)
        for (const batch of Arr.chunksOf(changes, changesPerEvent)) {
          yield* webhooks.broadcast("stock-availability-updates", { changes: batch.map((change) => ({ ...change })) })
        }
        return changes.length
      })
      return yield* sql.withTransaction(send).pipe(Effect.orDie)
    })

    /**
     * The sandbox control: the `stock-availability-updates` event that setting the variant's stock to
     * `stock` would cause, sent to the company's `test` endpoints only; the stock itself is not changed.
     * The changes (none when its availability would stay as it is).
     */
    const simulate = Effect.fn("StockAvailability.simulate")(function* (
      scope: AccountScope,
      variantId: string,
      stock: number
    ) {
      const id = variantId.toLowerCase()
      const found = yield* catalog.variantLocation(id)
      if (Option.isNone(found)) return yield* new VariantNotFound({ message: `No variant ${variantId}.`, variantId })
      const location = found.value
      const shipsTo = location.shipsTo ?? []
      const availableNow = location.shipsTo !== null && (location.stock === null || location.stock > 0)
      const changes: ReadonlyArray<StockAvailabilityChange> =
        availableNow === stock > 0
          ? []
          : shipsTo.map((countryCode) => ({
              variantId: id,
              productId: location.productId,
              countryCode,
              available: stock > 0
            }))
      if (changes.length > 0) {
        yield* webhooks
          .emit({
            companyId: scope.companyId,
            environment: "test",
            accountId: null,
            eventType: "stock-availability-updates",
            subject: null,
            eventData: { changes: changes.map((change) => ({ ...change })) }
          })
          .pipe(sql.withTransaction, Effect.orDie)
      }
      return changes
    })

    return { notify, simulate } as const
  })
}) {}

/** `notify` every window, for as long as the layer lives; a failure is logged and the next window tries again. */
export const StockAvailabilityNotifierLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const stock = yield* StockAvailability
    const window = yield* StockAvailabilityWindow
    yield* stock.notify().pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Sending stock availability changes failed", cause)),
      Effect.repeat(Schedule.spaced(window)),
      Effect.forkScoped
    )
  })
)
