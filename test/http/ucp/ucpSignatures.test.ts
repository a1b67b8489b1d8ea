import { createHash, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from "node:crypto"
import { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Checkout } from "../../../src/domain/checkout/Checkout.js"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { sessionRows } from "../../support/acp.js"
import { signedIn } from "../../support/auth.js"
import { availableVariants, makeCheckoutTestServer, payWith } from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { raw, testPublicUrl } from "../../support/http.js"
import { certificate, httpsReceiver } from "../../support/receiver.js"
import { expectUcpError, londonDestination } from "../../support/ucp.js"

/**
 * UCP message signatures on `/ucp` (docs/decisions/0087-ucp-message-signatures.md): a loopback "platform" serves
 * its profile with a P-256 key over https and signs its requests as the protocol's REST binding says (RFC 9421,
 * Content-Digest, ES256 as r||s), with node:crypto and a signature base written out here, not Ribbon's own code.
 * Ribbon fetches the profile only for a signed request, verifies, and signs `complete`'s answer with its UCP key.
 */

const platformKey = generateKeyPairSync("ec", { namedCurve: "P-256" })
const otherKey = generateKeyPairSync("ec", { namedCurve: "P-256" })
const KID = "platform-2026"
const publicJwk = (key: KeyObject) => {
  const { kty, crv, x, y } = key.export({ format: "jwk" })
  return { kid: KID, kty, crv, x, y, use: "sig", alg: "ES256" }
}
const profile = {
  ucp: {
    version: "2026-04-08",
    services: {},
    capabilities: { "dev.ucp.shopping.checkout": [{ version: "2026-04-08" }] },
    payment_handlers: {}
  },
  signing_keys: [publicJwk(platformKey.publicKey)]
}

/** The platform's web server: its profile, and profiles that break each rule. */
const platform = httpsReceiver((request) => {
  const json = { "content-type": "application/json", "cache-control": "public, max-age=300" }
  switch (request.path) {
    case "/profile":
      return { status: 200, headers: json, body: JSON.stringify(profile) }
    case "/moved":
      return { status: 302, headers: { location: "/profile" } }
    case "/down":
      return { status: 503 }
    case "/garbled":
      return { status: 200, headers: json, body: "{not json" }
    default:
      return { status: 200, headers: json, body: JSON.stringify({ signing_keys: [] }) }
  }
})

const AUTHORITY = new URL(testPublicUrl).host
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

interface Signing {
  readonly agent: string
  readonly key?: KeyObject
  readonly kid?: string
  /** Components left out of what the binding requires. */
  readonly omit?: ReadonlyArray<string>
  readonly alg?: string
  /** The body sent instead of the one signed. */
  readonly sendBody?: string
  readonly idempotencyKey?: string
  /** Only `Signature-Input`, no `Signature`. */
  readonly withoutSignature?: boolean
}

/** A `/ucp` request signed as the platform signs it. */
const signed = (method: "GET" | "POST", path: string, body: unknown, signing: Signing) => {
  const text = body === undefined ? "" : JSON.stringify(body)
  const headers: Record<string, string> = { "ucp-agent": signing.agent }
  if (signing.idempotencyKey !== undefined) headers["idempotency-key"] = signing.idempotencyKey
  if (text !== "") {
    headers["content-type"] = "application/json"
    headers["content-digest"] = `sha-256=:${createHash("sha256").update(text).digest("base64")}:`
  }
  const values: Record<string, string> = {
    "@method": method,
    "@authority": AUTHORITY,
    "@path": `/ucp${path}`,
    ...headers
  }
  const components = [
    "@method",
    "@authority",
    "@path",
    "ucp-agent",
    ...(signing.idempotencyKey === undefined ? [] : ["idempotency-key"]),
    ...(text === "" ? [] : ["content-digest", "content-type"])
  ].filter((c) => !(signing.omit ?? []).includes(c))
  const params = `(${components.map((c) => `"${c}"`).join(" ")});keyid="${signing.kid ?? KID}"${
    signing.alg === undefined ? "" : `;alg="${signing.alg}"`
  }`
  const base = [...components.map((c) => `"${c}": ${values[c]}`), `"@signature-params": ${params}`].join("\n")
  const signature = sign("sha256", Buffer.from(base), {
    key: signing.key ?? platformKey.privateKey,
    dsaEncoding: "ieee-p1363"
  })
  headers["signature-input"] = `sig1=${params}`
  if (signing.withoutSignature !== true) headers.signature = `sig1=:${b64(signature)}:`
  const request = (method === "GET" ? HttpClientRequest.get : HttpClientRequest.post)(`/ucp${path}`).pipe(
    HttpClientRequest.setHeaders(headers)
  )
  const sent = signing.sendBody ?? text
  return raw(sent === "" ? request : HttpClientRequest.bodyText(request, sent, "application/json"))
}

const Server = makeCheckoutTestServer(
  Layer.merge(
    FulfillmentSettings.Default,
    OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })
  )
).pipe(signedIn({ defaultCountry: "GB" }))

describe("UCP message signatures", () => {
  it.layer(Server, { timeout: 120_000 })((it) => {
    it.scoped("verifies signed requests with the profile's key, fetched once, and signs complete's answer", () =>
      Effect.gen(function* () {
        const site = yield* platform
        const agent = `profile="${site.url("/profile")}"`
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const created = yield* signed(
          "POST",
          "/checkout-sessions",
          {
            line_items: [{ item: { id: variantId! }, quantity: 1 }],
            buyer: { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" },
            fulfillment: { methods: [{ type: "shipping", destinations: [londonDestination] }] }
          },
          { agent, idempotencyKey: "6f1c1f5e-4a51-4d8e-9d55-0a7e1c9a1b2c" }
        )
        expect(created.status, created.text).toBe(201)
        expect(created.body.status, created.text).toBe("requires_escalation")
        const id = created.body.id
        const read = yield* signed("GET", `/checkout-sessions/${id}`, undefined, { agent })
        expect(read.status, read.text).toBe(200)
        // The profile was fetched for the first signed request and kept (max-age=300) for the second.
        expect(site.received.map((r) => r.path)).toEqual(["/profile"])

        yield* payWith({ paymentUrl: created.body.continue_url } as Checkout)
        yield* eventually(
          signed("GET", `/checkout-sessions/${id}`, undefined, { agent }),
          (r) => r.body.status === "completed",
          "completed"
        )
        const completed = yield* signed("POST", `/checkout-sessions/${id}/complete`, { payment: {} }, { agent })
        expect(completed.status, completed.text).toBe(200)
        expect(completed.body.status).toBe("completed")

        // The answer is signed with the key /.well-known/ucp publishes, over @status, its digest and type.
        const { signing_keys } = (yield* raw(HttpClientRequest.get("/.well-known/ucp"))).body
        const headers = completed.headers
        expect(headers["content-digest"]).toBe(
          `sha-256=:${createHash("sha256").update(completed.text).digest("base64")}:`
        )
        const input = /^sig1=(\("@status" "content-digest" "content-type"\);created=(\d+);keyid="([^"]+)")$/.exec(
          headers["signature-input"]!
        )
        expect(input, headers["signature-input"]).not.toBeNull()
        const key = signing_keys.find((k: { kid: string }) => k.kid === input![3])
        expect(key).toBeDefined()
        const base = [
          '"@status": 200',
          `"content-digest": ${headers["content-digest"]}`,
          `"content-type": ${headers["content-type"]}`,
          `"@signature-params": ${input![1]}`
        ].join("\n")
        const signature = Buffer.from(/^sig1=:([^:]+):$/.exec(headers.signature!)![1]!, "base64")
        expect(signature).toHaveLength(64)
        expect(
          verify(
            "sha256",
            Buffer.from(base),
            { key: createPublicKey({ key: key, format: "jwk" }), dsaEncoding: "ieee-p1363" },
            signature
          )
        ).toBe(true)
      })
    )

    it.scoped("refuses a signature that does not hold with the protocol's codes, leaving nothing", () =>
      Effect.gen(function* () {
        const site = yield* platform
        const agent = `profile="${site.url("/profile")}"`
        const before = yield* sessionRows
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const body = { line_items: [{ item: { id: variantId! }, quantity: 1 }] }
        const create = (signing: Omit<Signing, "agent"> & { readonly agent?: string }) =>
          signed("POST", "/checkout-sessions", body, { agent, ...signing })

        const tampered = yield* create({ sendBody: JSON.stringify({ ...body, line_items: [] }) })
        expectUcpError(tampered, 400, "digest_mismatch")
        // The body was checked before any key was needed: nothing was fetched for it.
        expect(site.received).toHaveLength(0)
        expectUcpError(yield* create({ kid: "retired-2025" }), 401, "key_not_found")
        expectUcpError(yield* create({ key: otherKey.privateKey }), 401, "signature_invalid")
        const uncovered = yield* create({ omit: ["ucp-agent"] })
        expectUcpError(uncovered, 401, "signature_invalid")
        expect(uncovered.body.content).toMatch(/ucp-agent/)
        expectUcpError(yield* create({ withoutSignature: true }), 401, "signature_missing")
        expectUcpError(yield* create({ alg: "rsa-pss-sha512" }), 400, "algorithm_unsupported")

        expectUcpError(yield* create({ agent: `profile="${site.url("/down")}"` }), 424, "profile_unreachable")
        expectUcpError(yield* create({ agent: `profile="${site.url("/moved")}"` }), 424, "profile_unreachable")
        expectUcpError(yield* create({ agent: `profile="${site.url("/garbled")}"` }), 422, "profile_malformed")
        expectUcpError(yield* create({ agent: `profile="${site.url("/no-ucp")}"` }), 422, "profile_malformed")
        const plain = yield* create({ agent: `profile="http://127.0.0.1:${site.port}/profile"` })
        expectUcpError(plain, 400, "invalid_profile_url")
        expect(yield* sessionRows).toEqual(before)
      })
    )

    it.scoped("never fetches the profile of an unsigned request: OAuth alone still works", () =>
      Effect.gen(function* () {
        const site = yield* platform
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const created = yield* raw(
          HttpClientRequest.post("/ucp/checkout-sessions").pipe(
            HttpClientRequest.setHeader("ucp-agent", `profile="${site.url("/down")}"`),
            HttpClientRequest.bodyText(
              JSON.stringify({ line_items: [{ item: { id: variantId! }, quantity: 1 }] }),
              "application/json"
            )
          )
        )
        expect(created.status, created.text).toBe(201)
        expect(created.headers.signature).toBeUndefined()
        expect(site.received).toHaveLength(0)
      })
    )
  })
})
