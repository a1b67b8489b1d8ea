import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The catalog and the reference data landed pricing needs (docs/catalog.md, docs/pricing.md).
 *
 * - Every amount is an integer in minor units. Prices, shipping rates and the fee bounds are USD cents;
 *   a country's de-minimis threshold is in that country's own currency.
 * - Rates are basis points (1/100 of a percent); FX rates are exact decimals (`numeric`), read as strings.
 * - `products.search_document`, `min_price_usd` and `max_price_usd` are maintained by the seed
 *   (src/services/catalog/Seed.ts), which writes products only through its own statements.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  // Reference data: warehouses, shipping zones, countries, rates, the fee rule.
  yield* sql`
    CREATE TABLE warehouses (
      code text PRIMARY KEY,
      name text NOT NULL,
      country_code text NOT NULL CHECK (country_code ~ '^[A-Z]{2}$'),
      customs_area text NOT NULL
    )`
  yield* sql`
    CREATE TABLE shipping_zones (
      code text PRIMARY KEY,
      name text NOT NULL
    )`
  yield* sql`
    CREATE TABLE countries (
      code text PRIMARY KEY CHECK (code ~ '^[A-Z]{2}$'),
      name text NOT NULL,
      currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      locale text NOT NULL,
      fx_rate numeric(20, 8) NOT NULL CHECK (fx_rate > 0),
      shipping_zone text NOT NULL REFERENCES shipping_zones (code),
      customs_area text NOT NULL,
      de_minimis bigint NOT NULL CHECK (de_minimis >= 0)
    )`
  yield* sql`
    CREATE TABLE shipping_rates (
      origin_warehouse text NOT NULL REFERENCES warehouses (code),
      shipping_zone text NOT NULL REFERENCES shipping_zones (code),
      weight_class text NOT NULL CHECK (weight_class IN ('light', 'medium', 'heavy')),
      amount_usd integer NOT NULL CHECK (amount_usd >= 0),
      PRIMARY KEY (origin_warehouse, shipping_zone, weight_class)
    )`
  yield* sql`
    CREATE TABLE service_fee_rules (
      id text PRIMARY KEY CHECK (id = 'default'),
      rate_bps integer NOT NULL CHECK (rate_bps >= 0),
      min_usd integer NOT NULL CHECK (min_usd >= 0),
      max_usd integer NOT NULL,
      CHECK (max_usd >= min_usd)
    )`

  // Taxonomy.
  yield* sql`
    CREATE TABLE categories (
      id text PRIMARY KEY,
      slug text NOT NULL UNIQUE,
      name text NOT NULL
    )`
  yield* sql`
    CREATE TABLE duty_rates (
      category_id text NOT NULL REFERENCES categories (id),
      country_code text NOT NULL REFERENCES countries (code),
      rate_bps integer NOT NULL CHECK (rate_bps >= 0),
      PRIMARY KEY (category_id, country_code)
    )`
  yield* sql`
    CREATE TABLE brands (
      id text PRIMARY KEY,
      slug text NOT NULL UNIQUE,
      name text NOT NULL
    )`
  yield* sql`
    CREATE TABLE tags (
      id text PRIMARY KEY,
      slug text NOT NULL UNIQUE,
      name text NOT NULL
    )`
  yield* sql`CREATE INDEX tags_name_trgm ON tags USING gin (lower(name) gin_trgm_ops)`

  // Products and variants.
  yield* sql`
    CREATE TABLE products (
      id text PRIMARY KEY,
      catalog text NOT NULL CHECK (catalog IN ('marketplace', 'swag')),
      title text NOT NULL,
      description text,
      brand_id text REFERENCES brands (id),
      category_id text NOT NULL REFERENCES categories (id),
      created_at timestamptz NOT NULL,
      min_price_usd integer,
      max_price_usd integer,
      search_document tsvector NOT NULL DEFAULT ''::tsvector
    )`
  yield* sql`CREATE INDEX products_search ON products USING gin (search_document)`
  yield* sql`CREATE INDEX products_title_trgm ON products USING gin (lower(title) gin_trgm_ops)`
  yield* sql`CREATE INDEX products_newest ON products (created_at DESC, id DESC)`
  yield* sql`CREATE INDEX products_price ON products (min_price_usd, id)`
  yield* sql`CREATE INDEX products_category ON products (category_id)`
  yield* sql`
    CREATE TABLE product_images (
      product_id text NOT NULL REFERENCES products (id) ON DELETE CASCADE,
      position integer NOT NULL,
      url text NOT NULL,
      PRIMARY KEY (product_id, position)
    )`
  yield* sql`
    CREATE TABLE product_options (
      product_id text NOT NULL REFERENCES products (id) ON DELETE CASCADE,
      position integer NOT NULL,
      name text NOT NULL,
      display_name text NOT NULL,
      option_values text[] NOT NULL,
      PRIMARY KEY (product_id, position)
    )`
  yield* sql`
    CREATE TABLE product_tags (
      product_id text NOT NULL REFERENCES products (id) ON DELETE CASCADE,
      tag_id text NOT NULL REFERENCES tags (id),
      PRIMARY KEY (product_id, tag_id)
    )`
  yield* sql`CREATE INDEX product_tags_tag ON product_tags (tag_id, product_id)`
  yield* sql`
    CREATE TABLE variants (
      id text PRIMARY KEY,
      product_id text NOT NULL REFERENCES products (id) ON DELETE CASCADE,
      position integer NOT NULL,
      sku text NOT NULL UNIQUE,
      title text NOT NULL,
      selected_options jsonb NOT NULL DEFAULT '{}',
      image_url text,
      price_usd integer CHECK (price_usd > 0),
      is_digital boolean NOT NULL,
      shipping_required boolean NOT NULL,
      personalization_required boolean NOT NULL DEFAULT false,
      description_html text,
      details jsonb,
      origin_warehouse text REFERENCES warehouses (code),
      weight_class text CHECK (weight_class IN ('light', 'medium', 'heavy')),
      UNIQUE (product_id, position),
      CHECK (is_digital = (origin_warehouse IS NULL)),
      CHECK (is_digital = (weight_class IS NULL)),
      CHECK (shipping_required = NOT is_digital)
    )`
  yield* sql`
    CREATE TABLE variant_locations (
      variant_id text PRIMARY KEY REFERENCES variants (id) ON DELETE CASCADE,
      stock integer CHECK (stock >= 0),
      ships_to text[] NOT NULL
    )`
  yield* sql`CREATE INDEX variant_locations_ships_to ON variant_locations USING gin (ships_to)`

  // Collections.
  yield* sql`
    CREATE TABLE collections (
      id text PRIMARY KEY,
      slug text NOT NULL UNIQUE,
      name text NOT NULL,
      description text,
      image_url text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX collections_name_trgm ON collections USING gin (lower(name) gin_trgm_ops)`
  yield* sql`
    CREATE TABLE collection_products (
      collection_id text NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
      product_id text NOT NULL REFERENCES products (id) ON DELETE CASCADE,
      position integer NOT NULL,
      PRIMARY KEY (collection_id, product_id)
    )`
  yield* sql`CREATE INDEX collection_products_order ON collection_products (collection_id, position)`
  yield* sql`
    CREATE TABLE collection_tags (
      collection_id text NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
      tag_id text NOT NULL REFERENCES tags (id),
      PRIMARY KEY (collection_id, tag_id)
    )`

  // What has been seeded: one row per seed (the curated catalog, each generated batch run).
  yield* sql`
    CREATE TABLE catalog_seeds (
      name text PRIMARY KEY,
      version integer NOT NULL,
      products integer NOT NULL,
      seeded_at timestamptz NOT NULL
    )`
})
