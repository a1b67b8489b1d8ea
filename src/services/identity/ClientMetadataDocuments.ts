import type { IncomingHttpHeaders } from "node:http"
import { Cache, Context, Duration, Effect, Exit, Option, type ParseResult, Schema } from "effect"
import { InvalidClient } from "../../domain/identity/Errors.js"
import { RegistrationRequest, supportedScopes } from "../../domain/identity/OAuth.js"
import { formatPath, plainIssues } from "../../domain/platform/IssueMessages.js"
import { OutboundHttp } from "../platform/OutboundHttp.js"
import { nowDate } from "../platform/Time.js"
import { OAuthClientsRepo } from "./OAuthClientsRepo.js"
import { formatScopes, redirectUriProblem, splitScopes } from "./OAuthRules.js"

/**
 * Clients identified by the URL of their client ID metadata document
 * (draft-ietf-oauth-client-id-metadata-document, MCP authorization 2025-11-25; docs/oauth.md,
 * docs/decisions/0076-client-id-metadata-documents.md): an `https` `client_id` is fetched through the
 * outbound guard, checked, cached in memory for as long as its caching headers allow (capped), and kept as
 * an `oauth_clients` row whose id is the URL, so that consents, codes and tokens refer to it like to any
 * client.
 */

/** The bounds of fetching a document; tests shorten the time limit. */
export class ClientMetadataLimits extends Context.Reference<ClientMetadataLimits>()("ribbon/ClientMetadataLimits", {
  defaultValue: () => ({
    /** The whole fetch, DNS included. */
    timeout: Duration.seconds(3) as Duration.Duration,
    /** A longer document is refused (the draft recommends reading at most 5 KB). */
    maxBytes: 5 * 1024,
    /** A `private_key_jwt` client's key set: a few RSA keys fit. */
    maxJwksBytes: 16 * 1024,
    /** How long a document without caching headers is kept. */
    defaultLifetime: Duration.minutes(5) as Duration.Duration,
    /** The longest a document is kept, whatever its `max-age`. */
    maxLifetime: Duration.hours(24) as Duration.Duration,
    /** How many documents one instance keeps. */
    capacity: 1000
  })
}) {}

/** Whether a `client_id` names a metadata document. Ids Ribbon generates never start with `https://`. */
export const isClientIdUrl = (clientId: string) => clientId.startsWith("https://")

/** Why a `client_id` URL cannot identify a client (draft §3), if it cannot. */
export const clientIdUrlProblem = (clientId: string): string | undefined => {
  if (!URL.canParse(clientId)) return "it is not a URL"
  const url = new URL(clientId)
  if (url.protocol !== "https:") return "it must use https"
  if (url.username !== "" || url.password !== "") return "it must not carry a user name or password"
  if (clientId.includes("#")) return "it must not have a fragment"
  // The URL parser removes dot segments, so they are looked for in the text as sent.
  const rest = clientId.slice("https://".length)
  const start = rest.search(/[/?]/)
  const path = start < 0 ? "" : rest.slice(start).split("?")[0]!
  if (path === "") return "it must have a path"
  if (path.split("/").some((segment) => segment === "." || segment === ".." || /^%2e(%2e)?$/i.test(segment))) {
    return "it must not contain . or .. path segments"
  }
  return undefined
}

/** The members a document may carry besides those of registration (RFC 7591): checked here, not there. */
const DocumentFields = Schema.Struct({
  client_id: Schema.String,
  token_endpoint_auth_method: Schema.optional(Schema.String),
  jwks_uri: Schema.optional(Schema.String)
})

const Document = Schema.Struct({ ...RegistrationRequest.omit("token_endpoint_auth_method").fields })

const firstIssue = (error: ParseResult.ParseError) => {
  const first = plainIssues(error.issue)[0]
  return first === undefined
    ? "it is not valid client metadata"
    : `${formatPath(first.path) || "body"}: ${first.message}`
}

/** RFC 9111 §5.2.2 for a shared cache: no-store, no-cache and private keep nothing; s-maxage before max-age. */
export const lifetimeOf = (
  headers: IncomingHttpHeaders,
  limits: Pick<ClientMetadataLimits["Type"], "defaultLifetime" | "maxLifetime">
): Duration.Duration => {
  const directives = new Map(
    (headers["cache-control"] ?? "")
      .toLowerCase()
      .split(",")
      .map((d) => d.trim().split("=") as [string, string | undefined])
      .filter(([name]) => name !== "")
      .map(([name, value]) => [name, value?.replace(/^"|"$/g, "")] as const)
  )
  if (["no-store", "no-cache", "private"].some((d) => directives.has(d))) return Duration.zero
  const age = directives.get("s-maxage") ?? directives.get("max-age")
  if (age === undefined) return limits.defaultLifetime
  const seconds = /^\d+$/.test(age) ? Number(age) : 0
  return Duration.min(Duration.seconds(seconds), limits.maxLifetime)
}

interface Fetched {
  readonly lifetime: Duration.Duration
}

export class ClientMetadataDocuments extends Effect.Service<ClientMetadataDocuments>()("ClientMetadataDocuments", {
  dependencies: [OAuthClientsRepo.Default, OutboundHttp.Default],
  effect: Effect.gen(function* () {
    const repo = yield* OAuthClientsRepo
    const outbound = yield* OutboundHttp
    const limits = yield* ClientMetadataLimits

    /** Fetches, checks and stores the document at `url`; its lifetime comes from its caching headers. */
    const fetchDocument = (url: string) =>
      Effect.gen(function* () {
        const refuse = (why: string) =>
          Effect.fail(new InvalidClient({ message: `The client metadata document at ${url} cannot be used: ${why}.` }))
        const problem = clientIdUrlProblem(url)
        if (problem !== undefined) return yield* refuse(problem)
        const response = yield* outbound
          .get(url, {
            headers: { accept: "application/json" },
            timeout: limits.timeout,
            maxResponseBytes: limits.maxBytes
          })
          .pipe(
            Effect.catchTags({
              OutboundRefused: (refused) => refuse(`it may not be fetched (${refused.reason})`),
              OutboundFailed: (failed) => refuse(`it could not be fetched (${failed.message})`)
            })
          )
        // No redirect is followed (draft §4): only a 200 is a document.
        if (response.status !== 200) return yield* refuse(`it answered ${response.status}, not 200`)
        if (response.truncated) return yield* refuse(`it is larger than ${limits.maxBytes} bytes`)
        const contentType = (response.headers["content-type"] ?? "").toLowerCase()
        if (!/^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/.test(contentType)) {
          return yield* refuse(`it is served as ${contentType || "no content type"}, not JSON`)
        }
        const json = yield* Effect.try({
          try: () => JSON.parse(response.body) as unknown,
          catch: () => undefined
        }).pipe(Effect.orElse(() => refuse("it is not JSON")))
        if (typeof json !== "object" || json === null || Array.isArray(json)) {
          return yield* refuse("it is not a JSON object")
        }
        const own = yield* Schema.decodeUnknown(DocumentFields)(json).pipe(
          Effect.orElse(() => refuse("its client_id is missing or not a string"))
        )
        // Simple string comparison (RFC 3986 §6.2.1), as the draft requires: nothing is normalised.
        if (own.client_id !== url) return yield* refuse(`its client_id (${own.client_id}) differs from its URL`)
        if ("client_secret" in json || "client_secret_expires_at" in json) {
          return yield* refuse("it must not carry a client secret")
        }
        const method = own.token_endpoint_auth_method ?? "none"
        if (method === "private_key_jwt") {
          if (own.jwks_uri === undefined || clientIdUrlProblem(own.jwks_uri) !== undefined) {
            return yield* refuse("private_key_jwt needs an https jwks_uri")
          }
        } else if (method !== "none") {
          return yield* refuse(`token_endpoint_auth_method must be none or private_key_jwt, not ${method}`)
        }
        const document = yield* Schema.decodeUnknown(Document, { errors: "all" })(json).pipe(
          Effect.mapError(firstIssue),
          Effect.catchAll(refuse)
        )
        for (const uri of document.redirect_uris) {
          const bad = redirectUriProblem(uri)
          if (bad !== undefined) return yield* refuse(`redirect_uris: ${bad}`)
        }
        const grantTypes = document.grant_types ?? ["authorization_code", "refresh_token"]
        if (!grantTypes.includes("authorization_code")) {
          return yield* refuse("grant_types must include authorization_code")
        }
        // A document serves every authorization server: scopes that are not Ribbon's are left out.
        const supported = new Set<string>(supportedScopes)
        const scopes =
          document.scope === undefined ? supportedScopes : splitScopes(document.scope).filter((s) => supported.has(s))
        if (scopes.length === 0) return yield* refuse(`scope names none of ${supportedScopes.join(" ")}`)
        yield* repo.upsertFromDocument({
          id: url,
          secretHash: null,
          clientName: document.client_name,
          redirectUris: document.redirect_uris,
          grantTypes: [...new Set(grantTypes)],
          responseTypes: ["code"],
          tokenEndpointAuthMethod: method,
          jwksUri: method === "private_key_jwt" ? own.jwks_uri! : null,
          scope: formatScopes(scopes),
          logoUri: document.logo_uri ?? null,
          clientUri: document.client_uri ?? null,
          contacts: document.contacts ?? [],
          softwareId: document.software_id ?? null,
          createdAt: yield* nowDate
        })
        return { lifetime: lifetimeOf(response.headers, limits) } satisfies Fetched
      })

    // Failures and invalid documents are never kept (draft §4.2): they are fetched again next time.
    const documents = yield* Cache.makeWith({
      capacity: limits.capacity,
      lookup: fetchDocument,
      timeToLive: (exit: Exit.Exit<Fetched, InvalidClient>) =>
        Exit.isSuccess(exit) ? exit.value.lifetime : Duration.zero
    })

    /**
     * The client whose metadata document is at `url`, from a document fetched now or still fresh in this
     * instance's cache; `InvalidClient` says why one cannot be used.
     */
    const resolve = Effect.fn("ClientMetadataDocuments.resolve")(function* (url: string) {
      yield* documents.get(url)
      const client = yield* repo.findById(url)
      if (Option.isSome(client)) return client.value
      // Stored by the fetch, so gone only if deleted since: fetched (and stored) again.
      yield* documents.invalidate(url)
      yield* documents.get(url)
      return yield* Effect.orDie(Effect.flatten(repo.findById(url)))
    })

    return { resolve } as const
  })
}) {}
