import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto"
import { Context, Effect, Layer, Redacted } from "effect"

/**
 * The business's UCP signing key (ES256, P-256: the algorithm the protocol requires every party to support),
 * published as a JWK in `/.well-known/ucp`'s `signing_keys`, signing `complete`'s answers and order webhooks. The
 * server provides the one of UCP_SIGNING_KEY (a PKCS#8 PEM) when set (`UcpSigningKey.fromPem`), so every instance
 * and restart publishes the same key; otherwise one key is made per process (development and tests), the same for
 * the HTTP handlers and the delivery engine.
 */
export interface UcpKey {
  readonly privateKey: KeyObject
  readonly publicJwk: Readonly<Record<string, string>>
}

const keyOf = (privateKey: KeyObject): UcpKey => {
  const { kty, crv, x, y } = createPublicKey(privateKey).export({ format: "jwk" })
  // The key id names the key by its coordinates, so a configured key keeps its id across instances.
  const kid = `ribbon-ucp-${x!.slice(0, 12)}`
  return { privateKey, publicJwk: { kid, kty: kty!, crv: crv!, x: x!, y: y!, use: "sig", alg: "ES256" } }
}

export class UcpSigningKey extends Context.Reference<UcpSigningKey>()("ribbon/UcpSigningKey", {
  defaultValue: (): UcpKey => keyOf(generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey)
}) {
  /** The key of a PKCS#8 PEM; anything but a P-256 private key stops the server at start. */
  static readonly fromPem = (pem: Redacted.Redacted<string>) =>
    Layer.effect(
      UcpSigningKey,
      Effect.gen(function* () {
        const privateKey = createPrivateKey(Redacted.value(pem))
        if (privateKey.asymmetricKeyType !== "ec" || privateKey.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
          return yield* Effect.dieMessage("UCP_SIGNING_KEY must be a P-256 (ES256) private key")
        }
        return keyOf(privateKey)
      })
    )
}
