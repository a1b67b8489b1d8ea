import { createPublicKey, generateKeyPairSync } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import {
  contentDigest,
  type PublicJwk,
  parseSignatureInput,
  parseSignatures,
  type SignedMessage,
  sha256DigestMatches,
  signatureBase,
  signatureParamsOf,
  signEs256,
  unsupportedKey,
  verifyEcdsa
} from "../../../src/services/platform/HttpSignatures.js"

/** RFC 9421 Appendix B.1.3, `test-key-ecc-p256`: the public half. */
const rfcP256 = createPublicKey(`-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqIVYZVLCrPZHGHjP17CTW0/+D9Lf
w0EkjqF7xB4FivAxzic30tMM4GF+hR6Dxh71Z50VGGdldkkDXZCnTNnoXQ==
-----END PUBLIC KEY-----`).export({ format: "jwk" }) as PublicJwk

const headers =
  (fields: Record<string, string>) =>
  (name: string): string | undefined =>
    fields[name]

describe("HTTP Message Signatures (RFC 9421)", () => {
  it("verifies RFC 9421 B.2.4: a response signed with ecdsa-p256-sha256", () => {
    const response: SignedMessage = {
      status: 200,
      header: headers({
        "content-type": "application/json",
        "content-digest":
          "sha-512=:mEWXIS7MaLRuGgxOBdODa3xqM1XdEvxoYhvlCFJ41QJgJc4GTsPp29l5oGX69wWdXymyU0rjJuahq4l5aGgfLQ==:",
        "content-length": "23"
      })
    }
    const [input] = Either.getOrThrow(
      parseSignatureInput(
        'sig-b24=("@status" "content-type" "content-digest" "content-length");created=1618884473;keyid="test-key-ecc-p256"'
      )
    )
    expect(input).toMatchObject({ label: "sig-b24", keyid: "test-key-ecc-p256", created: 1618884473 })
    const base = Either.getOrThrow(signatureBase(response, input!))
    expect(base).toBe(
      [
        '"@status": 200',
        '"content-type": application/json',
        '"content-digest": sha-512=:mEWXIS7MaLRuGgxOBdODa3xqM1XdEvxoYhvlCFJ41QJgJc4GTsPp29l5oGX69wWdXymyU0rjJuahq4l5aGgfLQ==:',
        '"content-length": 23',
        '"@signature-params": ("@status" "content-type" "content-digest" "content-length");created=1618884473;keyid="test-key-ecc-p256"'
      ].join("\n")
    )
    const signature = Either.getOrThrow(
      parseSignatures(
        "sig-b24=:wNmSUAhwb5LxtOtOpNa6W5xj067m5hFrj0XQ4fvpaCLx0NKocgPquLgyahnzDnDAUy5eCdlYUEkLIj+32oiasw==:"
      )
    ).get("sig-b24")!
    expect(unsupportedKey(rfcP256, undefined)).toBeUndefined()
    expect(verifyEcdsa(rfcP256, base, signature)).toBe(true)
    // One byte changed anywhere in the base, and it no longer verifies.
    expect(verifyEcdsa(rfcP256, base.replace("200", "201"), signature)).toBe(false)
  })

  it("builds RFC 9421 B.2.5's base: a header, a derived component, parameters in their order", () => {
    const request: SignedMessage = {
      method: "POST",
      authority: "example.com",
      path: "/foo",
      query: "param=Value&Pet=dog",
      header: headers({ date: "Tue, 20 Apr 2021 02:07:55 GMT", "content-type": "application/json" })
    }
    const [input] = Either.getOrThrow(
      parseSignatureInput('sig-b25=("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"')
    )
    expect(Either.getOrThrow(signatureBase(request, input!))).toBe(
      [
        '"date": Tue, 20 Apr 2021 02:07:55 GMT',
        '"@authority": example.com',
        '"content-type": application/json',
        '"@signature-params": ("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"'
      ].join("\n")
    )
    const [query] = Either.getOrThrow(parseSignatureInput('q=("@method" "@path" "@query")'))
    expect(Either.getOrThrow(signatureBase(request, query!))).toBe(
      '"@method": POST\n"@path": /foo\n"@query": ?param=Value&Pet=dog\n"@signature-params": ("@method" "@path" "@query")'
    )
  })

  it("computes Content-Digest over the raw bytes (RFC 9530's example)", () => {
    expect(contentDigest('{"hello": "world"}')).toBe("sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:")
    expect(sha256DigestMatches("sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:", '{"hello": "world"}')).toBe(
      true
    )
    expect(sha256DigestMatches("sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:", '{"hello":"world"}')).toBe(
      false
    )
    expect(sha256DigestMatches("sha-512=:AAAA:", "{}")).toBeUndefined()
  })

  it("signs ES256 as r||s that its public JWK verifies; refuses what it cannot read", () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    const jwk = publicKey.export({ format: "jwk" }) as PublicJwk
    const params = signatureParamsOf(["@status", "content-digest", "content-type"], { created: 1, keyid: "k" })
    expect(params).toBe('("@status" "content-digest" "content-type");created=1;keyid="k"')
    const signature = signEs256(privateKey, "base")
    expect(signature).toHaveLength(64)
    expect(verifyEcdsa(jwk, "base", signature)).toBe(true)
    expect(unsupportedKey({ kty: "OKP", crv: "Ed25519", x: "a" }, undefined)).toMatch(/not supported/)
    expect(unsupportedKey(jwk, "ed25519")).toMatch(/does not match/)
    expect(Either.isLeft(parseSignatureInput('sig1=("@query-param";name="a")'))).toBe(true)
    expect(Either.isLeft(parseSignatureInput("sig1=(@method"))).toBe(true)
    expect(Either.isLeft(parseSignatures("sig1=abc"))).toBe(true)
    expect(
      Either.isLeft(signatureBase({ header: () => undefined }, { components: ["@method"], signatureParams: "" }))
    ).toBe(true)
  })
})
