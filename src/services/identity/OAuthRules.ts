import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { supportedScopes } from "../../domain/identity/OAuth.js"

/**
 * The rules of the authorization server that need no database (docs/oauth.md): lifetimes, secrets and their
 * digests, scopes, redirect URIs (RFC 8252), PKCE (RFC 7636) and the one resource (RFC 8707).
 */

export const lifetimes = {
  accessSeconds: 60 * 60,
  refreshSeconds: 30 * 24 * 60 * 60,
  codeSeconds: 5 * 60,
  sessionSeconds: 12 * 60 * 60
} as const

export const sha256 = (value: string) => createHash("sha256").update(value).digest("hex")

/** An opaque secret with a prefix naming its kind (so leaked ones are recognisable), 256 random bits. */
export const secret = (prefix: string) => `${prefix}_${randomBytes(32).toString("base64url")}`

/** Whether a presented secret hashes to the stored digest, in constant time. */
export const secretMatches = (presented: string, storedHash: string) => {
  const digest = Buffer.from(sha256(presented))
  const stored = Buffer.from(storedHash)
  return digest.length === stored.length && timingSafeEqual(digest, stored)
}

/** Scopes in the canonical order, deduplicated. */
export const formatScopes = (scopes: Iterable<string>) => {
  const set = new Set(scopes)
  return supportedScopes.filter((s) => set.has(s)).join(" ")
}

/**
 * The `scope` of an `insufficient_scope` challenge (RFC 6750 §3.1): what the token has and what the request
 * needs, so that a client that asks again for exactly this keeps what it had (MCP 2025-11-25, "Scope
 * challenge handling", the recommended approach; docs/decisions/0077-step-up-scope-challenges.md).
 */
export const challengeScope = (granted: ReadonlyArray<string>, needed: ReadonlyArray<string>) =>
  formatScopes([...granted, ...needed])

export const splitScopes = (scope: string) => scope.split(" ").filter((s) => s !== "")

const LOOPBACK = /^(http:\/\/(?:127\.0\.0\.1|\[::1\]|localhost))(?::\d{1,5})?(?=[/?]|$)/

/**
 * RFC 8252 §7.3: on a loopback redirect URI the port may vary; everything else must match exactly. The
 * varied port must be one a redirect can go to (1 to 65535).
 */
export const redirectUriMatches = (registered: string, requested: string) =>
  registered === requested ||
  (LOOPBACK.test(registered) &&
    registered.replace(LOOPBACK, "$1") === requested.replace(LOOPBACK, "$1") &&
    redirectUriProblem(requested) === undefined)

/** The port written in a URI's authority, if any (`URL` refuses ports above 65535 without saying why). */
const PORT = /^[^/?#]*\/\/[^/?#]*:(\d+)(?=[/?#]|$)/

/** Why a redirect URI cannot be registered, if it cannot: https, or http on a loopback host; no fragment. */
export const redirectUriProblem = (uri: string): string | undefined => {
  const port = PORT.exec(uri)?.[1]
  if (port !== undefined && !(Number(port) >= 1 && Number(port) <= 65535)) {
    return `${uri} has an impossible port (${port}); ports are 1 to 65535`
  }
  if (!URL.canParse(uri)) return `${uri} is not an absolute URI`
  const url = new URL(uri)
  if (url.hash !== "" || uri.includes("#")) return `${uri} must not have a fragment`
  if (url.username !== "" || url.password !== "") return `${uri} must not carry credentials`
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname)) return undefined
  return `${uri} must use https, or http on a loopback host (127.0.0.1, [::1], localhost)`
}

/** RFC 7636: BASE64URL(SHA256(verifier)). */
export const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/

/** Whether a `code_challenge` has the form of an S256 one. */
export const isS256Challenge = (challenge: string) => CHALLENGE.test(challenge)

/** Whether a `code_verifier` is well formed and hashes (S256) to the code's challenge. */
export const verifierMatches = (verifier: string, challenge: string) =>
  VERIFIER.test(verifier) && s256(verifier) === challenge

/** RFC 8707: the issuer is the only resource; a trailing slash is forgiven (clients differ on it). */
export const isResourceOf = (issuer: string, resource: string) => resource.replace(/\/$/, "") === issuer

export const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

export const later = (from: Date, secs: number) => new Date(from.getTime() + secs * 1000)
