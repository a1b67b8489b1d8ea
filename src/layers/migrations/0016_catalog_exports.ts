import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Catalog exports (docs/decisions/0043-catalog-exports.md, docs/catalog.md "Exports").
 *
 * - `catalog_exports`: one row per export, with what was asked (`request`: filters, locations, include,
 *   fields, collection ids, whether prices are shown), its status and progress. The partial unique index is
 *   the rule "one active export per company, across both kinds": a second insert while one is `pending` or
 *   `processing` fails on it. `download_secret` keys the HMAC of its signed download URLs.
 * - `catalog_export_chunks`: the NDJSON files, a page of lines per row, in `seq` order per location. Each
 *   chunk records where the walk stands after it (`source_index`, `next_cursor`: null once that source is
 *   read to its end), so an export whose worker stopped resumes after its last chunk. The rows are deleted
 *   when the export expires; the export's row stays, so its links answer 410 rather than 404.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE catalog_exports (
      id text PRIMARY KEY,
      company_id text NOT NULL REFERENCES companies (id),
      environment text NOT NULL CHECK (environment IN ('test', 'live')),
      kind text NOT NULL CHECK (kind IN ('products', 'collections')),
      request jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
      total_lines integer,
      written_lines integer NOT NULL DEFAULT 0,
      error_message text,
      download_secret text NOT NULL,
      created_at timestamptz NOT NULL,
      completed_at timestamptz,
      expires_at timestamptz,
      CHECK ((status = 'completed') = (expires_at IS NOT NULL))
    )`
  yield* sql`CREATE UNIQUE INDEX catalog_exports_one_active ON catalog_exports (company_id)
    WHERE status IN ('pending', 'processing')`
  yield* sql`CREATE INDEX catalog_exports_company ON catalog_exports (company_id, environment, created_at DESC)`
  yield* sql`
    CREATE TABLE catalog_export_chunks (
      export_id text NOT NULL REFERENCES catalog_exports (id) ON DELETE CASCADE,
      location text NOT NULL,
      seq integer NOT NULL,
      source_index integer NOT NULL,
      next_cursor text,
      lines integer NOT NULL,
      body text NOT NULL,
      PRIMARY KEY (export_id, location, seq)
    )`
})
