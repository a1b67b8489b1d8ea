import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { QuoteRecord } from "../../domain/checkout/Records.js"

/** The `quotes` table. Only the checkout context's services use it. */
export class QuotesRepo extends Effect.Service<QuotesRepo>()("QuotesRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: QuoteRecord,
      execute: (quote) => sql`INSERT INTO quotes ${sql.insert(quote)}`
    })

    const findForUser = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, userId: Schema.String }),
      Result: QuoteRecord,
      execute: ({ id, userId }) => sql`SELECT * FROM quotes WHERE id = ${id} AND user_id = ${userId}`
    })

    const findManyForUser = SqlSchema.findAll({
      Request: Schema.Struct({ ids: Schema.Array(Schema.String), userId: Schema.String }),
      Result: QuoteRecord,
      execute: ({ ids, userId }) => sql`SELECT * FROM quotes WHERE id IN ${sql.in(ids)} AND user_id = ${userId}`
    })

    /** Claims unexpired, unclaimed quotes for a checkout; the ids it could claim (a concurrent one may have won). */
    const claim = SqlSchema.findAll({
      Request: Schema.Struct({ ids: Schema.Array(Schema.String), checkoutId: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ ids, checkoutId, at }) => sql`
        UPDATE quotes SET checkout_id = ${checkoutId}
        WHERE id IN ${sql.in(ids)} AND checkout_id IS NULL AND expires_at > ${at}
        RETURNING id`
    })

    return {
      insert: (quote: QuoteRecord) => Effect.orDie(insert(quote)),
      findForUser: (id: string, userId: string) => Effect.orDie(findForUser({ id, userId })),
      findManyForUser: (ids: ReadonlyArray<string>, userId: string) => Effect.orDie(findManyForUser({ ids, userId })),
      claim: (ids: ReadonlyArray<string>, checkoutId: string, at: Date) =>
        Effect.map(Effect.orDie(claim({ ids, checkoutId, at })), (rows) => rows.map((row) => row.id))
    } as const
  })
}) {}
