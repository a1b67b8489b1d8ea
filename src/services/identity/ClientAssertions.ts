import { constants, createPublicKey, type JsonWebKey, type KeyObject, verify } from "node:crypto"
import { Cache, Clock, Duration, Effect, Exit } from "effect"
import { InvalidClient } from "../../domain/identity/Errors.js"
import { PublicUrl } from "../catalog/Catalog.js"
import { OutboundHttp } from "../platform/OutboundHttp.js"
import { AssertionJtisRepo } from "./AssertionJtisRepo.js"
import { ClientMetadataLimits, lifetimeOf } from "./ClientMetadataDocuments.js"
import type { Client } from "./OAuthClientsRepo.js"

/**
 * `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect Core §9) for clients whose metadata
 * document declares it (docs/decisions/0076-client-id-metadata-documents.md): a JWT the client signed with a key
 * of its `jwks_uri`, verified here with node:crypto. The key set is fetched through the outbound guard and
 * cached like the document; the `jti` of each accepted assertion is kept in the database until it expires
 * (AssertionJtisRepo), so that an assertion is used once, whichever instance it is sent to.
 */

interface Algorithm {
  readonly kty: string
  /** The digest, or null for EdDSA (the key's curve decides). */
  readonly hash: string | null
  readonly crv?: string
  readonly pss?: number
}

/** Asymmetric JWS algorithms only: a client has no secret, so none of the HMAC ones, and never `none`. */
const algorithms: Readonly<Record<string, Algorithm>> = {
  RS256: { kty: "RSA", hash: "sha256" },
  RS384: { kty: "RSA", hash: "sha384" },
  RS512: { kty: "RSA", hash: "sha512" },
  PS256: { kty: "RSA", hash: "sha256", pss: 32 },
  PS384: { kty: "RSA", hash: "sha384", pss: 48 },
  PS512: { kty: "RSA", hash: "sha512", pss: 64 },
  ES256: { kty: "EC", hash: "sha256", crv: "P-256" },
  ES384: { kty: "EC", hash: "sha384", crv: "P-384" },
  ES512: { kty: "EC", hash: "sha512", crv: "P-521" },
  EdDSA: { kty: "OKP", hash: null }
}

/** The algorithms `token_endpoint_auth_signing_alg_values_supported` lists. */
export const assertionAlgorithms = Object.keys(algorithms)

/** How far clocks may disagree, and the longest an assertion may still have to live. */
const skewSeconds = 60
const longestLifetimeSeconds = 60 * 60
/** A `jti` is kept until its assertion expires: a bound on what one assertion can make the database hold. */
const maxJtiLength = 256

const decodePart = (part: string): unknown => JSON.parse(Buffer.from(part, "base64url").toString("utf8"))

/** The claims of a compact JWS, unverified: to learn which client it claims to be. */
export const unverifiedSubject = (assertion: string): string | undefined => {
  try {
    const claims = decodePart(assertion.split(".")[1] ?? "") as { sub?: unknown }
    return typeof claims.sub === "string" ? claims.sub : undefined
  } catch {
    return undefined
  }
}

const signatureValid = (algorithm: Algorithm, key: KeyObject, data: Buffer, signature: Buffer) => {
  try {
    return verify(
      algorithm.hash,
      data,
      algorithm.pss === undefined
        ? { key, dsaEncoding: "ieee-p1363" }
        : { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: algorithm.pss },
      signature
    )
  } catch {
    return false
  }
}

export class ClientAssertions extends Effect.Service<ClientAssertions>()("ClientAssertions", {
  dependencies: [OutboundHttp.Default, AssertionJtisRepo.Default],
  effect: Effect.gen(function* () {
    const outbound = yield* OutboundHttp
    const limits = yield* ClientMetadataLimits
    const issuer = yield* PublicUrl
    const audiences = new Set([
      issuer,
      `${issuer}/`,
      ...["token", "revoke", "introspect"].map((e) => `${issuer}/oauth/${e}`)
    ])
    const jtis = yield* AssertionJtisRepo

    const fetchKeys = (uri: string) =>
      Effect.gen(function* () {
        const refuse = (why: string) =>
          Effect.fail(new InvalidClient({ message: `The client's keys at ${uri} cannot be used: ${why}.` }))
        const response = yield* outbound
          .get(uri, {
            headers: { accept: "application/json" },
            timeout: limits.timeout,
            maxResponseBytes: limits.maxJwksBytes
          })
          .pipe(
            Effect.catchTags({
              OutboundRefused: (refused) => refuse(`they may not be fetched (${refused.reason})`),
              OutboundFailed: (failed) => refuse(`they could not be fetched (${failed.message})`)
            })
          )
        if (response.status !== 200) return yield* refuse(`the answer was ${response.status}, not 200`)
        if (response.truncated) return yield* refuse(`the key set is larger than ${limits.maxJwksBytes} bytes`)
        const keys = yield* Effect.try(() => (JSON.parse(response.body) as { keys?: unknown }).keys).pipe(
          Effect.orElse(() => refuse("the key set is not JSON"))
        )
        if (!Array.isArray(keys)) return yield* refuse("the key set has no keys array")
        return {
          keys: keys.filter(
            (key): key is JsonWebKey & { kid?: string; alg?: string } => typeof key === "object" && key !== null
          ),
          lifetime: lifetimeOf(response.headers, limits)
        }
      })

    // Failures are not kept: a client that fixes its keys is not held up.
    const keySets = yield* Cache.makeWith({
      capacity: limits.capacity,
      lookup: fetchKeys,
      timeToLive: (exit: Exit.Exit<{ readonly lifetime: Duration.Duration }, InvalidClient>) =>
        Exit.isSuccess(exit) ? exit.value.lifetime : Duration.zero
    })

    /**
     * Checks `assertion` as `client`'s authentication: signed by one of its keys with an asymmetric algorithm,
     * `iss` and `sub` its id, `aud` this server, unexpired, not too long-lived, and a `jti` not used before.
     */
    const verifyAssertion = Effect.fn("ClientAssertions.verify")(function* (client: Client, assertion: string) {
      const refuse = (why: string) =>
        Effect.fail(new InvalidClient({ message: `The client assertion is not valid: ${why}.` }))
      if (client.jwksUri === null) return yield* refuse("this client has no keys")
      const parts = assertion.split(".")
      if (parts.length !== 3) return yield* refuse("it is not a signed JWT")
      const [encodedHeader, encodedClaims, encodedSignature] = parts as [string, string, string]
      const decoded = yield* Effect.try(() => ({
        header: decodePart(encodedHeader),
        claims: decodePart(encodedClaims)
      })).pipe(Effect.orElse(() => refuse("it is not a JWT")))
      const header = decoded.header as { alg?: unknown; kid?: unknown }
      const claims = decoded.claims as Record<string, unknown>
      const algorithm = typeof header.alg === "string" ? algorithms[header.alg] : undefined
      if (algorithm === undefined) {
        return yield* refuse(`its alg must be one of ${assertionAlgorithms.join(", ")}`)
      }
      const { keys } = yield* keySets.get(client.jwksUri)
      const candidates = keys.filter(
        (key) =>
          key.kty === algorithm.kty &&
          (typeof header.kid !== "string" || key.kid === header.kid) &&
          (key.alg === undefined || key.alg === header.alg) &&
          (algorithm.crv === undefined || key.crv === algorithm.crv)
      )
      const data = Buffer.from(`${encodedHeader}.${encodedClaims}`)
      const signature = Buffer.from(encodedSignature, "base64url")
      const signed = candidates.some((jwk) => {
        try {
          return signatureValid(algorithm, createPublicKey({ key: jwk, format: "jwk" }), data, signature)
        } catch {
          return false
        }
      })
      if (!signed) return yield* refuse("no key of the client's key set verifies its signature")
      if (claims.iss !== client.id || claims.sub !== client.id)
        return yield* refuse("its iss and sub must be the client_id")
      const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud]
      if (!aud.some((a) => typeof a === "string" && audiences.has(a))) {
        return yield* refuse(`its aud must be ${issuer} or the endpoint's URL`)
      }
      const now = (yield* Clock.currentTimeMillis) / 1000
      if (typeof claims.exp !== "number") return yield* refuse("it has no exp")
      if (claims.exp + skewSeconds <= now) return yield* refuse("it has expired")
      if (claims.exp > now + longestLifetimeSeconds) return yield* refuse("its exp is more than an hour away")
      if (typeof claims.nbf === "number" && claims.nbf > now + skewSeconds) return yield* refuse("it is not valid yet")
      if (typeof claims.jti !== "string" || claims.jti === "") return yield* refuse("it has no jti")
      if (claims.jti.length > maxJtiLength) return yield* refuse(`its jti is longer than ${maxJtiLength} characters`)
      const expires = new Date((claims.exp + skewSeconds) * 1000)
      const fresh = yield* jtis.claim(client.id, claims.jti, expires, new Date(now * 1000))
      if (!fresh) return yield* refuse("its jti was used before")
    })

    return { verify: verifyAssertion } as const
  })
}) {}
