import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AllowanceRecord, LedgerEntryRecord } from "../../domain/checkout/Allowances.js"

const json = (list: ReadonlyArray<string> | null) => (list === null ? null : JSON.stringify(list))

/**
 * The `allowances` and `allowance_ledger` tables (migration 0048). Only the Allowances and AllowancePayments
 * services use it, and Checkouts to credit a refund. Unexpected database errors are defects.
 *
 * `take` is the whole decision of a payment from an allowance in one statement: the row's running sums are
 * updated only if the amount fits every limit as they now stand, and the ledger's charge is inserted from that
 * update's result. Concurrent takes queue on the row's lock and each re-checks the limits against the sums
 * the one before it left (Postgres re-evaluates an UPDATE's WHERE on the newest row version), so no two can
 * spend the same remainder, on any instance.
 */
export class AllowancesRepo extends Effect.Service<AllowancesRepo>()("AllowancesRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: AllowanceRecord,
      execute: (row) =>
        sql`INSERT INTO allowances ${sql.insert({
          ...row,
          allowedCountries: json(row.allowedCountries),
          allowedRecipients: json(row.allowedRecipients),
          allowedCategories: json(row.allowedCategories)
        })}`
    })

    const findById = SqlSchema.findOne({
      Request: Schema.String,
      Result: AllowanceRecord,
      execute: (id) => sql`SELECT * FROM allowances WHERE id = ${id}`
    })

    /** The person's unrevoked allowance for a client (it may have expired). */
    const liveFor = SqlSchema.findOne({
      Request: Schema.Struct({ userId: Schema.String, clientId: Schema.String }),
      Result: AllowanceRecord,
      execute: ({ userId, clientId }) => sql`
        SELECT * FROM allowances WHERE user_id = ${userId} AND client_id = ${clientId} AND revoked_at IS NULL`
    })

    const listForUser = SqlSchema.findAll({
      Request: Schema.String,
      Result: AllowanceRecord,
      execute: (userId) => sql`SELECT * FROM allowances WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC`
    })

    /** Revokes the allowances matching `where` that are not yet revoked; the ones it revoked. */
    const revokeWhere = SqlSchema.findAll({
      Request: Schema.Struct({
        userId: Schema.String,
        id: Schema.optional(Schema.String),
        clientId: Schema.optional(Schema.String),
        at: Schema.DateFromSelf
      }),
      Result: AllowanceRecord,
      execute: ({ userId, id, clientId, at }) => sql`
        UPDATE allowances SET revoked_at = ${at}
        WHERE user_id = ${userId} AND revoked_at IS NULL
          ${id === undefined ? sql`` : sql`AND id = ${id}`}
          ${clientId === undefined ? sql`` : sql`AND client_id = ${clientId}`}
        RETURNING *`
    })

    /**
     * Takes `amount` for a checkout if it fits every limit at `at`: the period's sum restarts when `at` is in a
     * later period than the one kept. The ledger's charge, or none when a limit (or the expiry or a revocation)
     * refused it.
     */
    const take = SqlSchema.findOne({
      Request: Schema.Struct({
        entryId: Schema.String,
        allowanceId: Schema.String,
        checkoutId: Schema.String,
        amount: Schema.Int,
        at: Schema.DateFromSelf
      }),
      Result: LedgerEntryRecord,
      execute: ({ entryId, allowanceId, checkoutId, amount, at }) => sql`
        WITH taken AS (
          UPDATE allowances SET
            spent_total = spent_total + ${amount},
            period_spent = CASE WHEN period_start = date_trunc(period, ${at}::timestamptz, 'UTC')
              THEN period_spent ELSE 0 END + ${amount},
            period_start = date_trunc(period, ${at}::timestamptz, 'UTC')
          WHERE id = ${allowanceId} AND revoked_at IS NULL AND expires_at > ${at}
            AND ${amount} <= per_checkout_limit
            AND spent_total + ${amount} <= total_limit
            AND CASE WHEN period_start = date_trunc(period, ${at}::timestamptz, 'UTC')
              THEN period_spent ELSE 0 END + ${amount} <= period_limit
          RETURNING id, period_start
        )
        INSERT INTO allowance_ledger (id, allowance_id, checkout_id, kind, amount, period_start, reason, created_at)
        SELECT ${entryId}, id, ${checkoutId}, 'charge', ${amount}, period_start, NULL, ${at} FROM taken
        RETURNING *`
    })

    /**
     * Credits `amount` of a checkout's charge back to its allowance: the total always, the period's sum when the
     * charge counted in the period still kept. The credit, or none when no allowance paid the checkout.
     */
    const credit = SqlSchema.findOne({
      Request: Schema.Struct({
        entryId: Schema.String,
        checkoutId: Schema.String,
        amount: Schema.Int,
        reason: Schema.String,
        at: Schema.DateFromSelf
      }),
      Result: LedgerEntryRecord,
      execute: ({ entryId, checkoutId, amount, reason, at }) => sql`
        WITH charge AS (
          SELECT allowance_id, period_start FROM allowance_ledger WHERE checkout_id = ${checkoutId} AND kind = 'charge'
        ), credited AS (
          UPDATE allowances a SET
            spent_total = GREATEST(a.spent_total - ${amount}, 0),
            period_spent = CASE WHEN a.period_start = charge.period_start
              THEN GREATEST(a.period_spent - ${amount}, 0) ELSE a.period_spent END
          FROM charge
          WHERE a.id = charge.allowance_id
          RETURNING a.id, charge.period_start
        )
        INSERT INTO allowance_ledger (id, allowance_id, checkout_id, kind, amount, period_start, reason, created_at)
        SELECT ${entryId}, id, ${checkoutId}, 'credit', ${-amount}, period_start, ${reason}, ${at} FROM credited
        RETURNING *`
    })

    /** The ledger of an allowance, newest first. */
    const ledger = SqlSchema.findAll({
      Request: Schema.Struct({ allowanceId: Schema.String, limit: Schema.Int }),
      Result: LedgerEntryRecord,
      execute: ({ allowanceId, limit }) => sql`
        SELECT * FROM allowance_ledger WHERE allowance_id = ${allowanceId}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })

    return {
      insert: Effect.fn("AllowancesRepo.insert")((row: AllowanceRecord) => Effect.orDie(insert(row))),
      findById: Effect.fn("AllowancesRepo.findById")((id: string) => Effect.orDie(findById(id))),
      liveFor: Effect.fn("AllowancesRepo.liveFor")((userId: string, clientId: string) =>
        Effect.orDie(liveFor({ userId, clientId }))
      ),
      listForUser: Effect.fn("AllowancesRepo.listForUser")((userId: string) => Effect.orDie(listForUser(userId))),
      revoke: Effect.fn("AllowancesRepo.revoke")(
        (userId: string, match: { readonly id?: string; readonly clientId?: string }, at: Date) =>
          Effect.orDie(revokeWhere({ userId, ...match, at }))
      ),
      take: Effect.fn("AllowancesRepo.take")(
        (entry: { entryId: string; allowanceId: string; checkoutId: string; amount: number; at: Date }) =>
          Effect.orDie(take(entry))
      ),
      credit: Effect.fn("AllowancesRepo.credit")(
        (entry: { entryId: string; checkoutId: string; amount: number; reason: string; at: Date }) =>
          Effect.orDie(credit(entry))
      ),
      ledger: Effect.fn("AllowancesRepo.ledger")((allowanceId: string, limit = 100) =>
        Effect.orDie(ledger({ allowanceId, limit }))
      )
    } as const
  })
}) {}
