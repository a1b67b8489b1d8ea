import { SqlClient, type Statement } from "@effect/sql"
import { Cache, Duration, Effect, Option, Schema } from "effect"
import { CatalogName } from "../../domain/catalog/Catalog.js"
import {
  type AmountRange,
  type CatalogCollection,
  type CatalogProduct,
  type CatalogVariant,
  ProductOptionRecord,
  TagRef
} from "../../domain/catalog/CatalogV3.js"
import { CollectionNotFound, ProductNotFound } from "../../domain/catalog/Errors.js"
import { Personalization } from "../../domain/catalog/Personalization.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { decodeCursor, type V3Cursor, type V3Query } from "../../domain/platform/V3Query.js"
import { lookupIn } from "../platform/Caches.js"
import { rowsOf } from "../platform/Rows.js"
import { compileV3Query, likeEscape, type V3Columns, type V3Page, v3Page } from "../platform/V3QuerySql.js"
import { absoluteUrl, availableIn, Catalog, collectionMatches, DEFAULT_COUNTRY, PublicUrl } from "./Catalog.js"
import { convertUsd, landedAmounts, landedInput, Pricing, type PricingCountry, usdRangeFor } from "./Pricing.js"

/**
 * The catalog as the company API lists it (docs/decisions/0042-v3-catalog.md; docs/catalog.md "Catalog (v3)"): products
 * with keyset cursors, a collection's products, a product's variants with landed prices, collections and tags,
 * filtered, sorted and paged in SQL from a parsed v3 query (src/services/platform/V3QuerySql.ts).
 *
 * - A product is listed when it has a priced variant (`min_price_usd` is set), so every sort key is present.
 * - Prices are for `filter[country]`, else the account's country: accounts have no country of their own and
 *   bill in USD, so that is the catalog's default country, US.
 * - `filter[country]` also narrows: only products with a variant available there (priced, in stock, shipping
 *   there), as v1 search does. `filter[price]` is the item price of such a variant in that currency; without a
 *   country, of any priced variant, in USD.
 */

const Hex24 = /^[0-9a-f]{24}$/

/** What a product read returns beyond its own fields: `include` and `fields` of the v3 query. */
export interface ProductView {
  readonly include: ReadonlyArray<string>
  readonly fields: ReadonlyArray<string>
}

const noExtras: ProductView = { include: [], fields: [] }

/**
 * A product as `productColumns` reads it. The query runs without the client's snake-to-camel transform (its
 * columns are named in camelCase), its arrays come as JSON (which `pg` parses natively), and the rows are
 * checked against the schema (`Schema.is`) rather than decoded into new objects: an export reads every
 * product of the catalog, and per row the decode allocated ~7.5 KB, the nested name transform ~3 KB and
 * `pg`'s text-array parser (images, variant counts) ~5 KB, ~21 KB per line in all (docs/performance.md,
 * `bench:export`).
 */
const ProductRow = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  catalog: CatalogName,
  category: Schema.String,
  brandId: Schema.NullOr(Schema.String),
  brandName: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  /** `created_at` to the microsecond, for the cursor. */
  createdKey: Schema.String,
  minPriceUsd: Schema.Number,
  maxPriceUsd: Schema.Number,
  variantCount: Schema.Number,
  /** 0: a digital product. */
  physicalVariantCount: Schema.Number,
  images: Schema.Array(Schema.String),
  /** Read only when asked for (`include=tags`, `fields=options`). */
  tags: Schema.NullOr(Schema.Array(TagRef)),
  options: Schema.NullOr(Schema.Array(ProductOptionRecord)),
  /** The product's place in the collection being listed; null elsewhere. */
  position: Schema.NullOr(Schema.Number)
})
type ProductRow = typeof ProductRow.Type
const isProductRow = Schema.is(ProductRow)

/** The statement's rows as product rows; one that does not fit is a defect, as with `rowsOf`. */
const productRows = <E, R>(
  statement: Effect.Effect<ReadonlyArray<unknown>, E, R>
): Effect.Effect<ReadonlyArray<ProductRow>, E, R> =>
  Effect.flatMap(statement, (rows) => {
    const misfit = rows.find((row) => !isProductRow(row))
    return misfit === undefined
      ? Effect.succeed(rows as ReadonlyArray<ProductRow>)
      : Effect.die(new Error(`Not a product row: ${JSON.stringify(misfit)}`))
  })

const VariantRow = Schema.Struct({
  id: Schema.String,
  productId: Schema.String,
  title: Schema.String,
  selectedOptions: Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String })),
  imageUrl: Schema.NullOr(Schema.String),
  personalization: Schema.NullOr(Personalization),
  descriptionHtml: Schema.NullOr(Schema.String)
})
type VariantRow = typeof VariantRow.Type
const variantRows = rowsOf(VariantRow)

const CollectionRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  imageUrl: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  tags: Schema.Array(TagRef),
  minUsd: Schema.NullOr(Schema.Number),
  maxUsd: Schema.NullOr(Schema.Number)
})
type CollectionRow = typeof CollectionRow.Type
const collectionRows = rowsOf(CollectionRow)

const tagRows = rowsOf(TagRef)
const foundRows = rowsOf(Schema.Struct({ id: Schema.String }))
const countRows = rowsOf(Schema.Struct({ count: Schema.Int }))

/** A tag with at most this many products drives its pages (see `productSource`). */
const smallTag = 5000

/** A price filter in minor units of the listing country's currency. */
interface PriceBounds {
  readonly min: number | undefined
  readonly max: number | undefined
}

const bound = (value: string | undefined) => (value === undefined ? undefined : Number(value))

/** Whether a cursor sent back could be one of ours for this sort: the value's type, and an id. */
const cursorFits = (cursor: V3Cursor, key: "createdAt" | "minPrice" | "title" | "position") => {
  if (!Hex24.test(cursor.id)) return false
  const value = cursor.value
  switch (key) {
    case "createdAt":
      return (
        typeof value === "string" &&
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(value) &&
        !Number.isNaN(Date.parse(value))
      )
    case "minPrice":
    case "position":
      return typeof value === "number" && Number.isSafeInteger(value) && value >= 0
    case "title":
      return typeof value === "string"
  }
}

export class CatalogV3 extends Effect.Service<CatalogV3>()("CatalogV3", {
  dependencies: [Catalog.Default, Pricing.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    /** For the product queries, whose columns are named as `ProductRow`'s fields (no name transform). */
    const productSql = sql.withoutTransforms()
    const catalog = yield* Catalog
    const pricing = yield* Pricing
    const publicUrl = (yield* PublicUrl).replace(/\/$/, "")
    const absolute = (path: string) => absoluteUrl(publicUrl, path) as string

    /** The country prices are for: `filter[country]` (either case), else the account's country (US). */
    const countryOf = Effect.fn("CatalogV3.country")(function* (code: string | undefined) {
      const wanted = (code ?? DEFAULT_COUNTRY).toUpperCase()
      const found = (yield* pricing.reference()).country.get(wanted)
      if (found === undefined) {
        return yield* InvalidRequest.field("filter[country]", `${wanted} is not a supported country.`)
      }
      return found
    })

    const amount = (usd: number, country: PricingCountry) => ({
      amount: convertUsd(usd, country.fxRate, country.digits),
      currency: country.currency
    })

    const rangeOf = (minUsd: number | null, maxUsd: number | null, country: PricingCountry): AmountRange | null =>
      minUsd === null || maxUsd === null ? null : { min: amount(minUsd, country), max: amount(maxUsd, country) }

    /**
     * SQL on product `p`: with a country, a variant available there (within the price bounds, in its currency);
     * without one, a priced variant within the bounds (in USD). Nothing to say: TRUE.
     */
    const offered = (country: PricingCountry | undefined, bounds: PriceBounds, usd: PricingCountry) => {
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
     * The query's `filter[country]` and price bounds (named `min` and `max` in this list), which make one
     * condition together (`offered`); the other filters compile on their own.
     */
    const splitFilters = (query: V3Query, names: { readonly min?: string; readonly max: string }) => {
      const rest: Record<string, string> = { ...query.filters }
      const take = (name: string | undefined) => {
        if (name === undefined) return undefined
        const value = rest[name]
        delete rest[name]
        return value
      }
      const countryCode = take("country")
      const bounds: PriceBounds = { min: bound(take(names.min)), max: bound(take(names.max)) }
      return { rest: { ...query, filters: rest } satisfies V3Query, countryCode, bounds }
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

    const toProduct = (row: ProductRow, country: PricingCountry): CatalogProduct => ({
      id: row.id,
      title: row.title,
      catalog: row.catalog,
      type: row.physicalVariantCount === 0 ? "digital" : "physical",
      category: row.category,
      brand: row.brandId === null ? null : { id: row.brandId, name: row.brandName ?? "" },
      images: row.images.map(absolute),
      ...(row.tags === null ? {} : { tags: row.tags }),
      ...(row.options === null ? {} : { options: row.options }),
      variantsCount: row.variantCount,
      priceRange: rangeOf(row.minPriceUsd, row.maxPriceUsd, country),
      createdAt: row.createdAt
    })

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
    const productListColumns = (inCollection: boolean): V3Columns<ProductRow> => ({
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

    /** A cursor from `links.next` of this list and sort; anything else is a 400 naming `page[cursor]`. */
    const checkCursor = (query: V3Query, inCollection: boolean) => {
      if (query.page.cursor === undefined) return Effect.void
      const cursor = decodeCursor(query.page.cursor)
      const sortField = query.sort[0]?.field
      const key =
        sortField === "minPrice" || sortField === "title" || sortField === "createdAt"
          ? sortField
          : inCollection
            ? "position"
            : "createdAt"
      return cursor !== undefined && cursorFits(cursor, key)
        ? Effect.void
        : InvalidRequest.field("page[cursor]", "Not a cursor of this list; follow links.next as given.")
    }

    /** A page of products, of the whole catalog or of one collection (in its order by default). */
    const productPage = (query: V3Query, collectionId: string | undefined) =>
      Effect.gen(function* () {
        const inCollection = collectionId !== undefined
        yield* checkCursor(query, inCollection)
        const { rest, countryCode, bounds } = splitFilters(query, { min: "price][gte", max: "price][lte" })
        const country = yield* countryOf(countryCode)
        const columns = inCollection ? collectionProductsColumns : productsColumns
        const { where, orderBy, limit } = compileV3Query(sql, rest, columns)
        const source = yield* productSource(rest.filters.tagId)
        const offer = offered(countryCode === undefined ? undefined : country, bounds, country)
        // The page's ids first, then its rows: the ids' walk along a sort's index can then read the index
        // alone (the `title` and price indexes carry the filtered columns, migration 0021) and fetch only the
        // page's rows, where a walk of the rows fetched every row it passed over.
        const rows = yield* productRows(productSql`
        WITH page AS (
          SELECT p.id, ${inCollection ? sql`cp.position` : sql`NULL::int`} AS position,
                 row_number() OVER (ORDER BY ${orderBy}) AS n
          FROM ${source} p
          ${inCollection ? sql`JOIN collection_products cp ON cp.product_id = p.id AND cp.collection_id = ${collectionId}` : sql``}
          WHERE p.min_price_usd IS NOT NULL AND ${offer} AND ${where}
          ORDER BY ${orderBy}
          LIMIT ${limit})
        SELECT ${productColumns(sql`page.position`, query)}
        FROM page
        JOIN products p ON p.id = page.id
        JOIN categories c ON c.id = p.category_id
        LEFT JOIN brands b ON b.id = p.brand_id
        ORDER BY page.n`).pipe(Effect.orDie)
        const page = v3Page(rows, query, columns)
        return { ...page, rows: page.rows.map((row) => toProduct(row, country)) } satisfies V3Page<CatalogProduct>
      })

    /** How many products a listing would walk through, all pages together (an export's progress). */
    const productCount = Effect.fn("CatalogV3.productCount")(function* (
      query: V3Query,
      collectionId: string | undefined
    ) {
      const { rest, countryCode, bounds } = splitFilters(query, { min: "price][gte", max: "price][lte" })
      const country = yield* countryOf(countryCode)
      const { where } = compileV3Query(sql, { ...rest, page: { ...rest.page, cursor: undefined } }, productsColumns)
      const offer = offered(countryCode === undefined ? undefined : country, bounds, country)
      const [row] = yield* countRows(sql`
        SELECT count(*)::int AS count FROM products p
        ${collectionId === undefined ? sql`` : sql`JOIN collection_products cp ON cp.product_id = p.id AND cp.collection_id = ${collectionId.toLowerCase()}`}
        WHERE p.min_price_usd IS NOT NULL AND ${offer} AND ${where}`).pipe(Effect.orDie)
      return row?.count ?? 0
    })

    /**
     * A page of products (never their variants), by a parsed v3 query with a keyset cursor: `filter[catalog|
     * type|search|tagId|brandId|country]`, `filter[price][gte|lte]`, one sort of `createdAt|minPrice|title`
     * (newest first by default). Prices are for the query's country.
     */
    const products = Effect.fn("CatalogV3.products")((query: V3Query) => productPage(query, undefined))

    /** A page of a collection's products (404 for an unknown collection), as `products` pages them. */
    const collectionProducts = Effect.fn("CatalogV3.collectionProducts")(function* (
      collectionId: string,
      query: V3Query
    ) {
      const id = collectionId.toLowerCase()
      yield* collectionExists(id)
      return yield* productPage(query, id)
    })

    /** Products by id, in that order, priced for the country (unknown or unpriced ones left out). */
    const productsById = (ids: ReadonlyArray<string>, country: PricingCountry, view: ProductView) =>
      Effect.gen(function* () {
        if (ids.length === 0) return []
        const rows = yield* productRows(productSql`
          SELECT ${productColumns(sql`NULL::int`, view)}
          FROM products p
          JOIN categories c ON c.id = p.category_id
          LEFT JOIN brands b ON b.id = p.brand_id
          WHERE p.min_price_usd IS NOT NULL AND p.id IN ${sql.in(ids)}`).pipe(Effect.orDie)
        const byId = new Map(rows.map((row) => [row.id, row]))
        return ids.flatMap((id) => {
          const row = byId.get(id)
          return row === undefined ? [] : [toProduct(row, country)]
        })
      })

    const notFound = (productId: string) => new ProductNotFound({ message: `No product ${productId}.`, productId })

    /** One product, priced for the country (default the account's), with what `view` asks for; 404 when unknown. */
    const product = Effect.fn("CatalogV3.product")(function* (
      productId: string,
      countryCode: string | undefined,
      view: ProductView
    ) {
      const country = yield* countryOf(countryCode)
      const [found] = yield* productsById([productId.toLowerCase()], country, view)
      if (found === undefined) return yield* notFound(productId)
      return found
    })

    /** The products v1's product detail recommends beside this one, available in the country. */
    const recommendations = Effect.fn("CatalogV3.recommendations")(function* (
      productId: string,
      countryCode: string | undefined,
      view: ProductView
    ) {
      const country = yield* countryOf(countryCode)
      const id = productId.toLowerCase()
      if ((yield* productsById([id], country, noExtras)).length === 0) return yield* notFound(productId)
      return yield* productsById(yield* catalog.recommendedIds(id, country), country, view)
    })

    const variantColumns: V3Columns<VariantRow> = {
      paging: "number",
      // `filter[country]` prices the variants; it does not narrow them.
      filters: { country: () => sql`TRUE` },
      sort: {},
      defaultOrder: [{ column: "v.position", descending: false }],
      id: "v.id"
    }

    /**
     * A page of a product's variants (404 for an unknown product), each with its landed price and breakdown
     * for `filter[country]` (default the account's), in that country's currency.
     */
    const variants = Effect.fn("CatalogV3.variants")(function* (productId: string, query: V3Query) {
      const id = productId.toLowerCase()
      const country = yield* countryOf(query.filters.country)
      const exists = yield* foundRows(sql`SELECT id FROM products WHERE id = ${id} AND min_price_usd IS NOT NULL`).pipe(
        Effect.orDie
      )
      if (exists.length === 0) return yield* notFound(productId)
      const { where, orderBy, limit } = compileV3Query(sql, query, variantColumns)
      const rows = yield* variantRows(sql`
        SELECT v.id, v.product_id, v.title, v.image_url, v.personalization, v.description_html,
          coalesce((SELECT json_agg(json_build_object('name', o.name, 'value', v.selected_options ->> o.name)
                                    ORDER BY o.position)
                    FROM product_options o WHERE o.product_id = v.product_id AND v.selected_options ? o.name),
                   '[]') AS selected_options
        FROM variants v
        WHERE v.product_id = ${id} AND ${where}
        ORDER BY ${orderBy}
        LIMIT ${limit}`).pipe(Effect.orDie)
      const page = v3Page(rows, query, variantColumns)
      const reference = yield* pricing.reference()
      const facts = new Map(
        (yield* pricing.variants(Option.some(page.rows.map((row) => row.id)))).map((v) => [v.variantId, v])
      )
      const priced = page.rows.map((row): CatalogVariant => {
        const fact = facts.get(row.id)
        const priceUsd = fact?.priceUsd ?? null
        const landed =
          fact === undefined || priceUsd === null
            ? null
            : landedAmounts(landedInput(reference, { ...fact, priceUsd }, country))
        const money = (minor: number) => ({ amount: minor, currency: country.currency })
        return {
          id: row.id,
          productId: row.productId,
          title: row.title,
          selectedOptions: row.selectedOptions,
          images: row.imageUrl === null ? [] : [absolute(row.imageUrl)],
          personalization: row.personalization,
          descriptionHtml: row.descriptionHtml,
          price:
            landed === null
              ? null
              : {
                  item: money(landed.item),
                  shipping: money(landed.shipping),
                  duties: money(landed.duties),
                  serviceFee: money(landed.serviceFee),
                  total: money(landed.total)
                }
        }
      })
      return { ...page, rows: priced } satisfies V3Page<CatalogVariant>
    })

    const collectionExists = (collectionId: string) =>
      Effect.flatMap(Effect.orDie(foundRows(sql`SELECT id FROM collections WHERE id = ${collectionId}`)), (rows) =>
        rows.length === 0
          ? new CollectionNotFound({ message: `No collection ${collectionId}.`, collectionId })
          : Effect.void
      )

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

    const toCollection = (row: CollectionRow, country: PricingCountry): CatalogCollection => ({
      id: row.id,
      name: row.name,
      description: row.description,
      images: row.imageUrl === null ? [] : [absolute(row.imageUrl)],
      tags: row.tags,
      priceRange: rangeOf(row.minUsd, row.maxUsd, country),
      createdAt: row.createdAt
    })

    const collectionListColumns: V3Columns<CollectionRow> = {
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
     * A page of collections, priced for `filter[country]` (default the account's). `filter[country]` keeps
     * those holding a product available there, `filter[maxPrice]` those holding one at or under it.
     */
    const collections = Effect.fn("CatalogV3.collections")(function* (query: V3Query) {
      const { rest, countryCode, bounds } = splitFilters(query, { max: "maxPrice" })
      const country = yield* countryOf(countryCode)
      const narrowed = countryCode !== undefined || bounds.max !== undefined
      const holding = narrowed
        ? sql`EXISTS (SELECT 1 FROM collection_products cp JOIN products p ON p.id = cp.product_id
            WHERE cp.collection_id = c.id AND p.min_price_usd IS NOT NULL
              AND ${offered(countryCode === undefined ? undefined : country, bounds, country)})`
        : sql`TRUE`
      const { where, orderBy, limit } = compileV3Query(sql, rest, collectionListColumns)
      const rows = yield* collectionSelect(sql`${holding} AND ${where}`, orderBy, limit)
      const page = v3Page(rows, query, collectionListColumns)
      return { ...page, rows: page.rows.map((row) => toCollection(row, country)) } satisfies V3Page<CatalogCollection>
    })

    /** One collection, priced for the country (default the account's); 404 when unknown. */
    const collection = Effect.fn("CatalogV3.collection")(function* (collectionId: string, countryCode?: string) {
      const country = yield* countryOf(countryCode)
      const [row] = yield* collectionSelect(sql`c.id = ${collectionId.toLowerCase()}`, sql`c.id`, sql`1`)
      if (row === undefined) {
        return yield* new CollectionNotFound({ message: `No collection ${collectionId}.`, collectionId })
      }
      return toCollection(row, country)
    })

    const tagListColumns: V3Columns<typeof TagRef.Type> = {
      paging: "number",
      filters: { name: (value) => sql`name ILIKE ${`%${likeEscape(value)}%`}` },
      sort: { name: "name" },
      defaultOrder: [{ column: "name", descending: false }],
      id: "id"
    }

    /** A page of product tags, by name; `filter[name]` is a case-insensitive substring. */
    const tags = Effect.fn("CatalogV3.tags")(function* (query: V3Query) {
      const { where, orderBy, limit } = compileV3Query(sql, query, tagListColumns)
      const rows = yield* tagRows(
        sql`SELECT id, name FROM tags WHERE ${where} ORDER BY ${orderBy} LIMIT ${limit}`
      ).pipe(Effect.orDie)
      return v3Page(rows, query, tagListColumns)
    })

    return {
      products,
      collectionProducts,
      productCount,
      product,
      recommendations,
      variants,
      collections,
      collection,
      tags
    } as const
  })
}) {}
