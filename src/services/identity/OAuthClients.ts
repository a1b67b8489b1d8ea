import { Effect, Option, type ParseResult, Schema } from "effect"
import { InvalidClient, InvalidClientMetadata, InvalidRedirectUri } from "../../domain/identity/Errors.js"
import {
  jwtBearerAssertionType,
  type RegisteredClient,
  RegistrationRequest,
  supportedScopes
} from "../../domain/identity/OAuth.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { formatPath, plainIssues } from "../../domain/platform/IssueMessages.js"
import { nowDate } from "../platform/Time.js"
import { ClientAssertions, unverifiedSubject } from "./ClientAssertions.js"
import { ClientMetadataDocuments, isClientIdUrl } from "./ClientMetadataDocuments.js"
import { type Client, OAuthClientsRepo } from "./OAuthClientsRepo.js"
import { formatScopes, redirectUriProblem, seconds, secret, secretMatches, sha256, splitScopes } from "./OAuthRules.js"

export type { Client } from "./OAuthClientsRepo.js"

/** How the client authenticated at the token, revocation or introspection endpoint. */
export interface ClientCredentials {
  /** From `Authorization: Basic`, already form-decoded (RFC 6749 §2.3.1). */
  readonly basic: Option.Option<{ readonly clientId: string; readonly clientSecret: string }>
  readonly clientId: string | undefined
  readonly clientSecret: string | undefined
  /** RFC 7523 §2.2, for `private_key_jwt` clients. */
  readonly clientAssertionType: string | undefined
  readonly clientAssertion: string | undefined
}

const registrationFailure = (error: ParseResult.ParseError) => {
  const first = plainIssues(error.issue)[0]
  const path = first === undefined ? "" : formatPath(first.path)
  const description = first === undefined ? "Invalid client metadata" : `${path || "body"}: ${first.message}`
  return path.startsWith("redirect_uris")
    ? new InvalidRedirectUri({ message: description })
    : new InvalidClientMetadata({ message: description })
}

/**
 * The clients of the authorization server (docs/oauth.md): dynamic registration (RFC 7591) and the client
 * authentication of the token, revocation and introspection endpoints (RFC 6749 §2.3).
 */
export class OAuthClients extends Effect.Service<OAuthClients>()("OAuthClients", {
  dependencies: [OAuthClientsRepo.Default, ClientMetadataDocuments.Default, ClientAssertions.Default],
  effect: Effect.gen(function* () {
    const repo = yield* OAuthClientsRepo
    const documents = yield* ClientMetadataDocuments
    const assertions = yield* ClientAssertions

    /**
     * The client with that id: a registered one, or for an `https` id the client its metadata document
     * describes, which fails with `InvalidClient` when the document cannot be fetched or used.
     */
    const find = Effect.fn("OAuthClients.find")((id: string) =>
      isClientIdUrl(id) ? Effect.map(documents.resolve(id), Option.some) : repo.findById(id)
    )

    /** RFC 7591 registration; nothing is stored unless every field is acceptable. */
    const register = Effect.fn("OAuthClients.register")(function* (body: unknown) {
      const request = yield* Schema.decodeUnknown(RegistrationRequest, { errors: "all" })(body).pipe(
        Effect.mapError(registrationFailure)
      )
      for (const uri of request.redirect_uris) {
        const problem = redirectUriProblem(uri)
        if (problem !== undefined) return yield* new InvalidRedirectUri({ message: `redirect_uris: ${problem}` })
      }
      const scopes = request.scope === undefined ? supportedScopes : splitScopes(request.scope)
      const unknown = scopes.filter((s) => !(supportedScopes as ReadonlyArray<string>).includes(s))
      if (unknown.length > 0 || scopes.length === 0) {
        return yield* new InvalidClientMetadata({
          message: `scope: unsupported scope ${unknown.join(" ") || "(empty)"}; supported: ${supportedScopes.join(" ")}`
        })
      }
      const grantTypes = request.grant_types ?? ["authorization_code", "refresh_token"]
      if (!grantTypes.includes("authorization_code")) {
        return yield* new InvalidClientMetadata({ message: "grant_types: must include authorization_code" })
      }
      const method = request.token_endpoint_auth_method ?? "client_secret_basic"
      const clientSecret = method === "none" ? undefined : secret("rcs")
      const issuedAt = yield* nowDate
      const client = {
        id: yield* makeId,
        secretHash: clientSecret === undefined ? null : sha256(clientSecret),
        clientName: request.client_name,
        redirectUris: request.redirect_uris,
        grantTypes: [...new Set(grantTypes)],
        responseTypes: ["code"],
        tokenEndpointAuthMethod: method,
        scope: formatScopes(scopes),
        logoUri: request.logo_uri ?? null,
        clientUri: request.client_uri ?? null,
        contacts: request.contacts ?? [],
        softwareId: request.software_id ?? null,
        jwksUri: null,
        createdAt: issuedAt
      }
      yield* repo.insert(client)
      const registered: RegisteredClient = {
        client_id: client.id,
        client_id_issued_at: seconds(issuedAt),
        ...(clientSecret === undefined ? {} : { client_secret: clientSecret, client_secret_expires_at: 0 as const }),
        client_name: client.clientName,
        redirect_uris: request.redirect_uris,
        grant_types: [...new Set(grantTypes)],
        response_types: ["code"],
        token_endpoint_auth_method: method,
        scope: client.scope,
        ...(request.logo_uri === undefined ? {} : { logo_uri: request.logo_uri }),
        ...(request.client_uri === undefined ? {} : { client_uri: request.client_uri }),
        ...(request.contacts === undefined ? {} : { contacts: request.contacts }),
        ...(request.software_id === undefined ? {} : { software_id: request.software_id })
      }
      return registered
    })

    /**
     * The client making a token, revocation or introspection request. One authentication method per
     * request (RFC 6749 §2.3). Confidential clients may use either secret method, since clients differ on
     * which they pick; public clients identify with `client_id` (or Basic with an empty secret). The handlers
     * call it before `token`, `revoke` and `introspect`, so that they can count its failures.
     */
    const authenticate = Effect.fn("OAuthClients.authenticate")(function* (credentials: ClientCredentials) {
      const basic = Option.getOrUndefined(credentials.basic)
      if (basic !== undefined && credentials.clientSecret !== undefined) {
        return yield* new InvalidRequest({
          message: "Use one client authentication method, not both Basic and client_secret.",
          errors: []
        })
      }
      const assertion = credentials.clientAssertion
      if (assertion !== undefined || credentials.clientAssertionType !== undefined) {
        if (basic !== undefined || credentials.clientSecret !== undefined) {
          return yield* new InvalidRequest({
            message: "Use one client authentication method, not both a client assertion and a secret.",
            errors: []
          })
        }
        if (credentials.clientAssertionType !== jwtBearerAssertionType || assertion === undefined) {
          return yield* new InvalidClient({
            message: `A client assertion needs client_assertion_type ${jwtBearerAssertionType} and client_assertion.`
          })
        }
        // The assertion names its client (RFC 7523 §3); a client_id sent with it must agree.
        const assertedId = credentials.clientId ?? unverifiedSubject(assertion)
        if (assertedId === undefined) return yield* new InvalidClient({ message: "The client assertion has no sub." })
        const client = Option.getOrUndefined(yield* find(assertedId))
        if (client === undefined) return yield* new InvalidClient({ message: "Unknown client." })
        if (client.tokenEndpointAuthMethod !== "private_key_jwt") {
          return yield* new InvalidClient({ message: "This client does not authenticate with private_key_jwt." })
        }
        yield* assertions.verify(client, assertion)
        return client
      }
      if (basic !== undefined && credentials.clientId !== undefined && credentials.clientId !== basic.clientId) {
        return yield* new InvalidClient({ message: "client_id differs from the authenticated client." })
      }
      const clientId = basic?.clientId ?? credentials.clientId
      const presented = basic?.clientSecret || credentials.clientSecret
      if (clientId === undefined) return yield* new InvalidClient({ message: "Client authentication is required." })
      const client = Option.getOrUndefined(yield* find(clientId))
      if (client === undefined) return yield* new InvalidClient({ message: "Unknown client." })
      if (client.tokenEndpointAuthMethod === "private_key_jwt") {
        return yield* new InvalidClient({ message: "This client must authenticate with private_key_jwt." })
      }
      if (client.secretHash === null) {
        if (presented !== undefined) return yield* new InvalidClient({ message: "This client has no secret." })
        return client
      }
      if (presented === undefined || !secretMatches(presented, client.secretHash)) {
        return yield* new InvalidClient({ message: "Client authentication failed." })
      }
      return client
    })

    /** Notes that one of the client's codes was redeemed, the first time it happens (see `Client`). */
    const noteCodeRedeemed = Effect.fn("OAuthClients.noteCodeRedeemed")(function* (client: Client, at: Date) {
      if (client.firstCodeRedeemedAt === null) yield* repo.markFirstCodeRedeemed(client.id, at)
    })

    return { find, register, authenticate, noteCodeRedeemed } as const
  })
}) {}
