import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A lexeme's term rows in relevance order (docs/search.md, "One word, in rank order"), so that the first page
 * of a one-word search reads the word's best rows and stops, where it read every row of the word and sorted
 * them (232,089 rows for "thank" at a million products: 36 ms of index-only scan before any scoring).
 *
 * - `search_term_rank(weight, title_words)`: what a term row scores towards relevance on its own: the tier of
 *   the place it matched, its weight, and the title's brevity (`fromTermIndex` in src/services/catalog/Search.ts
 *   adds the same three for the weakest and the average of several words);
 * - `search_terms_rank`: the rows of each lexeme by that score, best first, then by product; it carries what
 *   the walk checks (the country's bit, the from/to prices) and the score's own columns, so the walk is an
 *   index-only scan. It is partial on a condition every row meets (`weight >= 0`) and only the walk states:
 *   a statement that reads all of a lexeme's rows cannot choose it, since it is smaller than the primary key
 *   (built at once rather than grown) and would be chosen for such reads, which it serves in a worse order
 *   ("thank" with a tag: 240 ms through it, 50 ms through the primary key).
 *
 * Building the index reads the term table once and sorts it: 43–48 s at a million products (19 million rows).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`SET LOCAL maintenance_work_mem = '256MB'`
  // A plain SQL function, so the planner inlines it and matches the index expression to the query's.
  yield* sql`
    CREATE FUNCTION search_term_rank(weight smallint, title_words smallint) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT (ARRAY[80000, 1160000, 3320000, 6800000])[weight + 1] + 100000 / (1 + title_words) $$`
  yield* sql`
    CREATE INDEX search_terms_rank ON search_terms (lexeme, search_term_rank(weight, title_words) DESC, product_id)
      INCLUDE (weight, title_words, ships_to_mask, min_price_usd, max_price_usd)
      WHERE weight >= 0`
  yield* sql`ANALYZE search_terms`
})
