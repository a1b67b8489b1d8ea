import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What a buyer may or must specify to personalize a variant (docs/catalog.md, "Personalization"): a JSON
 * object `{fields: [...]}` (src/domain/catalog/Personalization.ts), null when the variant takes none. The
 * seed writes it; a database seeded by an earlier version gets it for its curated variants when the swag
 * base products are added (src/services/catalog/Seed.ts).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE variants ADD COLUMN personalization jsonb
      CHECK (personalization IS NULL OR jsonb_typeof(personalization -> 'fields') = 'array')`
})
