import { generateKeyPairSync } from "node:crypto"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"

/**
 * The Ed25519 key pair agent callbacks are signed with (Standard Webhooks `v1a`,
 * docs/decisions/0030-callbacks-and-delivery.md). The pair is generated on first use and persisted, so every instance
 * and every restart serves the same JWKS.
 */

export const PublicJwk = Schema.Struct({
  kty: Schema.Literal("OKP"),
  crv: Schema.Literal("Ed25519"),
  x: Schema.String,
  kid: Schema.String,
  use: Schema.Literal("sig"),
  alg: Schema.Literal("EdDSA")
})
export type PublicJwk = typeof PublicJwk.Type

/** A stored key pair: the public JWK (jsonb) and the private key in PKCS #8 PEM. */
const KeyPairRow = Schema.Struct({ publicJwk: PublicJwk, privatePkcs8: Schema.String })

/** `pg_advisory_xact_lock` key for creating the first key pair. */
const keyLock = 0x51_6e_4b

export class SigningKeys extends Effect.Service<SigningKeys>()("SigningKeys", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const load = SqlSchema.findAll({
      Request: Schema.Void,
      Result: KeyPairRow,
      execute: () => sql`SELECT public_jwk, private_pkcs8 FROM signing_keys ORDER BY created_at, kid`
    })(undefined)

    /** The current key pair, created (once, whoever asks first) when there is none. */
    const current = Effect.fn("SigningKeys.current")(function* () {
      const existing = yield* load
      if (existing[0] !== undefined) return existing[0]
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`SELECT pg_advisory_xact_lock(${keyLock})`
          const again = yield* load
          if (again[0] !== undefined) return again[0]
          const { publicKey, privateKey } = generateKeyPairSync("ed25519")
          const { x } = publicKey.export({ format: "jwk" })
          const kid = `ed25519-${(yield* Clock.currentTimeMillis).toString(36)}`
          const publicJwk: PublicJwk = { kty: "OKP", crv: "Ed25519", x: x!, kid, use: "sig", alg: "EdDSA" }
          const privatePkcs8 = privateKey.export({ format: "pem", type: "pkcs8" }).toString()
          yield* sql`INSERT INTO signing_keys ${sql.insert({
            kid,
            algorithm: "Ed25519",
            publicJwk: JSON.stringify(publicJwk),
            privatePkcs8,
            createdAt: new Date(yield* Clock.currentTimeMillis)
          })}`
          return { publicJwk, privatePkcs8 }
        })
      )
    }, Effect.orDie)

    /** The public half as a JWK Set (`/.well-known/jwks.json`). */
    const jwks = Effect.fn("SigningKeys.jwks")(function* () {
      const { publicJwk } = yield* current()
      return { keys: [publicJwk] }
    })

    return { current, jwks } as const
  })
}) {}
