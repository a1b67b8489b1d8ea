import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { DashboardSession } from "../../domain/company/Dashboard.js"

const NewSession = Schema.Struct({
  idHash: Schema.String,
  userId: Schema.String,
  companyId: Schema.String,
  at: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf,
  sourceAddress: Schema.String
})
export type NewSession = typeof NewSession.Type

const columns = "id_hash, user_id, company_id, created_at, last_seen_at, expires_at, source_address"

/**
 * The `dashboard_sessions` table (docs/decisions/0056-dashboard-sessions-and-sign-up.md). Only the company
 * context's services use it. Unexpected database errors are defects.
 */
export class DashboardSessionsRepo extends Effect.Service<DashboardSessionsRepo>()("DashboardSessionsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: NewSession,
      execute: (row) => sql`INSERT INTO dashboard_sessions
          (id_hash, user_id, company_id, created_at, last_seen_at, expires_at, source_address)
        VALUES (${row.idHash}, ${row.userId}, ${row.companyId}, ${row.at}, ${row.at}, ${row.expiresAt},
                ${row.sourceAddress})`
    })

    /** The session with that hash, if it is not revoked, not past its end and was used since `idleSince`. */
    const findLive = SqlSchema.findOne({
      Request: Schema.Struct({ idHash: Schema.String, at: Schema.DateFromSelf, idleSince: Schema.DateFromSelf }),
      Result: DashboardSession,
      execute: ({ idHash, at, idleSince }) => sql`SELECT ${sql.literal(columns)} FROM dashboard_sessions
        WHERE id_hash = ${idHash} AND revoked_at IS NULL AND expires_at > ${at} AND last_seen_at > ${idleSince}`
    })

    /** A person's live sessions in every company, the most recently used first; at most `limit`. */
    const findLiveFor = SqlSchema.findAll({
      Request: Schema.Struct({
        userId: Schema.String,
        at: Schema.DateFromSelf,
        idleSince: Schema.DateFromSelf,
        limit: Schema.Number
      }),
      Result: DashboardSession,
      execute: ({ userId, at, idleSince, limit }) => sql`SELECT ${sql.literal(columns)} FROM dashboard_sessions
        WHERE user_id = ${userId} AND revoked_at IS NULL AND expires_at > ${at} AND last_seen_at > ${idleSince}
        ORDER BY last_seen_at DESC, created_at DESC LIMIT ${limit}`
    })

    const touch = SqlSchema.void({
      Request: Schema.Struct({ idHash: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ idHash, at }) => sql`UPDATE dashboard_sessions SET last_seen_at = ${at}
        WHERE id_hash = ${idHash} AND last_seen_at < ${at}`
    })

    const revoke = SqlSchema.void({
      Request: Schema.Struct({ idHash: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ idHash, at }) => sql`UPDATE dashboard_sessions SET revoked_at = ${at}
        WHERE id_hash = ${idHash} AND revoked_at IS NULL`
    })

    const revokeAll = SqlSchema.single({
      Request: Schema.Struct({ userId: Schema.String, companyId: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ n: Schema.Number }),
      execute: ({ userId, companyId, at }) =>
        sql`WITH r AS (${sql`UPDATE dashboard_sessions SET revoked_at = ${at}
          WHERE user_id = ${userId} AND company_id = ${companyId} AND revoked_at IS NULL`} RETURNING 1)
          SELECT count(*)::int AS n FROM r`
    })

    const revokeAllBut = SqlSchema.single({
      Request: Schema.Struct({ userId: Schema.String, keepIdHash: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ n: Schema.Number }),
      execute: ({ userId, keepIdHash, at }) =>
        sql`WITH r AS (${sql`UPDATE dashboard_sessions SET revoked_at = ${at}
          WHERE user_id = ${userId} AND id_hash <> ${keepIdHash} AND revoked_at IS NULL`} RETURNING 1)
          SELECT count(*)::int AS n FROM r`
    })

    const moveTo = SqlSchema.void({
      Request: Schema.Struct({ idHash: Schema.String, companyId: Schema.String }),
      execute: ({ idHash, companyId }) =>
        sql`UPDATE dashboard_sessions SET company_id = ${companyId} WHERE id_hash = ${idHash} AND revoked_at IS NULL`
    })

    return {
      insert: Effect.fn("DashboardSessionsRepo.insert")((row: NewSession) => Effect.orDie(insert(row))),
      findLive: Effect.fn("DashboardSessionsRepo.findLive")((idHash: string, at: Date, idleSince: Date) =>
        Effect.orDie(findLive({ idHash, at, idleSince }))
      ),
      findLiveFor: Effect.fn("DashboardSessionsRepo.findLiveFor")(
        (userId: string, at: Date, idleSince: Date, limit: number) =>
          Effect.orDie(findLiveFor({ userId, at, idleSince, limit }))
      ),
      /** Sets the session's last use to `at` (never backwards). */
      touch: Effect.fn("DashboardSessionsRepo.touch")((idHash: string, at: Date) =>
        Effect.orDie(touch({ idHash, at }))
      ),
      revoke: Effect.fn("DashboardSessionsRepo.revoke")((idHash: string, at: Date) =>
        Effect.orDie(revoke({ idHash, at }))
      ),
      /** Revokes every live session of a person in a company: how many were. */
      revokeAll: Effect.fn("DashboardSessionsRepo.revokeAll")((userId: string, companyId: string, at: Date) =>
        Effect.map(Effect.orDie(revokeAll({ userId, companyId, at })), (row) => row.n)
      ),
      /** Revokes every live session of a person, in every company, but the one with `keepIdHash`: how many were. */
      revokeAllBut: Effect.fn("DashboardSessionsRepo.revokeAllBut")((userId: string, keepIdHash: string, at: Date) =>
        Effect.map(Effect.orDie(revokeAllBut({ userId, keepIdHash, at })), (row) => row.n)
      ),
      /** Points a live session at another company. */
      moveTo: Effect.fn("DashboardSessionsRepo.moveTo")((idHash: string, companyId: string) =>
        Effect.orDie(moveTo({ idHash, companyId }))
      )
    } as const
  })
}) {}
