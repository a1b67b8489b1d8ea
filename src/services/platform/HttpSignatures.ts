import { createHash, createPublicKey, type KeyObject, sign, verify } from "node:crypto"
import { Either } from "effect"

/**
 * HTTP Message Signatures (RFC 9421) with the Content-Digest field (RFC 9530), as far as the Universal Commerce
 * Protocol uses them (docs/decisions/0087-ucp-message-signatures.md): the `Signature-Input` and `Signature`
 * dictionaries (RFC 8941), the signature base over derived components and header fields without component
 * parameters, and ECDSA signatures in their fixed-width `r||s` form (ES256 on P-256, ES384 on P-384). Pure
 * functions: finding the key, and what a signature must cover, are the caller's.
 */

// ---------------------------------------------------------------------------------------------------------
// Structured field values (RFC 8941), the parts signatures use

type BareItem =
  | { readonly type: "string"; readonly value: string }
  | { readonly type: "token"; readonly value: string }
  | { readonly type: "integer"; readonly value: number }
  | { readonly type: "bytes"; readonly value: Uint8Array }
  | { readonly type: "boolean"; readonly value: boolean }

/** Parameters in the order they came, since the signature base repeats them in that order. */
export type Parameters = ReadonlyArray<readonly [string, BareItem]>

interface Item {
  readonly item: BareItem
  readonly params: Parameters
}
interface InnerList {
  readonly list: ReadonlyArray<Item>
  readonly params: Parameters
}
type Member = Item | InnerList

class Fail extends Error {}

/** A parser of one field value; `fail` throws, and `dictionary` turns that into a Left. */
const parser = (text: string) => {
  let at = 0
  const fail = (what: string): never => {
    throw new Fail(`${what} at character ${at + 1}`)
  }
  const spaces = () => {
    while (text[at] === " ") at++
  }
  const ows = () => {
    while (text[at] === " " || text[at] === "\t") at++
  }
  const key = () => {
    const match = /^[a-z*][a-z0-9_\-.*]*/.exec(text.slice(at))
    if (match === null) return fail("a key was expected")
    at += match[0].length
    return match[0]
  }
  const bareItem = (): BareItem => {
    const c = text[at]
    if (c === '"') {
      at++
      let value = ""
      for (;;) {
        const d = text[at++]
        if (d === undefined) return fail("an unterminated string")
        if (d === '"') return { type: "string", value }
        if (d === "\\") {
          const e = text[at++]
          if (e !== '"' && e !== "\\") return fail("a bad escape in a string")
          value += e
        } else if (d < " " || d > "~") return fail("a character not allowed in a string")
        else value += d
      }
    }
    if (c === ":") {
      const end = text.indexOf(":", at + 1)
      if (end < 0) return fail("an unterminated byte sequence")
      const encoded = text.slice(at + 1, end)
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return fail("a byte sequence that is not base64")
      at = end + 1
      return { type: "bytes", value: new Uint8Array(Buffer.from(encoded, "base64")) }
    }
    if (c === "?") {
      const d = text[at + 1]
      if (d !== "0" && d !== "1") return fail("a bad boolean")
      at += 2
      return { type: "boolean", value: d === "1" }
    }
    const integer = /^-?\d{1,15}(?![\d.])/.exec(text.slice(at))
    if (integer !== null) {
      at += integer[0].length
      return { type: "integer", value: Number(integer[0]) }
    }
    const token = /^[A-Za-z*][A-Za-z0-9!#$%&'*+\-.^_`|~:/]*/.exec(text.slice(at))
    if (token !== null) {
      at += token[0].length
      return { type: "token", value: token[0] }
    }
    return fail("a value was expected")
  }
  const parameters = (): Parameters => {
    const params: Array<readonly [string, BareItem]> = []
    while (text[at] === ";") {
      at++
      spaces()
      const name = key()
      let value: BareItem = { type: "boolean", value: true }
      if (text[at] === "=") {
        at++
        value = bareItem()
      }
      const existing = params.findIndex(([n]) => n === name)
      if (existing >= 0) params.splice(existing, 1)
      params.push([name, value])
    }
    return params
  }
  const member = (): Member => {
    if (text[at] !== "(") return { item: bareItem(), params: parameters() }
    at++
    const list: Array<Item> = []
    for (;;) {
      spaces()
      if (text[at] === ")") {
        at++
        return { list, params: parameters() }
      }
      if (at >= text.length) return fail("an unterminated inner list")
      list.push({ item: bareItem(), params: parameters() })
      if (text[at] !== " " && text[at] !== ")") return fail("a space or ) was expected")
    }
  }
  const dictionary = (): Either.Either<ReadonlyArray<readonly [string, Member]>, string> => {
    try {
      const members: Array<readonly [string, Member]> = []
      spaces()
      while (at < text.length) {
        const name = key()
        let value: Member
        if (text[at] === "=") {
          at++
          value = member()
        } else value = { item: { type: "boolean", value: true }, params: parameters() }
        const existing = members.findIndex(([n]) => n === name)
        if (existing >= 0) members.splice(existing, 1)
        members.push([name, value])
        ows()
        if (at >= text.length) break
        if (text[at] !== ",") fail("a comma was expected")
        at++
        ows()
        if (at >= text.length) fail("a member was expected after the comma")
      }
      return Either.right(members)
    } catch (error) {
      if (error instanceof Fail) return Either.left(error.message)
      throw error
    }
  }
  return { dictionary }
}

const serializeBareItem = (item: BareItem): string => {
  switch (item.type) {
    case "string":
      return `"${item.value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`
    case "token":
      return item.value
    case "integer":
      return String(item.value)
    case "bytes":
      return `:${Buffer.from(item.value).toString("base64")}:`
    case "boolean":
      return item.value ? "?1" : "?0"
  }
}

const serializeParameters = (params: Parameters) =>
  params
    .map(([name, value]) =>
      value.type === "boolean" && value.value ? `;${name}` : `;${name}=${serializeBareItem(value)}`
    )
    .join("")

// ---------------------------------------------------------------------------------------------------------
// Signature-Input and Signature

/** The signature parameters Ribbon reads (RFC 9421 §2.3); others are kept for the base but not interpreted. */
export interface SignatureInput {
  readonly label: string
  /** Component identifiers, lowercase: `@method`, `content-digest`. */
  readonly components: ReadonlyArray<string>
  readonly keyid: string | undefined
  readonly alg: string | undefined
  readonly created: number | undefined
  /** `@signature-params`: the inner list as serialized (RFC 9421 §2.3). */
  readonly signatureParams: string
}

const stringParam = (params: Parameters, name: string) => {
  const found = params.find(([n]) => n === name)?.[1]
  return found?.type === "string" ? found.value : undefined
}

/** The signatures `Signature-Input` describes, in order; a component with parameters (`;sf`, `;req`) is refused. */
export const parseSignatureInput = (header: string): Either.Either<ReadonlyArray<SignatureInput>, string> =>
  Either.flatMap(parser(header).dictionary(), (members) => {
    const inputs: Array<SignatureInput> = []
    for (const [label, member] of members) {
      if (!("list" in member)) return Either.left(`Signature-Input ${label} is not an inner list`)
      const components: Array<string> = []
      for (const { item, params } of member.list) {
        if (item.type !== "string")
          return Either.left(`Signature-Input ${label} names a component that is not a string`)
        if (params.length > 0) return Either.left(`component parameters (on "${item.value}") are not supported`)
        if (item.value !== item.value.toLowerCase()) return Either.left(`component "${item.value}" is not lowercase`)
        components.push(item.value)
      }
      const created = member.params.find(([n]) => n === "created")?.[1]
      inputs.push({
        label,
        components,
        keyid: stringParam(member.params, "keyid"),
        alg: stringParam(member.params, "alg"),
        created: created?.type === "integer" ? created.value : undefined,
        signatureParams: `(${components.map((c) => serializeBareItem({ type: "string", value: c })).join(" ")})${serializeParameters(member.params)}`
      })
    }
    return Either.right(inputs)
  })

/** The signatures of a `Signature` field, by label. */
export const parseSignatures = (header: string): Either.Either<ReadonlyMap<string, Uint8Array>, string> =>
  Either.flatMap(parser(header).dictionary(), (members) => {
    const signatures = new Map<string, Uint8Array>()
    for (const [label, member] of members) {
      if ("list" in member || member.item.type !== "bytes")
        return Either.left(`Signature ${label} is not a byte sequence`)
      signatures.set(label, member.item.value)
    }
    return Either.right(signatures)
  })

/** `Signature-Input`'s member for `components` and `params` (written in that order), e.g. for a response. */
export const signatureParamsOf = (
  components: ReadonlyArray<string>,
  params: { readonly created?: number; readonly keyid: string }
): string =>
  `(${components.map((c) => `"${c}"`).join(" ")})${params.created === undefined ? "" : `;created=${params.created}`};keyid=${serializeBareItem({ type: "string", value: params.keyid })}`

// ---------------------------------------------------------------------------------------------------------
// The signature base (RFC 9421 §2.5)

/** A request or response as the base sees it. Header names are looked up lowercase. */
export interface SignedMessage {
  readonly method?: string
  /** `host[:port]`, lowercase, without the scheme's default port. */
  readonly authority?: string
  readonly scheme?: string
  /** The path as sent, not decoded. */
  readonly path?: string
  /** The query without its `?`, or undefined when there is none. */
  readonly query?: string | undefined
  readonly status?: number
  readonly header: (name: string) => string | undefined
}

const componentValue = (message: SignedMessage, component: string): string | undefined => {
  switch (component) {
    case "@method":
      return message.method?.toUpperCase()
    case "@authority":
      return message.authority
    case "@scheme":
      return message.scheme
    case "@path":
      return message.path === undefined ? undefined : message.path === "" ? "/" : message.path
    case "@query":
      return message.path === undefined ? undefined : `?${message.query ?? ""}`
    case "@request-target":
      return message.path === undefined
        ? undefined
        : `${message.path}${message.query === undefined ? "" : `?${message.query}`}`
    case "@target-uri":
      return message.scheme === undefined || message.authority === undefined || message.path === undefined
        ? undefined
        : `${message.scheme}://${message.authority}${message.path}${message.query === undefined ? "" : `?${message.query}`}`
    case "@status":
      return message.status === undefined ? undefined : String(message.status)
    default:
      if (component.startsWith("@")) return undefined
      // Several field lines are one value joined by ", " (Node joins them so); each line's edges are trimmed.
      return message.header(component)?.trim()
  }
}

/** The signature base of `input` over `message`, or which component the message lacks. */
export const signatureBase = (
  message: SignedMessage,
  input: Pick<SignatureInput, "components" | "signatureParams">
): Either.Either<string, string> => {
  const lines: Array<string> = []
  for (const component of input.components) {
    const value = componentValue(message, component)
    if (value === undefined) return Either.left(`the message has no "${component}" to sign`)
    if (/[\r\n]/.test(value)) return Either.left(`"${component}" holds a line break`)
    lines.push(`"${component}": ${value}`)
  }
  lines.push(`"@signature-params": ${input.signatureParams}`)
  return Either.right(lines.join("\n"))
}

// ---------------------------------------------------------------------------------------------------------
// Content-Digest (RFC 9530)

/** `sha-256=:…:` of `body`: the raw bytes, no canonicalization. */
export const contentDigest = (body: string | Uint8Array): string =>
  `sha-256=:${createHash("sha256").update(body).digest("base64")}:`

/** Whether a `Content-Digest` field's `sha-256` member is the digest of `body`; `undefined` when it has none. */
export const sha256DigestMatches = (header: string, body: string | Uint8Array): boolean | undefined => {
  const members = parser(header).dictionary()
  if (Either.isLeft(members)) return false
  const member = members.right.find(([name]) => name === "sha-256")?.[1]
  if (member === undefined) return undefined
  if ("list" in member || member.item.type !== "bytes") return false
  return Buffer.from(member.item.value).equals(createHash("sha256").update(body).digest())
}

// ---------------------------------------------------------------------------------------------------------
// ECDSA, fixed-width r||s (RFC 9421 §3.3.4, §3.3.5)

/** The public JWK members a verifier reads. */
export interface PublicJwk {
  readonly kty: string
  readonly crv?: string | undefined
  readonly x?: string | undefined
  readonly y?: string | undefined
}

const curves: Record<string, { readonly hash: string; readonly alg: string; readonly bytes: number }> = {
  "P-256": { hash: "sha256", alg: "ecdsa-p256-sha256", bytes: 64 },
  "P-384": { hash: "sha384", alg: "ecdsa-p384-sha384", bytes: 96 }
}

/** Why a key cannot verify signatures here (its curve decides the algorithm), or undefined when it can. */
export const unsupportedKey = (jwk: PublicJwk, alg: string | undefined): string | undefined => {
  const curve = jwk.kty === "EC" && jwk.crv !== undefined ? curves[jwk.crv] : undefined
  if (curve === undefined)
    return `keys of type ${jwk.kty}${jwk.crv === undefined ? "" : ` ${jwk.crv}`} are not supported (ES256 or ES384)`
  if (alg !== undefined && alg !== curve.alg) return `the algorithm ${alg} does not match the key's curve ${jwk.crv}`
  if (jwk.x === undefined || jwk.y === undefined) return "the key has no coordinates"
  return undefined
}

/** Whether `signature` (r||s) is `key`'s signature of `base`; a key that cannot be read verifies nothing. */
export const verifyEcdsa = (jwk: PublicJwk, base: string, signature: Uint8Array): boolean => {
  const curve = jwk.crv === undefined ? undefined : curves[jwk.crv]
  if (curve === undefined || jwk.x === undefined || jwk.y === undefined || signature.length !== curve.bytes)
    return false
  try {
    const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv!, x: jwk.x, y: jwk.y }, format: "jwk" })
    return verify(curve.hash, Buffer.from(base), { key, dsaEncoding: "ieee-p1363" }, signature)
  } catch {
    return false
  }
}

/** The ES256 signature (r||s) of `base` with a P-256 private key. */
export const signEs256 = (privateKey: KeyObject, base: string): Uint8Array =>
  new Uint8Array(sign("sha256", Buffer.from(base), { key: privateKey, dsaEncoding: "ieee-p1363" }))

/**
 * The `Signature-Input` and `Signature` headers of a message (label `sig1`) over `components`, signed ES256 with
 * `privateKey` under `keyid`, `created` in unix seconds. Every component must be in `message` (the caller builds it),
 * so a missing one is a defect.
 */
export const signatureHeaders = (
  message: SignedMessage,
  components: ReadonlyArray<string>,
  signer: { readonly privateKey: KeyObject; readonly keyid: string; readonly created: number }
): { readonly "signature-input": string; readonly signature: string } => {
  const signatureParams = signatureParamsOf(components, { created: signer.created, keyid: signer.keyid })
  const base = signatureBase(message, { components, signatureParams })
  if (Either.isLeft(base)) throw new Error(base.left)
  const signature = Buffer.from(signEs256(signer.privateKey, base.right)).toString("base64")
  return { "signature-input": `sig1=${signatureParams}`, signature: `sig1=:${signature}:` }
}
