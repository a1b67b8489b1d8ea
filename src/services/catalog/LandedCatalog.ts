import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { LandedPrice, ProductType } from "../../domain/catalog/CatalogV3.js"
import { CollectionNotFound, VariantNotFound } from "../../domain/catalog/Errors.js"
import type { LandedProduct, LandedVariant } from "../../domain/catalog/Landed.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { rowsOf } from "../platform/Rows.js"
import { absoluteUrl, DEFAULT_COUNTRY, PublicUrl } from "./Catalog.js"
import { convertUsd, type FeeRule, Pricing, type PricingCountry, usdRangeFor } from "./Pricing.js"

/**
 * The catalog judged and priced on landed totals (docs/catalog.md, "v2 reads"; docs/decisions/0044-v2-catalog-reads.md,
 * docs/decisions/0045-v2-campaigns.md):
 *
 * - `products` lists the products with a variant that can be ordered in the country (priced, in stock or
 *   untracked, shipping there) for a landed total (item + shipping + duties + service fee) within the budget,
 *   each with those variants, newest first (a collection's: in the collection's order), paged by offset.
 *   Budgets are plain numbers in the major units of the country's currency (`49.99` dollars, `5000` yen).
 * - `variant` is one variant with its landed price in a country.
 *
 * The budget is judged in SQL, so filtering and paging happen there: `landedSql` is the SQL twin of
 * `landedAmounts` (Pricing.ts), exact in `numeric`, and the test suite holds the two equal for every variant.
 */

export interface BudgetQuery {
  /** The most one gift may cost, landed, in major units of the country's currency. */
  readonly budget: number
  /** The least, likewise (none: 0). */
  readonly minBudget?: number | undefined
  /** Where the gift goes (either case; default US). */
  readonly country?: string | undefined
  readonly collectionId?: string | undefined
  readonly skip: number
  readonly limit: number
}

const VariantRow = Schema.Struct({
  id: Schema.String,
  productId: Schema.String,
  title: Schema.String,
  selectedOptions: Schema.Record({ key: Schema.String, value: Schema.String }),
  imageUrl: Schema.NullOr(Schema.String),
  productImages: Schema.Array(Schema.String),
  isDigital: Schema.Boolean,
  /** Countries it ships to when it can be ordered at all (priced, in stock or untracked); else none. */
  availableIn: Schema.Array(Schema.String),
  /** Its landed amounts in the country's minor units; null when it has no price. */
  landed: Schema.NullOr(
    Schema.Struct({
      item: Schema.Number,
      shipping: Schema.Number,
      duties: Schema.Number,
      serviceFee: Schema.Number,
      total: Schema.Number
    })
  )
})
type VariantRow = typeof VariantRow.Type
const variantRows = rowsOf(VariantRow)

const ProductRow = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  brandId: Schema.NullOr(Schema.String),
  brandName: Schema.NullOr(Schema.String),
  images: Schema.Array(Schema.String),
  types: Schema.Array(Schema.Literal("physical", "digital"))
})
const productRows = rowsOf(ProductRow)
const idRows = rowsOf(Schema.Struct({ id: Schema.String }))

export class LandedCatalog extends Effect.Service<LandedCatalog>()("LandedCatalog", {
  dependencies: [Pricing.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pricing = yield* Pricing
    const publicUrl = (yield* PublicUrl).replace(/\/$/, "")
    const absolute = (path: string) => absoluteUrl(publicUrl, path) as string

    /**
     * Lateral joins giving variant `v` (of product `p`) its landed amounts in `country`, as `landed.item`,
     * `.shipping`, `.duties`, `.service_fee` and `.total` in the country's minor units: `landedAmounts` of
     * Pricing.ts, step for step. `round` on `numeric` rounds half away from zero, which is half-up for these
     * non-negative amounts. Null for a variant without a price.
     */
    const landedSql = (country: PricingCountry, fee: FeeRule) => {
      const convert = (usd: Statement.Fragment) =>
        sql`round(${usd} * ${country.fxRate}::numeric * ${10 ** country.digits}::numeric / 100)`
      const feeMin = convertUsd(fee.minUsd, country.fxRate, country.digits)
      const feeMax = convertUsd(fee.maxUsd, country.fxRate, country.digits)
      return sql`
        CROSS JOIN LATERAL (SELECT ${convert(sql`v.price_usd`)} AS item) landed_item
        CROSS JOIN LATERAL (SELECT
          CASE WHEN v.is_digital THEN 0 ELSE coalesce((
            SELECT ${convert(sql`r.amount_usd`)} FROM shipping_rates r
            WHERE r.origin_warehouse = v.origin_warehouse AND r.shipping_zone = ${country.shippingZone}
              AND r.weight_class = v.weight_class), 0) END AS shipping,
          CASE WHEN v.is_digital OR landed_item.item <= ${country.deMinimis}::numeric
                 OR (SELECT w.customs_area FROM warehouses w WHERE w.code = v.origin_warehouse) = ${country.customsArea}
            THEN 0
            ELSE round(landed_item.item * coalesce((
              SELECT d.rate_bps FROM duty_rates d WHERE d.category_id = p.category_id AND d.country_code = ${country.code}
            ), 0) / 10000.0) END AS duties,
          least(greatest(round(landed_item.item * ${fee.rateBps}::numeric / 10000), ${feeMin}::numeric),
                ${feeMax}::numeric) AS service_fee
        ) landed_parts
        CROSS JOIN LATERAL (SELECT landed_item.item, landed_parts.shipping, landed_parts.duties,
          landed_parts.service_fee,
          landed_item.item + landed_parts.shipping + landed_parts.duties + landed_parts.service_fee AS total) landed`
    }

    /** Variant `v` with location `l` can be ordered in the country. */
    const orderableIn = (country: PricingCountry) =>
      sql`v.price_usd IS NOT NULL AND (l.stock IS NULL OR l.stock > 0) AND l.ships_to @> ARRAY[${country.code}]::text[]`

    /** `landed.total` within [min, max] major units of the country's currency, compared exactly. */
    const withinBudget = (country: PricingCountry, min: number, max: number) => {
      const scale = 10 ** country.digits
      return sql`landed.total >= ${String(min)}::numeric * ${scale}
        AND landed.total <= ${String(max)}::numeric * ${scale}`
    }

    const countryOf = Effect.fn("LandedCatalog.country")(function* (code: string | undefined) {
      const wanted = (code ?? DEFAULT_COUNTRY).toUpperCase()
      const found = (yield* pricing.reference()).country.get(wanted)
      if (found === undefined) return yield* InvalidRequest.field("country", `${wanted} is not a supported country.`)
      return found
    })

    const variantColumns = sql`
      v.id, v.product_id, v.title, v.selected_options, v.image_url, v.is_digital,
      coalesce((SELECT array_agg(i.url ORDER BY i.position) FROM product_images i WHERE i.product_id = p.id),
               '{}') AS product_images,
      CASE WHEN v.price_usd IS NOT NULL AND (l.stock IS NULL OR l.stock > 0)
        THEN coalesce((SELECT array_agg(c ORDER BY c) FROM unnest(l.ships_to) c), '{}') ELSE '{}' END AS available_in,
      CASE WHEN v.price_usd IS NOT NULL THEN json_build_object('item', landed.item, 'shipping', landed.shipping,
        'duties', landed.duties, 'serviceFee', landed.service_fee, 'total', landed.total) END AS landed`

    const toVariant = (row: VariantRow, country: PricingCountry): LandedVariant => {
      const money = (amount: number) => ({ amount, currency: country.currency })
      const { landed } = row
      const price: LandedPrice | null =
        landed !== null && row.availableIn.includes(country.code)
          ? {
              item: money(landed.item),
              shipping: money(landed.shipping),
              duties: money(landed.duties),
              serviceFee: money(landed.serviceFee),
              total: money(landed.total)
            }
          : null
      return {
        id: row.id,
        productId: row.productId,
        title: row.title,
        selectedOptions: row.selectedOptions,
        images: (row.imageUrl === null ? row.productImages : [row.imageUrl]).map(absolute),
        type: row.isDigital ? "digital" : "physical",
        availableIn: row.availableIn,
        price
      }
    }

    /**
     * A page of the products with a variant orderable in the country for a landed total within the budget,
     * each with the variants that are (docs/decisions/0044-v2-catalog-reads.md). An unknown collection is a 404; a
     * `minBudget` above `budget` a 400 naming it.
     */
    const products = Effect.fn("LandedCatalog.products")(function* (query: BudgetQuery) {
      const country = yield* countryOf(query.country)
      const min = query.minBudget ?? 0
      if (min > query.budget) return yield* InvalidRequest.field("minBudget", "Must not be more than budget.")
      if (query.collectionId !== undefined) {
        const found = yield* idRows(sql`SELECT id FROM collections WHERE id = ${query.collectionId}`).pipe(Effect.orDie)
        if (found.length === 0) {
          return yield* new CollectionNotFound({
            message: `No collection ${query.collectionId}.`,
            collectionId: query.collectionId
          })
        }
      }
      const reference = yield* pricing.reference()
      const landed = landedSql(country, reference.fee)
      // The item alone is at most the landed total: a bound on the item's USD price that the price index serves.
      const itemBound = usdRangeFor(
        { min: undefined, max: Math.ceil(query.budget * 10 ** country.digits) },
        country.fxRate,
        country.digits
      ).max
      const fits = sql`${orderableIn(country)} AND ${withinBudget(country, min, query.budget)}`
      const inCollection =
        query.collectionId === undefined
          ? sql``
          : sql`JOIN collection_products cp ON cp.product_id = p.id AND cp.collection_id = ${query.collectionId}`
      const page = yield* idRows(sql`
        SELECT p.id FROM products p ${inCollection}
        WHERE p.min_price_usd <= ${itemBound}
          AND EXISTS (SELECT 1 FROM variants v JOIN variant_locations l ON l.variant_id = v.id ${landed}
                      WHERE v.product_id = p.id AND v.price_usd <= ${itemBound} AND ${fits})
        ORDER BY ${query.collectionId === undefined ? sql`p.created_at DESC, p.id DESC` : sql`cp.position, p.id`}
        OFFSET ${query.skip} LIMIT ${query.limit}`).pipe(Effect.orDie)
      const ids = page.map((row) => row.id)
      if (ids.length === 0) return { products: [] as ReadonlyArray<LandedProduct>, country }
      const [productRowsFound, fitting] = yield* Effect.all(
        [
          productRows(sql`
            SELECT p.id, p.title, b.id AS brand_id, b.name AS brand_name,
              coalesce((SELECT array_agg(i.url ORDER BY i.position) FROM product_images i WHERE i.product_id = p.id),
                       '{}') AS images,
              (SELECT array_agg(DISTINCT CASE WHEN v.is_digital THEN 'digital' ELSE 'physical' END)
               FROM variants v WHERE v.product_id = p.id) AS types
            FROM products p LEFT JOIN brands b ON b.id = p.brand_id
            WHERE p.id IN ${sql.in(ids)}`),
          variantRows(sql`
            SELECT ${variantColumns}
            FROM variants v JOIN products p ON p.id = v.product_id JOIN variant_locations l ON l.variant_id = v.id
            ${landed}
            WHERE v.product_id IN ${sql.in(ids)} AND ${fits}
            ORDER BY v.product_id, v.position`)
        ],
        { concurrency: 1 }
      ).pipe(Effect.orDie)
      const byId = new Map(productRowsFound.map((row) => [row.id, row]))
      const result = ids.flatMap((id): ReadonlyArray<LandedProduct> => {
        const row = byId.get(id)
        if (row === undefined) return []
        const types: ReadonlyArray<ProductType> = (["physical", "digital"] as const).filter((t) =>
          row.types.includes(t)
        )
        return [
          {
            id: row.id,
            title: row.title,
            brand: row.brandId === null || row.brandName === null ? null : { id: row.brandId, name: row.brandName },
            types,
            images: row.images.map(absolute),
            variants: fitting.filter((v) => v.productId === id).map((v) => toVariant(v, country))
          }
        ]
      })
      return { products: result, country }
    })

    /** One variant with its landed price in the country (none when it cannot be ordered there). */
    const variant = Effect.fn("LandedCatalog.variant")(function* (variantId: string, countryCode?: string) {
      const country = yield* countryOf(countryCode)
      const reference = yield* pricing.reference()
      const [row] = yield* variantRows(sql`
        SELECT ${variantColumns}
        FROM variants v JOIN products p ON p.id = v.product_id LEFT JOIN variant_locations l ON l.variant_id = v.id
        ${landedSql(country, reference.fee)}
        WHERE v.id = ${variantId}`).pipe(Effect.orDie)
      if (row === undefined) return yield* new VariantNotFound({ message: `No variant ${variantId}.`, variantId })
      return { variant: toVariant(row, country), country }
    })

    return { products, variant } as const
  })
}) {}
