import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

/** A user's TOTP secret and its state; `lastUsedStep` is null until a first code is accepted. */
export const TwoFactorRow = Schema.Struct({
  userId: Schema.String,
  secret: Schema.String,
  confirmedAt: Schema.NullOr(Schema.DateFromSelf),
  lastUsedStep: Schema.NullOr(Schema.NumberFromString)
})
export type TwoFactorRow = typeof TwoFactorRow.Type

// bigint comes back as text from node-pg; read it as such on every driver.
const rowColumns = "user_id, secret, confirmed_at, last_used_step::text AS last_used_step"

/**
 * The `user_two_factor` and `user_recovery_codes` tables. Only the identity context's services use it.
 * The steps and codes are spent by conditional updates, so two requests with the same code cannot both
 * succeed. Unexpected database errors are defects.
 */
export class TwoFactorRepo extends Effect.Service<TwoFactorRepo>()("TwoFactorRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const find = SqlSchema.findOne({
      Request: Schema.String,
      Result: TwoFactorRow,
      execute: (userId) => sql`SELECT ${sql.literal(rowColumns)} FROM user_two_factor WHERE user_id = ${userId}`
    })

    /** A new unconfirmed secret, replacing an earlier unconfirmed one; none when two-factor is already on. */
    const upsertPending = SqlSchema.findOne({
      Request: Schema.Struct({ userId: Schema.String, secret: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ userId: Schema.String }),
      execute: ({ userId, secret, at }) => sql`
        INSERT INTO user_two_factor (user_id, secret, created_at) VALUES (${userId}, ${secret}, ${at})
        ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at,
          last_used_step = NULL
          WHERE user_two_factor.confirmed_at IS NULL
        RETURNING user_id`
    })

    /**
     * Records `step` as used, if it is later than the last used one and the row is in the state asked for
     * (confirmed, or for a confirmation unconfirmed, which it then confirms at `at`).
     */
    const spendStep = SqlSchema.findOne({
      Request: Schema.Struct({
        userId: Schema.String,
        step: Schema.Number,
        confirming: Schema.Boolean,
        at: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ userId: Schema.String }),
      execute: ({ userId, step, confirming, at }) => sql`
        UPDATE user_two_factor SET last_used_step = ${step}
          ${confirming ? sql`, confirmed_at = ${at}` : sql``}
        WHERE user_id = ${userId}
          AND (last_used_step IS NULL OR last_used_step < ${step})
          AND confirmed_at IS ${confirming ? sql`NULL` : sql`NOT NULL`}
        RETURNING user_id`
    })

    const deleteConfirmed = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ userId: Schema.String }),
      execute: (userId) => sql`
        DELETE FROM user_two_factor WHERE user_id = ${userId} AND confirmed_at IS NOT NULL RETURNING user_id`
    })

    const lockConfirmed = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ userId: Schema.String }),
      execute: (userId) => sql`
        SELECT user_id FROM user_two_factor WHERE user_id = ${userId} AND confirmed_at IS NOT NULL FOR UPDATE`
    })

    const deleteRecoveryCodes = SqlSchema.void({
      Request: Schema.String,
      execute: (userId) => sql`DELETE FROM user_recovery_codes WHERE user_id = ${userId}`
    })

    const insertRecoveryCodes = SqlSchema.void({
      Request: Schema.Struct({ userId: Schema.String, codeHashes: Schema.Array(Schema.String) }),
      execute: ({ userId, codeHashes }) =>
        sql`INSERT INTO user_recovery_codes ${sql.insert(codeHashes.map((codeHash) => ({ userId, codeHash })))}`
    })

    /** Marks the unused code with that hash used at `at`; none when there is no such unused code. */
    const spendRecoveryCode = SqlSchema.findOne({
      Request: Schema.Struct({ userId: Schema.String, codeHash: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ userId: Schema.String }),
      execute: ({ userId, codeHash, at }) => sql`
        UPDATE user_recovery_codes SET used_at = ${at}
        WHERE user_id = ${userId} AND code_hash = ${codeHash} AND used_at IS NULL
          AND EXISTS (SELECT 1 FROM user_two_factor t WHERE t.user_id = ${userId} AND t.confirmed_at IS NOT NULL)
        RETURNING user_id`
    })

    const countUnusedRecoveryCodes = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ count: Schema.Number }),
      execute: (userId) => sql`
        SELECT count(*)::int AS count FROM user_recovery_codes WHERE user_id = ${userId} AND used_at IS NULL`
    })

    return {
      find: Effect.fn("TwoFactorRepo.find")((userId: string) => Effect.orDie(find(userId))),
      upsertPending: Effect.fn("TwoFactorRepo.upsertPending")((userId: string, secret: string, at: Date) =>
        Effect.orDie(upsertPending({ userId, secret, at }))
      ),
      spendStep: Effect.fn("TwoFactorRepo.spendStep")(
        (userId: string, step: number, options: { readonly confirming: boolean; readonly at: Date }) =>
          Effect.orDie(spendStep({ userId, step, ...options }))
      ),
      deleteConfirmed: Effect.fn("TwoFactorRepo.deleteConfirmed")((userId: string) =>
        Effect.orDie(deleteConfirmed(userId))
      ),
      lockConfirmed: Effect.fn("TwoFactorRepo.lockConfirmed")((userId: string) => Effect.orDie(lockConfirmed(userId))),
      replaceRecoveryCodes: Effect.fn("TwoFactorRepo.replaceRecoveryCodes")(function* (
        userId: string,
        codeHashes: ReadonlyArray<string>
      ) {
        yield* Effect.orDie(deleteRecoveryCodes(userId))
        yield* Effect.orDie(insertRecoveryCodes({ userId, codeHashes }))
      }),
      spendRecoveryCode: Effect.fn("TwoFactorRepo.spendRecoveryCode")((userId: string, codeHash: string, at: Date) =>
        Effect.orDie(spendRecoveryCode({ userId, codeHash, at }))
      ),
      countUnusedRecoveryCodes: Effect.fn("TwoFactorRepo.countUnusedRecoveryCodes")((userId: string) =>
        Effect.map(Effect.orDie(countUnusedRecoveryCodes(userId)), (row) => row.count)
      )
    } as const
  })
}) {}
