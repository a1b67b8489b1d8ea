import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { EventType } from "../../domain/checkout/Checkout.js"
import { EventRow, type NewEvent } from "../../domain/checkout/Events.js"

/**
 * The `events` table. Only the Events service uses it; other contexts read events through that service
 * (`Events.countOf`). Statements run on the ambient SqlClient, so an append joins the caller's transaction.
 * Unexpected database errors are defects.
 */
export class EventsRepo extends Effect.Service<EventsRepo>()("EventsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const findLastIds = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ checkoutId: Schema.String, lastId: Schema.String }),
      execute: (checkoutIds) => sql`
        SELECT checkout_id, max(id)::text AS last_id FROM events
        WHERE checkout_id = ANY (${checkoutIds}::text[]) GROUP BY checkout_id`
    })

    const IdRow = Schema.Struct({ id: Schema.String })
    const decodeIds = Schema.decodeUnknown(Schema.Array(IdRow))

    const findAfter = SqlSchema.findAll({
      Request: Schema.Struct({ checkoutId: Schema.String, afterId: Schema.String, limit: Schema.Int }),
      Result: EventRow,
      execute: ({ checkoutId, afterId, limit }) => sql`
        SELECT id::text AS id, type, checkout_id, user_id, data, created_at FROM events
        WHERE checkout_id = ${checkoutId} AND events.id > ${afterId}::bigint
        -- The table's id: a bare "id" would sort by the text alias above ("10" before "4").
        ORDER BY events.id LIMIT ${limit}`
    })

    const findCount = SqlSchema.findAll({
      Request: Schema.Struct({ checkoutId: Schema.String, type: Schema.String }),
      Result: Schema.Struct({ count: Schema.Int, latestAt: Schema.NullOr(Schema.DateFromSelf) }),
      execute: ({ checkoutId, type }) => sql`
        SELECT count(*)::int AS count, max(created_at) AS latest_at
        FROM events WHERE checkout_id = ${checkoutId} AND type = ${type}`
    })

    return {
      /** The last event id of each of these checkouts that has events. */
      lastIds: Effect.fn("EventsRepo.lastIds")((checkoutIds: ReadonlyArray<string>) =>
        Effect.orDie(findLastIds(checkoutIds))
      ),
      /**
       * Appends events in one statement, their ids ascending in the order given: the ids. `signals` are the
       * `pg_notify` calls the statement also makes (sent when its transaction commits), where it makes them.
       */
      append: Effect.fn("EventsRepo.append")(
        (
          batch: ReadonlyArray<NewEvent>,
          createdAt: Date,
          signals: Option.Option<ReadonlyArray<Statement.Fragment>>
        ) => {
          const alsoSelect = Option.match(signals, {
            onNone: () => sql.literal(""),
            onSome: (notify) => sql`, ${sql.join(", ", false)(notify)}`
          })
          return sql`
        INSERT INTO events ${sql.insert(
          batch.map((event) => ({
            type: event.type,
            checkoutId: event.checkoutId,
            userId: event.userId,
            data: JSON.stringify(event.data),
            createdAt
          }))
        )}
        RETURNING id::text AS id${alsoSelect}`.pipe(
            Effect.flatMap((rows) => decodeIds(rows)),
            Effect.orDie
          )
        }
      ),
      /** A checkout's events with an id above `afterId`, oldest first, at most `limit`. */
      after: Effect.fn("EventsRepo.after")((checkoutId: string, afterId: string, limit: number) =>
        Effect.orDie(findAfter({ checkoutId, afterId, limit }))
      ),
      /** How many events of `type` a checkout has, and when the latest of them was appended. */
      countOf: Effect.fn("EventsRepo.countOf")((checkoutId: string, type: EventType) =>
        Effect.map(Effect.orDie(findCount({ checkoutId, type })), (rows) => Option.fromNullable(rows[0]))
      )
    } as const
  })
}) {}
