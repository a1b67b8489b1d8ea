import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { rowsOf } from "../platform/Rows.js"
import { nowDate } from "../platform/Time.js"
import { Pricing } from "./Pricing.js"
import {
  type BuiltProduct,
  brandId,
  categoryId,
  curatedCollections,
  curatedProducts,
  generatedProduct,
  swagProducts,
  tagId
} from "./seed/build.js"
import { categories, tagNames } from "./seed/catalog.js"
import { slugify } from "./seed/random.js"
import { countries, serviceFeeRule, shippingRates, shippingZones, warehouses } from "./seed/reference.js"

/**
 * The demo catalog (docs/catalog.md).
 *
 * - `ensureDemoCatalog` writes the curated catalog and the pricing reference data once, and the swag base
 *   products once: under a transaction holding an advisory lock, it checks their `catalog_seeds` marker rows
 *   (`curated`, `swag`), so concurrent callers (two instances starting together) seed exactly once, a seeded
 *   database is left alone, and a database seeded by a version without the swag products gets them (and the
 *   personalization of its curated variants) on its next start.
 * - `generate(n)` adds synthetic products `gen:0 … gen:n-1` in batches, each batch one transaction that also
 *   advances the `generated` marker: a second run, or a run after a crash, continues where the last stopped.
 * - Everything is deterministic: the same code gives the same rows and ids on every machine.
 * - Rows travel as one JSON document per table per batch (`jsonb_to_recordset`), a multi-row insert that
 *   needs no parameter per value; `search_document` is computed by Postgres in the same statement.
 */

/** Bumped when the curated data changes in a way an existing database should not silently miss. */
export const curatedVersion = 1

/** The version of the swag base products (the `swag` marker). */
export const swagVersion = 1

/** `pg_advisory_xact_lock` key for seeding ("ribbon seed"). */
const seedLock = 0x5eed_c47

export interface SeedSummary {
  /** Whether this call wrote the curated catalog or the swag base products (false: both were already there). */
  readonly seeded: boolean
  readonly products: number
  readonly variants: number
  readonly collections: number
  readonly tags: number
  readonly countries: number
}

export interface GenerateSummary {
  /** Products added by this call. */
  readonly added: number
  /** Synthetic products in the database now. */
  readonly total: number
}

export type OnProgress = (done: number, total: number) => Effect.Effect<void>

/** Rows of the inline statements below, decoded (decoders built once). */
const productsRows = rowsOf(Schema.Struct({ products: Schema.Number }))

export class Seed extends Effect.Service<Seed>()("Seed", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pricing = yield* Pricing

    const json = (rows: ReadonlyArray<unknown>) => JSON.stringify(rows)

    const insertProducts = (built: ReadonlyArray<BuiltProduct>) =>
      Effect.gen(function* () {
        if (built.length === 0) return
        // New products are not stock-availability changes (migration 0017): the trigger skips this transaction.
        yield* sql`SELECT set_config('ribbon.catalog_load', 'on', true)`
        yield* sql`
          INSERT INTO products (id, catalog, title, description, brand_id, category_id, created_at,
                                min_price_usd, max_price_usd, variant_count, physical_variant_count, image_urls,
                                tag_ids, ships_to_mask, search_document)
          SELECT id, catalog, title, description, brand_id, category_id, created_at, min_price_usd, max_price_usd,
                 variant_count, physical_variant_count, image_urls, tag_ids,
                 (SELECT coalesce(bit_or(1 << c.mask_bit), 0) FROM countries c WHERE c.code = ANY (x.ships_to)),
                 setweight(to_tsvector('english', title), 'A')
                 || setweight(to_tsvector('english', coalesce(brand_name, '')), 'B')
                 || setweight(to_tsvector('english', category_name || ' ' || tag_names), 'C')
                 || setweight(to_tsvector('english', coalesce(description, '')), 'D')
          FROM jsonb_to_recordset(${json(built.map((b) => b.product))}::jsonb) AS x(
            id text, catalog text, title text, description text, brand_id text, category_id text,
            created_at timestamptz, min_price_usd integer, max_price_usd integer,
            variant_count integer, physical_variant_count integer, image_urls jsonb, tag_ids text[], ships_to text[],
            brand_name text, category_name text, tag_names text)`
        yield* sql`
          INSERT INTO variants (id, product_id, position, sku, title, selected_options, image_url, price_usd,
                                is_digital, shipping_required, personalization_required, personalization,
                                description_html, details, origin_warehouse, weight_class)
          SELECT * FROM jsonb_to_recordset(${json(built.flatMap((b) => b.variants))}::jsonb) AS x(
            id text, product_id text, position integer, sku text, title text, selected_options jsonb,
            image_url text, price_usd integer, is_digital boolean, shipping_required boolean,
            personalization_required boolean, personalization jsonb, description_html text, details jsonb,
            origin_warehouse text, weight_class text)`
        yield* sql`
          INSERT INTO variant_locations (variant_id, stock, ships_to)
          SELECT * FROM jsonb_to_recordset(${json(built.flatMap((b) => b.locations))}::jsonb) AS x(
            variant_id text, stock integer, ships_to text[])`
        yield* sql`
          INSERT INTO product_images (product_id, position, url)
          SELECT * FROM jsonb_to_recordset(${json(built.flatMap((b) => b.images))}::jsonb) AS x(
            product_id text, position integer, url text)`
        const options = built.flatMap((b) => b.options)
        if (options.length > 0) {
          yield* sql`
            INSERT INTO product_options (product_id, position, name, display_name, option_values)
            SELECT * FROM jsonb_to_recordset(${json(options)}::jsonb) AS x(
              product_id text, position integer, name text, display_name text, option_values text[])`
        }
        yield* sql`
          INSERT INTO product_tags (product_id, tag_id)
          SELECT * FROM jsonb_to_recordset(${json(built.flatMap((b) => b.tags))}::jsonb) AS x(
            product_id text, tag_id text)`
      })

    const insertReference = Effect.gen(function* () {
      yield* sql`INSERT INTO warehouses ${sql.insert(warehouses.map((w) => ({ ...w })))}`
      yield* sql`INSERT INTO shipping_zones ${sql.insert(shippingZones.map((z) => ({ ...z })))}`
      // Each country's bit in `ships_to_mask` (migration 0022), given in the order of the codes.
      const codes = countries.map((c) => c.code).sort()
      yield* sql`INSERT INTO countries ${sql.insert(
        countries.map(({ importTaxBps: _, ...c }) => ({ ...c, maskBit: codes.indexOf(c.code) }))
      )}`
      yield* sql`INSERT INTO shipping_rates ${sql.insert(shippingRates.map((r) => ({ ...r })))}`
      yield* sql`INSERT INTO service_fee_rules ${sql.insert({ ...serviceFeeRule })}`
      yield* sql`INSERT INTO categories ${sql.insert(
        categories.map((c) => ({ id: categoryId(c.slug), slug: c.slug, name: c.name }))
      )}`
      yield* sql`INSERT INTO duty_rates ${sql.insert(
        categories.flatMap((c) =>
          countries.map((country) => ({
            categoryId: categoryId(c.slug),
            countryCode: country.code,
            rateBps: country.importTaxBps + c.dutyBps
          }))
        )
      )}`
      const brands = [...new Set(categories.flatMap((c) => c.brands.map(([name]) => name)))]
      yield* sql`INSERT INTO brands ${sql.insert(brands.map((name) => ({ id: brandId(name), slug: slugify(name), name })))}`
      yield* sql`INSERT INTO tags ${sql.insert(
        Object.entries(tagNames).map(([slug, name]) => ({ id: tagId(slug), slug, name }))
      )}`
    })

    const counts = Effect.gen(function* () {
      const [row] = yield* rowsOf(
        Schema.Struct({
          products: Schema.Number,
          variants: Schema.Number,
          collections: Schema.Number,
          tags: Schema.Number,
          countries: Schema.Number
        })
      )(sql`
        SELECT (SELECT count(*)::int FROM products) AS products,
               (SELECT count(*)::int FROM variants) AS variants,
               (SELECT count(*)::int FROM collections) AS collections,
               (SELECT count(*)::int FROM tags) AS tags,
               (SELECT count(*)::int FROM countries) AS countries`)
      return row
    })

    const marker = (name: string) =>
      Effect.map(
        productsRows(sql`SELECT products FROM catalog_seeds WHERE name = ${name}`),
        (rows) => rows[0]?.products
      )

    const seededAlready = Effect.map(Effect.all([marker("curated"), marker("swag")]), ([curated, swag]) => ({
      curated: curated !== undefined,
      swag: swag !== undefined
    }))

    /** The curated catalog, its collections and the reference data. */
    const insertCurated = (products: ReadonlyArray<BuiltProduct>) =>
      Effect.gen(function* () {
        yield* insertReference
        yield* insertProducts(products)
        const built = curatedCollections(products)
        yield* sql`
            INSERT INTO collections (id, slug, name, description, image_url, created_at)
            SELECT * FROM jsonb_to_recordset(${json(built.collections)}::jsonb) AS x(
              id text, slug text, name text, description text, image_url text, created_at timestamptz)`
        yield* sql`
            INSERT INTO collection_products (collection_id, product_id, position)
            SELECT * FROM jsonb_to_recordset(${json(built.products)}::jsonb) AS x(
              collection_id text, product_id text, position integer)`
        yield* sql`
            INSERT INTO collection_tags (collection_id, tag_id)
            SELECT * FROM jsonb_to_recordset(${json(built.tags)}::jsonb) AS x(collection_id text, tag_id text)`
        yield* sql`
            INSERT INTO catalog_seeds ${sql.insert({
              name: "curated",
              version: curatedVersion,
              products: products.length,
              seededAt: yield* nowDate
            })}`
      })

    /**
     * The swag base products. A database seeded before them also lacks the personalization of its curated
     * variants (a later column): it is written from the same templates, to the variants still without it.
     */
    const insertSwag = (curated: ReadonlyArray<BuiltProduct>, curatedWasThere: boolean) =>
      Effect.gen(function* () {
        if (curatedWasThere) {
          const personalized = curated.flatMap((b) =>
            b.variants.flatMap((v) =>
              v.personalization === null ? [] : [{ id: v.id, personalization: v.personalization }]
            )
          )
          yield* sql`
            UPDATE variants v SET personalization = x.personalization
            FROM jsonb_to_recordset(${json(personalized)}::jsonb) AS x(id text, personalization jsonb)
            WHERE v.id = x.id AND v.personalization IS NULL`
        }
        const swag = swagProducts()
        yield* insertProducts(swag)
        yield* sql`
          INSERT INTO catalog_seeds ${sql.insert({
            name: "swag",
            version: swagVersion,
            products: swag.length,
            seededAt: yield* nowDate
          })}`
      })

    /**
     * Writes the curated catalog with the reference data, and the swag base products, each unless already
     * there. Safe under concurrent callers.
     */
    const ensureDemoCatalog = Effect.fn("Seed.ensureDemoCatalog")(function* () {
      const before = yield* seededAlready
      if (before.curated && before.swag) return { seeded: false, ...(yield* counts) } as SeedSummary
      const seeded = yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`SELECT pg_advisory_xact_lock(${seedLock})`
          const there = yield* seededAlready
          if (there.curated && there.swag) return false
          const curated = curatedProducts()
          if (!there.curated) yield* insertCurated(curated)
          if (!there.swag) yield* insertSwag(curated, there.curated)
          return true
        })
      )
      if (seeded) {
        yield* pricing.invalidateReference
        yield* Effect.logInfo("Seeded the demo catalog")
      }
      return { seeded, ...(yield* counts) } as SeedSummary
    }, Effect.orDie)

    /**
     * Makes the synthetic catalog `n` products large (`gen:0 … gen:n-1`, on top of the curated one), adding
     * what is missing in batches of `batchSize`, each its own transaction. `onProgress(done, n)` follows
     * every batch.
     */
    const generate = Effect.fn("Seed.generate")(function* (
      n: number,
      onProgress: OnProgress = () => Effect.void,
      batchSize = 1000
    ) {
      yield* ensureDemoCatalog()
      const start = (yield* marker("generated")) ?? 0
      yield* onProgress(Math.min(start, n), n)
      for (let from = start; from < n; from += batchSize) {
        const to = Math.min(n, from + batchSize)
        const built = Array.from({ length: to - from }, (_, k) => generatedProduct(from + k))
        const seededAt = yield* nowDate
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* insertProducts(built)
            yield* sql`
                INSERT INTO catalog_seeds (name, version, products, seeded_at)
                VALUES ('generated', 1, ${to}, ${seededAt})
                ON CONFLICT (name) DO UPDATE SET products = excluded.products, seeded_at = excluded.seeded_at`
          })
        )
        yield* onProgress(to, n)
      }
      // Fresh statistics, so the planner uses the search indexes on a catalog that just grew a hundredfold; and
      // a vacuumed term index, product table and tag and collection members, so that searches and the v3 lists'
      // title and price walks read their indexes with index-only scans from the start.
      if (n > start) {
        yield* sql`ANALYZE`
        yield* sql`VACUUM search_terms, products, product_tags, collection_products`
      }
      return { added: Math.max(0, n - start), total: Math.max(start, n) } as GenerateSummary
    }, Effect.orDie)

    return { ensureDemoCatalog, generate, counts: Effect.orDie(counts) } as const
  }),
  dependencies: [Pricing.Default]
}) {}
