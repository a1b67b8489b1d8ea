import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import {
  allowsSwap,
  type CampaignRecord,
  expiryDateProblem,
  giftExpirationOf,
  sendsGifts,
  swapChoicesShown
} from "../../domain/company/Campaigns.js"
import type { Account, AccountScope, RequestSource } from "../../domain/company/Company.js"
import { formatTimestamp } from "../../domain/company/Company.js"
import {
  CampaignNotActive,
  GiftChoiceRefused,
  GiftClosed,
  GiftNotFound,
  ThankYouNoteClosed
} from "../../domain/company/Errors.js"
import { type GiftLanguage, messageLanguage } from "../../domain/company/GiftLanguages.js"
import {
  canWriteThankYouNote,
  type GiftRecipientInput,
  type GiftRecord,
  type GiftResult,
  type GiftStatus,
  isOpenGift,
  type SendingMethod,
  type ThankYouNote,
  thankYouNoteOf,
  thankYouNoteText
} from "../../domain/company/Gifts.js"
import type { RecipientRecord } from "../../domain/company/Recipients.js"
import { codeOf, InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { Catalog, PublicUrl } from "../catalog/Catalog.js"
import { LandedCatalog } from "../catalog/LandedCatalog.js"
import { convertUsd, landedAmounts, landedInput, Pricing, toUsd } from "../catalog/Pricing.js"
import { Notifications } from "../checkout/Notifications.js"
import { JobKind, Jobs } from "../platform/Jobs.js"
import { lastUtcDays, nowDate } from "../platform/Time.js"
import { Audit } from "./Audit.js"
import { Billing } from "./Billing.js"
import { Campaigns } from "./Campaigns.js"
import { Companies } from "./Companies.js"
import { CompanyOrders, type OrderRequest } from "./CompanyOrders.js"
import { CompanyWebhooks } from "./CompanyWebhooks.js"
import { GiftsRepo } from "./GiftsRepo.js"
import { translatorFor } from "./GiftTranslator.js"
import { CompanyPolicy } from "./Policy.js"
import { Recipients } from "./Recipients.js"

/**
 * Gifts, version 2 (docs/decisions/0047-v2-gifts.md, docs/company-api.md "Gifts"), in the `gifts` table of migration
 * 0019.
 *
 * - `create` makes one gift per recipient of an active campaign, each in its own transaction: the
 *   recipient found or made, the gift, the budget's maximum debited from the campaign's billing method
 *   ("reserved"), its expiry job, the gift message in the notifications outbox, and `gift-status-changed`.
 *   One recipient's failure (funds, a bad phone) is its result and does not undo the others'. A key the
 *   campaign already has finds that gift and changes nothing.
 * - `cancel`, `expire` and the `gift.expire` job close an open gift: the status, the reservation credited
 *   back, the webhook, in one transaction.
 * - Reads are scoped to the accounts the key reaches; a gift's link is `{PUBLIC_URL}/g/{token}`.
 */

/** A gift's expiry, due at its `expiresAt`. Keyed by gift and time: a new expiry is a new job. */
export const ExpireGift = JobKind.make("gift.expire", Schema.Struct({ giftId: Schema.String }))

/** A reminder to an unclaimed gift's recipient, halfway to its expiry, unless the campaign disables them. */
export const RemindGift = JobKind.make("gift.remind", Schema.Struct({ giftId: Schema.String }))

/**
 * The last reminder to an unclaimed gift's recipient, 48 hours before its expiry, unless the campaign disables them.
 * Keyed by gift and expiry: a new expiry is a new job, and a job whose expiry moved finds it is not yet due.
 */
export const RemindGiftLast = JobKind.make("gift.remind-last", Schema.Struct({ giftId: Schema.String }))

/** How long before its expiry a gift's last reminder goes out. */
export const lastReminderLead = 48 * 3_600_000

/** At most this many digital products are offered where nothing the campaign allows can be delivered. */
export const digitalChoicesShown = 6

/** Who makes or reads gifts: the request's scope, the account its header named, and its `Request-Source`. */
export interface GiftCaller {
  readonly scope: AccountScope
  readonly account: Option.Option<Account>
  readonly source: RequestSource | null
}

export interface NewGifts {
  readonly campaignId: string
  readonly recipients: ReadonlyArray<GiftRecipientInput>
  readonly sendingMethod: SendingMethod
}

/** v2 paging and the list's filters (each a set: any of its values), newest first. */
export interface GiftListQuery {
  readonly skip: number
  readonly limit: number
  readonly statuses: ReadonlyArray<GiftStatus>
  readonly campaignIds: ReadonlyArray<string>
  readonly keys: ReadonlyArray<string>
  readonly createdBefore: Date | undefined
  readonly createdAfter: Date | undefined
  /** Made at or after (the dashboard's whole days in UTC). */
  readonly createdFrom?: Date | undefined
  /** Part of the recipient's first or last name or e-mail, any case (the dashboard's search). */
  readonly search?: string | undefined
}

/** What `PATCH /v2/gifts/{id}` changes: absent fields stay; `metadata: null` clears it. */
export interface GiftChange {
  readonly expirationDate?: Date | undefined
  readonly metadata?: Readonly<Record<string, string>> | null | undefined
}

/** A variant the recipient may choose; its price is never shown to them. */
export interface GiftVariantChoice {
  readonly id: string
  readonly title: string
  readonly options: Readonly<Record<string, string>>
}

/** A product the campaign allows, with its variants within the budget in the recipient's country. */
export interface GiftChoice {
  readonly productId: string
  readonly title: string
  readonly description: string | null
  readonly imageUrl: string | null
  readonly variants: ReadonlyArray<GiftVariantChoice>
  /** Delivered online (a digital gift offered where nothing the campaign allows can go): no address is asked. */
  readonly digital: boolean
}

/**
 * What a gift offers in a country: the campaign's choices; where there are none, the catalog's digital gifts within
 * the budget (`digital`); where there are none either, nothing (`undeliverable`).
 */
export interface GiftOffer {
  readonly choices: ReadonlyArray<GiftChoice>
  readonly digital: boolean
}

/** A claim: the chosen variant, who receives it and where (the v3 order's recipient and address). */
export interface GiftClaim {
  readonly variantId: string
  readonly recipient: OrderRequest["recipient"]
  readonly address: OrderRequest["shippingAddress"]
}

/** What the gift page shows: the gift, who sends it and their note, and for whom. */
export interface GiftView {
  readonly gift: GiftRecord
  readonly campaign: CampaignRecord
  readonly recipient: RecipientRecord
  readonly sender: string
}

type PriceReference = Effect.Effect.Success<ReturnType<Pricing["reference"]>>
type OfferedRow = Effect.Effect.Success<ReturnType<Catalog["offeredVariants"]>>[number]
type VariantFact = Effect.Effect.Success<ReturnType<Pricing["variants"]>>[number]

/**
 * Whether a variant can be a gift in `country` within `budget` (minor units of USD): priced, in stock, shipping
 * there, with its landed total there in the budget.
 */
const withinBudget = (
  reference: PriceReference,
  fact: VariantFact,
  country: NonNullable<ReturnType<PriceReference["country"]["get"]>>,
  budget: { readonly budgetMin: number; readonly budgetMax: number }
) => {
  if (fact.priceUsd === null || !fact.shipsTo.includes(country.code)) return false
  if (fact.stock !== null && fact.stock <= 0) return false
  const landed = landedAmounts(landedInput(reference, { ...fact, priceUsd: fact.priceUsd }, country)).total
  const usd = toUsd(landed, country.fxRate, country.digits)
  return usd >= budget.budgetMin && usd <= budget.budgetMax
}

/** A new link secret: 24 random bytes, base64url (32 characters). */
const newToken = () => randomBytes(24).toString("base64url")

/** The reason of a ledger entry, as the billing method's statement shows it. */
const ledgerReason = { reserved: "gift budget reserved", released: "gift budget released" } as const

export class Gifts extends Effect.Service<Gifts>()("Gifts", {
  dependencies: [
    Campaigns.Default,
    Recipients.Default,
    Billing.Default,
    Jobs.Default,
    CompanyWebhooks.Default,
    Pricing.Default,
    CompanyPolicy.Default,
    CompanyOrders.Default,
    Catalog.Default,
    LandedCatalog.Default,
    Companies.Default,
    Notifications.Default,
    GiftsRepo.Default,
    Audit.Default
  ],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* GiftsRepo
    const notifications = yield* Notifications
    const campaigns = yield* Campaigns
    const recipients = yield* Recipients
    const billing = yield* Billing
    const jobs = yield* Jobs
    const webhooks = yield* CompanyWebhooks
    const pricing = yield* Pricing
    const catalog = yield* Catalog
    const landedCatalog = yield* LandedCatalog
    const companies = yield* Companies
    const policy = yield* CompanyPolicy
    const companyOrders = yield* CompanyOrders
    const publicUrl = (yield* PublicUrl).replace(/\/$/, "")
    const audit = yield* Audit

    /** A gift's row in the audit log, in the change's transaction. */
    const recordGift = (
      gift: GiftRecord,
      action: "gift.created" | "gift.updated" | "gift.cancelled" | "gift.expired" | "gift.claimed" | "gift.resent"
    ) =>
      audit.record({
        companyId: gift.companyId,
        environment: gift.environment,
        accountId: gift.accountId,
        action,
        target: gift.id
      })

    /** The link a recipient opens. */
    const linkOf = (gift: GiftRecord) => `${publicUrl}/g/${gift.token}`

    const emitStatus = (gift: GiftRecord) =>
      webhooks.emit({
        companyId: gift.companyId,
        environment: gift.environment,
        accountId: gift.accountId,
        eventType: "gift-status-changed",
        subject: { giftId: gift.id },
        eventData: { status: gift.status }
      })

    const scheduleExpiry = (gift: GiftRecord) =>
      jobs.enqueue(
        ExpireGift,
        { giftId: gift.id },
        { key: `${gift.id}@${gift.expiresAt.getTime()}`, runAt: DateTime.unsafeFromDate(gift.expiresAt) }
      )

    /** The messages of each kind: their subject and body (docs/decisions/0074-gift-page-languages.md). */
    const messageKeys = {
      "gift.sent": { subject: "mail.sent.subject", body: "mail.sent.body" },
      "gift.reminder": { subject: "mail.reminder.subject", body: "mail.reminder.body" },
      "gift.last-reminder": { subject: "mail.lastReminder.subject", body: "mail.lastReminder.body" },
      "gift.resent": { subject: "mail.resent.subject", body: "mail.resent.body" }
    } as const

    /**
     * A gift message to the notifications outbox, on the gift's channel (`email` to the recipient's e-mail,
     * `sms` to their phone; none for `link`, whose link the company hands over, or without an address), in the
     * recipient's language: the one they picked on the gift page, else their country's; the campaign's own message
     * follows as written. Written once per gift and kind, but `gift.resent`, written each time. Whether one was
     * written.
     */
    const announce = (
      gift: GiftRecord,
      campaign: CampaignRecord,
      recipient: RecipientRecord,
      kind: keyof typeof messageKeys
    ) =>
      Effect.gen(function* () {
        const channel = gift.sendingMethod
        if (channel === "link") return false
        const address = channel === "email" ? recipient.email : recipient.mobilePhone
        if (address === null) return false
        const { t } = translatorFor(messageLanguage(gift.language, recipient.country))
        const values = {
          named: recipient.firstName === null || recipient.firstName === "" ? "no" : "yes",
          firstName: recipient.firstName ?? "",
          link: linkOf(gift),
          expiresAt: gift.expiresAt
        }
        const note = campaign.message === null ? "" : `\n\n${campaign.message}`
        yield* notifications.gift({
          giftId: gift.id,
          kind,
          channel,
          recipient: address,
          subject: t(messageKeys[kind].subject, values),
          body: `${t(messageKeys[kind].body, values)}${note}`
        })
        return true
      })

    /** The reminder's time: halfway between sending and expiry. */
    const scheduleReminder = (gift: GiftRecord, campaign: CampaignRecord) =>
      campaign.disableReminders || gift.sendingMethod === "link"
        ? Effect.void
        : jobs.enqueue(
            RemindGift,
            { giftId: gift.id },
            {
              key: gift.id,
              runAt: DateTime.unsafeFromDate(new Date((gift.createdAt.getTime() + gift.expiresAt.getTime()) / 2))
            }
          )

    /**
     * The last reminder's time: 48 hours before expiry. None when that is not after the halfway reminder (a gift of
     * four days or less has one reminder), and none when the campaign disables reminders.
     */
    const scheduleLastReminder = (gift: GiftRecord, campaign: CampaignRecord) => {
      const runAt = gift.expiresAt.getTime() - lastReminderLead
      const halfway = (gift.createdAt.getTime() + gift.expiresAt.getTime()) / 2
      return campaign.disableReminders || gift.sendingMethod === "link" || runAt <= halfway
        ? Effect.void
        : jobs.enqueue(
            RemindGiftLast,
            { giftId: gift.id },
            { key: `${gift.id}@${gift.expiresAt.getTime()}`, runAt: DateTime.unsafeFromDate(new Date(runAt)) }
          )
    }

    const byKey = (campaignId: string, key: string) =>
      Effect.map(repo.findByKey(campaignId, key), Option.getOrUndefined)

    /**
     * One recipient's gift, in a transaction of its own: the gift its key already names, or a new one, recorded in
     * the audit log when `audited` (a gift made for `order` is recorded as that order).
     */
    const createOne = (
      caller: GiftCaller,
      campaign: CampaignRecord,
      input: GiftRecipientInput,
      method: SendingMethod,
      audited: boolean
    ) =>
      Effect.gen(function* () {
        const existing = yield* byKey(campaign.id, input.key)
        if (existing !== undefined) return { gift: existing, created: false }
        const { recipient } = yield* recipients.findOrCreate(
          { scope: caller.scope, account: caller.account, source: caller.source },
          {
            firstName: input.firstname,
            lastName: input.lastname,
            email: input.email,
            mobilePhone: input.phone,
            country: input.country ?? null,
            externalId: input.externalId,
            accountIds: [campaign.accountId]
          }
        )
        const now = yield* nowDate
        const inserted = yield* repo.insert({
          id: yield* makeId,
          companyId: campaign.companyId,
          environment: campaign.environment,
          campaignId: campaign.id,
          accountId: campaign.accountId,
          billingMethodId: campaign.billingMethodId,
          recipientId: recipient.id,
          key: input.key,
          token: newToken(),
          budgetMin: campaign.budgetMin,
          budgetMax: campaign.budgetMax,
          currency: campaign.currency,
          reserved: campaign.budgetMax,
          sendingMethod: method,
          source: caller.source,
          expiresAt: giftExpirationOf(campaign, now),
          createdAt: now,
          updatedAt: now
        })
        // Another request made it first: that one is the gift.
        if (Option.isNone(inserted)) return { gift: (yield* byKey(campaign.id, input.key))!, created: false }
        const gift = inserted.value
        yield* billing.debit(campaign.billingMethodId, campaign.budgetMax, {
          type: "gift",
          id: gift.id,
          reason: ledgerReason.reserved
        })
        yield* scheduleExpiry(gift)
        yield* scheduleReminder(gift, campaign)
        yield* scheduleLastReminder(gift, campaign)
        yield* announce(gift, campaign, recipient, "gift.sent")
        yield* emitStatus(gift)
        if (audited) yield* recordGift(gift, "gift.created")
        return { gift, created: true }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    /** A campaign the scope reaches (404) that sends gifts (422 unless active). */
    const activeCampaign = (scope: AccountScope, campaignId: string) =>
      Effect.gen(function* () {
        const campaign = yield* campaigns.get(scope, campaignId)
        if (!sendsGifts(campaign)) {
          return yield* new CampaignNotActive({
            message: `Campaign ${campaign.id} is ${campaign.status}; gifts are sent from an active campaign.`,
            campaignId: campaign.id,
            status: campaign.status
          })
        }
        return campaign
      })

    /**
     * Gifts of an active campaign (404 for one the scope does not reach, 422 unless active), one per
     * recipient, each recipient's outcome in its place.
     */
    const create = Effect.fn("Gifts.create")(function* (caller: GiftCaller, input: NewGifts) {
      const campaign = yield* activeCampaign(caller.scope, input.campaignId)
      return yield* Effect.forEach(input.recipients, (recipient) =>
        createOne(caller, campaign, recipient, input.sendingMethod, true).pipe(
          Effect.map((made): GiftResult => ({ success: true, ...made })),
          Effect.catchAll((error) =>
            Effect.succeed<GiftResult>({
              success: false,
              key: recipient.key,
              errorCode: codeOf(error)?.v2 ?? "UNPROCESSABLE_ENTITY",
              message: error.message
            })
          )
        )
      )
    })

    const notFound = (giftId: string) =>
      new GiftNotFound({ message: `No gift ${giftId} is reachable with this key.`, giftId })

    /** A gift on an account the scope reaches (404 otherwise). */
    const get = Effect.fn("Gifts.get")(function* (scope: AccountScope, giftId: string) {
      const found = yield* repo.findInScope(scope, giftId)
      if (Option.isNone(found)) return yield* notFound(giftId)
      return found.value
    })

    /** The gifts of the accounts the scope reaches, newest first, filtered and paged in SQL. */
    const page = Effect.fn("Gifts.page")(function* (scope: AccountScope, query: GiftListQuery) {
      return yield* repo.page({ scope, ...query })
    })

    /**
     * How far the gifts sent in the last `days` UTC days (today included) on the accounts the scope reaches went:
     * sent, opened, claimed and delivered (cumulative stages), and expired and cancelled, counted in SQL.
     */
    const funnel = Effect.fn("Gifts.funnel")(function* (scope: AccountScope, days: number) {
      const window = yield* lastUtcDays(days)
      return yield* repo.funnel(scope, window.from, window.to)
    })

    /**
     * The same page as `page` (the same filters, in SQL), each gift with its recipient's name and addresses as
     * stored: the caller masks them by its read mode, as a v2 read's `recipient` expansion is.
     */
    const pageWithRecipients = Effect.fn("Gifts.pageWithRecipients")(function* (
      scope: AccountScope,
      query: GiftListQuery
    ) {
      return yield* repo.pageWithRecipients({ scope, ...query })
    })

    /** The messages a gift's recipient was sent (its first, reminders, links sent again), oldest first. */
    const messagesOf = Effect.fn("Gifts.messagesOf")(function* (scope: AccountScope, giftId: string) {
      const gift = yield* get(scope, giftId)
      return yield* notifications.forGift(gift.id)
    })

    /** The scope's gift, locked, and open (422 once claimed, expired or cancelled). */
    const lockOpen = (scope: AccountScope, giftId: string) =>
      Effect.gen(function* () {
        const gift = yield* get(scope, giftId)
        const locked = Option.getOrThrow(yield* repo.lockById(gift.id))
        if (!isOpenGift(locked.status)) {
          return yield* new GiftClosed({
            message: `Gift ${gift.id} is ${locked.status}; it takes no further change.`,
            giftId: gift.id,
            status: locked.status
          })
        }
        return locked
      })

    /** Changes an open gift's expiry (a new expiry job; in the future, at most 365 days ahead) or metadata. */
    const update = Effect.fn("Gifts.update")(function* (scope: AccountScope, giftId: string, change: GiftChange) {
      if (change.expirationDate !== undefined) {
        const problem = expiryDateProblem(change.expirationDate, yield* nowDate)
        if (problem !== undefined) return yield* InvalidRequest.field("expirationDate", problem)
      }
      const write = Effect.gen(function* () {
        const gift = yield* lockOpen(scope, giftId)
        const now = yield* nowDate
        const changed = yield* repo.update(
          gift.id,
          {
            expiresAt: change.expirationDate ?? gift.expiresAt,
            metadata: change.metadata === undefined ? gift.metadata : change.metadata
          },
          now
        )
        if (changed.expiresAt.getTime() !== gift.expiresAt.getTime()) {
          yield* scheduleExpiry(changed)
          const campaign = yield* campaigns.get(policy.scopeOfGift(changed), changed.campaignId).pipe(Effect.orDie)
          yield* scheduleLastReminder(changed, campaign)
        }
        yield* recordGift(changed, "gift.updated")
        return changed
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** Closes an open, locked gift as `status`: its reservation credited back and the change announced. */
    const closeLocked = (gift: GiftRecord, status: "expired" | "cancelled") =>
      Effect.gen(function* () {
        const now = yield* nowDate
        const closed = yield* repo.close(gift.id, status, now)
        yield* billing.credit(gift.billingMethodId, gift.reserved, {
          type: "gift",
          id: gift.id,
          reason: ledgerReason.released
        })
        yield* emitStatus(closed)
        return closed
      })

    /** Cancels or expires an open gift now, at the company's request (422 once closed); what it held is released. */
    const close = (scope: AccountScope, giftId: string, status: "expired" | "cancelled") =>
      sql
        .withTransaction(
          Effect.flatMap(lockOpen(scope, giftId), (gift) => closeLocked(gift, status)).pipe(
            Effect.tap((closed) => recordGift(closed, status === "expired" ? "gift.expired" : "gift.cancelled"))
          )
        )
        .pipe(Effect.catchTag("SqlError", Effect.die))

    const cancel = Effect.fn("Gifts.cancel")((scope: AccountScope, giftId: string) => close(scope, giftId, "cancelled"))
    const expire = Effect.fn("Gifts.expire")((scope: AccountScope, giftId: string) => close(scope, giftId, "expired"))

    /**
     * Sends an open gift's link to its recipient again (422 once closed), on the gift's channel through the
     * notifications outbox as its first message went (`gift.resent`), recorded in the audit log as `gift.resent`.
     * A gift sent as a link alone, or whose recipient has no address on its channel, has nothing to send:
     * `false`, and nothing is recorded.
     */
    const resend = Effect.fn("Gifts.resend")(function* (scope: AccountScope, giftId: string) {
      const write = Effect.gen(function* () {
        const gift = yield* lockOpen(scope, giftId)
        const giftScope = policy.scopeOfGift(gift)
        const campaign = yield* campaigns.get(giftScope, gift.campaignId).pipe(Effect.orDie)
        const recipient = yield* recipients
          .get(giftScope, gift.recipientId, { includeDeleted: true })
          .pipe(Effect.orDie)
        const sent = yield* announce(gift, campaign, recipient, "gift.resent")
        if (sent) yield* recordGift(gift, "gift.resent")
        return sent
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * The `gift.expire` job: expires the gift if it is still open and its time has come. A gift whose expiry
     * moved later has a job of its own for the new time, so this one does nothing.
     */
    const expireDue = Effect.fn("Gifts.expireDue")(function* (giftId: string) {
      const run = Effect.gen(function* () {
        const gift = Option.getOrUndefined(yield* repo.lockById(giftId))
        const now = yield* nowDate
        if (gift === undefined || !isOpenGift(gift.status) || gift.expiresAt.getTime() > now.getTime()) return
        yield* closeLocked(gift, "expired")
      })
      yield* sql.withTransaction(run).pipe(Effect.orDie)
    })

    /**
     * The `gift.remind` job: the reminder, if the gift is still waiting to be claimed and its campaign still reminds
     * (a campaign that disabled reminders after sending sends none, as for the last one).
     */
    const remind = Effect.fn("Gifts.remind")(function* (giftId: string) {
      const gift = Option.getOrUndefined(yield* repo.findById(giftId))
      if (gift === undefined || !isOpenGift(gift.status)) return
      const scope = policy.scopeOfGift(gift)
      const campaign = yield* campaigns.get(scope, gift.campaignId).pipe(Effect.orDie)
      if (campaign.disableReminders) return
      const recipient = yield* recipients.get(scope, gift.recipientId, { includeDeleted: true }).pipe(Effect.orDie)
      yield* announce(gift, campaign, recipient, "gift.reminder").pipe(Effect.orDie)
    })

    /**
     * The `gift.remind-last` job: the last reminder, if the gift is still waiting to be claimed, its campaign still
     * reminds, and its expiry is within 48 hours (an expiry moved later has a job of its own for the new time).
     */
    const remindLast = Effect.fn("Gifts.remindLast")(function* (giftId: string) {
      const gift = Option.getOrUndefined(yield* repo.findById(giftId))
      if (gift === undefined || !isOpenGift(gift.status)) return
      const now = yield* nowDate
      if (gift.expiresAt.getTime() - lastReminderLead > now.getTime()) return
      const scope = policy.scopeOfGift(gift)
      const campaign = yield* campaigns.get(scope, gift.campaignId).pipe(Effect.orDie)
      if (campaign.disableReminders) return
      const recipient = yield* recipients.get(scope, gift.recipientId, { includeDeleted: true }).pipe(Effect.orDie)
      yield* announce(gift, campaign, recipient, "gift.last-reminder").pipe(Effect.orDie)
    })

    const handlers = [
      ExpireGift.handle(({ giftId }) => expireDue(giftId)),
      RemindGift.handle(({ giftId }) => remind(giftId)),
      RemindGiftLast.handle(({ giftId }) => remindLast(giftId))
    ] as const

    /**
     * The gift behind a link, with its campaign, recipient and sender (none for an unknown token). Reading it
     * moves it along: `opened` when the page is first shown, `unwrapped` when the choices are (`step`), each
     * once and announced with `gift-status-changed`.
     */
    const visit = Effect.fn("Gifts.visit")(function* (token: string, step: "opened" | "unwrapped") {
      const move = Effect.gen(function* () {
        const locked = yield* repo.lockByToken(token)
        if (Option.isNone(locked)) return Option.none<GiftRecord>()
        const found = locked.value
        const from: ReadonlyArray<GiftStatus> = step === "opened" ? ["unopened"] : ["unopened", "opened"]
        if (!from.includes(found.status)) return Option.some(found)
        const now = yield* nowDate
        const moved = yield* repo.markVisited(found.id, step, now)
        yield* emitStatus(moved)
        return Option.some(moved)
      })
      const gift = yield* sql.withTransaction(move).pipe(Effect.orDie)
      if (Option.isNone(gift)) return Option.none<GiftView>()
      const scope = policy.scopeOfGift(gift.value)
      const campaign = yield* campaigns.get(scope, gift.value.campaignId).pipe(Effect.orDie)
      const recipient = yield* recipients
        .get(scope, gift.value.recipientId, { includeDeleted: true })
        .pipe(Effect.orDie)
      const sender = yield* companies.name(gift.value.companyId)
      return Option.some<GiftView>({
        gift: gift.value,
        campaign,
        recipient,
        sender: Option.getOrElse(sender, () => "")
      })
    })

    /**
     * Of the offered `rows`, the products with their variants that ship to `countryCode`, are in stock and whose
     * landed total there (in the billing currency, USD) is within the gift's budget (`withinBudget`), in the rows'
     * order. Products without such a variant are left out.
     */
    const fittingChoices = (
      rows: ReadonlyArray<OfferedRow>,
      gift: { readonly budgetMin: number; readonly budgetMax: number },
      countryCode: string
    ) =>
      Effect.gen(function* () {
        const reference = yield* pricing.reference()
        const country = reference.country.get(countryCode.toUpperCase())
        if (country === undefined || rows.length === 0) return [] as ReadonlyArray<GiftChoice>
        const facts = new Map(
          (yield* pricing.variants(Option.some(rows.map((row) => row.variantId)))).map((fact) => [fact.variantId, fact])
        )
        const within = (variantId: string) => {
          const fact = facts.get(variantId)
          return fact !== undefined && withinBudget(reference, fact, country, gift)
        }
        const byProduct = new Map<string, GiftChoice>()
        for (const row of rows) {
          if (!within(row.variantId)) continue
          const product = byProduct.get(row.productId) ?? {
            productId: row.productId,
            title: row.productTitle,
            description: row.description,
            imageUrl: row.imageUrl === null ? null : `${publicUrl}${row.imageUrl}`,
            variants: [],
            digital: false
          }
          byProduct.set(row.productId, {
            ...product,
            variants: [
              ...product.variants,
              { id: row.variantId, title: row.variantTitle, options: row.selectedOptions }
            ]
          })
        }
        return [...byProduct.values()] as ReadonlyArray<GiftChoice>
      })

    /**
     * The products the campaign allows (its product, or its collection's in order) with their variants that
     * ship to `countryCode`, are in stock and whose landed total there (in the billing currency, USD) is
     * within the gift's budget. Products without such a variant are left out.
     */
    const choices = Effect.fn("Gifts.choices")(function* (
      gift: GiftRecord,
      campaign: CampaignRecord,
      countryCode: string
    ) {
      const rows = yield* catalog.offeredVariants(
        campaign.collectionId === null ? { productId: campaign.productId } : { collectionId: campaign.collectionId }
      )
      return yield* fittingChoices(rows, gift, countryCode)
    })

    /**
     * What a recipient of a product gift may swap it for (docs/decisions/0072-swapping-a-gift-within-budget.md): none
     * unless the campaign allows swaps (`allowsSwap`); else the marketplace catalog's products other than the
     * campaign's, newest first, with their variants judged as `choices` judges the campaign's own
     * (`fittingChoices`), at most `swapChoicesShown` of them. The landed catalog narrows the candidates in SQL with
     * the budget converted to the country's currency, one US cent wider on each side; `withinBudget` then decides.
     */
    const swapChoices = Effect.fn("Gifts.swapChoices")(function* (
      gift: GiftRecord,
      campaign: CampaignRecord,
      countryCode: string
    ) {
      if (!allowsSwap(campaign)) return [] as ReadonlyArray<GiftChoice>
      const country = (yield* pricing.reference()).country.get(countryCode.toUpperCase())
      if (country === undefined) return [] as ReadonlyArray<GiftChoice>
      const major = (usdCents: number) =>
        convertUsd(Math.max(usdCents, 0), country.fxRate, country.digits) / 10 ** country.digits
      const { products } = yield* landedCatalog
        .products({
          budget: major(gift.budgetMax + 1),
          minBudget: major(gift.budgetMin - 1),
          country: country.code,
          catalog: "marketplace",
          skip: 0,
          limit: swapChoicesShown + 1
        })
        .pipe(Effect.orDie)
      const ids = products
        .map((product) => product.id)
        .filter((id) => id !== campaign.productId)
        .slice(0, swapChoicesShown)
      const rows = yield* Effect.forEach(ids, (productId) => catalog.offeredVariants({ productId }))
      return yield* fittingChoices(rows.flat(), gift, country.code)
    })

    /**
     * What an order for `variantId` was swapped from: the campaign's product and its title, when the campaign's
     * gift is a product and the variant is another product's; undefined otherwise.
     */
    const swappedFromOf = (campaign: CampaignRecord, variantId: string) =>
      Effect.gen(function* () {
        const original = campaign.giftType === "product" ? campaign.productId : null
        if (original === null) return undefined
        const variant = yield* catalog.orderVariant(variantId)
        if (Option.isNone(variant) || variant.value.productId === original) return undefined
        const rows = yield* catalog.offeredVariants({ productId: original })
        return { productId: original, title: rows[0]?.productTitle ?? original }
      })

    /**
     * The catalog's digital gifts for `countryCode` within the gift's budget there, where nothing the campaign allows
     * can be delivered: the products with a digital variant for sale that reaches the country with its landed total
     * within the budget, the most generous first (by their dearest such variant), at most `digitalChoicesShown`.
     */
    const digitalChoices = Effect.fn("Gifts.digitalChoices")(function* (gift: GiftRecord, countryCode: string) {
      const reference = yield* pricing.reference()
      const country = reference.country.get(countryCode.toUpperCase())
      if (country === undefined) return []
      const rows = yield* catalog.digitalOffered(country.code)
      const facts = new Map(
        (yield* pricing.variants(Option.some(rows.map((row) => row.variantId)))).map((fact) => [fact.variantId, fact])
      )
      const byProduct = new Map<string, { choice: GiftChoice; best: number }>()
      for (const row of rows) {
        const fact = facts.get(row.variantId)
        if (fact === undefined || fact.priceUsd === null || !withinBudget(reference, fact, country, gift)) continue
        const landed = landedAmounts(landedInput(reference, { ...fact, priceUsd: fact.priceUsd }, country)).total
        const found = byProduct.get(row.productId) ?? {
          best: 0,
          choice: {
            productId: row.productId,
            title: row.productTitle,
            description: row.description,
            imageUrl: row.imageUrl === null ? null : `${publicUrl}${row.imageUrl}`,
            variants: [],
            digital: true
          }
        }
        byProduct.set(row.productId, {
          best: Math.max(found.best, landed),
          choice: {
            ...found.choice,
            variants: [
              ...found.choice.variants,
              { id: row.variantId, title: row.variantTitle, options: row.selectedOptions }
            ]
          }
        })
      }
      return [...byProduct.values()]
        .sort((a, b) => b.best - a.best || a.choice.productId.localeCompare(b.choice.productId))
        .slice(0, digitalChoicesShown)
        .map((entry) => entry.choice)
    })

    /** What the gift offers in `countryCode` (`GiftOffer`): the campaign's choices, else digital gifts, else nothing. */
    const offerIn = (gift: GiftRecord, campaign: CampaignRecord, countryCode: string) =>
      Effect.gen(function* () {
        const own = yield* choices(gift, campaign, countryCode)
        if (own.length > 0) return { choices: own, digital: false } satisfies GiftOffer
        return { choices: yield* digitalChoices(gift, countryCode), digital: true } satisfies GiftOffer
      })

    /**
     * What the gift page offers in `countryCode` (`offerIn`). Where nothing at all can reach the country, the sender
     * is told: the country is recorded for the gift and `gift-undeliverable` emitted, once per gift and country.
     */
    const offer = Effect.fn("Gifts.offer")(function* (gift: GiftRecord, campaign: CampaignRecord, countryCode: string) {
      const offered = yield* offerIn(gift, campaign, countryCode)
      if (offered.choices.length > 0) return offered
      const reference = yield* pricing.reference()
      const country = reference.country.get(countryCode.toUpperCase())
      if (country === undefined) return offered
      const tell = Effect.gen(function* () {
        const first = yield* repo.markUndeliverable(gift.id, country.code, yield* nowDate)
        if (!first) return
        yield* webhooks.emit({
          companyId: gift.companyId,
          environment: gift.environment,
          accountId: gift.accountId,
          eventType: "gift-undeliverable",
          subject: { giftId: gift.id },
          eventData: {
            status: gift.status,
            countryCode: country.code,
            budget: { min: gift.budgetMin / 100, max: gift.budgetMax / 100 }
          }
        })
      })
      yield* sql.withTransaction(tell).pipe(Effect.orDie)
      return offered
    })

    /** The countries where nothing could reach the gift, as its recipient found them (the dashboard shows them). */
    const undeliverableCountries = Effect.fn("Gifts.undeliverableCountries")(function* (gift: GiftRecord) {
      return yield* repo.undeliverableCountries(gift.id)
    })

    /**
     * The countries where a gift of the campaign has something to choose: those an offered variant in stock ships
     * to with its landed total there within the campaign's budget (what `choices` would offer, for every country).
     */
    const destinationsOf = Effect.fn("Gifts.destinationsOf")(function* (campaign: CampaignRecord) {
      const rows = yield* catalog.offeredVariants(
        campaign.collectionId === null ? { productId: campaign.productId } : { collectionId: campaign.collectionId }
      )
      const reference = yield* pricing.reference()
      const facts = yield* pricing.variants(Option.some(rows.map((row) => row.variantId)))
      const countries = new Set<string>()
      for (const fact of facts) {
        for (const code of fact.shipsTo) {
          const country = reference.country.get(code)
          if (country === undefined || countries.has(country.code)) continue
          if (withinBudget(reference, fact, country, campaign)) countries.add(country.code)
        }
      }
      return countries as ReadonlySet<string>
    })

    /**
     * The gift's order, placed (or replayed) on its billing method under the key `gift:{id}`: a second claim
     * of the same choice finds the same order, another choice is refused (`OrderKeyReused`). It keeps whether the
     * campaign hid the recipient's address when they gave it.
     */
    const placeFor = (
      gift: GiftRecord,
      campaign: CampaignRecord,
      input: GiftClaim,
      swappedFrom?: { readonly productId: string; readonly title: string }
    ) =>
      companyOrders.place(
        { scope: policy.scopeOfGift(gift), account: Option.none(), source: gift.source },
        {
          variantId: input.variantId,
          recipient: input.recipient,
          shippingAddress: input.address,
          idempotencyKey: `gift:${gift.id}`,
          billingMethodId: gift.billingMethodId,
          accountId: gift.accountId,
          tags: [],
          metadata: gift.metadata,
          giftId: gift.id,
          addressHidden: campaign.hideRecipientAddress,
          ...(swappedFrom === undefined ? {} : { swappedFrom })
        }
      )

    /**
     * Claims an open gift for `variantId`, sent to `recipient` at `address`, in the caller's transaction: the gift
     * locked, the variant checked against the choices (the campaign's, deliverable to the address's country,
     * within the budget there, or when the campaign allows swaps the other products `swapChoices` offers: 422
     * otherwise), the reservation released, the order placed on the gift's
     * billing method (its checks: address, funds; with what it was swapped from, if it was), and the gift
     * `claimed` with its order. A claim repeated
     * after success finds the same order (the order's key is the gift's).
     */
    const claimIn = (gift: GiftRecord, input: GiftClaim) =>
      Effect.gen(function* () {
        const locked = Option.getOrUndefined(yield* repo.lockById(gift.id))
        if (locked === undefined || !isOpenGift(locked.status)) {
          return yield* new GiftClosed({
            message: `Gift ${gift.id} is ${locked?.status ?? "gone"}; it can no longer be claimed.`,
            giftId: gift.id,
            status: locked?.status ?? "unknown"
          })
        }
        const campaign = yield* campaigns.get(policy.scopeOfGift(locked), locked.campaignId).pipe(Effect.orDie)
        const offers = (offered: ReadonlyArray<GiftChoice>) =>
          offered.some((choice) => choice.variants.some((variant) => variant.id === input.variantId))
        const allowed =
          offers((yield* offerIn(locked, campaign, input.address.countryCode)).choices) ||
          offers(yield* swapChoices(locked, campaign, input.address.countryCode))
        if (!allowed) {
          return yield* new GiftChoiceRefused({
            message: `Variant ${input.variantId} is not one this gift allows for ${input.address.countryCode}.`,
            giftId: locked.id,
            variantId: input.variantId
          })
        }
        yield* billing.credit(locked.billingMethodId, locked.reserved, {
          type: "gift",
          id: locked.id,
          reason: ledgerReason.released
        })
        const { result: order } = yield* placeFor(
          locked,
          campaign,
          input,
          yield* swappedFromOf(campaign, input.variantId)
        )
        const now = yield* nowDate
        const claimed = yield* repo.markClaimed(locked.id, order.id, now)
        yield* emitStatus(claimed)
        return { gift: claimed, order }
      })

    /** The company's claim of a gift for its recipient (`claimIn`, in one transaction), recorded in the audit log. */
    const claim = Effect.fn("Gifts.claim")(function* (gift: GiftRecord, input: GiftClaim) {
      const run = Effect.tap(claimIn(gift, input), (claimed) => recordGift(claimed.gift, "gift.claimed"))
      return yield* sql.withTransaction(run).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * The recipient's own claim on the gift page (`claimIn`, in one transaction): not the company's doing, so not in
     * its audit log.
     */
    const claimByRecipient = Effect.fn("Gifts.claimByRecipient")(function* (gift: GiftRecord, input: GiftClaim) {
      return yield* sql.withTransaction(claimIn(gift, input)).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * `POST /v2/orders`: a gift made and claimed in one transaction, the recipient's `key` its idempotency
     * key, recorded in the audit log as the order it places. Sent again, the same body finds the same gift and
     * order and records nothing; another choice or address for a claimed key is refused (`OrderKeyReused`). A
     * refused claim leaves no gift behind.
     */
    const order = Effect.fn("Gifts.order")(function* (
      caller: GiftCaller,
      input: { readonly campaignId: string; readonly recipient: GiftRecipientInput; readonly claim: GiftClaim }
    ) {
      const run = Effect.gen(function* () {
        const campaign = yield* activeCampaign(caller.scope, input.campaignId)
        const { gift } = yield* createOne(caller, campaign, input.recipient, "link", false)
        if (gift.status !== "claimed") {
          const claimed = yield* claimIn(gift, input.claim)
          yield* audit.record({
            companyId: claimed.order.companyId,
            environment: claimed.order.environment,
            accountId: claimed.order.accountId,
            action: "order.created",
            target: claimed.order.id
          })
          return claimed
        }
        const { result } = yield* placeFor(
          gift,
          campaign,
          input.claim,
          yield* swappedFromOf(campaign, input.claim.variantId)
        )
        return { gift, order: result }
      })
      return yield* sql.withTransaction(run).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * The recipient's thank-you note on a claimed gift (docs/decisions/0070-gift-thank-you-notes.md), in one
     * transaction: the gift locked; refused unless it is claimed and, for a note already written, unless its 24 hours
     * since first written are still running (`ThankYouNoteClosed`, 422); the text judged (`thankYouNoteText`: trimmed,
     * 1 to 500 characters, plain text; `InvalidRequest` on `message`, 400). Then written, its first time kept, and
     * `gift-thank-you-note-added` sent with the note as it now is (`edited` once it is a change). The same text again
     * changes nothing and sends nothing. Not the company's doing, so not in its audit log. The gift as it now is, with
     * whether anything changed.
     */
    /**
     * The language a gift's recipient picked with the gift page's switcher, kept on the gift for its later reminders
     * (docs/decisions/0074-gift-page-languages.md). Nothing for an unknown token.
     */
    const pickLanguage = Effect.fn("Gifts.pickLanguage")((token: string, language: GiftLanguage) =>
      repo.pickLanguage(token, language)
    )

    const writeThankYou = Effect.fn("Gifts.writeThankYou")(function* (gift: GiftRecord, text: string) {
      const write = Effect.gen(function* () {
        const locked = Option.getOrUndefined(yield* repo.lockById(gift.id))
        const now = yield* nowDate
        if (locked === undefined || !canWriteThankYouNote(locked, now)) {
          const reason = locked?.status === "claimed" ? "edit-window-over" : "not-claimed"
          return yield* new ThankYouNoteClosed({
            message:
              reason === "not-claimed"
                ? `Gift ${gift.id} is not claimed; a thank-you note is written once it is.`
                : "This thank-you note can no longer be changed: it was written more than 24 hours ago.",
            giftId: gift.id,
            reason
          })
        }
        const judged = thankYouNoteText(text)
        if (!judged.ok) return yield* InvalidRequest.field("message", judged.problem)
        if (locked.thankYouMessage === judged.message) return { gift: locked, changed: false }
        const written = yield* repo.writeThankYou(locked.id, judged.message, now)
        const note = thankYouNoteOf(written) as ThankYouNote
        yield* webhooks.emit({
          companyId: written.companyId,
          environment: written.environment,
          accountId: written.accountId,
          eventType: "gift-thank-you-note-added",
          subject: { giftId: written.id },
          eventData: {
            message: note.message,
            createdAt: formatTimestamp(note.createdAt),
            updatedAt: formatTimestamp(note.updatedAt),
            edited: locked.thankYouMessage !== null
          }
        })
        return { gift: written, changed: true }
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** The gift behind a link, as it is (none for an unknown token); reading it changes nothing. */
    const byToken = Effect.fn("Gifts.byToken")(function* (token: string) {
      return yield* repo.findByToken(token)
    })

    /** The countries a gift can be sent to: every country the catalog prices for. */
    const destinations = Effect.fn("Gifts.destinations")(function* () {
      return [...(yield* pricing.reference()).country.keys()]
    })

    return {
      create,
      get,
      page,
      funnel,
      pageWithRecipients,
      messagesOf,
      update,
      cancel,
      resend,
      expire,
      expireDue,
      handlers,
      linkOf,
      visit,
      choices,
      swapChoices,
      digitalChoices,
      offer,
      undeliverableCountries,
      claim,
      claimByRecipient,
      writeThankYou,
      pickLanguage,
      order,
      byToken,
      destinations,
      destinationsOf
    } as const
  })
}) {}
