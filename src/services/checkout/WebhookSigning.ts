import { createHmac, createPrivateKey, sign } from "node:crypto"
import type { SigningScheme } from "../../domain/checkout/Webhooks.js"
import { contentDigest, signatureHeaders } from "../platform/HttpSignatures.js"
import type { UcpKey } from "../platform/UcpSigningKey.js"

/**
 * How a delivery is signed, and the headers that carry its signature (docs/webhooks.md): one entry per scheme, so the
 * delivery engine (src/services/checkout/WebhookDeliveries.ts) asks the delivery's scheme for its key and headers
 * and knows nothing of any one of them. A new scheme is a new entry (and a value of `SigningScheme`).
 */

export { SigningScheme } from "../../domain/checkout/Webhooks.js"

/** What one attempt's headers are made from. */
export interface SignedInput {
  /** The event id: the receiver de-duplicates by it. */
  readonly eventId: string
  /** When the attempt is signed, in milliseconds since the epoch. */
  readonly now: number
  readonly url: string
  /** The exact bytes sent. */
  readonly body: string
  /** Ribbon's UCP key, and its profile (`/.well-known/ucp`), where a UCP receiver finds the public half. */
  readonly ucp: { readonly key: UcpKey; readonly profile: string }
}

export interface Scheme {
  /**
   * The key it signs with: Ribbon's Ed25519 key pair (`SigningKeys`, public at /.well-known/jwks.json), or the
   * `whsec_` secret of the delivery's endpoint, which its row carries, or Ribbon's UCP key (`UcpSigningKey`, public
   * in /.well-known/ucp), which comes with the input already parsed (`key` is then unused).
   */
  readonly key: "platform" | "secret" | "ucp"
  /** The headers that say who sent the body and prove it, signed with `key` (a PKCS#8 PEM, or the secret). */
  readonly headers: (key: string, input: SignedInput) => Readonly<Record<string, string>>
}

/** The base string signed by Standard Webhooks: `${webhook-id}.${webhook-timestamp}.${body}`. */
export const signatureBase = (id: string, timestamp: string, body: string) => `${id}.${timestamp}.${body}`

/** The bytes of a `whsec_<base64>` secret. */
const secretBytes = (secret: string) => Buffer.from(secret.replace(/^whsec_/, ""), "base64")

/** The `webhook-signature` header value for a body, signed with an Ed25519 private key (PKCS#8 PEM). */
export const signV1a = (privatePkcs8: string, id: string, timestamp: string, body: string) =>
  `v1a,${sign(null, Buffer.from(signatureBase(id, timestamp, body)), createPrivateKey(privatePkcs8)).toString("base64")}`

/** The `webhook-signature` header value for a body, signed `v1`: HMAC-SHA256 keyed by a `whsec_<base64>` secret. */
export const signV1 = (secret: string, id: string, timestamp: string, body: string) =>
  `v1,${createHmac("sha256", secretBytes(secret))
    .update(signatureBase(id, timestamp, body))
    .digest("base64")}`

/**
 * The Agentic Commerce Protocol's `Merchant-Signature` value: `t=<unix seconds>,v1=<hex>`, the hex HMAC-SHA256 of
 * `${t}.${body}` keyed by the secret's string as issued (`whsec_…` included), as a platform verifies it with the
 * secret it was shown.
 */
export const signAcp = (secret: string, timestamp: string, body: string) =>
  `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`

const unixSeconds = (now: number) => Math.floor(now / 1000).toString()

/** Standard Webhooks' three headers, the signature made by `signature`. */
const standard =
  (signature: (key: string, id: string, timestamp: string, body: string) => string) =>
  (key: string, { eventId, now, body }: SignedInput) => {
    const timestamp = unixSeconds(now)
    return {
      "webhook-id": eventId,
      "webhook-timestamp": timestamp,
      "webhook-signature": signature(key, eventId, timestamp, body)
    }
  }

/** What UCP's order webhooks sign (order.md "Webhook Signature Verification"): the REST binding's request components. */
const UCP_WEBHOOK_COMPONENTS = ["@method", "@authority", "@path", "content-digest", "content-type"]

/**
 * UCP's webhook signature: RFC 9421 by Ribbon's UCP key over `UCP_WEBHOOK_COMPONENTS`, with `UCP-Agent` naming
 * Ribbon's profile (where the platform finds the key) and Standard Webhooks' `Webhook-Id` and `Webhook-Timestamp`,
 * which the protocol's webhooks carry for de-duplication.
 */
const ucpHeaders = (_key: string, { eventId, now, url, body, ucp }: SignedInput) => {
  const target = new URL(url)
  const fields: Record<string, string> = { "content-digest": contentDigest(body), "content-type": "application/json" }
  const signed = signatureHeaders(
    { method: "POST", authority: target.host, path: target.pathname, header: (name) => fields[name] },
    UCP_WEBHOOK_COMPONENTS,
    { privateKey: ucp.key.privateKey, keyid: ucp.key.publicJwk.kid!, created: Number(unixSeconds(now)) }
  )
  return {
    "ucp-agent": `profile="${ucp.profile}"`,
    "content-digest": fields["content-digest"]!,
    ...signed,
    "webhook-id": eventId,
    "webhook-timestamp": unixSeconds(now)
  }
}

export const signingSchemes: Readonly<Record<SigningScheme, Scheme>> = {
  standard_v1a: { key: "platform", headers: standard(signV1a) },
  standard_v1: { key: "secret", headers: standard(signV1) },
  acp_hmac: {
    key: "secret",
    headers: (secret, { eventId, now, body }) => ({
      "merchant-signature": signAcp(secret, unixSeconds(now), body),
      // The protocol's optional headers: the event id to de-duplicate by, and when it was signed.
      "request-id": eventId,
      timestamp: new Date(now).toISOString()
    })
  },
  ucp_rfc9421: { key: "ucp", headers: ucpHeaders }
}
