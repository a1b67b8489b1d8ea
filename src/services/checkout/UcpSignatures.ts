import { Effect, Either, Option } from "effect"
import {
  UcpAgentMissing,
  UcpAlgorithmUnsupported,
  UcpDigestMismatch,
  UcpKeyNotFound,
  UcpSignatureInvalid,
  UcpSignatureMissing
} from "../../domain/checkout/Errors.js"
import { ucpAgentProfile } from "../../domain/checkout/UcpPlatformProfile.js"
import {
  parseSignatureInput,
  parseSignatures,
  type SignedMessage,
  sha256DigestMatches,
  signatureBase,
  unsupportedKey,
  verifyEcdsa
} from "../platform/HttpSignatures.js"
import { UcpPlatformProfiles } from "./UcpPlatformProfiles.js"

/**
 * RFC 9421 signatures on requests to `/ucp` (docs/decisions/0087-ucp-message-signatures.md): a request that
 * carries `Signature-Input` and `Signature` must verify with a key of the signer's profile (its `UCP-Agent`), over
 * what the protocol's REST binding says a request signature covers. A request without either is not refused:
 * the platform authenticates with OAuth, and signatures are a SHOULD for requests.
 */

/** A request to verify: the signed message, its headers (lowercase names) and its raw body. */
export interface UcpRequest extends SignedMessage {
  readonly method: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: string
}

const algorithms = new Set(["ecdsa-p256-sha256", "ecdsa-p384-sha384"])
const stateChanging = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** What the REST binding requires a request signature to cover, given what the request carries. */
const requiredComponents = (request: UcpRequest): ReadonlyArray<string> => [
  "@method",
  "@authority",
  "@path",
  ...(request.query === undefined ? [] : ["@query"]),
  ...(request.headers["ucp-agent"] === undefined ? [] : ["ucp-agent"]),
  ...(request.headers["idempotency-key"] !== undefined && stateChanging.has(request.method.toUpperCase())
    ? ["idempotency-key"]
    : []),
  ...(request.body === "" ? [] : ["content-digest", "content-type"])
]

export class UcpSignatures extends Effect.Service<UcpSignatures>()("UcpSignatures", {
  dependencies: [UcpPlatformProfiles.Default],
  effect: Effect.gen(function* () {
    const profiles = yield* UcpPlatformProfiles

    /**
     * Verifies the request's signature, when it carries one: true when it did and the signature holds, false when
     * it carries none. The first signature `Signature-Input` names is the one checked.
     */
    const verify = Effect.fn("UcpSignatures.verify")(function* (request: UcpRequest) {
      const inputHeader = request.headers["signature-input"]
      const signatureHeader = request.headers.signature
      if (inputHeader === undefined && signatureHeader === undefined) return false
      if (inputHeader === undefined || signatureHeader === undefined) {
        return yield* new UcpSignatureMissing({
          message: "A signed request carries both Signature-Input and Signature (RFC 9421)."
        })
      }
      const invalid = (why: string) => new UcpSignatureInvalid({ message: `The request signature is invalid: ${why}.` })
      const inputs = parseSignatureInput(inputHeader)
      if (Either.isLeft(inputs)) return yield* invalid(`Signature-Input cannot be read (${inputs.left})`)
      const input = inputs.right[0]
      if (input === undefined) return yield* new UcpSignatureMissing({ message: "Signature-Input names no signature." })
      const signatures = parseSignatures(signatureHeader)
      if (Either.isLeft(signatures)) return yield* invalid(`Signature cannot be read (${signatures.left})`)
      const signature = signatures.right.get(input.label)
      if (signature === undefined) {
        return yield* new UcpSignatureMissing({ message: `Signature has no value for ${input.label}.` })
      }
      const uncovered = requiredComponents(request).filter((component) => !input.components.includes(component))
      if (uncovered.length > 0) return yield* invalid(`it must also cover ${uncovered.map((c) => `"${c}"`).join(", ")}`)
      if (input.alg !== undefined && !algorithms.has(input.alg)) {
        return yield* new UcpAlgorithmUnsupported({
          message: `The signature algorithm ${input.alg} is not supported: sign with ES256 (or ES384).`
        })
      }
      // The body is checked before any key is fetched: a body changed on the way costs no outbound request.
      const digestHeader = request.headers["content-digest"]
      if (digestHeader !== undefined || input.components.includes("content-digest")) {
        const matches = digestHeader === undefined ? false : sha256DigestMatches(digestHeader, request.body)
        if (matches !== true) {
          return yield* new UcpDigestMismatch({
            message:
              matches === undefined
                ? "Content-Digest must carry the sha-256 digest of the body."
                : "The body does not match its Content-Digest (sha-256 over the raw bytes)."
          })
        }
      }
      if (input.keyid === undefined) return yield* invalid("Signature-Input names no keyid")
      const profileUrl = ucpAgentProfile(request.headers["ucp-agent"] ?? "")
      if (profileUrl === undefined) {
        return yield* new UcpAgentMissing({ message: "A signed request names its signer's profile in UCP-Agent." })
      }
      const found = yield* profiles.signingKey(profileUrl, input.keyid)
      if (Option.isNone(found)) {
        return yield* new UcpKeyNotFound({
          keyid: input.keyid,
          message: `The key kid=${input.keyid} is not among the signing_keys of ${profileUrl}.`
        })
      }
      const key = found.value
      const unsupported = unsupportedKey(key, input.alg)
      if (unsupported !== undefined)
        return yield* new UcpAlgorithmUnsupported({ message: `The key kid=${key.kid}: ${unsupported}.` })
      const base = signatureBase(request, input)
      if (Either.isLeft(base)) return yield* invalid(base.left)
      if (!verifyEcdsa(key, base.right, signature)) {
        return yield* invalid(`it does not verify with the key kid=${key.kid}`)
      }
      return true
    })

    return { verify } as const
  })
}) {}
