import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { type SigningScheme, WebhookAttempt, WebhookDelivery, WebhookStatus } from "../../domain/checkout/Webhooks.js"
import { Id } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { rowsOf } from "../platform/Rows.js"
import { compileV3Query, type V3Columns, v3Page } from "../platform/V3QuerySql.js"

/** Who receives a delivery: a company endpoint, an ACP endpoint, or (agent callbacks, no endpoint) a URL. */
export interface WebhookReceiver {
  readonly url: string
  readonly endpointId: string | null
  readonly acpEndpointId: string | null
}

/** What a 410 Gone switches off: the endpoint a delivery goes to, or else (agent callbacks) its URL. */
export const receiverOf = (delivery: { readonly endpointId: string | null; readonly acpEndpointId: string | null }) =>
  delivery.endpointId === null && delivery.acpEndpointId === null ? "URL" : "endpoint"

/** Which kind of endpoint an id names: a company's (`endpoint_id`), or an agent platform's ACP one. */
export type EndpointKind = "company" | "acp"

/** Rows of the inline statements below, decoded (decoders built once). */
const insertedRows = rowsOf(Schema.Struct({ id: Id, status: WebhookStatus }))
const begunRows = rowsOf(
  Schema.Struct({
    attempt: Schema.NullOr(Schema.Int),
    status: Schema.NullOr(WebhookStatus),
    openSince: Schema.NullOr(Schema.DateFromSelf)
  })
)
const attemptRows = rowsOf(Schema.Struct({ attempt: Schema.Number }))
const deliveryRows = rowsOf(WebhookDelivery)

const endpointColumns: V3Columns<WebhookDelivery> = {
  paging: "number",
  filters: {},
  sort: {},
  defaultOrder: [{ column: "created_at", descending: true }],
  id: "id"
}

/**
 * The `webhook_deliveries` (the outbox) and `webhook_attempts` (its log) tables. Only the Webhooks service
 * uses them. Statements run on the ambient SqlClient, so an enqueue joins the caller's transaction; the
 * attempt's statements are single statements, atomic without one. Unexpected database errors are defects.
 */
export class WebhookDeliveriesRepo extends Effect.Service<WebhookDeliveriesRepo>()("WebhookDeliveriesRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The columns of a delivery. */
    const deliveryColumns = sql`
  d.id, d.url, d.endpoint_id, d.acp_endpoint_id, d.signing_scheme, d.event_id, d.event_type, d.payload::text AS payload, d.status, d.attempts, d.next_attempt_at,
  d.last_status_code, d.last_error, d.resends, d.created_at, d.updated_at, d.delivered_at
  FROM webhook_deliveries d`

    /** The deliveries to the same receiver: of the same endpoint, or agent callbacks to the same URL. */
    const sameReceiver = (receiver: WebhookReceiver) =>
      receiver.endpointId !== null
        ? sql`endpoint_id = ${receiver.endpointId}`
        : receiver.acpEndpointId !== null
          ? sql`acp_endpoint_id = ${receiver.acpEndpointId}`
          : sql`url = ${receiver.url} AND endpoint_id IS NULL AND acp_endpoint_id IS NULL`

    /** The column naming an endpoint of `kind`. */
    const endpointColumn = (kind: EndpointKind) => (kind === "company" ? sql`endpoint_id` : sql`acp_endpoint_id`)

    const findDelivery = SqlSchema.findOne({
      Request: Id,
      Result: WebhookDelivery,
      execute: (id) => sql`SELECT ${deliveryColumns} WHERE d.id = ${id}`
    })

    const findByEvent = SqlSchema.findAll({
      Request: Schema.String,
      Result: WebhookDelivery,
      execute: (eventId) => sql`SELECT ${deliveryColumns} WHERE d.event_id = ${eventId} ORDER BY d.created_at, d.id`
    })

    const findByUrl = SqlSchema.findAll({
      Request: Schema.String,
      Result: WebhookDelivery,
      execute: (url) => sql`SELECT ${deliveryColumns} WHERE d.url = ${url} ORDER BY d.created_at, d.id`
    })

    const findAttempts = SqlSchema.findAll({
      Request: Id,
      Result: WebhookAttempt,
      execute: (deliveryId) => sql`
        SELECT delivery_id, attempt, started_at, duration_ms, request_headers, status_code, error, response_body,
          response_truncated
        FROM webhook_attempts WHERE delivery_id = ${deliveryId} ORDER BY attempt`
    })

    /** Each delivery's latest attempt that has an outcome (one still in flight is not a latency yet). */
    const findLastLatencies = SqlSchema.findAll({
      Request: Schema.Array(Id),
      Result: Schema.Struct({ deliveryId: Id, durationMs: Schema.Int }),
      execute: (deliveryIds) => sql`
        SELECT DISTINCT ON (delivery_id) delivery_id, duration_ms FROM webhook_attempts
        WHERE delivery_id IN ${sql.in(deliveryIds)} AND (status_code IS NOT NULL OR error IS NOT NULL)
        ORDER BY delivery_id, attempt DESC`
    })

    const findOfEndpoint = SqlSchema.findOne({
      Request: Schema.Struct({ endpointId: Schema.String, eventId: Schema.String }),
      Result: WebhookDelivery,
      execute: ({ endpointId, eventId }) =>
        sql`SELECT ${deliveryColumns} WHERE d.endpoint_id = ${endpointId} AND d.event_id = ${eventId}`
    })

    const findIdOf = SqlSchema.findAll({
      Request: Schema.Struct({ url: Schema.String, eventId: Schema.String }),
      Result: Schema.Struct({ id: Id }),
      execute: ({ url, eventId }) => sql`
          SELECT id FROM webhook_deliveries WHERE url = ${url} AND event_id = ${eventId}`
    })

    const findSecret = SqlSchema.findAll({
      Request: Id,
      Result: Schema.Struct({ signingSecret: Schema.NullOr(Schema.String) }),
      execute: (id) => sql`SELECT signing_secret FROM webhook_deliveries WHERE id = ${id}`
    })

    const findGoneEndpoints = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ endpointId: Schema.String }),
      execute: (endpointIds) => sql`SELECT DISTINCT endpoint_id FROM webhook_deliveries
        WHERE endpoint_id IN ${sql.in(endpointIds)} AND gone`
    })

    const restartDelivery = SqlSchema.findAll({
      Request: Schema.Struct({ id: Id, now: Schema.DateFromSelf }),
      Result: Schema.Struct({ resends: Schema.Int }),
      execute: ({ id, now }) => sql`UPDATE webhook_deliveries SET status = 'pending', resends = resends + 1,
          next_attempt_at = ${now}, delivered_at = NULL, updated_at = ${now}
        WHERE id = ${id} AND status <> 'pending' RETURNING resends`
    })

    /**
     * Inserts a delivery, `pending` (due at `now`) or, when its receiver answered 410 Gone before or its endpoint
     * is `disabled`, `disabled`; nothing when this event was already enqueued for this URL. Its id and status,
     * when inserted.
     */
    const insert = Effect.fn("WebhookDeliveriesRepo.insert")(function* (input: {
      readonly id: Id
      readonly url: string
      readonly endpoint?: { readonly id: string; readonly secret: string } | undefined
      readonly acpEndpoint?: { readonly id: string; readonly secret: string } | undefined
      readonly signingScheme: SigningScheme
      readonly eventId: string
      readonly eventType: string
      readonly json: string
      readonly now: Date
      /** Its company endpoint is disabled by request: recorded, not sent. */
      readonly disabled: boolean
    }) {
      const { id, now, json } = input
      const receiver = {
        url: input.url,
        endpointId: input.endpoint?.id ?? null,
        acpEndpointId: input.acpEndpoint?.id ?? null
      }
      const secret = input.endpoint?.secret ?? input.acpEndpoint?.secret ?? null
      const inserted = yield* insertedRows(sql`
        INSERT INTO webhook_deliveries (id, url, endpoint_id, acp_endpoint_id, signing_scheme, signing_secret, event_id,
          event_type, payload, status, attempts, next_attempt_at, last_error, created_at, updated_at)
        SELECT ${id}, ${input.url}, ${receiver.endpointId}, ${receiver.acpEndpointId}, ${input.signingScheme}, ${secret},
          ${input.eventId},
          ${input.eventType}, ${json}::jsonb, CASE WHEN gate.reason IS NULL THEN 'pending' ELSE 'disabled' END, 0,
          CASE WHEN gate.reason IS NULL THEN ${now}::timestamptz END, gate.reason, ${now}, ${now}
        FROM (SELECT CASE
          WHEN ${input.disabled}::boolean THEN 'not sent: the endpoint is disabled'
          WHEN EXISTS (SELECT 1 FROM webhook_deliveries WHERE ${sameReceiver(receiver)} AND gone)
            THEN ${`not sent: this ${receiverOf(receiver)} answered 410 Gone to an earlier delivery`}
        END AS reason) gate
        ON CONFLICT (url, event_id) DO NOTHING
        RETURNING id, status`).pipe(Effect.orDie)
      return inserted
    })

    /**
     * Starts attempt n of a pending delivery, in one statement: its `attempts` counted and the attempt logged
     * with no outcome yet, unless an attempt of it without an outcome began after `staleBefore` (one begun
     * before is closed as lost). The new attempt's number (null when none began), the delivery's status, and
     * when the attempt still in flight began.
     */
    const begin = Effect.fn("WebhookDeliveriesRepo.begin")(function* (
      delivery: { readonly id: Id; readonly attempts: number },
      requestHeaders: Readonly<Record<string, string>>,
      now: Date,
      staleBefore: Date
    ) {
      const [row] = yield* begunRows(sql`
          WITH open AS (
            SELECT started_at FROM webhook_attempts
            WHERE delivery_id = ${delivery.id} AND status_code IS NULL AND error IS NULL
          ),
          begun AS (
            UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = NULL, updated_at = ${now}
            WHERE id = ${delivery.id} AND status = 'pending' AND attempts = ${delivery.attempts}
              AND NOT EXISTS (SELECT 1 FROM open WHERE started_at > ${staleBefore})
            RETURNING attempts
          ),
          lost AS (
            UPDATE webhook_attempts SET error = 'no outcome recorded: its worker stopped during the attempt'
            WHERE delivery_id = ${delivery.id} AND status_code IS NULL AND error IS NULL
              AND EXISTS (SELECT 1 FROM begun)
            RETURNING attempt
          ),
          logged AS (
            INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, request_headers)
            SELECT ${delivery.id}, attempts, ${now}, 0, ${JSON.stringify(requestHeaders)}::jsonb FROM begun
            RETURNING attempt
          )
          SELECT (SELECT attempt FROM logged) AS attempt,
            (SELECT status FROM webhook_deliveries WHERE id = ${delivery.id}) AS status,
            (SELECT max(started_at) FROM open) AS open_since`).pipe(Effect.orDie)
      return row
    })

    /**
     * Records attempt `number`'s outcome on the attempt and its delivery, in one statement (a 410 also disables
     * the receiver's other pending deliveries). A delivery disabled meanwhile stays disabled, unless this
     * attempt delivered. Whether the attempt was there to record.
     */
    const record = Effect.fn("WebhookDeliveriesRepo.record")(function* (
      delivery: WebhookReceiver & { readonly id: Id },
      outcome: {
        readonly number: number
        readonly status: WebhookStatus
        readonly statusCode: number | null
        readonly error: string | null
        readonly responseBody: string | null
        readonly responseTruncated: boolean | null
        readonly durationMs: number
        readonly nextAttemptAt: Date | null
        readonly gone: boolean
      },
      now: Date
    ) {
      const deliveryId = delivery.id
      const { number, status, statusCode, error, durationMs, nextAttemptAt } = outcome
      const applies = status === "delivered" ? sql`true` : sql`webhook_deliveries.status = 'pending'`
      const [recorded] = yield* attemptRows(sql`
        WITH counted AS (
          UPDATE webhook_deliveries SET
            last_status_code = ${statusCode},
            last_error = ${error},
            gone = webhook_deliveries.gone OR ${outcome.gone},
            updated_at = ${now},
            status = CASE WHEN ${applies} THEN ${status} ELSE webhook_deliveries.status END,
            next_attempt_at = CASE WHEN ${applies} THEN ${nextAttemptAt}::timestamptz END,
            delivered_at = CASE WHEN ${applies} THEN ${status === "delivered" ? now : null}::timestamptz
              ELSE webhook_deliveries.delivered_at END
          WHERE id = ${deliveryId}
          RETURNING attempts
        ),
        logged AS (
          UPDATE webhook_attempts SET duration_ms = ${durationMs},
            status_code = ${statusCode}::integer, error = ${error},
            response_body = ${outcome.responseBody}, response_truncated = ${outcome.responseTruncated}
          WHERE delivery_id = ${deliveryId} AND attempt = ${number} AND EXISTS (SELECT 1 FROM counted)
          RETURNING attempt
        ),
        others AS (
          UPDATE webhook_deliveries SET status = 'disabled', next_attempt_at = NULL, updated_at = ${now},
            last_error = ${`not sent: this ${receiverOf(delivery)} answered 410 Gone to delivery ${deliveryId}`}
          WHERE ${outcome.gone} AND ${sameReceiver(delivery)} AND status = 'pending' AND id <> ${deliveryId}
          RETURNING id
        )
        SELECT attempt FROM logged`).pipe(Effect.orDie)
      return recorded !== undefined
    })

    /** A company endpoint's deliveries, newest first, paged in SQL. */
    const endpointPage = Effect.fn("WebhookDeliveriesRepo.endpointPage")(function* (
      endpointId: string,
      query: V3Query
    ) {
      const { where, orderBy, limit } = compileV3Query(sql, query, endpointColumns)
      const rows = yield* deliveryRows(
        sql`SELECT ${deliveryColumns} WHERE d.endpoint_id = ${endpointId} AND ${where} ORDER BY ${orderBy} LIMIT ${limit}`
      ).pipe(Effect.orDie)
      return v3Page(rows, query, endpointColumns)
    })

    /**
     * Disables an endpoint's pending deliveries (`reason` becomes their last error) and, when `eraseSecret`,
     * erases its secret from every delivery.
     */
    const closeEndpoint = Effect.fn("WebhookDeliveriesRepo.closeEndpoint")(function* (
      endpoint: { readonly id: string; readonly kind: EndpointKind },
      close: { readonly reason: string; readonly eraseSecret: boolean },
      now: Date
    ) {
      const endpointId = endpoint.id
      yield* sql`UPDATE webhook_deliveries SET
          signing_secret = CASE WHEN ${close.eraseSecret}::boolean THEN NULL ELSE signing_secret END,
          status = CASE WHEN status = 'pending' THEN 'disabled' ELSE status END,
          last_error = CASE WHEN status = 'pending' THEN ${close.reason} ELSE last_error END,
          next_attempt_at = CASE WHEN status = 'pending' THEN NULL ELSE next_attempt_at END,
          updated_at = CASE WHEN status = 'pending' THEN ${now} ELSE updated_at END
        WHERE ${endpointColumn(endpoint.kind)} = ${endpointId} AND (${close.eraseSecret}::boolean OR status = 'pending')`.pipe(
        Effect.orDie
      )
    })

    /** A company endpoint no longer counts as gone: its receiver's 410s stop disabling its deliveries. */
    const reopenEndpoint = Effect.fn("WebhookDeliveriesRepo.reopenEndpoint")(function* (endpointId: string) {
      yield* sql`UPDATE webhook_deliveries SET gone = false WHERE endpoint_id = ${endpointId} AND gone`.pipe(
        Effect.orDie
      )
    })

    /** A pending delivery waiting for its next attempt is due at `now`. */
    const dueNow = Effect.fn("WebhookDeliveriesRepo.dueNow")(function* (id: Id, now: Date) {
      yield* sql`UPDATE webhook_deliveries SET next_attempt_at = ${now}, updated_at = ${now}
        WHERE id = ${id} AND status = 'pending' AND next_attempt_at > ${now}`.pipe(Effect.orDie)
    })

    return {
      findById: Effect.fn("WebhookDeliveriesRepo.findById")((id: Id) => Effect.orDie(findDelivery(id))),
      /** The deliveries of one event (to every URL), oldest first. */
      byEvent: Effect.fn("WebhookDeliveriesRepo.byEvent")((eventId: string) => Effect.orDie(findByEvent(eventId))),
      /** The deliveries to one URL (of every event), oldest first. */
      byUrl: Effect.fn("WebhookDeliveriesRepo.byUrl")((url: string) => Effect.orDie(findByUrl(url))),
      /** The attempts log of a delivery, oldest first. */
      attempts: Effect.fn("WebhookDeliveriesRepo.attempts")((deliveryId: Id) => Effect.orDie(findAttempts(deliveryId))),
      /** The latency of each delivery's latest attempt with an outcome, for the deliveries that have one. */
      lastLatencies: Effect.fn("WebhookDeliveriesRepo.lastLatencies")((deliveryIds: ReadonlyArray<Id>) =>
        Effect.orDie(findLastLatencies(deliveryIds))
      ),
      insert,
      /** The id of the delivery of this event to this URL. */
      idOf: Effect.fn("WebhookDeliveriesRepo.idOf")((url: string, eventId: string) =>
        Effect.orDie(findIdOf({ url, eventId }))
      ),
      /** The secret a delivery to a company endpoint is signed with (null once the endpoint was deleted). */
      signingSecret: Effect.fn("WebhookDeliveriesRepo.signingSecret")((id: Id) => Effect.orDie(findSecret(id))),
      begin,
      record,
      endpointPage,
      /** Which of these company endpoints a 410 Gone has closed. */
      goneEndpoints: Effect.fn("WebhookDeliveriesRepo.goneEndpoints")((endpointIds: ReadonlyArray<string>) =>
        Effect.orDie(findGoneEndpoints(endpointIds))
      ),
      /** A company endpoint's delivery of one event (by its `webhook-id`), or none. */
      ofEndpoint: Effect.fn("WebhookDeliveriesRepo.ofEndpoint")((endpointId: string, eventId: string) =>
        Effect.orDie(findOfEndpoint({ endpointId, eventId }))
      ),
      /**
       * Makes an ended delivery (delivered, failed, disabled) pending again, due at `now`, and counts the resend;
       * its new count of resends, or nothing when it was pending already.
       */
      restart: Effect.fn("WebhookDeliveriesRepo.restart")((id: Id, now: Date) =>
        Effect.orDie(restartDelivery({ id, now }))
      ),
      dueNow,
      closeEndpoint,
      reopenEndpoint
    } as const
  })
}) {}
