import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The search term index (docs/search.md, "Ranking"), and the indexes of the other orders.
 *
 * `search_terms` holds one row per (lexeme, product) of `products.search_document`: the best weight the
 * lexeme has in that product (3 = title, 2 = brand, 1 = category or tags, 0 = description only), the
 * number of distinct title lexemes, and a copy of the product's from/to prices and creation time. Ordering
 * the products holding a query's words, by relevance, price or age, and narrowing them by price, reads only
 * this index (index-only scans), so a common word in thousands of products costs no visit to their rows.
 *
 * `search_words` holds the words of titles, brands and categories as written; a query whose words match
 * nothing is respelled with them (trigram similarity). It only grows: a word no product uses any more
 * respells to nothing.
 *
 * Statement-level triggers keep both in step with every write of `products`, whoever makes it; deletes
 * cascade. Existing products are indexed by rewriting their documents once.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE search_terms (
      lexeme text NOT NULL,
      product_id text NOT NULL REFERENCES products (id) ON DELETE CASCADE,
      weight smallint NOT NULL CHECK (weight BETWEEN 0 AND 3),
      title_words smallint NOT NULL,
      min_price_usd integer,
      max_price_usd integer,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (lexeme, product_id) INCLUDE (weight, title_words, min_price_usd, max_price_usd, created_at)
    )`
  yield* sql`CREATE INDEX search_terms_product ON search_terms (product_id)`
  // The words of titles, brands and categories, as written: what a misspelled word is respelled as.
  yield* sql`CREATE TABLE search_words (word text PRIMARY KEY)`
  yield* sql`CREATE INDEX search_words_trgm ON search_words USING gin (word gin_trgm_ops)`
  // Exact title matches rank first; this finds them without a scan.
  yield* sql`CREATE INDEX products_title_lower ON products (lower(title))`
  // price_desc is (from-price desc, id asc): its own index, so a page is a range scan that stops early.
  yield* sql`CREATE INDEX products_price_desc ON products (min_price_usd DESC, id)`

  yield* sql`
    CREATE FUNCTION index_search_terms() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM search_terms t USING changed c WHERE t.product_id = c.id;
      INSERT INTO search_terms (lexeme, product_id, weight, title_words, min_price_usd, max_price_usd, created_at)
      SELECT u.lexeme, c.id,
             3 - (ascii((SELECT coalesce(min(w), 'D') FROM unnest(u.weights) w)) - ascii('A')),
             length(ts_filter(c.search_document, '{a}')), c.min_price_usd, c.max_price_usd, c.created_at
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
  yield* sql`
    CREATE TRIGGER products_search_terms_insert AFTER INSERT ON products
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION index_search_terms()`
  yield* sql`
    CREATE TRIGGER products_search_terms_update AFTER UPDATE ON products
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION index_search_terms()`

  yield* sql`UPDATE products SET search_document = search_document`
})
