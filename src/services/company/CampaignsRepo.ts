import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { CampaignRecord, CampaignStatus } from "../../domain/company/Campaigns.js"
import type { AccountScope } from "../../domain/company/Company.js"
import { accountsIn, ScopeParam } from "./Scope.js"

/** The columns a change of a campaign sets (`updatedAt` the time of the change). */
const CampaignUpdate = CampaignRecord.pipe(
  Schema.pick(
    "id",
    "name",
    "status",
    "giftType",
    "productId",
    "collectionId",
    "budgetMin",
    "budgetMax",
    "swap",
    "expirationDays",
    "expirationDate",
    "sendingChannels",
    "disableReminders",
    "message",
    "hideRecipientAddress",
    "updatedAt"
  )
)
export type CampaignUpdate = typeof CampaignUpdate.Type

/**
 * The `campaigns` table. Only the Campaigns service uses it; gifts read campaigns through that service.
 * Unexpected database errors are defects.
 */
export class CampaignsRepo extends Effect.Service<CampaignsRepo>()("CampaignsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insertRow = SqlSchema.single({
      Request: CampaignRecord,
      Result: CampaignRecord,
      execute: (row) => sql`INSERT INTO campaigns (id, company_id, environment, account_id,
          billing_method_id, name, status, type, gift_type, product_id, collection_id, budget_min, budget_max,
          swap, currency, expiration_days, expiration_date, sending_channels, disable_reminders, message,
          hide_recipient_address, source, created_at, updated_at)
        VALUES (${row.id}, ${row.companyId}, ${row.environment}, ${row.accountId}, ${row.billingMethodId}, ${row.name},
          ${row.status}, 'oneOffs', ${row.giftType}, ${row.productId}, ${row.collectionId},
          ${row.budgetMin}, ${row.budgetMax}, ${row.swap}, ${row.currency}, ${row.expirationDays},
          ${row.expirationDate}, ${row.sendingChannels}::text[],
          ${row.disableReminders}, ${row.message}, ${row.hideRecipientAddress}, ${row.source}, ${row.createdAt}, ${row.updatedAt})
        RETURNING *`
    })

    const findRow = SqlSchema.findOne({
      Request: Schema.Struct({ scope: ScopeParam, campaignId: Schema.String, lock: Schema.Boolean }),
      Result: CampaignRecord,
      execute: ({ scope, campaignId, lock }) => sql`SELECT * FROM campaigns WHERE id = ${campaignId.toLowerCase()}
        AND company_id = ${scope.companyId} AND environment = ${scope.environment}
        AND ${accountsIn(sql, scope, "account_id")} ${lock ? sql`FOR UPDATE` : sql``}`
    })

    const pageRows = SqlSchema.findAll({
      Request: Schema.Struct({
        scope: ScopeParam,
        skip: Schema.Int,
        limit: Schema.Int,
        statuses: Schema.Array(CampaignStatus),
        search: Schema.String
      }),
      Result: CampaignRecord,
      execute: ({ scope, skip, limit, statuses, search }) => sql`SELECT * FROM campaigns
        WHERE company_id = ${scope.companyId} AND environment = ${scope.environment}
          AND ${accountsIn(sql, scope, "account_id")}
          AND ${statuses.length === 0 ? sql`TRUE` : sql.in("status", statuses)}
          AND ${
            search === ""
              ? sql`TRUE`
              : sql`(lower(name) LIKE ${`%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`}
                  OR id = ${search.toLowerCase()})`
          }
        ORDER BY created_at DESC, id DESC OFFSET ${skip} LIMIT ${limit}`
    })

    const updateRow = SqlSchema.single({
      Request: CampaignUpdate,
      Result: CampaignRecord,
      execute: (set) => sql`UPDATE campaigns SET
            name = ${set.name},
            status = ${set.status},
            gift_type = ${set.giftType},
            product_id = ${set.productId},
            collection_id = ${set.collectionId},
            budget_min = ${set.budgetMin},
            budget_max = ${set.budgetMax},
            swap = ${set.swap},
            expiration_days = ${set.expirationDays},
            expiration_date = ${set.expirationDate},
            sending_channels = ${set.sendingChannels}::text[],
            disable_reminders = ${set.disableReminders},
            message = ${set.message},
            hide_recipient_address = ${set.hideRecipientAddress},
            updated_at = ${set.updatedAt}
          WHERE id = ${set.id} RETURNING *`
    })

    /** Inserts a new campaign (its `type` is always `oneOffs`); the row as stored. */
    const insert = Effect.fn("CampaignsRepo.insert")((row: CampaignRecord) => Effect.orDie(insertRow(row)))

    /** The campaign on an account the scope reaches, if any. */
    const findById = Effect.fn("CampaignsRepo.findById")((scope: AccountScope, campaignId: string) =>
      Effect.orDie(findRow({ scope, campaignId, lock: false }))
    )

    /** The same, locked until the transaction ends. */
    const lockById = Effect.fn("CampaignsRepo.lockById")((scope: AccountScope, campaignId: string) =>
      Effect.orDie(findRow({ scope, campaignId, lock: true }))
    )

    /** The campaigns of the accounts the scope reaches, newest first: `skip` rows, then at most `limit`. */
    const page = Effect.fn("CampaignsRepo.page")(
      (
        scope: AccountScope,
        skip: number,
        limit: number,
        filters: { readonly statuses?: ReadonlyArray<CampaignStatus>; readonly search?: string } = {}
      ) =>
        Effect.orDie(
          pageRows({ scope, skip, limit, statuses: filters.statuses ?? [], search: filters.search?.trim() ?? "" })
        )
    )

    /** Sets every changeable column of the campaign; the row as it now is. */
    const update = Effect.fn("CampaignsRepo.update")((set: CampaignUpdate) => Effect.orDie(updateRow(set)))

    return { insert, findById, lockById, page, update } as const
  })
}) {}
