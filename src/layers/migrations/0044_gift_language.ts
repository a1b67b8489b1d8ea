import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The language a gift's recipient picked on the gift page (docs/decisions/0074-gift-page-languages.md): its later
 * reminders are written in it. Null until the recipient picks one; one of the page's language tags.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE gifts
      ADD COLUMN language text CHECK (language IN ('en', 'fr', 'de', 'es', 'pt-BR', 'ja'))`
})
