import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Where a product can ship, in the term index (docs/search.md, "The term index"), so that a search rules out
 * the products that cannot reach the country while it scans the index, instead of visiting each one's
 * variants to find that out (at a million products, "bouquet" in MX visited 17,942 products to answer
 * nothing: docs/performance.md, "At 1,000,000 products").
 *
 * - `countries.mask_bit`: each country's bit (0–30), given in the order of the codes;
 * - `products.ships_to_mask`: the bits of the countries a priced variant of the product ships to, kept by the
 *   seed as `min_price_usd` is. Stock is left out (it changes with every order): the mask is a superset of
 *   where the product is purchasable, and a search still checks each result exactly;
 * - `search_terms.ships_to_mask`: its copy on every term row, carried by the primary key (`INCLUDE`), so the
 *   check is part of the index-only scan.
 *
 * An existing catalog is filled in: the products by one UPDATE with the search-terms trigger off (nothing it
 * indexes changes), the term index rebuilt beside the old one from its rows and the masks, then swapped in
 * (one pass, where an UPDATE would rewrite every row and both of its indexes), its rows stored in the order
 * of its primary key, as CLUSTER would: a lexeme's rows are then on neighbouring pages, and an index-only scan
 * of a common word checks a few visibility-map pages instead of one per row (2,425 buffers instead of 200,415
 * for "thank" at a million products). It wants a VACUUM after, for its index-only scans, where autovacuum is
 * off.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`SET LOCAL maintenance_work_mem = '256MB'`
  yield* sql`ALTER TABLE countries ADD COLUMN mask_bit smallint UNIQUE CHECK (mask_bit BETWEEN 0 AND 30)`
  yield* sql`
    UPDATE countries c SET mask_bit = n.bit
    FROM (SELECT code, row_number() OVER (ORDER BY code) - 1 AS bit FROM countries) n WHERE n.code = c.code`
  yield* sql`ALTER TABLE countries ALTER COLUMN mask_bit SET NOT NULL`

  yield* sql`ALTER TABLE products ADD COLUMN ships_to_mask integer NOT NULL DEFAULT 0`
  yield* sql`ALTER TABLE products DISABLE TRIGGER products_search_terms_update`
  yield* sql`
    UPDATE products p SET ships_to_mask = m.mask
    FROM (SELECT v.product_id, bit_or(1 << c.mask_bit) AS mask
          FROM variants v JOIN variant_locations l ON l.variant_id = v.id JOIN countries c ON c.code = ANY (l.ships_to)
          WHERE v.price_usd IS NOT NULL GROUP BY v.product_id) m
    WHERE m.product_id = p.id`
  yield* sql`ALTER TABLE products ENABLE TRIGGER products_search_terms_update`

  yield* sql`
    CREATE TABLE search_terms_next (
      lexeme text NOT NULL,
      product_id text NOT NULL,
      weight smallint NOT NULL CHECK (weight BETWEEN 0 AND 3),
      title_words smallint NOT NULL,
      min_price_usd integer,
      max_price_usd integer,
      created_at timestamptz NOT NULL,
      ships_to_mask integer NOT NULL
    )`
  yield* sql`
    INSERT INTO search_terms_next
    SELECT t.lexeme, t.product_id, t.weight, t.title_words, t.min_price_usd, t.max_price_usd, t.created_at,
           p.ships_to_mask
    FROM search_terms t JOIN products p ON p.id = t.product_id
    ORDER BY t.lexeme, t.product_id`
  yield* sql`DROP TABLE search_terms`
  yield* sql`ALTER TABLE search_terms_next RENAME TO search_terms`
  yield* sql`
    ALTER TABLE search_terms ADD CONSTRAINT search_terms_pkey PRIMARY KEY (lexeme, product_id)
      INCLUDE (weight, title_words, min_price_usd, max_price_usd, created_at, ships_to_mask)`
  yield* sql`CREATE INDEX search_terms_product ON search_terms (product_id)`
  yield* sql`
    ALTER TABLE search_terms ADD CONSTRAINT search_terms_product_id_fkey
      FOREIGN KEY (product_id) REFERENCES products (id) ON DELETE CASCADE`

  yield* sql`
    CREATE OR REPLACE FUNCTION index_search_terms() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM search_terms t USING changed c WHERE t.product_id = c.id;
      INSERT INTO search_terms (lexeme, product_id, weight, title_words, min_price_usd, max_price_usd, created_at,
                                ships_to_mask)
      SELECT u.lexeme, c.id,
             3 - (ascii((SELECT coalesce(min(w), 'D') FROM unnest(u.weights) w)) - ascii('A')),
             length(ts_filter(c.search_document, '{a}')), c.min_price_usd, c.max_price_usd, c.created_at,
             c.ships_to_mask
      FROM changed c, unnest(c.search_document) u;
      INSERT INTO search_words (word)
      SELECT DISTINCT w FROM changed c
        JOIN categories k ON k.id = c.category_id
        LEFT JOIN brands b ON b.id = c.brand_id,
        regexp_split_to_table(lower(c.title || ' ' || coalesce(b.name, '') || ' ' || k.name), '[^[:alnum:]]+') w
      WHERE length(w) >= 3
      ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`
  yield* sql`ANALYZE products, search_terms`
})
