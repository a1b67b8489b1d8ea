import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

const ConsentKey = Schema.Struct({ userId: Schema.String, clientId: Schema.String })

/** The `oauth_consents` table. Only the identity context's services use it. Unexpected database errors are defects. */
export class ConsentsRepo extends Effect.Service<ConsentsRepo>()("ConsentsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const findScope = SqlSchema.findOne({
      Request: ConsentKey,
      Result: Schema.Struct({ scope: Schema.String }),
      execute: ({ userId, clientId }) => sql`
        SELECT scope FROM oauth_consents WHERE user_id = ${userId} AND client_id = ${clientId}`
    })

    /** The scope granted so far, its row locked until the transaction ends. */
    const lockScope = SqlSchema.findOne({
      Request: ConsentKey,
      Result: Schema.Struct({ scope: Schema.String }),
      execute: ({ userId, clientId }) => sql`
        SELECT scope FROM oauth_consents WHERE user_id = ${userId} AND client_id = ${clientId} FOR UPDATE`
    })

    const upsert = SqlSchema.void({
      Request: Schema.Struct({
        userId: Schema.String,
        clientId: Schema.String,
        scope: Schema.String,
        at: Schema.DateFromSelf
      }),
      execute: ({ userId, clientId, scope, at }) => sql`
        INSERT INTO oauth_consents (user_id, client_id, scope, granted_at)
        VALUES (${userId}, ${clientId}, ${scope}, ${at})
        ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at`
    })

    return {
      findScope: Effect.fn("ConsentsRepo.findScope")((userId: string, clientId: string) =>
        Effect.orDie(findScope({ userId, clientId }))
      ),
      lockScope: Effect.fn("ConsentsRepo.lockScope")((userId: string, clientId: string) =>
        Effect.orDie(lockScope({ userId, clientId }))
      ),
      upsert: Effect.fn("ConsentsRepo.upsert")((userId: string, clientId: string, scope: string, at: Date) =>
        Effect.orDie(upsert({ userId, clientId, scope, at }))
      )
    } as const
  })
}) {}
