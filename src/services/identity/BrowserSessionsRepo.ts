import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

/** A browser session of the authorize pages, by the hash of its cookie. */
export const SessionRow = Schema.Struct({
  idHash: Schema.String,
  userId: Schema.String,
  authenticatedAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf
})
export type SessionRow = typeof SessionRow.Type

/** The `browser_sessions` table. Only the identity context's services use it. Unexpected database errors are defects. */
export class BrowserSessionsRepo extends Effect.Service<BrowserSessionsRepo>()("BrowserSessionsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: SessionRow,
      execute: (row) => sql`INSERT INTO browser_sessions ${sql.insert(row)}`
    })

    /** The user of the session with that hash, if it is still live at `at`. */
    const findLiveUser = SqlSchema.findOne({
      Request: Schema.Struct({ idHash: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ userId: Schema.String }),
      execute: ({ idHash, at }) => sql`
        SELECT user_id FROM browser_sessions WHERE id_hash = ${idHash} AND expires_at > ${at}`
    })

    const deleteExpired = SqlSchema.single({
      Request: Schema.DateFromSelf,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (at) =>
        sql`WITH d AS (${sql`DELETE FROM browser_sessions WHERE expires_at < ${at}`} RETURNING 1) SELECT count(*)::int AS n FROM d`
    })

    return {
      insert: Effect.fn("BrowserSessionsRepo.insert")((row: SessionRow) => Effect.orDie(insert(row))),
      findLiveUser: Effect.fn("BrowserSessionsRepo.findLiveUser")((idHash: string, at: Date) =>
        Effect.orDie(findLiveUser({ idHash, at }))
      ),
      /** Deletes the sessions expired before `at`: how many went. */
      deleteExpired: Effect.fn("BrowserSessionsRepo.deleteExpired")((at: Date) =>
        Effect.map(Effect.orDie(deleteExpired(at)), (row) => row.n)
      )
    } as const
  })
}) {}
