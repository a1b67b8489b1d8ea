import { generateKeyPairSync } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { PublicJwk } from "../../domain/platform/SigningKeys.js"
import { SigningKeysRepo } from "./SigningKeysRepo.js"

/**
 * The Ed25519 key pair agent callbacks are signed with (Standard Webhooks `v1a`,
 * docs/decisions/0030-callbacks-and-delivery.md). The pair is generated on first use and persisted, so every instance
 * and every restart serves the same JWKS.
 */

export { PublicJwk }

export class SigningKeys extends Effect.Service<SigningKeys>()("SigningKeys", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* SigningKeysRepo

    /** The current key pair, created (once, whoever asks first) when there is none. */
    const current = Effect.fn("SigningKeys.current")(function* () {
      const existing = yield* repo.all()
      if (existing[0] !== undefined) return existing[0]
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* repo.lockCreation()
          const again = yield* repo.all()
          if (again[0] !== undefined) return again[0]
          const { publicKey, privateKey } = generateKeyPairSync("ed25519")
          const { x } = publicKey.export({ format: "jwk" })
          const kid = `ed25519-${(yield* Clock.currentTimeMillis).toString(36)}`
          const publicJwk: PublicJwk = { kty: "OKP", crv: "Ed25519", x: x!, kid, use: "sig", alg: "EdDSA" }
          const privatePkcs8 = privateKey.export({ format: "pem", type: "pkcs8" }).toString()
          yield* repo.insert({ kid, publicJwk, privatePkcs8, createdAt: new Date(yield* Clock.currentTimeMillis) })
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
  }),
  dependencies: [SigningKeysRepo.Default]
}) {}
