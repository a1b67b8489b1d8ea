import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { rowsOf } from "../platform/Rows.js"

/** A country's row of the reference data, as stored (`fx_rate` as text, exact). */
export interface CountryRow {
  readonly code: string
  readonly name: string
  readonly currency: string
  readonly locale: string
  readonly fxRate: string
  readonly shippingZone: string
  readonly customsArea: string
  readonly deMinimis: string
  readonly maskBit: number
}

/** The service fee rule: basis points of the item, clamped to USD cents. */
export interface FeeRuleRow {
  readonly rateBps: number
  readonly minUsd: number
  readonly maxUsd: number
}

/** One variant as pricing sees it. */
export interface PricingVariant {
  readonly variantId: string
  readonly productId: string
  readonly categoryId: string
  readonly priceUsd: number | null
  readonly isDigital: boolean
  readonly originWarehouse: string | null
  readonly weightClass: string | null
  /** null: not tracked (digital), always in stock. */
  readonly stock: number | null
  readonly shipsTo: ReadonlyArray<string>
}

/** Rows of the statements below, decoded (decoders built once). */
const codeCustomsAreaRows = rowsOf(Schema.Struct({ code: Schema.String, customsArea: Schema.String }))
const shippingRateRows = rowsOf(
  Schema.Struct({
    originWarehouse: Schema.String,
    shippingZone: Schema.String,
    weightClass: Schema.String,
    amountUsd: Schema.Number
  })
)
const categoryIdCountryCodeRateBpsRows = rowsOf(
  Schema.Struct({ categoryId: Schema.String, countryCode: Schema.String, rateBps: Schema.Number })
)

/**
 * The pricing reference tables (`countries`, `warehouses`, `shipping_rates`, `duty_rates`,
 * `service_fee_rules`, docs/pricing.md) and the variants' pricing facts. Only the catalog's services use it.
 */
export class PricingRepo extends Effect.Service<PricingRepo>()("PricingRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The reference tables, read one after the other. */
    const reference = Effect.fn("PricingRepo.reference")(function* () {
      const [countries, warehouses, shipping, duty, fees] = yield* Effect.all(
        [
          sql<CountryRow>`
            SELECT code, name, currency, locale, fx_rate::text AS fx_rate, shipping_zone, customs_area, de_minimis,
                   mask_bit
            FROM countries ORDER BY code`,
          codeCustomsAreaRows(sql`SELECT code, customs_area FROM warehouses`),
          shippingRateRows(sql`
            SELECT origin_warehouse, shipping_zone, weight_class, amount_usd FROM shipping_rates`),
          categoryIdCountryCodeRateBpsRows(sql`
            SELECT category_id, country_code, rate_bps FROM duty_rates`),
          sql<FeeRuleRow>`SELECT rate_bps, min_usd, max_usd FROM service_fee_rules WHERE id = 'default'`
        ],
        { concurrency: 1 }
      ).pipe(Effect.orDie)
      return { countries, warehouses, shipping, duty, fees }
    })

    /** Pricing facts of the given variants (all variants with `none`), by id. */
    const variants = Effect.fn("PricingRepo.variants")((ids: Option.Option<ReadonlyArray<string>>) =>
      sql<PricingVariant>`
        SELECT v.id AS variant_id, v.product_id, p.category_id, v.price_usd, v.is_digital, v.origin_warehouse,
               v.weight_class, l.stock, coalesce(l.ships_to, '{}') AS ships_to
        FROM variants v
        JOIN products p ON p.id = v.product_id
        LEFT JOIN variant_locations l ON l.variant_id = v.id
        ${Option.match(ids, { onNone: () => sql``, onSome: (ids) => sql`WHERE v.id IN ${sql.in(ids)}` })}
        ORDER BY v.id`.pipe(Effect.orDie)
    )

    return { reference, variants } as const
  })
}) {}
