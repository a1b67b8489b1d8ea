import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AcpWebhookEndpointRecord } from "../../domain/checkout/AcpOrders.js"

const columns = "id, client_id, url, created_at"

/** A live endpoint with the secret its deliveries are signed with. */
const SigningEndpoint = Schema.Struct({ ...AcpWebhookEndpointRecord.fields, secret: Schema.String })
export type AcpSigningEndpoint = typeof SigningEndpoint.Type

/**
 * The `acp_webhook_endpoints` table: agent platforms' URLs for ACP order webhooks. Only the AcpWebhooks service uses
 * it. Its statements run in the caller's transaction. Unexpected database errors are defects.
 */
export class AcpWebhookEndpointsRepo extends Effect.Service<AcpWebhookEndpointsRepo>()("AcpWebhookEndpointsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Inserts a live endpoint; none when the client has one for this URL already. */
    const insert = SqlSchema.findAll({
      Request: Schema.Struct({
        id: Schema.String,
        clientId: Schema.String,
        url: Schema.String,
        secret: Schema.String,
        at: Schema.DateFromSelf
      }),
      Result: AcpWebhookEndpointRecord,
      execute: ({ id, clientId, url, secret, at }) => sql`
        INSERT INTO acp_webhook_endpoints (id, client_id, url, secret, created_at)
        VALUES (${id}, ${clientId}, ${url}, ${secret}, ${at})
        ON CONFLICT (client_id, url) WHERE deleted_at IS NULL DO NOTHING
        RETURNING ${sql.literal(columns)}`
    })

    const findLive = SqlSchema.findAll({
      Request: Schema.String,
      Result: AcpWebhookEndpointRecord,
      execute: (clientId) => sql`SELECT ${sql.literal(columns)} FROM acp_webhook_endpoints
        WHERE client_id = ${clientId} AND deleted_at IS NULL ORDER BY created_at, id`
    })

    const findSigning = SqlSchema.findAll({
      Request: Schema.String,
      Result: SigningEndpoint,
      execute: (clientId) => sql`SELECT ${sql.literal(columns)}, secret FROM acp_webhook_endpoints
        WHERE client_id = ${clientId} AND deleted_at IS NULL ORDER BY created_at, id`
    })

    /** Deletes a live endpoint of the client: its secret erased, the row kept. */
    const markDeleted = SqlSchema.findAll({
      Request: Schema.Struct({ clientId: Schema.String, id: Schema.String, at: Schema.DateFromSelf }),
      Result: AcpWebhookEndpointRecord,
      execute: ({ clientId, id, at }) => sql`UPDATE acp_webhook_endpoints SET secret = NULL, deleted_at = ${at}
        WHERE id = ${id} AND client_id = ${clientId} AND deleted_at IS NULL
        RETURNING ${sql.literal(columns)}`
    })

    return {
      insert: Effect.fn("AcpWebhookEndpointsRepo.insert")(
        (input: typeof insert extends (r: infer R) => any ? R : never) =>
          Effect.map(Effect.orDie(insert(input)), (rows) => rows[0])
      ),
      /** The client's live endpoints, oldest first. */
      live: Effect.fn("AcpWebhookEndpointsRepo.live")((clientId: string) => Effect.orDie(findLive(clientId))),
      /** The client's live endpoints with their secrets, to sign deliveries. */
      signing: Effect.fn("AcpWebhookEndpointsRepo.signing")((clientId: string) => Effect.orDie(findSigning(clientId))),
      remove: Effect.fn("AcpWebhookEndpointsRepo.remove")((clientId: string, id: string, at: Date) =>
        Effect.map(Effect.orDie(markDeleted({ clientId, id, at })), (rows) => rows.length > 0)
      )
    } as const
  })
}) {}
