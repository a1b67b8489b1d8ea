import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { CollectionNotFound, ProductNotFound } from "../../domain/catalog/Errors.js"
import { billingCurrency } from "../../domain/company/Billing.js"
import {
  type CampaignRecord,
  type CampaignStatus,
  canMoveCampaign,
  defaultHideRecipientAddress,
  defaultSwapOf,
  expiryDateProblem,
  type GiftType,
  type SendingChannel,
  type SwapSetting
} from "../../domain/company/Campaigns.js"
import type { Account, AccountScope, RequestSource } from "../../domain/company/Company.js"
import {
  BillingMethodNotFound,
  CampaignArchived,
  CampaignNotFound,
  CampaignTransitionRefused
} from "../../domain/company/Errors.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { Catalog } from "../catalog/Catalog.js"
import { nowDate } from "../platform/Time.js"
import { Accounts } from "./Accounts.js"
import { Audit } from "./Audit.js"
import { Billing } from "./Billing.js"
import { CampaignsRepo } from "./CampaignsRepo.js"

/**
 * Campaigns, version 2 (docs/decisions/0045-v2-campaigns.md, docs/company-api.md "Campaigns"). A campaign is made for
 * the account the request means (`Ribbon-Account-Id`, else the body's `accountId`, else the only or default account the
 * key reaches) and charged to that account's default billing method unless the body names one of its
 * methods. Its product or collection must exist in the catalog. The checks run in order: the body's rules
 * (400), the account and billing method (404), the product or collection (404); nothing is written before
 * they all pass. Gifts read campaigns through `get`.
 */

/** Who writes: the request's scope, the account its header named, and its `Request-Source`. */
export interface CampaignCaller {
  readonly scope: AccountScope
  readonly account: Option.Option<Account>
  readonly source: RequestSource | null
}

/** A budget in major units of the billing currency, as the API takes it. */
export interface BudgetInput {
  readonly min: number
  readonly max: number
}

/** `daysFromSend` (1–365) or `date` (ISO 8601; a date alone means the end of that day, UTC): exactly one. */
export interface ExpirationInput {
  readonly daysFromSend?: number | undefined
  readonly date?: string | undefined
}

export interface GiftPropertiesInput {
  readonly selectedGiftType: GiftType
  readonly productId?: string | undefined
  readonly collectionId?: string | undefined
  readonly budget: BudgetInput
  readonly expiration: ExpirationInput
  /** Default: `within_budget` for a product gift, `disabled` for a collection's. */
  readonly swap?: SwapSetting | undefined
}

export interface NotificationPolicyInput {
  readonly sendingChannels: ReadonlyArray<SendingChannel>
  readonly disableReminders: boolean
}

export interface NewCampaign {
  readonly name: string
  readonly status: CampaignStatus
  readonly accountId?: string | undefined
  readonly billingMethodId?: string | undefined
  readonly giftProperties: GiftPropertiesInput
  readonly notificationPolicy: NotificationPolicyInput
  readonly message: string | null
  /** Whether the company sees only the city, region and country of its recipients' addresses (default true). */
  readonly hideRecipientAddress?: boolean | undefined
}

/** A change of the gift: absent fields stay; `budget` and `expiration` are replaced whole. */
export interface GiftPropertiesChange {
  readonly selectedGiftType?: GiftType | undefined
  readonly productId?: string | undefined
  readonly collectionId?: string | undefined
  readonly budget?: BudgetInput | undefined
  readonly expiration?: ExpirationInput | undefined
  /** Absent: it stays, but when the gift type changes, the new type's default. */
  readonly swap?: SwapSetting | undefined
}

/** A change: absent fields stay. */
export interface CampaignChange {
  readonly name?: string | undefined
  readonly status?: CampaignStatus | undefined
  readonly giftProperties?: GiftPropertiesChange | undefined
  readonly notificationPolicy?:
    | {
        readonly sendingChannels?: ReadonlyArray<SendingChannel> | undefined
        readonly disableReminders?: boolean | undefined
      }
    | undefined
  readonly message?: string | null | undefined
  readonly hideRecipientAddress?: boolean | undefined
}

/** v2 paging: `skip` rows, then at most `limit`, newest first; the dashboard's filters, in SQL too. */
export interface CampaignListQuery {
  readonly skip: number
  readonly limit: number
  /** Any of these statuses (all when empty or absent). */
  readonly statuses?: ReadonlyArray<CampaignStatus> | undefined
  /** Part of the name, any case, or the whole id. */
  readonly search?: string | undefined
}

const giftPath = "customization.giftProperties"

/** Minor units of the billing currency (cents) from the API's major units. */
export const toMinor = (major: number) => Math.round(major * 100)

/** Major units of the billing currency from stored minor units. */
export const toMajor = (minor: number) => minor / 100

/** What a campaign's gift is, with the ids and bounds its columns hold. */
interface GiftColumns {
  readonly giftType: GiftType
  readonly productId: string | null
  readonly collectionId: string | null
  readonly budgetMin: number
  readonly budgetMax: number
  readonly swap: SwapSetting
  readonly expirationDays: number | null
  readonly expirationDate: Date | null
}

/** The expiration's columns: exactly one of its two forms; a date in the future, at most 365 days ahead. */
const expirationColumns = (expiration: ExpirationInput, now: Date) =>
  Effect.gen(function* () {
    const path = `${giftPath}.expiration`
    const { daysFromSend, date } = expiration
    if ((daysFromSend === undefined) === (date === undefined)) {
      return yield* InvalidRequest.field(path, "Give exactly one of daysFromSend (1 to 365) and date.")
    }
    if (daysFromSend !== undefined) return { expirationDays: daysFromSend, expirationDate: null }
    const text = date!
    const at = new Date(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T23:59:59.999Z` : text)
    if (Number.isNaN(at.getTime())) {
      return yield* InvalidRequest.field(`${path}.date`, "Expected an ISO 8601 date or date-time.")
    }
    const problem = expiryDateProblem(at, now)
    if (problem !== undefined) return yield* InvalidRequest.field(`${path}.date`, problem)
    return { expirationDays: null, expirationDate: at }
  })

/** The budget's columns: `min` ≤ `max`. */
const budgetColumns = (budget: BudgetInput) =>
  budget.min > budget.max
    ? InvalidRequest.field(`${giftPath}.budget.min`, "budget.min must not exceed budget.max.")
    : Effect.succeed({ budgetMin: toMinor(budget.min), budgetMax: toMinor(budget.max) })

/** The gift's ids: not the other type's (400 naming it), and the one its type needs (400 naming it). */
const giftIds = (type: GiftType, productId: string | null | undefined, collectionId: string | null | undefined) => {
  const [needed, other] =
    type === "product" ? (["productId", "collectionId"] as const) : (["collectionId", "productId"] as const)
  const ids = { productId, collectionId }
  if (ids[other] !== undefined && ids[other] !== null) {
    return InvalidRequest.field(
      `${giftPath}.${other}`,
      `${other} is only for selectedGiftType ${type === "product" ? "collection" : "product"}.`
    )
  }
  if (ids[needed] === undefined || ids[needed] === null) {
    return InvalidRequest.field(`${giftPath}.${needed}`, `selectedGiftType ${type} needs ${needed}.`)
  }
  return Effect.succeed({
    productId: type === "product" ? productId!.toLowerCase() : null,
    collectionId: type === "collection" ? collectionId!.toLowerCase() : null
  })
}

/**
 * The swap setting of a gift of `type`: the one given, else the type's default. A collection's recipient already
 * chooses in the collection, so `within_budget` is for product gifts only (400 naming it).
 */
const swapColumn = (type: GiftType, swap: SwapSetting | undefined) =>
  swap === "within_budget" && type === "collection"
    ? InvalidRequest.field(
        `${giftPath}.swap`,
        "swap within_budget is for selectedGiftType product; a collection's recipient already chooses."
      )
    : Effect.succeed(swap ?? defaultSwapOf(type))

const uniqueChannels = (channels: ReadonlyArray<SendingChannel>) =>
  new Set(channels).size === channels.length
    ? Effect.void
    : InvalidRequest.field("customization.notificationPolicy.sendingChannels", "Each channel may appear once.")

export class Campaigns extends Effect.Service<Campaigns>()("Campaigns", {
  dependencies: [Accounts.Default, Billing.Default, Catalog.Default, CampaignsRepo.Default, Audit.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const billing = yield* Billing
    const catalog = yield* Catalog
    const repo = yield* CampaignsRepo
    const audit = yield* Audit

    /** A campaign's row in the audit log, in the change's transaction. */
    const recordCampaign = (campaign: CampaignRecord, action: "campaign.created" | "campaign.updated") =>
      audit.record({
        companyId: campaign.companyId,
        environment: campaign.environment,
        accountId: campaign.accountId,
        action,
        target: campaign.id
      })

    /** The product or collection the gift names, if it is in the catalog (the catalog's 404 otherwise). */
    const ensureInCatalog = (ids: { readonly productId: string | null; readonly collectionId: string | null }) =>
      Effect.gen(function* () {
        if (ids.productId !== null) {
          if (!(yield* catalog.productExists(ids.productId))) {
            return yield* new ProductNotFound({ message: `No product ${ids.productId}.`, productId: ids.productId })
          }
        }
        if (ids.collectionId !== null) {
          if (!(yield* catalog.collectionExists(ids.collectionId))) {
            return yield* new CollectionNotFound({
              message: `No collection ${ids.collectionId}.`,
              collectionId: ids.collectionId
            })
          }
        }
      })

    /** The account the campaign is for: the header's, else the body's, else the only or default one in reach. */
    const accountFor = (caller: CampaignCaller, accountId: string | undefined) =>
      Effect.gen(function* () {
        if (Option.isSome(caller.account)) return caller.account.value
        if (accountId !== undefined) return yield* accounts.find(caller.scope, accountId)
        const reachable = yield* accounts.defaultIn(caller.scope)
        if (Option.isNone(reachable)) {
          return yield* InvalidRequest.field("accountId", "Name the account with Ribbon-Account-Id or accountId.")
        }
        return reachable.value
      })

    /** The named billing method of the account (404 when it is another's), or the account's default one. */
    const methodFor = (scope: AccountScope, account: Account, billingMethodId: string | undefined) =>
      Effect.gen(function* () {
        if (billingMethodId === undefined) return yield* billing.defaultOf(account.id)
        const method = yield* billing.find(scope, billingMethodId)
        if (method.accountId !== account.id) {
          return yield* new BillingMethodNotFound({
            message: `Billing method ${method.id} does not belong to account ${account.id}.`,
            billingMethodId: method.id
          })
        }
        return method
      })

    /** A new campaign, after every check (see the module's comment). */
    const create = Effect.fn("Campaigns.create")(function* (caller: CampaignCaller, input: NewCampaign) {
      const now = yield* nowDate
      const gift = input.giftProperties
      const ids = yield* giftIds(gift.selectedGiftType, gift.productId, gift.collectionId)
      const budget = yield* budgetColumns(gift.budget)
      const swap = yield* swapColumn(gift.selectedGiftType, gift.swap)
      const expiration = yield* expirationColumns(gift.expiration, now)
      yield* uniqueChannels(input.notificationPolicy.sendingChannels)
      const account = yield* accountFor(caller, input.accountId)
      const method = yield* methodFor(caller.scope, account, input.billingMethodId)
      yield* ensureInCatalog(ids)
      const insert = repo.insert({
        id: yield* makeId,
        companyId: account.companyId,
        environment: account.environment,
        accountId: account.id,
        billingMethodId: method.id,
        name: input.name,
        status: input.status,
        type: "oneOffs",
        giftType: gift.selectedGiftType,
        productId: ids.productId,
        collectionId: ids.collectionId,
        budgetMin: budget.budgetMin,
        budgetMax: budget.budgetMax,
        swap,
        currency: billingCurrency,
        expirationDays: expiration.expirationDays,
        expirationDate: expiration.expirationDate,
        sendingChannels: input.notificationPolicy.sendingChannels,
        disableReminders: input.notificationPolicy.disableReminders,
        message: input.message,
        hideRecipientAddress: input.hideRecipientAddress ?? defaultHideRecipientAddress,
        source: caller.source,
        createdAt: now,
        updatedAt: now
      })
      return yield* sql
        .withTransaction(Effect.tap(insert, (created) => recordCampaign(created, "campaign.created")))
        .pipe(Effect.catchTag("SqlError", Effect.die))
    })

    const notFound = (campaignId: string) =>
      new CampaignNotFound({ message: `No campaign ${campaignId} is reachable with this key.`, campaignId })

    /** A campaign on an account the scope reaches (404 otherwise): what gifts are made from. */
    const get = Effect.fn("Campaigns.get")(function* (scope: AccountScope, campaignId: string) {
      const found = yield* repo.findById(scope, campaignId)
      if (Option.isNone(found)) return yield* notFound(campaignId)
      return found.value
    })

    /** The campaigns of the accounts the scope reaches, newest first. */
    const page = Effect.fn("Campaigns.page")(function* (scope: AccountScope, query: CampaignListQuery) {
      return yield* repo.page(scope, query.skip, query.limit, {
        ...(query.statuses === undefined ? {} : { statuses: query.statuses }),
        ...(query.search === undefined ? {} : { search: query.search })
      })
    })

    /** The gift columns after a change: the current ones with the change's fields over them, checked again. */
    const changedGift = (current: CampaignRecord, change: GiftPropertiesChange, now: Date) =>
      Effect.gen(function* () {
        const type = change.selectedGiftType ?? current.giftType
        const sameType = type === current.giftType
        const ids = yield* giftIds(
          type,
          change.productId ?? (sameType && change.collectionId === undefined ? current.productId : undefined),
          change.collectionId ?? (sameType && change.productId === undefined ? current.collectionId : undefined)
        )
        const budget =
          change.budget === undefined
            ? { budgetMin: current.budgetMin, budgetMax: current.budgetMax }
            : yield* budgetColumns(change.budget)
        const swap = yield* swapColumn(type, change.swap ?? (sameType ? current.swap : undefined))
        const expiration =
          change.expiration === undefined
            ? { expirationDays: current.expirationDays, expirationDate: current.expirationDate }
            : yield* expirationColumns(change.expiration, now)
        const catalogChanged = ids.productId !== current.productId || ids.collectionId !== current.collectionId
        return { giftType: type, ...ids, ...budget, swap, ...expiration, catalogChanged } satisfies GiftColumns & {
          catalogChanged: boolean
        }
      })

    /**
     * Changes a campaign: its name, status (along `campaignTransitions`, 422 otherwise), gift properties,
     * notification policy, message or address privacy (turned on, it hides the addresses of the campaign's orders
     * placed before too; turned off, it shows those that were not hidden when their recipient gave them). An archived campaign takes no change (422). The row is locked while it is
     * judged, so two changes racing are judged one after the other.
     */
    const update = Effect.fn("Campaigns.update")(function* (
      scope: AccountScope,
      campaignId: string,
      change: CampaignChange
    ) {
      const now = yield* nowDate
      // The body's own rules first (400), then the campaign (404), then the rules that read it.
      if (change.giftProperties?.budget !== undefined) yield* budgetColumns(change.giftProperties.budget)
      if (change.giftProperties?.expiration !== undefined)
        yield* expirationColumns(change.giftProperties.expiration, now)
      if (change.notificationPolicy?.sendingChannels !== undefined) {
        yield* uniqueChannels(change.notificationPolicy.sendingChannels)
      }
      // Checked before the transaction, so the catalog's 404 comes before anything is locked.
      const before = yield* get(scope, campaignId)
      if (change.giftProperties !== undefined) {
        const gift = yield* changedGift(before, change.giftProperties, now)
        if (gift.catalogChanged) yield* ensureInCatalog(gift)
      }
      const write = Effect.gen(function* () {
        const locked = yield* repo.lockById(scope, campaignId)
        if (Option.isNone(locked)) return yield* notFound(campaignId)
        const current = locked.value
        const onlyStays =
          Object.values({ ...change, status: undefined }).every((value) => value === undefined) &&
          (change.status === undefined || change.status === current.status)
        if (current.status === "archived" && !onlyStays) {
          return yield* new CampaignArchived({ message: `Campaign ${current.id} is archived.`, campaignId: current.id })
        }
        const status = change.status ?? current.status
        if (!canMoveCampaign(current.status, status)) {
          return yield* new CampaignTransitionRefused({
            message: `Campaign ${current.id} cannot move from ${current.status} to ${status}.`,
            campaignId: current.id,
            from: current.status,
            to: status
          })
        }
        if (onlyStays) return current
        const gift =
          change.giftProperties === undefined ? current : yield* changedGift(current, change.giftProperties, now)
        const policy = change.notificationPolicy ?? {}
        const updated = yield* repo.update({
          id: current.id,
          name: change.name ?? current.name,
          status,
          giftType: gift.giftType,
          productId: gift.productId,
          collectionId: gift.collectionId,
          budgetMin: gift.budgetMin,
          budgetMax: gift.budgetMax,
          swap: gift.swap,
          expirationDays: gift.expirationDays,
          expirationDate: gift.expirationDate,
          sendingChannels: policy.sendingChannels ?? current.sendingChannels,
          disableReminders: policy.disableReminders ?? current.disableReminders,
          message: change.message === undefined ? current.message : change.message,
          hideRecipientAddress: change.hideRecipientAddress ?? current.hideRecipientAddress,
          updatedAt: now
        })
        yield* recordCampaign(updated, "campaign.updated")
        return updated
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { create, get, page, update } as const
  })
}) {}
