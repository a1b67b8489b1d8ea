import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { UserRow } from "./UsersRepo.js"

/** An authorization code, by its hash; `familyId` names the grant its tokens will belong to. */
export const CodeRow = Schema.Struct({
  codeHash: Schema.String,
  clientId: Schema.String,
  userId: Schema.String,
  redirectUri: Schema.String,
  scope: Schema.String,
  resource: Schema.String,
  codeChallenge: Schema.String,
  familyId: Schema.String,
  expiresAt: Schema.DateFromSelf,
  usedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type CodeRow = typeof CodeRow.Type

/** An access or refresh token, by its hash, in the family of one grant. */
export const TokenRow = Schema.Struct({
  tokenHash: Schema.String,
  kind: Schema.Literal("access", "refresh"),
  familyId: Schema.String,
  clientId: Schema.String,
  userId: Schema.String,
  scope: Schema.String,
  audience: Schema.String,
  issuedAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf,
  rotatedAt: Schema.NullOr(Schema.DateFromSelf),
  revokedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type TokenRow = typeof TokenRow.Type

/** An access token with its user, as every `/v1` request reads it. */
export const BearerRow = Schema.Struct({
  ...TokenRow.pick("kind", "familyId", "revokedAt", "expiresAt", "audience", "scope", "clientId").fields,
  ...UserRow.omit("passwordHash").fields
})
export type BearerRow = typeof BearerRow.Type

const DeletedCount = Schema.Struct({ n: Schema.Number })

/**
 * The `oauth_codes` and `oauth_tokens` tables: the grants, from their code to their token families. Only the
 * identity context's services use it. Unexpected database errors are defects.
 */
export class OAuthTokensRepo extends Effect.Service<OAuthTokensRepo>()("OAuthTokensRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insertCode = SqlSchema.void({
      Request: CodeRow,
      execute: (row) => sql`INSERT INTO oauth_codes ${sql.insert(row)}`
    })

    /** The code with that hash, locked until the transaction ends. */
    const lockCode = SqlSchema.findOne({
      Request: Schema.String,
      Result: CodeRow,
      execute: (codeHash) => sql`
        SELECT * FROM oauth_codes WHERE code_hash = ${codeHash} FOR UPDATE`
    })

    const markCodeUsed = SqlSchema.void({
      Request: Schema.Struct({ codeHash: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ codeHash, at }) => sql`UPDATE oauth_codes SET used_at = ${at} WHERE code_hash = ${codeHash}`
    })

    const insertTokens = SqlSchema.void({
      Request: Schema.Array(TokenRow),
      execute: (rows) => sql`INSERT INTO oauth_tokens ${sql.insert(rows)}`
    })

    const findToken = SqlSchema.findOne({
      Request: Schema.String,
      Result: TokenRow,
      execute: (tokenHash) => sql`SELECT * FROM oauth_tokens WHERE token_hash = ${tokenHash}`
    })

    /** The refresh token with that hash, locked until the transaction ends. */
    const lockRefreshToken = SqlSchema.findOne({
      Request: Schema.String,
      Result: TokenRow,
      execute: (tokenHash) => sql`
        SELECT * FROM oauth_tokens
        WHERE token_hash = ${tokenHash} AND kind = 'refresh' FOR UPDATE`
    })

    const markRotated = SqlSchema.void({
      Request: Schema.Struct({ tokenHash: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ tokenHash, at }) => sql`UPDATE oauth_tokens SET rotated_at = ${at} WHERE token_hash = ${tokenHash}`
    })

    const revokeFamily = SqlSchema.void({
      Request: Schema.Struct({ familyId: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ familyId, at }) =>
        sql`UPDATE oauth_tokens SET revoked_at = ${at} WHERE family_id = ${familyId} AND revoked_at IS NULL`
    })

    /** The token with that hash joined with its user: the one query of a `/v1` request's bearer check. */
    const findBearer = SqlSchema.findOne({
      Request: Schema.String,
      Result: BearerRow,
      execute: (tokenHash) => sql`
        SELECT t.kind, t.family_id, t.revoked_at, t.expires_at, t.audience, t.scope, t.client_id,
               u.id, u.email, u.display_name, u.phone, u.default_country, u.receipt_preference, u.created_at
        FROM oauth_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.token_hash = ${tokenHash}`
    })

    const deleteCodesExpiredBefore = SqlSchema.single({
      Request: Schema.DateFromSelf,
      Result: DeletedCount,
      execute: (before) =>
        sql`WITH d AS (${sql`DELETE FROM oauth_codes WHERE expires_at < ${before}`} RETURNING 1) SELECT count(*)::int AS n FROM d`
    })

    const deleteTokensExpiredBefore = SqlSchema.single({
      Request: Schema.DateFromSelf,
      Result: DeletedCount,
      execute: (before) =>
        sql`WITH d AS (${sql`DELETE FROM oauth_tokens WHERE expires_at < ${before}`} RETURNING 1) SELECT count(*)::int AS n FROM d`
    })

    return {
      insertCode: Effect.fn("OAuthTokensRepo.insertCode")((row: CodeRow) => Effect.orDie(insertCode(row))),
      lockCode: Effect.fn("OAuthTokensRepo.lockCode")((codeHash: string) => Effect.orDie(lockCode(codeHash))),
      markCodeUsed: Effect.fn("OAuthTokensRepo.markCodeUsed")((codeHash: string, at: Date) =>
        Effect.orDie(markCodeUsed({ codeHash, at }))
      ),
      insertTokens: Effect.fn("OAuthTokensRepo.insertTokens")((rows: ReadonlyArray<TokenRow>) =>
        Effect.orDie(insertTokens(rows))
      ),
      findToken: Effect.fn("OAuthTokensRepo.findToken")((tokenHash: string) => Effect.orDie(findToken(tokenHash))),
      lockRefreshToken: Effect.fn("OAuthTokensRepo.lockRefreshToken")((tokenHash: string) =>
        Effect.orDie(lockRefreshToken(tokenHash))
      ),
      markRotated: Effect.fn("OAuthTokensRepo.markRotated")((tokenHash: string, at: Date) =>
        Effect.orDie(markRotated({ tokenHash, at }))
      ),
      /** Revokes every unrevoked token of the family at `at`. */
      revokeFamily: Effect.fn("OAuthTokensRepo.revokeFamily")((familyId: string, at: Date) =>
        Effect.orDie(revokeFamily({ familyId, at }))
      ),
      findBearer: Effect.fn("OAuthTokensRepo.findBearer")((tokenHash: string) => Effect.orDie(findBearer(tokenHash))),
      /** Deletes the codes expired before `before`: how many went. */
      deleteCodesExpiredBefore: Effect.fn("OAuthTokensRepo.deleteCodesExpiredBefore")((before: Date) =>
        Effect.map(Effect.orDie(deleteCodesExpiredBefore(before)), (row) => row.n)
      ),
      /** Deletes the tokens expired before `before`: how many went. */
      deleteTokensExpiredBefore: Effect.fn("OAuthTokensRepo.deleteTokensExpiredBefore")((before: Date) =>
        Effect.map(Effect.orDie(deleteTokensExpiredBefore(before)), (row) => row.n)
      )
    } as const
  })
}) {}
