import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { ClientAuthMethod } from "../../domain/identity/OAuth.js"

/** A registered client (RFC 7591); jsonb arrays as node-postgres parses them. */
export const Client = Schema.Struct({
  id: Schema.String,
  secretHash: Schema.NullOr(Schema.String),
  clientName: Schema.String,
  redirectUris: Schema.Array(Schema.String),
  grantTypes: Schema.Array(Schema.String),
  responseTypes: Schema.Array(Schema.String),
  tokenEndpointAuthMethod: ClientAuthMethod,
  /** Where a `private_key_jwt` client's public keys are; null for every other client. */
  jwksUri: Schema.NullOr(Schema.String),
  scope: Schema.String,
  logoUri: Schema.NullOr(Schema.String),
  clientUri: Schema.NullOr(Schema.String),
  contacts: Schema.Array(Schema.String),
  softwareId: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  /** When one of its codes was first exchanged for tokens; until then its errors are not redirected. */
  firstCodeRedeemedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type Client = typeof Client.Type

/** A newly registered client: none of its codes redeemed yet. */
export const NewClient = Client.omit("firstCodeRedeemedAt")
export type NewClient = typeof NewClient.Type

/** The `oauth_clients` table. Only the identity context's services use it. Unexpected database errors are defects. */
export class OAuthClientsRepo extends Effect.Service<OAuthClientsRepo>()("OAuthClientsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const findById = SqlSchema.findOne({
      Request: Schema.String,
      Result: Client,
      execute: (id) => sql`SELECT * FROM oauth_clients WHERE id = ${id}`
    })

    const insert = SqlSchema.void({
      Request: NewClient,
      execute: (client) =>
        sql`INSERT INTO oauth_clients ${sql.insert({
          ...client,
          redirectUris: JSON.stringify(client.redirectUris),
          grantTypes: JSON.stringify(client.grantTypes),
          responseTypes: JSON.stringify(client.responseTypes),
          contacts: JSON.stringify(client.contacts)
        })}`
    })

    /**
     * The row of a client identified by its metadata document's URL, as the document now says: made on its
     * first fetch, its metadata replaced on later ones (its creation and first redemption kept).
     */
    const upsertFromDocument = SqlSchema.void({
      Request: NewClient,
      execute: (client) =>
        sql`INSERT INTO oauth_clients ${sql.insert({
          ...client,
          redirectUris: JSON.stringify(client.redirectUris),
          grantTypes: JSON.stringify(client.grantTypes),
          responseTypes: JSON.stringify(client.responseTypes),
          contacts: JSON.stringify(client.contacts)
        })}
        ON CONFLICT (id) DO UPDATE SET
          client_name = excluded.client_name,
          redirect_uris = excluded.redirect_uris,
          grant_types = excluded.grant_types,
          response_types = excluded.response_types,
          token_endpoint_auth_method = excluded.token_endpoint_auth_method,
          jwks_uri = excluded.jwks_uri,
          scope = excluded.scope,
          logo_uri = excluded.logo_uri,
          client_uri = excluded.client_uri,
          contacts = excluded.contacts,
          software_id = excluded.software_id`
    })

    /** Notes the first redemption of one of the client's codes (a later one changes nothing). */
    const markFirstCodeRedeemed = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ id, at }) => sql`
        UPDATE oauth_clients SET first_code_redeemed_at = ${at}
        WHERE id = ${id} AND first_code_redeemed_at IS NULL`
    })

    return {
      findById: Effect.fn("OAuthClientsRepo.findById")((id: string) => Effect.orDie(findById(id))),
      insert: Effect.fn("OAuthClientsRepo.insert")((client: NewClient) => Effect.orDie(insert(client))),
      upsertFromDocument: Effect.fn("OAuthClientsRepo.upsertFromDocument")((client: NewClient) =>
        Effect.orDie(upsertFromDocument(client))
      ),
      markFirstCodeRedeemed: Effect.fn("OAuthClientsRepo.markFirstCodeRedeemed")((id: string, at: Date) =>
        Effect.orDie(markFirstCodeRedeemed({ id, at }))
      )
    } as const
  })
}) {}
