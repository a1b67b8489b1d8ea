import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { AccountScope } from "../../domain/company/Company.js"
import { GiftFunnel, GiftRecord, GiftStatus, GiftWithRecipient, openGiftStatuses } from "../../domain/company/Gifts.js"
import { accountsIn, ScopeParam } from "./Scope.js"

/** The columns a new gift is inserted with: it starts `unopened`, without metadata or order. */
const NewGiftRow = GiftRecord.pipe(
  Schema.pick(
    "id",
    "companyId",
    "environment",
    "campaignId",
    "accountId",
    "billingMethodId",
    "recipientId",
    "key",
    "token",
    "budgetMin",
    "budgetMax",
    "currency",
    "reserved",
    "sendingMethod",
    "source",
    "expiresAt",
    "createdAt",
    "updatedAt"
  )
)
export type NewGiftRow = typeof NewGiftRow.Type

/** v2 paging and the list's filters (each a set: any of its values), newest first. */
const GiftPageQuery = Schema.Struct({
  scope: ScopeParam,
  skip: Schema.Int,
  limit: Schema.Int,
  statuses: Schema.Array(GiftStatus),
  campaignIds: Schema.Array(Schema.String),
  keys: Schema.Array(Schema.String),
  createdBefore: Schema.UndefinedOr(Schema.DateFromSelf),
  createdAfter: Schema.UndefinedOr(Schema.DateFromSelf),
  /** Made at or after (the dashboard's whole days in UTC). */
  createdFrom: Schema.optional(Schema.UndefinedOr(Schema.DateFromSelf)),
  /** Part of the recipient's name or e-mail, any case. */
  search: Schema.optional(Schema.UndefinedOr(Schema.String))
})
type GiftPageQuery = typeof GiftPageQuery.Type

/** `text` as a pattern matching itself anywhere (`%`, `_` and `\\` taken literally), lower-cased. */
const containsPattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

const Metadata = GiftRecord.fields.metadata

/**
 * The `gifts` table. Only the Gifts service uses it (the gift page reads gifts through that service); the
 * service keeps the transactions, and these statements run inside them. Unexpected database errors are defects.
 */
export class GiftsRepo extends Effect.Service<GiftsRepo>()("GiftsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const byKeyRow = SqlSchema.findOne({
      Request: Schema.Struct({ campaignId: Schema.String, key: Schema.String }),
      Result: GiftRecord,
      execute: ({ campaignId, key }) => sql`SELECT * FROM gifts WHERE campaign_id = ${campaignId} AND key = ${key}`
    })

    const insertRow = SqlSchema.findOne({
      Request: NewGiftRow,
      Result: GiftRecord,
      execute: (row) => sql`INSERT INTO gifts (id, company_id, environment, campaign_id, account_id,
            billing_method_id, recipient_id, key, status, token, budget_min, budget_max, currency, reserved,
            sending_method, metadata, source, expires_at, created_at, updated_at)
          VALUES (${row.id}, ${row.companyId}, ${row.environment}, ${row.campaignId},
            ${row.accountId}, ${row.billingMethodId}, ${row.recipientId}, ${row.key}, 'unopened',
            ${row.token}, ${row.budgetMin}, ${row.budgetMax}, ${row.currency}, ${row.reserved},
            ${row.sendingMethod}, NULL, ${row.source}, ${row.expiresAt}, ${row.createdAt}, ${row.updatedAt})
          ON CONFLICT (campaign_id, key) DO NOTHING RETURNING *`
    })

    const inScopeRow = SqlSchema.findOne({
      Request: Schema.Struct({ scope: ScopeParam, giftId: Schema.String }),
      Result: GiftRecord,
      execute: ({ scope, giftId }) => sql`SELECT * FROM gifts WHERE id = ${giftId.toLowerCase()}
        AND company_id = ${scope.companyId} AND environment = ${scope.environment}
        AND ${accountsIn(sql, scope, "account_id")}`
    })

    /**
     * The list's conditions, shared by the API's page and the dashboard's: the scope, each filter, and the search,
     * which finds the scope's recipients first (trigram index `recipients_search`) and then their gifts.
     */
    const pageWhere = (query: GiftPageQuery) => {
      const { scope } = query
      const anyOf = (column: string, values: ReadonlyArray<string>) =>
        values.length === 0 ? sql`TRUE` : sql.in(column, values)
      const search = query.search?.trim() ?? ""
      return sql`g.company_id = ${scope.companyId} AND g.environment = ${scope.environment}
          AND ${accountsIn(sql, scope, "g.account_id")}
          AND ${anyOf("g.status", query.statuses)} AND ${anyOf(
            "g.campaign_id",
            query.campaignIds.map((id) => id.toLowerCase())
          )}
          AND ${anyOf("g.key", query.keys)}
          AND ${query.createdBefore === undefined ? sql`TRUE` : sql`g.created_at < ${query.createdBefore}`}
          AND ${query.createdAfter === undefined ? sql`TRUE` : sql`g.created_at > ${query.createdAfter}`}
          AND ${query.createdFrom === undefined ? sql`TRUE` : sql`g.created_at >= ${query.createdFrom}`}
          AND ${
            search === ""
              ? sql`TRUE`
              : sql`g.recipient_id IN (SELECT r.id FROM recipients r
                  WHERE r.company_id = ${scope.companyId} AND r.environment = ${scope.environment}
                    AND lower(coalesce(r.first_name, '') || ' ' || coalesce(r.last_name, '') || ' ' ||
                      coalesce(r.email, '')) LIKE ${containsPattern(search)})`
          }`
    }

    const pageRows = SqlSchema.findAll({
      Request: GiftPageQuery,
      Result: GiftRecord,
      execute: (query) => sql`SELECT g.* FROM gifts g WHERE ${pageWhere(query)}
        ORDER BY g.created_at DESC, g.id DESC OFFSET ${query.skip} LIMIT ${query.limit}`
    })

    const pageWithRecipientRows = SqlSchema.findAll({
      Request: GiftPageQuery,
      Result: GiftWithRecipient,
      execute: (query) => sql`SELECT g.*, r.first_name AS recipient_first_name, r.last_name AS recipient_last_name,
          r.email AS recipient_email, r.mobile_phone AS recipient_mobile_phone
        FROM gifts g JOIN recipients r ON r.id = g.recipient_id
        WHERE ${pageWhere(query)}
        ORDER BY g.created_at DESC, g.id DESC OFFSET ${query.skip} LIMIT ${query.limit}`
    })

    const lockRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: GiftRecord,
      execute: (giftId) => sql`SELECT * FROM gifts WHERE id = ${giftId} FOR UPDATE`
    })

    const byIdRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: GiftRecord,
      execute: (giftId) => sql`SELECT * FROM gifts WHERE id = ${giftId}`
    })

    const lockByTokenRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: GiftRecord,
      execute: (token) => sql`SELECT * FROM gifts WHERE token = ${token} FOR UPDATE`
    })

    const byTokenRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: GiftRecord,
      execute: (token) => sql`SELECT * FROM gifts WHERE token = ${token}`
    })

    const updateRow = SqlSchema.single({
      Request: Schema.Struct({
        id: Schema.String,
        expiresAt: Schema.DateFromSelf,
        metadata: Metadata,
        at: Schema.DateFromSelf
      }),
      Result: GiftRecord,
      execute: ({ id, expiresAt, metadata, at }) => sql`UPDATE gifts SET
            expires_at = ${expiresAt},
            metadata = ${metadata}::jsonb,
            updated_at = ${at}
          WHERE id = ${id} RETURNING *`
    })

    const closeRow = SqlSchema.single({
      Request: Schema.Struct({
        id: Schema.String,
        status: Schema.Literal("expired", "cancelled"),
        at: Schema.DateFromSelf
      }),
      Result: GiftRecord,
      execute: ({ id, status, at }) => sql`UPDATE gifts SET status = ${status}, reserved = 0, closed_at = ${at},
            updated_at = ${at}
          WHERE id = ${id} AND status IN ${sql.in(openGiftStatuses)} RETURNING *`
    })

    const visitRow = SqlSchema.single({
      Request: Schema.Struct({
        id: Schema.String,
        step: Schema.Literal("opened", "unwrapped"),
        at: Schema.DateFromSelf
      }),
      Result: GiftRecord,
      execute: ({ id, step, at }) => sql`UPDATE gifts SET status = ${step}, updated_at = ${at},
            opened_at = coalesce(opened_at, ${at}),
            unwrapped_at = ${step === "unwrapped" ? at : null}
          WHERE id = ${id} RETURNING *`
    })

    const claimRow = SqlSchema.single({
      Request: Schema.Struct({ id: Schema.String, orderId: Schema.String, at: Schema.DateFromSelf }),
      Result: GiftRecord,
      execute: ({ id, orderId, at }) => sql`UPDATE gifts SET status = 'claimed', order_id = ${orderId},
            reserved = 0, claimed_at = ${at}, updated_at = ${at}
          WHERE id = ${id} RETURNING *`
    })

    const thankYouRow = SqlSchema.single({
      Request: Schema.Struct({ id: Schema.String, message: Schema.String, at: Schema.DateFromSelf }),
      Result: GiftRecord,
      execute: ({ id, message, at }) => sql`UPDATE gifts SET thank_you_message = ${message},
            thank_you_created_at = coalesce(thank_you_created_at, ${at}), thank_you_updated_at = ${at}
          WHERE id = ${id} RETURNING *`
    })

    /**
     * The funnel of the gifts made in `[from, to)` on the accounts the scope reaches, counted in SQL: every gift
     * is sent; opened once its page was shown or it was claimed (a gift claimed through `POST /v2/orders` was
     * never shown); claimed once it has its order; delivered once that order's shipment is `delivered`.
     */
    const funnelRow = SqlSchema.single({
      Request: Schema.Struct({ scope: ScopeParam, from: Schema.DateFromSelf, to: Schema.DateFromSelf }),
      Result: GiftFunnel,
      execute: ({ scope, from, to }) => sql`SELECT count(*)::int AS sent,
          (count(*) FILTER (WHERE g.opened_at IS NOT NULL OR g.claimed_at IS NOT NULL))::int AS opened,
          (count(*) FILTER (WHERE g.claimed_at IS NOT NULL))::int AS claimed,
          (count(*) FILTER (WHERE o.shipment_status = 'delivered'))::int AS delivered,
          (count(*) FILTER (WHERE g.status = 'expired'))::int AS expired,
          (count(*) FILTER (WHERE g.status = 'cancelled'))::int AS cancelled
        FROM gifts g LEFT JOIN company_orders o ON o.id = g.order_id
        WHERE g.company_id = ${scope.companyId} AND g.environment = ${scope.environment}
          AND ${accountsIn(sql, scope, "g.account_id")} AND g.created_at >= ${from} AND g.created_at < ${to}`
    })

    /** The campaign's gift with `key`, if any. */
    const findByKey = Effect.fn("GiftsRepo.findByKey")((campaignId: string, key: string) =>
      Effect.orDie(byKeyRow({ campaignId, key }))
    )

    /** Inserts a new gift unless the campaign has one with its key: the new row, or none. */
    const insert = Effect.fn("GiftsRepo.insert")((row: NewGiftRow) => Effect.orDie(insertRow(row)))

    /** A gift on an account the scope reaches, if any. */
    const findInScope = Effect.fn("GiftsRepo.findInScope")((scope: AccountScope, giftId: string) =>
      Effect.orDie(inScopeRow({ scope, giftId }))
    )

    /** The gifts of the accounts the scope reaches, newest first, filtered and paged. */
    const page = Effect.fn("GiftsRepo.page")((query: GiftPageQuery) => Effect.orDie(pageRows(query)))

    /** The same page, each gift with its recipient's name and addresses (unmasked: the caller masks). */
    const pageWithRecipients = Effect.fn("GiftsRepo.pageWithRecipients")((query: GiftPageQuery) =>
      Effect.orDie(pageWithRecipientRows(query))
    )

    /** A gift, locked until the transaction ends. */
    const lockById = Effect.fn("GiftsRepo.lockById")((giftId: string) => Effect.orDie(lockRow(giftId)))

    /** A gift by its id, whoever's it is (the jobs read it so). */
    const findById = Effect.fn("GiftsRepo.findById")((giftId: string) => Effect.orDie(byIdRow(giftId)))

    /** The gift behind a link, locked until the transaction ends. */
    const lockByToken = Effect.fn("GiftsRepo.lockByToken")((token: string) => Effect.orDie(lockByTokenRow(token)))

    /** The gift behind a link. */
    const findByToken = Effect.fn("GiftsRepo.findByToken")((token: string) => Effect.orDie(byTokenRow(token)))

    /** Sets a gift's expiry and metadata; the row as it now is. */
    const update = Effect.fn("GiftsRepo.update")(
      (giftId: string, set: { readonly expiresAt: Date; readonly metadata: GiftRecord["metadata"] }, at: Date) =>
        Effect.orDie(updateRow({ id: giftId, ...set, at }))
    )

    /** Closes an open gift (locked by the caller) as `status`, its reservation let go; the row as it now is. */
    const close = Effect.fn("GiftsRepo.close")((giftId: string, status: "expired" | "cancelled", at: Date) =>
      Effect.orDie(closeRow({ id: giftId, status, at }))
    )

    /** Moves a gift to `step` (`opened`: first shown, `unwrapped`: its choices shown); the row as it now is. */
    const markVisited = Effect.fn("GiftsRepo.markVisited")((giftId: string, step: "opened" | "unwrapped", at: Date) =>
      Effect.orDie(visitRow({ id: giftId, step, at }))
    )

    /** The gift claimed with its order, its reservation let go; the row as it now is. */
    const markClaimed = Effect.fn("GiftsRepo.markClaimed")((giftId: string, orderId: string, at: Date) =>
      Effect.orDie(claimRow({ id: giftId, orderId, at }))
    )

    /**
     * The gift's thank-you note written (locked by the caller, judged by the service): its first time kept, its last
     * time `at`; the row as it now is.
     */
    const writeThankYou = Effect.fn("GiftsRepo.writeThankYou")((giftId: string, message: string, at: Date) =>
      Effect.orDie(thankYouRow({ id: giftId, message, at }))
    )

    const languageRow = SqlSchema.void({
      Request: Schema.Struct({ token: Schema.String, language: Schema.String }),
      execute: ({ token, language }) => sql`UPDATE gifts SET language = ${language}
          WHERE token = ${token} AND language IS DISTINCT FROM ${language}`
    })

    /** The language the gift's recipient picked on its page (none written for an unknown token). */
    const pickLanguage = Effect.fn("GiftsRepo.pickLanguage")((token: string, language: string) =>
      Effect.orDie(languageRow({ token, language }))
    )

    const undeliverableRow = SqlSchema.findAll({
      Request: Schema.Struct({ giftId: Schema.String, countryCode: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ countryCode: Schema.String }),
      execute: ({ giftId, countryCode, at }) => sql`INSERT INTO gift_undeliverable_countries (gift_id, country_code,
          created_at) VALUES (${giftId}, ${countryCode}, ${at}) ON CONFLICT DO NOTHING RETURNING country_code`
    })

    const undeliverableRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ countryCode: Schema.String, createdAt: Schema.DateFromSelf }),
      execute: (giftId) => sql`SELECT country_code, created_at FROM gift_undeliverable_countries
          WHERE gift_id = ${giftId} ORDER BY created_at, country_code`
    })

    /** Records that nothing could reach `countryCode` for the gift: whether this is the first time for that country. */
    const markUndeliverable = Effect.fn("GiftsRepo.markUndeliverable")(
      (giftId: string, countryCode: string, at: Date) =>
        Effect.map(Effect.orDie(undeliverableRow({ giftId, countryCode, at })), (rows) => rows.length > 0)
    )

    /** The countries nothing could reach for the gift, first found first. */
    const undeliverableCountries = Effect.fn("GiftsRepo.undeliverableCountries")((giftId: string) =>
      Effect.orDie(undeliverableRows(giftId))
    )

    /** How far the gifts made in `[from, to)` on the accounts the scope reaches went (`funnelRow`). */
    const funnel = Effect.fn("GiftsRepo.funnel")((scope: AccountScope, from: Date, to: Date) =>
      Effect.orDie(funnelRow({ scope, from, to }))
    )

    return {
      funnel,
      findByKey,
      insert,
      findInScope,
      page,
      pageWithRecipients,
      lockById,
      findById,
      lockByToken,
      findByToken,
      update,
      close,
      markVisited,
      markClaimed,
      writeThankYou,
      pickLanguage,
      markUndeliverable,
      undeliverableCountries
    } as const
  })
}) {}
