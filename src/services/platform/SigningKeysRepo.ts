import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { KeyPair, PublicJwk } from "../../domain/platform/SigningKeys.js"

/** A new row of `signing_keys`. */
const NewSigningKey = Schema.Struct({
  kid: Schema.String,
  algorithm: Schema.Literal("Ed25519"),
  publicJwk: Schema.parseJson(PublicJwk),
  privatePkcs8: Schema.String,
  createdAt: Schema.DateFromSelf
})

/** `pg_advisory_xact_lock` key for creating the first key pair. */
const keyLock = 0x51_6e_4b

/**
 * The `signing_keys` table. Only the SigningKeys service uses it. Unexpected database errors are defects.
 */
export class SigningKeysRepo extends Effect.Service<SigningKeysRepo>()("SigningKeysRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const findAll = SqlSchema.findAll({
      Request: Schema.Void,
      Result: KeyPair,
      execute: () => sql`SELECT public_jwk, private_pkcs8 FROM signing_keys ORDER BY created_at, kid`
    })

    const insert = SqlSchema.void({
      Request: NewSigningKey,
      execute: (row) => sql`INSERT INTO signing_keys ${sql.insert(row)}`
    })

    return {
      /** Every stored key pair, oldest first. */
      all: Effect.fn("SigningKeysRepo.all")(() => Effect.orDie(findAll(undefined))),
      /** Holds the lock for creating the first key pair until the transaction ends. */
      lockCreation: Effect.fn("SigningKeysRepo.lockCreation")(() =>
        Effect.asVoid(Effect.orDie(sql`SELECT pg_advisory_xact_lock(${keyLock})`))
      ),
      insert: Effect.fn("SigningKeysRepo.insert")(
        (row: {
          readonly kid: string
          readonly publicJwk: PublicJwk
          readonly privatePkcs8: string
          readonly createdAt: Date
        }) => Effect.orDie(insert({ ...row, algorithm: "Ed25519" }))
      )
    } as const
  })
}) {}
