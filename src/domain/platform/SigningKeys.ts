import { Schema } from "effect"

/** The public half of a signing key pair, as served in the JWKS (`/.well-known/jwks.json`). */
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
export const KeyPair = Schema.Struct({ publicJwk: PublicJwk, privatePkcs8: Schema.String })
export type KeyPair = typeof KeyPair.Type
