import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Context, Effect, Either, Option, Schema } from "effect"
import {
  Collection,
  CollectionPriceRange,
  ProductOption,
  ProductSummary,
  Tag,
  Variant
} from "../../domain/catalog/Catalog.js"
import { CollectionNotFound, ProductNotFound, VariantNotFound } from "../../domain/catalog/Errors.js"
import { FieldIssue, InvalidRequest } from "../../domain/platform/Errors.js"
import type { Id } from "../../domain/platform/Ids.js"
import { MoneyRange } from "../../domain/platform/Money.js"
import { rowsOf } from "../platform/Rows.js"
import { convertUsd, formatMoney, Pricing, type PricingCountry, type PricingReference, usdRangeFor } from "./Pricing.js"

/**
 * Catalog reads for the agent API (docs/catalog.md, docs/search.md): product summaries priced in a country,
 * products with their variants and recommendations, variants, collections, tags and countries.
 * Search (src/services/catalog/Search.ts) finds ids and asks this service for the summaries.
 */

/**
 * The country used when a caller names none. Agent API requests never get here without one: their handlers
 * default to the signed-in user's country (docs/search.md); this is the service's own default.
 */
export const DEFAULT_COUNTRY = "US"

/** Rows of the inline statements below, decoded (decoders built once). */
const idRows = rowsOf(Schema.Struct({ id: Schema.String }))
const idPriceUsdRows = rowsOf(Schema.Struct({ id: Schema.String, priceUsd: Schema.NullOr(Schema.Number) }))
const idNameRows = rowsOf(Schema.Struct({ id: Schema.String, name: Schema.String }))
const nameRows = rowsOf(Schema.Struct({ name: Schema.String }))

/**
 * The service's public base URL (`PUBLIC_URL`, no trailing slash). Image paths in the catalog are relative
 * (`/images/…`); summaries and variants make them absolute with it. Provided by the layers (from AppConfig).
 */
export class PublicUrl extends Context.Tag("PublicUrl")<PublicUrl, string>() {}

/** A catalog path (`/images/…`) made absolute under the public URL; absolute URLs pass as they are. */
export const absoluteUrl = (publicUrl: string, path: string | null) =>
  path === null || /^https?:\/\//.test(path) ? path : `${publicUrl}${path.startsWith("/") ? "" : "/"}${path}`

// ---------------------------------------------------------------------------------------------------------
// Cursors: opaque base64url of the last row's sort key (docs/decisions/0022-search.md).

export interface CursorKey {
  /** Which ordering the key belongs to (`relevance`, `price_asc`, …, `collection`). */
  readonly s: string
  /** The sort key of the last row returned, ending with its id. */
  readonly k: ReadonlyArray<string | number>
}

export const encodeCursor = (key: CursorKey): string => Buffer.from(JSON.stringify(key), "utf8").toString("base64url")

const badCursor = (message: string) =>
  new InvalidRequest({
    message: `cursor: ${message}`,
    errors: [FieldIssue.make({ path: "cursor", message })]
  })

/** Decodes a cursor made for `ordering` with `length` key parts; anything else is a 400 naming `cursor`. */
export const decodeCursor = (
  cursor: string,
  ordering: string,
  length: number
): Either.Either<ReadonlyArray<string | number>, InvalidRequest> => {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return Either.left(badCursor("Malformed cursor."))
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
  } catch {
    return Either.left(badCursor("Malformed cursor."))
  }
  const key = parsed as Partial<CursorKey> | null
  if (
    typeof key !== "object" ||
    key === null ||
    typeof key.s !== "string" ||
    !Array.isArray(key.k) ||
    key.k.length !== length ||
    !key.k.every((part) => typeof part === "string" || (typeof part === "number" && Number.isFinite(part)))
  ) {
    return Either.left(badCursor("Malformed cursor."))
  }
  if (key.s !== ordering) {
    return Either.left(badCursor(`This cursor belongs to a different ordering (${key.s}); start again without it.`))
  }
  return Either.right(key.k)
}

// ---------------------------------------------------------------------------------------------------------
// Rows

interface SummaryVariantRow {
  readonly id: string
  readonly priceUsd: number | null
  readonly stock: number | null
  readonly shipsTo: ReadonlyArray<string> | null
}

/** A product summary as `summaryColumns` reads it. */
export interface SummaryRow {
  readonly id: string
  readonly title: string
  readonly brand: string | null
  readonly category: string
  readonly catalog: string
  readonly images: ReadonlyArray<string>
  readonly tags: ReadonlyArray<string>
  readonly options: ReadonlyArray<{ name: string; displayName: string; values: ReadonlyArray<string> }> | null
  readonly variants: ReadonlyArray<SummaryVariantRow> | null
}

interface VariantRow {
  readonly id: string
  readonly productId: string
  readonly title: string
  readonly selectedOptions: Record<string, string> | null
  readonly imageUrl: string | null
  readonly priceUsd: number | null
  readonly shippingRequired: boolean
  readonly isDigital: boolean
  readonly personalizationRequired: boolean
  readonly descriptionHtml: string | null
  readonly details: unknown
}

interface CollectionRow {
  readonly id: string
  readonly name: string
  readonly description: string | null
  readonly imageUrl: string | null
  readonly tags: ReadonlyArray<string>
  readonly minUsd: number | null
  readonly maxUsd: number | null
}

/**
 * The columns of the summary of product `p`, whichever statement reads it: `Catalog.summaries` by id, or a
 * search's page statement beside the page's ids (one round trip fewer a page), presented by `Catalog.summary`.
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

/** Priced AND in stock (or untracked) AND ships to the country (docs/pricing.md). */
const purchasable = (variant: SummaryVariantRow, country: string) =>
  variant.priceUsd !== null &&
  (variant.stock === null || variant.stock > 0) &&
  (variant.shipsTo ?? []).includes(country)

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

export class Catalog extends Effect.Service<Catalog>()("Catalog", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pricing = yield* Pricing
    const publicUrl = (yield* PublicUrl).replace(/\/$/, "")

    const absolute = (path: string | null) => absoluteUrl(publicUrl, path)

    const money = (usd: number, country: PricingCountry) =>
      formatMoney(convertUsd(usd, country.fxRate, country.digits), country.currency, country.locale)

    /** A supported country by code (either case); otherwise a 400 naming `path`. */
    const country = Effect.fn("Catalog.country")(function* (
      code: string | undefined,
      path = "country",
      reference?: PricingReference
    ) {
      const wanted = (code ?? DEFAULT_COUNTRY).toUpperCase()
      const found = (reference ?? (yield* pricing.reference())).country.get(wanted)
      if (found === undefined) {
        return yield* new InvalidRequest({
          message: `${path}: ${wanted} is not a supported country (GET /v1/countries lists them).`,
          errors: [FieldIssue.make({ path, message: `Unsupported country: ${code}` })]
        })
      }
      return found
    })

    /** Every supported country, by code. */
    const countries = Effect.fn("Catalog.countries")(function* () {
      return (yield* pricing.reference()).countries
    })

    /** A product's summary priced for the country, from its `summaryColumns`. */
    const summary = (row: SummaryRow, country: PricingCountry): ProductSummary => {
      const variants = row.variants ?? []
      const prices = variants.flatMap((v) => (v.priceUsd === null ? [] : [v.priceUsd]))
      const buyable = variants.filter((v) => purchasable(v, country.code))
      const images = row.images.map((url) => absolute(url) as string)
      return ProductSummary.make(
        {
          id: row.id as Id,
          title: row.title,
          brand: row.brand,
          category: row.category,
          catalog: row.catalog,
          imageUrl: images[0] ?? null,
          images,
          tags: row.tags,
          priceRange:
            prices.length === 0
              ? null
              : MoneyRange.make(
                  { min: money(Math.min(...prices), country), max: money(Math.max(...prices), country) },
                  true
                ),
          variantsCount: variants.length,
          options: (row.options ?? []).map((o) =>
            ProductOption.make({ name: o.name, displayName: o.displayName, values: o.values }, true)
          ),
          defaultVariantId: buyable.length === 1 ? (buyable[0]!.id as Id) : null
        },
        true
      )
    }

    /** Product summaries priced for the country, in the order of `ids` (unknown ids are skipped). */
    const summaries = Effect.fn("Catalog.summaries")(function* (ids: ReadonlyArray<string>, country: PricingCountry) {
      if (ids.length === 0) return [] as ReadonlyArray<ProductSummary>
      const rows = yield* sql<SummaryRow>`
        SELECT p.id, ${summaryColumns(sql)} FROM products p
        WHERE p.id IN ${sql.in(ids)}`.pipe(Effect.orDie)
      const byId = new Map(rows.map((row) => [row.id, row]))
      return ids.flatMap((id) => {
        const row = byId.get(id)
        return row === undefined ? [] : [summary(row, country)]
      })
    })

    /** The rows a statement selects, in `order`, each with its product's summary priced for the country. */
    const summariesOf = <A extends { readonly id: string }>(
      selected: Statement.Fragment,
      order: Statement.Fragment,
      country: PricingCountry
    ) =>
      sql<A & SummaryRow>`${withSummaryColumns(sql, selected, order)}`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.map((row) => ({ row, summary: summary(row, country) })))
      )

    const toVariant = (row: VariantRow, country: PricingCountry): Variant =>
      Variant.make(
        {
          id: row.id as Id,
          productId: row.productId as Id,
          title: row.title,
          selectedOptions: row.selectedOptions ?? {},
          imageUrl: absolute(row.imageUrl),
          price: row.priceUsd === null ? null : money(row.priceUsd, country),
          shippingRequired: row.shippingRequired,
          isDigital: row.isDigital,
          personalizationRequired: row.personalizationRequired,
          descriptionHtml: row.descriptionHtml,
          details: row.details ?? null
        },
        true
      )

    const variantColumns = sql`
      v.id, v.product_id, v.title, v.selected_options, v.image_url, v.price_usd, v.shipping_required, v.is_digital,
      v.personalization_required, v.description_html, v.details`

    /** A product, its variants priced for the country, and up to 8 recommendations available there. */
    const product = Effect.fn("Catalog.product")(function* (productId: string, countryCode?: string) {
      const target = yield* country(countryCode)
      const [found] = yield* summaries([productId], target)
      if (found === undefined) {
        return yield* new ProductNotFound({ message: `No product ${productId}.`, productId })
      }
      const variantRows = yield* sql<VariantRow>`
        SELECT ${variantColumns} FROM variants v WHERE v.product_id = ${productId} ORDER BY v.position`.pipe(
        Effect.orDie
      )
      return {
        product: found,
        variants: variantRows.map((row) => toVariant(row, target)),
        recommendations: (yield* summariesOf(recommended(productId, target), sql`s.rank, s.id`, target)).map(
          ({ summary }) => summary
        )
      }
    })

    /**
     * Up to 8 products to show beside one (the product detail's recommendations, on every API line): the same
     * category or a shared collection, both first, available in the country.
     */
    const recommendedIds = Effect.fn("Catalog.recommendedIds")(function* (productId: string, target: PricingCountry) {
      const rows = yield* idRows(sql`SELECT id FROM (${recommended(productId, target)}) r ORDER BY rank, id`).pipe(
        Effect.orDie
      )
      return rows.map((r) => r.id)
    })

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

    /** One variant, priced for the country. */
    const variant = Effect.fn("Catalog.variant")(function* (variantId: string, countryCode?: string) {
      const target = yield* country(countryCode)
      const [row] = yield* sql<VariantRow>`SELECT ${variantColumns} FROM variants v WHERE v.id = ${variantId}`.pipe(
        Effect.orDie
      )
      if (row === undefined) return yield* new VariantNotFound({ message: `No variant ${variantId}.`, variantId })
      return toVariant(row, target)
    })

    /** Availability and all-in price per country (default: every supported one). */
    const availability = Effect.fn("Catalog.availability")(function* (
      variantId: string,
      countryCodes?: ReadonlyArray<string>
    ) {
      const reference = yield* pricing.reference()
      const codes =
        countryCodes === undefined
          ? undefined
          : yield* Effect.forEach(countryCodes, (code) =>
              Effect.map(country(code, "countries", reference), (c) => c.code)
            )
      const [exists] = yield* idPriceUsdRows(sql`
        SELECT id, price_usd FROM variants WHERE id = ${variantId}`).pipe(Effect.orDie)
      if (exists === undefined) return yield* new VariantNotFound({ message: `No variant ${variantId}.`, variantId })
      if (exists.priceUsd === null) {
        return yield* new VariantNotFound({ message: `Variant ${variantId} is not for sale.`, variantId })
      }
      return yield* pricing.availability(variantId, codes).pipe(
        // The variant and the countries were checked above; anything else is a bug.
        Effect.catchTag("NotFound", "InvalidRequest", (e) => Effect.die(e))
      )
    })

    const collectionRows = (where: Statement.Fragment, order: Statement.Fragment, limit: number) =>
      sql<CollectionRow>`
        SELECT c.id, c.name, c.description, c.image_url,
          coalesce((SELECT array_agg(t.name ORDER BY t.name) FROM collection_tags ct JOIN tags t ON t.id = ct.tag_id
                    WHERE ct.collection_id = c.id), '{}') AS tags,
          (SELECT min(p.min_price_usd) FROM collection_products cp JOIN products p ON p.id = cp.product_id
           WHERE cp.collection_id = c.id) AS min_usd,
          (SELECT max(p.max_price_usd) FROM collection_products cp JOIN products p ON p.id = cp.product_id
           WHERE cp.collection_id = c.id) AS max_usd
        FROM collections c
        WHERE ${where}
        ORDER BY ${order}
        LIMIT ${limit}`.pipe(Effect.orDie)

    const toCollection = (row: CollectionRow, target: PricingCountry) =>
      Collection.make(
        {
          id: row.id as Id,
          name: row.name,
          description: row.description,
          imageUrl: absolute(row.imageUrl),
          priceRange:
            row.minUsd === null || row.maxUsd === null
              ? null
              : CollectionPriceRange.make(
                  {
                    min: convertUsd(row.minUsd, target.fxRate, target.digits),
                    max: convertUsd(row.maxUsd, target.fxRate, target.digits)
                  },
                  true
                ),
          tags: row.tags
        },
        true
      )

    /**
     * Collections, optionally matching `q` and holding something at or under `maxPrice` (minor units of the
     * country's currency). Best name match first with `q`, else by name.
     */
    const collections = Effect.fn("Catalog.collections")(function* (options: {
      readonly q?: string | undefined
      readonly maxPrice?: number | undefined
      readonly country?: string | undefined
      readonly limit: number
    }) {
      const target = yield* country(options.country)
      const q = options.q?.trim() || undefined
      const where = sql.and([
        q === undefined ? sql`true` : collectionMatches(sql, q),
        options.maxPrice === undefined
          ? sql`true`
          : sql`EXISTS (SELECT 1 FROM collection_products cp JOIN products p ON p.id = cp.product_id
                        WHERE cp.collection_id = c.id AND ${availableIn(sql, target, { min: undefined, max: options.maxPrice })})`
      ])
      const order =
        q === undefined ? sql`c.name, c.id` : sql`word_similarity(lower(${q}), lower(c.name)) DESC, c.name, c.id`
      const rows = yield* collectionRows(where, order, options.limit)
      return rows.map((row) => toCollection(row, target))
    })

    /** Collections matching search words (for `/v1/search`), at most `limit`. */
    const matchingCollections = Effect.fn("Catalog.matchingCollections")(function* (
      q: string,
      target: PricingCountry,
      limit = 5
    ) {
      const rows = yield* collectionRows(
        collectionMatches(sql, q),
        sql`word_similarity(lower(${q}), lower(c.name)) DESC, c.name, c.id`,
        limit
      )
      return rows.map((row) => toCollection(row, target))
    })

    /** A collection and a page of its products available in the country (in the collection's order). */
    const collection = Effect.fn("Catalog.collection")(function* (
      collectionId: string,
      options: {
        readonly country?: string | undefined
        readonly limit: number
        readonly cursor?: string | undefined
        readonly minPrice?: number | undefined
        readonly maxPrice?: number | undefined
      }
    ) {
      const target = yield* country(options.country)
      const after = options.cursor === undefined ? undefined : yield* decodeCursor(options.cursor, "collection", 2)
      if (after !== undefined && !(Number.isSafeInteger(after[0]) && /^[0-9a-f]{24}$/.test(String(after[1])))) {
        return yield* badCursor("Malformed cursor.")
      }
      const [row] = yield* collectionRows(sql`c.id = ${collectionId}`, sql`c.id`, 1)
      if (row === undefined) {
        return yield* new CollectionNotFound({ message: `No collection ${collectionId}.`, collectionId })
      }
      const page = yield* summariesOf<{ readonly id: string; readonly position: number }>(
        sql`
          SELECT p.id, cp.position FROM collection_products cp JOIN products p ON p.id = cp.product_id
          WHERE cp.collection_id = ${collectionId}
            AND ${availableIn(sql, target, { min: options.minPrice, max: options.maxPrice })}
            ${after === undefined ? sql`` : sql`AND (cp.position, p.id) > (${Number(after[0])}, ${String(after[1])})`}
          ORDER BY cp.position, p.id
          LIMIT ${options.limit + 1}`,
        sql`s.position, s.id`,
        target
      )
      const shown = page.slice(0, options.limit)
      const last = shown[shown.length - 1]?.row
      return {
        collection: toCollection(row, target),
        products: shown.map(({ summary }) => summary),
        nextCursor:
          page.length > options.limit && last !== undefined
            ? encodeCursor({ s: "collection", k: [last.position, last.id] })
            : null
      }
    })

    /** Tags whose name matches `q` (substring or trigram), best first; every tag without `q`. */
    const tags = Effect.fn("Catalog.tags")(function* (q?: string) {
      const query = q?.trim() || undefined
      const rows = yield* (
        query === undefined
          ? idNameRows(sql`SELECT id, name FROM tags ORDER BY name, id`)
          : idNameRows(sql`
              SELECT id, name FROM tags
              WHERE lower(name) LIKE '%' || lower(${query}) || '%' OR lower(name) % lower(${query})
                 OR lower(${query}) <% lower(name)
              ORDER BY (lower(name) = lower(${query})) DESC, similarity(lower(name), lower(${query})) DESC, name, id`)
      ).pipe(Effect.orDie)
      return rows.map((row) => Tag.make({ id: row.id as Id, name: row.name }, true))
    })

    /** Whether a collection exists. */
    const collectionExists = Effect.fn("Catalog.collectionExists")(function* (collectionId: string) {
      const rows = yield* sql`SELECT 1 FROM collections WHERE id = ${collectionId}`.pipe(Effect.orDie)
      return rows.length > 0
    })

    /** The title of a product, or the name of a collection, that an `/images/…` path belongs to. */
    const imageSubject = Effect.fn("Catalog.imageSubject")(function* (kind: "product" | "collection", id: string) {
      const rows = yield* (
        kind === "product"
          ? nameRows(sql`SELECT title AS name FROM products WHERE id = ${id}`)
          : nameRows(sql`SELECT name FROM collections WHERE id = ${id}`)
      ).pipe(Effect.orDie)
      return Option.fromNullable(rows[0]?.name)
    })

    const findVariantLabel = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({
        productId: Schema.String,
        productTitle: Schema.String,
        variantTitle: Schema.String,
        imageUrl: Schema.NullOr(Schema.String)
      }),
      execute: (variantId) => sql`
        SELECT p.id AS product_id, p.title AS product_title, v.title AS variant_title,
          coalesce(v.image_url, (SELECT i.url FROM product_images i WHERE i.product_id = p.id ORDER BY i.position
            LIMIT 1)) AS image_url
        FROM variants v JOIN products p ON p.id = v.product_id WHERE v.id = ${variantId}`
    })

    /** How a variant is shown on a quote or order line: its product (id and title), its own title and its image (as stored). */
    const variantLabel = Effect.fn("Catalog.variantLabel")((variantId: string) =>
      Effect.orDie(findVariantLabel(variantId))
    )

    const findShipsTo = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ shipsTo: Schema.Array(Schema.String) }),
      execute: (variantId) => sql`SELECT ships_to FROM variant_locations WHERE variant_id = ${variantId}`
    })

    /** The countries a variant ships to; none for an unknown variant. */
    const shipsTo = Effect.fn("Catalog.shipsTo")((variantId: string) =>
      Effect.map(
        Effect.orDie(findShipsTo(variantId)),
        Option.map((location) => location.shipsTo)
      )
    )

    /**
     * Takes `quantity` units of a variant that ships to `countryCode`, in the caller's transaction: untracked
     * stock (null) stays untracked, tracked stock never goes below zero. Whether it could.
     */
    const takeStock = Effect.fn("Catalog.takeStock")(function* (
      variantId: string,
      countryCode: string,
      quantity: number
    ) {
      const taken = yield* sql`
        UPDATE variant_locations SET stock = stock - ${quantity}
        WHERE variant_id = ${variantId} AND ${countryCode} = ANY (ships_to) AND (stock IS NULL OR stock >= ${quantity})
        RETURNING variant_id`.pipe(Effect.orDie)
      return taken.length > 0
    })

    /** Puts `quantity` units back, where stock is tracked (a cancelled order). */
    const returnStock = Effect.fn("Catalog.returnStock")((variantId: string, quantity: number) =>
      Effect.orDie(sql`
        UPDATE variant_locations SET stock = stock + ${quantity} WHERE variant_id = ${variantId} AND stock IS NOT NULL`)
    )

    return {
      country,
      countries,
      variantLabel,
      shipsTo,
      takeStock,
      returnStock,
      imageSubject,
      summary,
      summaries,
      product,
      recommendedIds,
      variant,
      availability,
      collections,
      matchingCollections,
      collection,
      collectionExists,
      tags
    } as const
  }),
  dependencies: [Pricing.Default]
}) {}

export type { PricingCountry }
