import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The gift extension's fields of an ACP checkout session (docs/decisions/0085-acp-gift-extension.md): its recipient
 * and message as the agent gave them, kept only for a session that declares the extension; null otherwise.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE acp_checkout_sessions ADD COLUMN gift jsonb`
})
