import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Trigram similarity for typo-tolerant search; available on PGlite and Postgres 15. */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`)
