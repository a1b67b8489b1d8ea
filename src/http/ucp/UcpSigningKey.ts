import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../../layers/Config.js"

/**
 * The business's UCP signing key (ES256, P-256: the algorithm the protocol requires every party to support),
 * published as a JWK in `/.well-known/ucp`'s `signing_keys`. From UCP_SIGNING_KEY (a PKCS#8 PEM) when set, so
 * every instance and restart publishes the same key; otherwise one is made at start (development and tests).
 */
export class UcpSigningKey extends Context.Tag("UcpSigningKey")<
  UcpSigningKey,
  { readonly privateKey: KeyObject; readonly publicJwk: Readonly<Record<string, string>> }
>() {
  static readonly layer = Layer.effect(
    UcpSigningKey,
    Effect.gen(function* () {
      // AppConfig where the server runs on it; test servers, which build no AppConfig, get a key of their own.
      const configured = Option.flatMap(yield* Effect.serviceOption(AppConfig), (config) => config.ucpSigningKey)
      const privateKey = Option.match(configured, {
        onNone: () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey,
        onSome: (pem) => createPrivateKey(Redacted.value(pem))
      })
      if (privateKey.asymmetricKeyType !== "ec" || privateKey.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
        return yield* Effect.dieMessage("UCP_SIGNING_KEY must be a P-256 (ES256) private key")
      }
      const { kty, crv, x, y } = createPublicKey(privateKey).export({ format: "jwk" })
      // The key id names the key by its coordinates, so a configured key keeps its id across instances.
      const kid = `ribbon-ucp-${x!.slice(0, 12)}`
      return { privateKey, publicJwk: { kid, kty: kty!, crv: crv!, x: x!, y: y!, use: "sig", alg: "ES256" } }
    })
  )
}
