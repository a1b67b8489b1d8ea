import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

/**
 * The `oauth_assertion_jtis` table: the `jti` of each accepted client assertion until it expires. Only
 * `ClientAssertions` uses it. Unexpected database errors are defects.
 */
export class AssertionJtisRepo extends Effect.Service<AssertionJtisRepo>()("AssertionJtisRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    // One statement, so two instances given the same assertion at once cannot both take it: the primary key
    // lets one insert win. A jti whose assertion has expired may be taken again (its row is overwritten); the
    // hourly purge removes the other expired rows.
    const claim = SqlSchema.findAll({
      Request: Schema.Struct({
        clientId: Schema.String,
        jti: Schema.String,
        expiresAt: Schema.DateFromSelf,
        now: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ jti: Schema.String }),
      execute: ({ clientId, jti, expiresAt, now }) => sql`
        INSERT INTO oauth_assertion_jtis (client_id, jti, expires_at)
        VALUES (${clientId}, ${jti}, ${expiresAt})
        ON CONFLICT (client_id, jti) DO UPDATE SET expires_at = excluded.expires_at
          WHERE oauth_assertion_jtis.expires_at <= ${now}
        RETURNING jti`
    })

    const purge = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: Schema.Struct({ jti: Schema.String }),
      execute: (now) => sql`DELETE FROM oauth_assertion_jtis WHERE expires_at <= ${now} RETURNING jti`
    })

    return {
      /** Takes `jti` for `clientId` until `expiresAt`: false when an unexpired assertion already took it. */
      claim: Effect.fn("AssertionJtisRepo.claim")((clientId: string, jti: string, expiresAt: Date, now: Date) =>
        Effect.map(Effect.orDie(claim({ clientId, jti, expiresAt, now })), (rows) => rows.length === 1)
      ),
      /** Deletes every jti whose assertion has expired by `now` (the hourly purge); how many. */
      purge: Effect.fn("AssertionJtisRepo.purge")((now: Date) =>
        Effect.map(Effect.orDie(purge(now)), (rows) => rows.length)
      )
    } as const
  })
}) {}
