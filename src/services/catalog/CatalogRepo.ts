import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Cache, Duration, Effect, Option, Schema } from "effect"
import { TagRef } from "../../domain/catalog/CatalogV3.js"
import {
  CollectionRecord,
  LandedProductRecord,
  LandedVariantRecord,
  OfferedVariant,
  OrderVariant,
  ProductRecord,
  ProductVariantRecord,
  SummaryRecord,
  VariantLabel,
  VariantLocation,
  VariantRecord
} from "../../domain/catalog/Records.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { lookupIn } from "../platform/Caches.js"
import { rowsOf } from "../platform/Rows.js"
import { compileV3Query, likeEscape, type V3Columns, v3Page } from "../platform/V3QuerySql.js"
import { convertUsd, type FeeRule, type PricingCountry, usdRangeFor } from "./Pricing.js"

/**
 * The catalog's tables as every API line reads them (docs/catalog.md): products, variants and their
 * locations, collections and tags. One statement per read, whichever line presents it; rows are decoded
 * with the records of src/domain/catalog/Records.ts (or, for the product lists, checked against them). Only
 * the catalog's services use it; other contexts call those services. Search (Search.ts) composes its own
 * statements from the fragments below.
 */

// ---------------------------------------------------------------------------------------------------------
// Fragments

/**
 * The columns of the summary of product `p`, whichever statement reads it: `CatalogRepo.summaries` by id, or a
 * search's page statement beside the page's ids (one round trip fewer a page).
 */
export const summaryColumns = (sql: SqlClient.SqlClient) => sql`
  p.title, (SELECT b.name FROM brands b WHERE b.id = p.brand_id) AS brand,
  (SELECT c.name FROM categories c WHERE c.id = p.category_id) AS category, p.catalog,
  coalesce((SELECT array_agg(i.url ORDER BY i.position) FROM product_images i WHERE i.product_id = p.id),
           '{}') AS images,
  coalesce((SELECT array_agg(t.name ORDER BY t.name) FROM product_tags pt JOIN tags t ON t.id = pt.tag_id
            WHERE pt.product_id = p.id), '{}') AS tags,
  (SELECT json_agg(json_build_object('name', o.name, 'displayName', o.display_name,
                                     'values', o.option_values) ORDER BY o.position)
   FROM product_options o WHERE o.product_id = p.id) AS options,
  (SELECT json_agg(json_build_object('id', v.id, 'priceUsd', v.price_usd, 'stock', l.stock,
                                     'shipsTo', l.ships_to) ORDER BY v.position)
   FROM variants v LEFT JOIN variant_locations l ON l.variant_id = v.id WHERE v.product_id = p.id) AS variants`

/**
 * The rows a statement selects (`id` and what `order` sorts them by) with their products' `summaryColumns`,
 * joined after the statement's own `LIMIT`: the products and their summaries in one round trip.
 */
export const withSummaryColumns = (
  sql: SqlClient.SqlClient,
  selected: Statement.Fragment,
  order: Statement.Fragment
) => sql`
  SELECT s.*, ${summaryColumns(sql)} FROM (${selected}) s JOIN products p ON p.id = s.id
  ORDER BY ${order}`

/**
 * The SQL predicate "product `p` has a variant purchasable in the country, optionally within a price range"
 * (item price in the country's minor units). The range is turned into exact USD bounds (`usdRangeFor`), so it
 * is a plain range on `price_usd`, and on the product's `min_price_usd`/`max_price_usd` first: the planner
 * estimates it, and a price-ordered scan stops at the bound.
 */
export const availableIn = (
  sql: SqlClient.SqlClient,
  country: PricingCountry,
  range: { readonly min: number | undefined; readonly max: number | undefined } = { min: undefined, max: undefined }
) => {
  const usd = usdRangeFor(range, country.fxRate, country.digits)
  return sql`${usd.min === undefined ? sql`` : sql`p.max_price_usd >= ${usd.min} AND`}
    ${usd.max === undefined ? sql`` : sql`p.min_price_usd <= ${usd.max} AND`}
    EXISTS (
      SELECT 1 FROM variants v JOIN variant_locations l ON l.variant_id = v.id
      WHERE v.product_id = p.id AND v.price_usd IS NOT NULL AND (l.stock IS NULL OR l.stock > 0)
        AND l.ships_to @> ARRAY[${country.code}]::text[]
        ${usd.min === undefined ? sql`` : sql`AND v.price_usd >= ${usd.min}`}
        ${usd.max === undefined ? sql`` : sql`AND v.price_usd <= ${usd.max}`})`
}

/** SQL: collection `c` matches the words `q` by name (full text or trigram) or by one of its tags. */
export const collectionMatches = (sql: SqlClient.SqlClient, q: string) => sql`(
  to_tsvector('english', c.name || ' ' || coalesce(c.description, '')) @@ websearch_to_tsquery('english', ${q})
  OR lower(${q}) <% lower(c.name)
  OR EXISTS (SELECT 1 FROM collection_tags ct JOIN tags t ON t.id = ct.tag_id
             WHERE ct.collection_id = c.id AND (lower(t.name) % lower(${q})
               OR to_tsvector('english', t.name) @@ websearch_to_tsquery('english', ${q}))))`

// ---------------------------------------------------------------------------------------------------------
// Reads' parameters

/** A price range in minor units of a country's currency. */
export interface PriceBounds {
  readonly min: number | undefined
  readonly max: number | undefined
}

/**
 * What the company API's lists are narrowed to: with a country, products with a variant available there
 * (within the bounds, in its currency); without one, a priced variant within the bounds (in USD, the
 * `usd` country's conversion).
 */
export interface Offer {
  readonly country: PricingCountry | undefined
  readonly bounds: PriceBounds
  readonly usd: PricingCountry
}

/** What a product read returns beyond its own fields: `include` and `fields` of the v3 query. */
export interface ProductView {
  readonly include: ReadonlyArray<string>
  readonly fields: ReadonlyArray<string>
}

/** A page of the v2 reads: the products with a variant orderable in the country within the budget. */
export interface LandedPageQuery {
  readonly country: PricingCountry
  readonly fee: FeeRule
  /** The landed total's bounds, in major units of the country's currency. */
  readonly min: number
  readonly max: number
  /** The most a variant's item may cost in USD cents (the item alone is at most the landed total). */
  readonly itemBound: number | undefined
  readonly collectionId: string | undefined
  /** Only this catalog's products (none: every catalog's). */
  readonly catalog?: "marketplace" | "swag" | undefined
  readonly skip: number
  readonly limit: number
}

// ---------------------------------------------------------------------------------------------------------
// Rows

/**
 * A statement's rows checked against a record (`Schema.is`) rather than decoded into new objects, for
 * records without transformations read in bulk; a row that does not fit is a defect, as with `rowsOf`.
 */
const checkedRows = <A, I>(schema: Schema.Schema<A, I>, name: string) => {
  const is = Schema.is(schema)
  return <E, R, Row>(statement: Effect.Effect<ReadonlyArray<Row>, E, R>): Effect.Effect<ReadonlyArray<Row & A>, E, R> =>
    Effect.flatMap(statement, (rows) => {
      const misfit = rows.find((row) => !is(row))
      return misfit === undefined
        ? Effect.succeed(rows as ReadonlyArray<Row & A>)
        : Effect.die(new Error(`Not a ${name} row: ${JSON.stringify(misfit)}`))
    })
}

const summaryRows = checkedRows(SummaryRecord, "product summary")
const variantRecords = checkedRows(VariantRecord, "variant")
const productRows = checkedRows(ProductRecord, "product")
const idRows = rowsOf(Schema.Struct({ id: Schema.String }))
const idPriceUsdRows = rowsOf(Schema.Struct({ id: Schema.String, priceUsd: Schema.NullOr(Schema.Number) }))
const idNameRows = rowsOf(Schema.Struct({ id: Schema.String, name: Schema.String }))
const nameRows = rowsOf(Schema.Struct({ name: Schema.String }))
const countRows = rowsOf(Schema.Struct({ count: Schema.Int }))
const collectionRows = rowsOf(CollectionRecord)
const landedVariantRows = rowsOf(LandedVariantRecord)
const landedProductRows = rowsOf(LandedProductRecord)
const productVariantRows = rowsOf(ProductVariantRecord)
const tagRows = rowsOf(TagRef)

/** A tag with at most this many products drives its pages (see `productSource`). */
const smallTag = 5000

export class CatalogRepo extends Effect.Service<CatalogRepo>()("CatalogRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    /** For the product lists, whose columns are named as `ProductRecord`'s fields (no name transform). */
    const productSql = sql.withoutTransforms()

    // -------------------------------------------------------------------------------------------------------
    // Product summaries and variants (the agent API)

    /** Product summaries by id, in no particular order (unknown ids are left out). */
    const summaries = Effect.fn("CatalogRepo.summaries")((ids: ReadonlyArray<string>) =>
      summaryRows(sql`
        SELECT p.id, ${summaryColumns(sql)} FROM products p
        WHERE p.id IN ${sql.in(ids)}`).pipe(Effect.orDie)
    )

    /** The rows a statement selects, in `order`, each with its product's summary. */
    const summariesOf = <A extends { readonly id: string }>(selected: Statement.Fragment, order: Statement.Fragment) =>
      summaryRows(sql<A>`${withSummaryColumns(sql, selected, order)}`).pipe(Effect.orDie)

    const variantColumns = sql`
      v.id, v.product_id, v.title, v.selected_options, v.image_url, v.price_usd, v.shipping_required, v.is_digital,
      v.personalization_required, v.description_html, v.details`

    /** A product's variants, in its order. */
    const productVariants = Effect.fn("CatalogRepo.productVariants")((productId: string) =>
      variantRecords(
        sql`SELECT ${variantColumns} FROM variants v WHERE v.product_id = ${productId} ORDER BY v.position`
      ).pipe(Effect.orDie)
    )

    /** One variant. */
    const variant = Effect.fn("CatalogRepo.variant")((variantId: string) =>
      variantRecords(sql`SELECT ${variantColumns} FROM variants v WHERE v.id = ${variantId}`).pipe(
        Effect.orDie,
        Effect.map((rows) => Option.fromNullable(rows[0]))
      )
    )

    /** A variant's price (null: not for sale), if there is the variant. */
    const variantPrice = Effect.fn("CatalogRepo.variantPrice")((variantId: string) =>
      idPriceUsdRows(sql`
        SELECT id, price_usd FROM variants WHERE id = ${variantId}`).pipe(
        Effect.orDie,
        Effect.map((rows) => Option.fromNullable(rows[0]))
      )
    )

    /**
     * The recommendations' ids, each with its `rank` (lower first; ties by id): the products of a collection the
     * product is in (-2 in its category too, -1 otherwise), then the first of its category by id (-1). The
     * category is walked in id order (migration 0025) and stops at the eighth available product.
     */
    const recommended = (productId: string, target: PricingCountry) => sql`
      WITH self AS (SELECT id, category_id FROM products WHERE id = ${productId}),
      shared AS (
        SELECT DISTINCT cp2.product_id AS id FROM collection_products cp1
        JOIN collection_products cp2 ON cp2.collection_id = cp1.collection_id
        WHERE cp1.product_id = ${productId} AND cp2.product_id <> ${productId})
      SELECT r.id, r.rank FROM (
        SELECT p.id, -1 - (p.category_id = self.category_id)::int AS rank
        FROM self, products p
        WHERE p.id IN (SELECT id FROM shared) AND ${availableIn(sql, target)}
        UNION ALL
        SELECT c.id, -1 AS rank
        FROM self, LATERAL (
          SELECT p.id FROM products p
          WHERE p.category_id = self.category_id AND p.id <> self.id AND p.id NOT IN (SELECT id FROM shared)
            AND ${availableIn(sql, target)}
          ORDER BY p.id
          LIMIT 8) c
      ) r
      ORDER BY r.rank, r.id
      LIMIT 8`

    /**
     * Up to 8 products to show beside one (the product detail's recommendations, on every API line): the same
     * category or a shared collection, both first, available in the country. Their ids, in order.
     */
    const recommendedIds = Effect.fn("CatalogRepo.recommendedIds")(function* (
      productId: string,
      target: PricingCountry
    ) {
      const rows = yield* idRows(sql`SELECT id FROM (${recommended(productId, target)}) r ORDER BY rank, id`).pipe(
        Effect.orDie
      )
      return rows.map((r) => r.id)
    })

    /** The recommendations, as `recommendedIds`, with their summaries. */
    const recommendedSummaries = Effect.fn("CatalogRepo.recommendedSummaries")(
      (productId: string, target: PricingCountry) =>
        summariesOf<{ readonly id: string; readonly rank: number }>(recommended(productId, target), sql`s.rank, s.id`)
    )

    /**
     * A page of a collection's products available in the country (within `range`, minor units of its
     * currency), in the collection's order after `after` (position and id), with their summaries: `limit` rows.
     */
    const collectionSummaries = Effect.fn("CatalogRepo.collectionSummaries")(
      (
        collectionId: string,
        target: PricingCountry,
        range: PriceBounds,
        after: readonly [number, string] | undefined,
        limit: number
      ) =>
        summariesOf<{ readonly id: string; readonly position: number }>(
          sql`
          SELECT p.id, cp.position FROM collection_products cp JOIN products p ON p.id = cp.product_id
          WHERE cp.collection_id = ${collectionId}
            AND ${availableIn(sql, target, range)}
            ${after === undefined ? sql`` : sql`AND (cp.position, p.id) > (${after[0]}, ${after[1]})`}
          ORDER BY cp.position, p.id
          LIMIT ${limit}`,
          sql`s.position, s.id`
        )
    )

    // -------------------------------------------------------------------------------------------------------
    // Collections and tags

    /** Collections with their tags and price ranges: the one statement every line reads them with. */
    const collectionSelect = (where: Statement.Fragment, orderBy: Statement.Fragment, limit: Statement.Fragment) =>
      collectionRows(sql`
        SELECT c.id, c.name, c.description, c.image_url, c.created_at,
          coalesce((SELECT json_agg(json_build_object('id', t.id, 'name', t.name) ORDER BY t.name, t.id)
                    FROM collection_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.collection_id = c.id),
                   '[]') AS tags,
          (SELECT min(p.min_price_usd) FROM collection_products cp JOIN products p ON p.id = cp.product_id
           WHERE cp.collection_id = c.id) AS min_usd,
          (SELECT max(p.max_price_usd) FROM collection_products cp JOIN products p ON p.id = cp.product_id
           WHERE cp.collection_id = c.id) AS max_usd
        FROM collections c
        WHERE ${where}
        ORDER BY ${orderBy}
        LIMIT ${limit}`).pipe(Effect.orDie)

    /** One collection. */
    const collection = Effect.fn("CatalogRepo.collection")((collectionId: string) =>
      Effect.map(collectionSelect(sql`c.id = ${collectionId}`, sql`c.id`, sql`1`), (rows) =>
        Option.fromNullable(rows[0])
      )
    )

    /**
     * Collections, optionally matching `q` and holding a product available in the country at or under
     * `maxPrice` (minor units of its currency). Best name match first with `q`, else by name.
     */
    const collections = Effect.fn("CatalogRepo.collections")(
      (options: {
        readonly q: string | undefined
        readonly maxPrice: number | undefined
        readonly country: PricingCountry
        readonly limit: number
      }) => {
        const { q } = options
        const where = sql.and([
          q === undefined ? sql`true` : collectionMatches(sql, q),
          options.maxPrice === undefined
            ? sql`true`
            : sql`EXISTS (SELECT 1 FROM collection_products cp JOIN products p ON p.id = cp.product_id
                        WHERE cp.collection_id = c.id AND ${availableIn(sql, options.country, { min: undefined, max: options.maxPrice })})`
        ])
        const order =
          q === undefined ? sql`c.name, c.id` : sql`word_similarity(lower(${q}), lower(c.name)) DESC, c.name, c.id`
        return collectionSelect(where, order, sql`${options.limit}`)
      }
    )

    /** Collections matching search words (for `/v1/search`), best name match first, at most `limit`. */
    const matchingCollections = Effect.fn("CatalogRepo.matchingCollections")((q: string, limit: number) =>
      collectionSelect(
        collectionMatches(sql, q),
        sql`word_similarity(lower(${q}), lower(c.name)) DESC, c.name, c.id`,
        sql`${limit}`
      )
    )

    /** Whether a collection exists. */
    const collectionExists = Effect.fn("CatalogRepo.collectionExists")((collectionId: string) =>
      Effect.map(
        Effect.orDie(idRows(sql`SELECT id FROM collections WHERE id = ${collectionId}`)),
        (rows) => rows.length > 0
      )
    )

    /** The collections of `ids` that exist. */
    const existingCollections = Effect.fn("CatalogRepo.existingCollections")((ids: ReadonlyArray<string>) =>
      Effect.map(Effect.orDie(idRows(sql`SELECT id FROM collections WHERE id IN ${sql.in(ids)}`)), (rows) =>
        rows.map((row) => row.id)
      )
    )

    /** Whether a product exists. */
    const productExists = Effect.fn("CatalogRepo.productExists")((productId: string) =>
      Effect.map(Effect.orDie(sql`SELECT 1 FROM products WHERE id = ${productId}`), (rows) => rows.length > 0)
    )

    /** The category names of products, by product id (an allowance's categories are checked against them). */
    const categoriesOf = Effect.fn("CatalogRepo.categoriesOf")((productIds: ReadonlyArray<string>) =>
      Effect.map(
        Effect.orDie(
          SqlSchema.findAll({
            Request: Schema.Array(Schema.String),
            Result: Schema.Struct({ id: Schema.String, category: Schema.String }),
            execute: (ids) => sql`
              SELECT p.id, c.name AS category FROM products p JOIN categories c ON c.id = p.category_id
              WHERE p.id IN ${sql.in(ids)}`
          })(productIds)
        ),
        (rows) => new Map(rows.map((row) => [row.id, row.category]))
      )
    )

    /** Tags whose name matches `q` (substring or trigram), best first; every tag without `q`. */
    const tags = Effect.fn("CatalogRepo.tags")((query: string | undefined) =>
      (query === undefined
        ? idNameRows(sql`SELECT id, name FROM tags ORDER BY name, id`)
        : idNameRows(sql`
              SELECT id, name FROM tags
              WHERE lower(name) LIKE '%' || lower(${query}) || '%' OR lower(name) % lower(${query})
                 OR lower(${query}) <% lower(name)
              ORDER BY (lower(name) = lower(${query})) DESC, similarity(lower(name), lower(${query})) DESC, name, id`)
      ).pipe(Effect.orDie)
    )

    /** The title of a product, or the name of a collection, that an `/images/…` path belongs to. */
    const imageSubject = Effect.fn("CatalogRepo.imageSubject")((kind: "product" | "collection", id: string) =>
      (kind === "product"
        ? nameRows(sql`SELECT title AS name FROM products WHERE id = ${id}`)
        : nameRows(sql`SELECT name FROM collections WHERE id = ${id}`)
      ).pipe(
        Effect.orDie,
        Effect.map((rows) => Option.fromNullable(rows[0]?.name))
      )
    )

    // -------------------------------------------------------------------------------------------------------
    // Variants as other contexts need them, and stock

    const findVariantLabel = SqlSchema.findOne({
      Request: Schema.String,
      Result: VariantLabel,
      execute: (variantId) => sql`
        SELECT p.id AS product_id, p.title AS product_title, v.title AS variant_title,
          coalesce(v.image_url, (SELECT i.url FROM product_images i WHERE i.product_id = p.id ORDER BY i.position
            LIMIT 1)) AS image_url
        FROM variants v JOIN products p ON p.id = v.product_id WHERE v.id = ${variantId}`
    })

    /** How a variant is shown on a quote or order line. */
    const variantLabel = Effect.fn("CatalogRepo.variantLabel")((variantId: string) =>
      Effect.orDie(findVariantLabel(variantId))
    )

    const findShipsTo = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ shipsTo: Schema.Array(Schema.String) }),
      execute: (variantId) => sql`SELECT ships_to FROM variant_locations WHERE variant_id = ${variantId}`
    })

    /** The countries a variant ships to; none for an unknown variant. */
    const shipsTo = Effect.fn("CatalogRepo.shipsTo")((variantId: string) =>
      Effect.map(
        Effect.orDie(findShipsTo(variantId)),
        Option.map((location) => location.shipsTo)
      )
    )

    const findOrderVariant = SqlSchema.findOne({
      Request: Schema.String,
      Result: OrderVariant,
      execute: (
        variantId
      ) => sql`SELECT p.id AS product_id, p.title AS product_title, v.title AS variant_title, p.category_id,
            v.price_usd, v.is_digital, v.origin_warehouse, v.weight_class, l.stock, l.ships_to
          FROM variants v JOIN products p ON p.id = v.product_id LEFT JOIN variant_locations l ON l.variant_id = v.id
          WHERE v.id = ${variantId}`
    })

    /** The variant as an order needs it, if there is one. */
    const orderVariant = Effect.fn("CatalogRepo.orderVariant")((variantId: string) =>
      Effect.orDie(findOrderVariant(variantId))
    )

    const findVariantLocation = SqlSchema.findOne({
      Request: Schema.String,
      Result: VariantLocation,
      execute: (variantId) => sql`SELECT v.product_id, l.stock, l.ships_to
        FROM variants v LEFT JOIN variant_locations l ON l.variant_id = v.id WHERE v.id = ${variantId}`
    })

    /** A variant's product and its location's stock and countries, if there is the variant. */
    const variantLocation = Effect.fn("CatalogRepo.variantLocation")((variantId: string) =>
      Effect.orDie(findVariantLocation(variantId))
    )

    const findOffered = SqlSchema.findAll({
      Request: Schema.Union(
        Schema.Struct({ productId: Schema.NullOr(Schema.String) }),
        Schema.Struct({ collectionId: Schema.String })
      ),
      Result: OfferedVariant,
      execute: (source) => sql`SELECT p.id AS product_id, p.title AS product_title, p.description,
          (SELECT i.url FROM product_images i WHERE i.product_id = p.id ORDER BY i.position LIMIT 1) AS image_url,
          v.id AS variant_id, v.title AS variant_title, v.selected_options
        FROM products p JOIN variants v ON v.product_id = p.id
        ${
          "productId" in source
            ? sql`WHERE p.id = ${source.productId}`
            : sql`JOIN collection_products cp ON cp.product_id = p.id AND cp.collection_id = ${source.collectionId}
              WHERE TRUE`
        }
        ORDER BY ${"productId" in source ? sql`p.id` : sql`cp.position`}, v.position`
    })

    /** The variants of a product, or of a collection's products in its order, each with its product. */
    const offeredVariants = Effect.fn("CatalogRepo.offeredVariants")(
      (source: { readonly productId: string | null } | { readonly collectionId: string }) =>
        Effect.orDie(findOffered(source))
    )

    const findDigitalOffered = SqlSchema.findAll({
      Request: Schema.String,
      Result: OfferedVariant,
      execute: (countryCode) => sql`SELECT p.id AS product_id, p.title AS product_title, p.description,
          (SELECT i.url FROM product_images i WHERE i.product_id = p.id ORDER BY i.position LIMIT 1) AS image_url,
          v.id AS variant_id, v.title AS variant_title, v.selected_options
        FROM products p JOIN variants v ON v.product_id = p.id JOIN variant_locations l ON l.variant_id = v.id
        WHERE v.is_digital AND v.price_usd IS NOT NULL AND ${countryCode} = ANY (l.ships_to)
          AND (l.stock IS NULL OR l.stock > 0)
        ORDER BY p.id, v.position`
    })

    /** The digital variants for sale that reach `countryCode`, each with its product, by product. */
    const digitalOffered = Effect.fn("CatalogRepo.digitalOffered")((countryCode: string) =>
      Effect.orDie(findDigitalOffered(countryCode))
    )

    /** Takes `quantity` units where the variant ships to the country and has them (or is untracked). Whether it could. */
    const takeStock = Effect.fn("CatalogRepo.takeStock")((variantId: string, countryCode: string, quantity: number) =>
      Effect.map(
        Effect.orDie(sql`
        UPDATE variant_locations SET stock = stock - ${quantity}
        WHERE variant_id = ${variantId} AND ${countryCode} = ANY (ships_to) AND (stock IS NULL OR stock >= ${quantity})
        RETURNING variant_id`),
        (taken) => taken.length > 0
      )
    )

    /** Puts `quantity` units back, where stock is tracked. */
    const returnStock = Effect.fn("CatalogRepo.returnStock")((variantId: string, quantity: number) =>
      Effect.asVoid(
        Effect.orDie(sql`
        UPDATE variant_locations SET stock = stock + ${quantity} WHERE variant_id = ${variantId} AND stock IS NOT NULL`)
      )
    )

    // -------------------------------------------------------------------------------------------------------
    // Landed reads (the company API's v2)

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

    const landedVariantColumns = sql`
      v.id, v.product_id, v.title, v.selected_options, v.image_url, v.is_digital,
      coalesce((SELECT array_agg(i.url ORDER BY i.position) FROM product_images i WHERE i.product_id = p.id),
               '{}') AS product_images,
      CASE WHEN v.price_usd IS NOT NULL AND (l.stock IS NULL OR l.stock > 0)
        THEN coalesce((SELECT array_agg(c ORDER BY c) FROM unnest(l.ships_to) c), '{}') ELSE '{}' END AS available_in,
      CASE WHEN v.price_usd IS NOT NULL THEN json_build_object('item', landed.item, 'shipping', landed.shipping,
        'duties', landed.duties, 'serviceFee', landed.service_fee, 'total', landed.total) END AS landed`

    /**
     * A page of the ids of the products with a variant orderable in the country for a landed total within the
     * budget: newest first, a collection's in its order.
     */
    const landedPage = Effect.fn("CatalogRepo.landedPage")(function* (query: LandedPageQuery) {
      const landed = landedSql(query.country, query.fee)
      const fits = sql`${orderableIn(query.country)} AND ${withinBudget(query.country, query.min, query.max)}`
      const inCollection =
        query.collectionId === undefined
          ? sql``
          : sql`JOIN collection_products cp ON cp.product_id = p.id AND cp.collection_id = ${query.collectionId}`
      const page = yield* idRows(sql`
        SELECT p.id FROM products p ${inCollection}
        WHERE p.min_price_usd <= ${query.itemBound}
          ${query.catalog === undefined ? sql`` : sql`AND p.catalog = ${query.catalog}`}
          AND EXISTS (SELECT 1 FROM variants v JOIN variant_locations l ON l.variant_id = v.id ${landed}
                      WHERE v.product_id = p.id AND v.price_usd <= ${query.itemBound} AND ${fits})
        ORDER BY ${query.collectionId === undefined ? sql`p.created_at DESC, p.id DESC` : sql`cp.position, p.id`}
        OFFSET ${query.skip} LIMIT ${query.limit}`).pipe(Effect.orDie)
      return page.map((row) => row.id)
    })

    /** The products of a landed page, with their brands, images and the types of their variants. */
    const landedProducts = Effect.fn("CatalogRepo.landedProducts")((ids: ReadonlyArray<string>) =>
      landedProductRows(sql`
            SELECT p.id, p.title, b.id AS brand_id, b.name AS brand_name,
              coalesce((SELECT array_agg(i.url ORDER BY i.position) FROM product_images i WHERE i.product_id = p.id),
                       '{}') AS images,
              (SELECT array_agg(DISTINCT CASE WHEN v.is_digital THEN 'digital' ELSE 'physical' END)
               FROM variants v WHERE v.product_id = p.id) AS types
            FROM products p LEFT JOIN brands b ON b.id = p.brand_id
            WHERE p.id IN ${sql.in(ids)}`).pipe(Effect.orDie)
    )

    /** The variants of those products that fit the page's query, by product and in each product's order. */
    const landedVariantsFitting = Effect.fn("CatalogRepo.landedVariantsFitting")(
      (ids: ReadonlyArray<string>, query: LandedPageQuery) =>
        landedVariantRows(sql`
            SELECT ${landedVariantColumns}
            FROM variants v JOIN products p ON p.id = v.product_id JOIN variant_locations l ON l.variant_id = v.id
            ${landedSql(query.country, query.fee)}
            WHERE v.product_id IN ${sql.in(ids)} AND ${orderableIn(query.country)} AND ${withinBudget(query.country, query.min, query.max)}
            ORDER BY v.product_id, v.position`).pipe(Effect.orDie)
    )

    /** One variant with its landed amounts in the country, if there is the variant. */
    const landedVariant = Effect.fn("CatalogRepo.landedVariant")(
      (variantId: string, country: PricingCountry, fee: FeeRule) =>
        landedVariantRows(sql`
        SELECT ${landedVariantColumns}
        FROM variants v JOIN products p ON p.id = v.product_id LEFT JOIN variant_locations l ON l.variant_id = v.id
        ${landedSql(country, fee)}
        WHERE v.id = ${variantId}`).pipe(
          Effect.orDie,
          Effect.map((rows) => Option.fromNullable(rows[0]))
        )
    )

    /**
     * Of each product, the variant orderable in the country (priced, in stock or untracked, shipping there) with
     * the least landed total (the first in the product's order among equals); a product with none is left out.
     */
    const landedCheapest = Effect.fn("CatalogRepo.landedCheapest")(
      (ids: ReadonlyArray<string>, country: PricingCountry, fee: FeeRule) =>
        ids.length === 0
          ? Effect.succeed([])
          : landedVariantRows(sql`
            SELECT DISTINCT ON (v.product_id) ${landedVariantColumns}
            FROM variants v JOIN products p ON p.id = v.product_id JOIN variant_locations l ON l.variant_id = v.id
            ${landedSql(country, fee)}
            WHERE v.product_id IN ${sql.in(ids)} AND ${orderableIn(country)}
            ORDER BY v.product_id, landed.total, v.position, v.id`).pipe(Effect.orDie)
    )

    // -------------------------------------------------------------------------------------------------------
    // The company API's lists (v3), filtered, sorted and paged by a parsed v3 query

    /**
     * SQL on product `p`: with a country, a variant available there (within the price bounds, in its currency);
     * without one, a priced variant within the bounds (in USD). Nothing to say: TRUE.
     */
    const offered = ({ country, bounds, usd }: Offer) => {
      if (country !== undefined) return availableIn(sql, country, bounds)
      if (bounds.min === undefined && bounds.max === undefined) return sql`TRUE`
      const range = usdRangeFor(bounds, usd.fxRate, usd.digits)
      return sql`${range.min === undefined ? sql`` : sql`p.max_price_usd >= ${range.min} AND`}
        ${range.max === undefined ? sql`` : sql`p.min_price_usd <= ${range.max} AND`}
        EXISTS (SELECT 1 FROM variants v WHERE v.product_id = p.id AND v.price_usd IS NOT NULL
          ${range.min === undefined ? sql`` : sql`AND v.price_usd >= ${range.min}`}
          ${range.max === undefined ? sql`` : sql`AND v.price_usd <= ${range.max}`})`
    }

    /**
     * A product's columns; its tags and options only when the view asks for them (each is a subquery per row
     * of the page). The subqueries sit in the select list, so they run for the page's rows only.
     */
    const productColumns = (position: Statement.Fragment, view: ProductView) => sql`
      p.id, p.title, p.catalog, c.name AS category, p.brand_id AS "brandId", b.name AS "brandName",
      p.created_at AS "createdAt",
      to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "createdKey",
      p.min_price_usd AS "minPriceUsd", p.max_price_usd AS "maxPriceUsd",
      p.variant_count AS "variantCount", p.physical_variant_count AS "physicalVariantCount", p.image_urls AS images,
      ${
        view.include.includes("tags")
          ? sql`coalesce((SELECT json_agg(json_build_object('id', t.id, 'name', t.name) ORDER BY t.name, t.id)
              FROM tags t WHERE t.id = ANY (p.tag_ids)), '[]')`
          : sql`NULL`
      } AS tags,
      ${
        view.fields.includes("options")
          ? sql`coalesce((SELECT json_agg(json_build_object('name', o.name, 'displayName', o.display_name,
                                                         'values', o.option_values) ORDER BY o.position)
              FROM product_options o WHERE o.product_id = p.id), '[]')`
          : sql`NULL`
      } AS options,
      ${position} AS position`

    /**
     * The rows a product page is read from. A small tag's products are taken first by `tag_ids` (`OFFSET 0`
     * keeps the planner from walking a sort's index for them instead), then filtered and sorted: a few
     * thousand rows at most. Otherwise the page walks the sort's index and checks the tag in each row, which
     * finds a page of a large tag after a few hundred rows. The planner cannot tell the two apart, since it
     * does not know how a tag's products spread along the sort: a walk for a small tag whose titles cluster
     * far down the index cost 100+ ms.
     */
    const productSource = (tagId: string | undefined) =>
      tagId === undefined
        ? Effect.succeed(sql`products`)
        : Effect.map(lookupIn(tagSizes, tagId.toLowerCase()), (size) =>
            size <= smallTag
              ? sql`(SELECT * FROM products WHERE tag_ids @> ARRAY[${tagId.toLowerCase()}]::text[] OFFSET 0)`
              : sql`products`
          )

    /** Products per tag, counted up to `smallTag + 1` (all `productSource` asks); a stale figure only costs a slower plan. */
    const tagSizes = yield* Cache.make({
      capacity: 10_000,
      timeToLive: Duration.minutes(10),
      lookup: (tagId: string) =>
        Effect.map(
          Effect.orDie(
            countRows(sql`SELECT count(*)::int AS count
              FROM (SELECT 1 FROM product_tags WHERE tag_id = ${tagId} LIMIT ${smallTag + 1}) tagged`)
          ),
          (rows) => rows[0]?.count ?? 0
        )
    })

    /** The product list's filters, sorts and keyset; `position` is a collection's own order. */
    const productListColumns = (inCollection: boolean): V3Columns<ProductRecord> => ({
      paging: "cursor",
      filters: {
        catalog: (value) => sql`p.catalog = ${value}`,
        type: (value) => (value === "digital" ? sql`p.physical_variant_count = 0` : sql`p.physical_variant_count > 0`),
        search: (value) =>
          sql`(p.search_document @@ websearch_to_tsquery('english', ${value})
            OR lower(p.title) LIKE ${`%${likeEscape(value.toLowerCase())}%`})`,
        tagId: (value) => sql`p.tag_ids @> ARRAY[${value.toLowerCase()}]::text[]`,
        brandId: (value) => sql`p.brand_id = ${value.toLowerCase()}`
      },
      sort: { createdAt: "p.created_at", minPrice: "p.min_price_usd", title: "p.title" },
      // Newest first; a collection in its own order.
      defaultOrder: inCollection
        ? [{ column: "cp.position", descending: false }]
        : [{ column: "p.created_at", descending: true }],
      id: "p.id",
      cursorOf: (row, sortField) => ({
        value:
          sortField === "minPrice"
            ? row.minPriceUsd
            : sortField === "title"
              ? row.title
              : sortField === undefined && inCollection
                ? row.position
                : row.createdKey,
        id: row.id
      })
    })
    const productsColumns = productListColumns(false)
    const collectionProductsColumns = productListColumns(true)

    /**
     * A page of products with a price, of the whole catalog or of one collection (in its order by default), by a
     * v3 query (its country and price filters taken out, as `offer`).
     */
    const productPage = Effect.fn("CatalogRepo.productPage")(function* (
      query: V3Query,
      collectionId: string | undefined,
      offer: Offer
    ) {
      const inCollection = collectionId !== undefined
      const columns = inCollection ? collectionProductsColumns : productsColumns
      const { where, orderBy, limit } = compileV3Query(sql, query, columns)
      const source = yield* productSource(query.filters.tagId)
      // The page's ids first, then its rows: the ids' walk along a sort's index can then read the index
      // alone (the `title` and price indexes carry the filtered columns, migration 0021) and fetch only the
      // page's rows, where a walk of the rows fetched every row it passed over.
      const rows = yield* productRows(productSql`
        WITH page AS (
          SELECT p.id, ${inCollection ? sql`cp.position` : sql`NULL::int`} AS position,
                 row_number() OVER (ORDER BY ${orderBy}) AS n
          FROM ${source} p
          ${inCollection ? sql`JOIN collection_products cp ON cp.product_id = p.id AND cp.collection_id = ${collectionId}` : sql``}
          WHERE p.min_price_usd IS NOT NULL AND ${offered(offer)} AND ${where}
          ORDER BY ${orderBy}
          LIMIT ${limit})
        SELECT ${productColumns(sql`page.position`, query)}
        FROM page
        JOIN products p ON p.id = page.id
        JOIN categories c ON c.id = p.category_id
        LEFT JOIN brands b ON b.id = p.brand_id
        ORDER BY page.n`).pipe(Effect.orDie)
      return v3Page(rows, query, columns)
    })

    /** How many products a listing would walk through, all pages together (an export's progress). */
    const productCount = Effect.fn("CatalogRepo.productCount")(function* (
      query: V3Query,
      collectionId: string | undefined,
      offer: Offer
    ) {
      const { where } = compileV3Query(sql, { ...query, page: { ...query.page, cursor: undefined } }, productsColumns)
      const [row] = yield* countRows(sql`
        SELECT count(*)::int AS count FROM products p
        ${collectionId === undefined ? sql`` : sql`JOIN collection_products cp ON cp.product_id = p.id AND cp.collection_id = ${collectionId.toLowerCase()}`}
        WHERE p.min_price_usd IS NOT NULL AND ${offered(offer)} AND ${where}`).pipe(Effect.orDie)
      return row?.count ?? 0
    })

    /** Products with a price, by id, in no particular order (unknown or unpriced ones left out). */
    const productsById = Effect.fn("CatalogRepo.productsById")((ids: ReadonlyArray<string>, view: ProductView) =>
      productRows(productSql`
          SELECT ${productColumns(sql`NULL::int`, view)}
          FROM products p
          JOIN categories c ON c.id = p.category_id
          LEFT JOIN brands b ON b.id = p.brand_id
          WHERE p.min_price_usd IS NOT NULL AND p.id IN ${sql.in(ids)}`).pipe(Effect.orDie)
    )

    /** Whether a product with a price exists. */
    const pricedProductExists = Effect.fn("CatalogRepo.pricedProductExists")((productId: string) =>
      Effect.map(
        Effect.orDie(idRows(sql`SELECT id FROM products WHERE id = ${productId} AND min_price_usd IS NOT NULL`)),
        (rows) => rows.length > 0
      )
    )

    const variantListColumns: V3Columns<ProductVariantRecord> = {
      paging: "number",
      // `filter[country]` prices the variants; it does not narrow them.
      filters: { country: () => sql`TRUE` },
      sort: {},
      defaultOrder: [{ column: "v.position", descending: false }],
      id: "v.id"
    }

    /** A page of a product's variants, by a v3 query. */
    const variantPage = Effect.fn("CatalogRepo.variantPage")(function* (productId: string, query: V3Query) {
      const { where, orderBy, limit } = compileV3Query(sql, query, variantListColumns)
      const rows = yield* productVariantRows(sql`
        SELECT v.id, v.product_id, v.title, v.image_url, v.personalization, v.description_html,
          coalesce((SELECT json_agg(json_build_object('name', o.name, 'value', v.selected_options ->> o.name)
                                    ORDER BY o.position)
                    FROM product_options o WHERE o.product_id = v.product_id AND v.selected_options ? o.name),
                   '[]') AS selected_options
        FROM variants v
        WHERE v.product_id = ${productId} AND ${where}
        ORDER BY ${orderBy}
        LIMIT ${limit}`).pipe(Effect.orDie)
      return v3Page(rows, query, variantListColumns)
    })

    const collectionListColumns: V3Columns<CollectionRecord> = {
      paging: "number",
      filters: {
        search: (value) => collectionMatches(sql, value),
        // A tag by id or by name (either case).
        tag: (value) => sql`EXISTS (SELECT 1 FROM collection_tags ct JOIN tags t ON t.id = ct.tag_id
          WHERE ct.collection_id = c.id AND (t.id = ${value.toLowerCase()} OR lower(t.name) = lower(${value})))`
      },
      sort: { name: "c.name", createdAt: "c.created_at" },
      defaultOrder: [{ column: "c.name", descending: false }],
      id: "c.id"
    }

    /**
     * A page of collections by a v3 query (its country and price filters taken out); with `offer` those holding
     * a product it offers.
     */
    const collectionPage = Effect.fn("CatalogRepo.collectionPage")(function* (
      query: V3Query,
      offer: Offer | undefined
    ) {
      const holding =
        offer !== undefined
          ? sql`EXISTS (SELECT 1 FROM collection_products cp JOIN products p ON p.id = cp.product_id
            WHERE cp.collection_id = c.id AND p.min_price_usd IS NOT NULL
              AND ${offered(offer)})`
          : sql`TRUE`
      const { where, orderBy, limit } = compileV3Query(sql, query, collectionListColumns)
      const rows = yield* collectionSelect(sql`${holding} AND ${where}`, orderBy, limit)
      return v3Page(rows, query, collectionListColumns)
    })

    const tagListColumns: V3Columns<typeof TagRef.Type> = {
      paging: "number",
      filters: { name: (value) => sql`name ILIKE ${`%${likeEscape(value)}%`}` },
      sort: { name: "name" },
      defaultOrder: [{ column: "name", descending: false }],
      id: "id"
    }

    /** A page of product tags by a v3 query. */
    const tagPage = Effect.fn("CatalogRepo.tagPage")(function* (query: V3Query) {
      const { where, orderBy, limit } = compileV3Query(sql, query, tagListColumns)
      const rows = yield* tagRows(
        sql`SELECT id, name FROM tags WHERE ${where} ORDER BY ${orderBy} LIMIT ${limit}`
      ).pipe(Effect.orDie)
      return v3Page(rows, query, tagListColumns)
    })

    return {
      summaries,
      productVariants,
      variant,
      variantPrice,
      recommendedIds,
      recommendedSummaries,
      collectionSummaries,
      collection,
      collections,
      matchingCollections,
      collectionExists,
      existingCollections,
      productExists,
      categoriesOf,
      tags,
      imageSubject,
      variantLabel,
      shipsTo,
      orderVariant,
      variantLocation,
      offeredVariants,
      digitalOffered,
      takeStock,
      returnStock,
      landedPage,
      landedProducts,
      landedVariantsFitting,
      landedVariant,
      landedCheapest,
      productPage,
      productCount,
      productsById,
      pricedProductExists,
      variantPage,
      collectionPage,
      tagPage
    } as const
  })
}) {}
