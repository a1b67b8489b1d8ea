import { randomBytes, timingSafeEqual } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Clock, Context, DateTime, Duration, Effect, Option, Schema } from "effect"
import {
  CHECKOUT_TTL_MINUTES,
  Checkout,
  type CheckoutRequest,
  type EventType,
  Order as OrderSchema,
  type ShippingAddress
} from "../../domain/checkout/Checkout.js"
import {
  type CheckoutEvent,
  canApply,
  checkoutMachine,
  type ItemEvent,
  itemMachine,
  leadsTo,
  settledStatus
} from "../../domain/checkout/CheckoutMachine.js"
import {
  AddressUnverified,
  CheckoutNotFound,
  CheckoutStateConflict,
  CountryMismatch,
  QuoteAlreadyUsed,
  QuoteExpired,
  QuoteNotFound,
  SmsConsentRequired
} from "../../domain/checkout/Errors.js"
import type { CheckoutItemRecord, CheckoutRecord, QuoteRecord } from "../../domain/checkout/Records.js"
import type { OrderRecord } from "../../domain/fulfillment/Orders.js"
import type { User } from "../../domain/identity/Users.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { Addresses } from "../catalog/Addresses.js"
import { Pricing } from "../catalog/Pricing.js"
import { fingerprintOf, KeyTaken, withIdempotency } from "../platform/Idempotency.js"
import { JobKind, Jobs } from "../platform/Jobs.js"
import { OutboundHttp } from "../platform/OutboundHttp.js"
import { nowDate } from "../platform/Time.js"
import { AcpWebhooks } from "./AcpWebhooks.js"
import { AllowancesRepo } from "./AllowancesRepo.js"
import { type CheckoutChange, CheckoutsRepo } from "./CheckoutsRepo.js"
import { Events } from "./Events.js"
import { Notifications } from "./Notifications.js"
import { QuotesRepo } from "./QuotesRepo.js"
import { UcpOrderEvents } from "./UcpOrderEvents.js"
import { WebhookDeliveries } from "./WebhookDeliveries.js"

/**
 * Checkouts (spec "Checkout"; docs/decisions/0025-quotes-and-checkouts.md; docs/checkout.md): one checkout for a cart
 * of quotes, paid by the person on the hosted page, then placed one order per item
 * (src/services/checkout/Placement.ts).
 *
 * Every change starts by locking the checkout's row (`commit`); every status change is a conditional
 * update (`WHERE status IN expected`) in that transaction, which also appends its event (src/services/checkout/Events.ts) and, when the checkout has a `callbackUrl`, queues the signed
 * callback (src/services/checkout/WebhookDeliveries.ts), and the order events of an ACP session's platform
 * (src/services/checkout/AcpWebhooks.ts); the event streams are woken once the transaction has committed.
 */

export const SMS_CONSENT_TEXT =
  "By providing your mobile number you agree to receive order confirmations, receipts and delivery updates " +
  "for this purchase from Ribbon by text message. Message and data rates may apply. Reply STOP to opt out."

/** Placement of a paid checkout (src/services/checkout/Placement.ts). */
export const PlaceCheckout = JobKind.make("checkout.place", Schema.Struct({ checkoutId: Schema.String }), {
  maxAttempts: 10
})

/**
 * The instance that takes a payment places the checkout at once (Placement.payThenPlace); its job becomes
 * ready for every worker only this long after, in case that instance stops first.
 */
export const placementFallbackDelay = Duration.seconds(10)

/** Expiry of an unpaid checkout, at its `expiresAt`. */
export const ExpireCheckout = JobKind.make("checkout.expire", Schema.Struct({ checkoutId: Schema.String }))

/**
 * How a checkout and an order are shown to the agent: in `/v1` responses, and in the events and callbacks,
 * which are the agent API's too. The wiring provides the `/v1` presenter (src/http/checkout/v1.ts), so no
 * service builds an API shape and a v3 presenter can show the same stored order its own way.
 */
export class CheckoutPresenter extends Context.Tag("ribbon/checkout/CheckoutPresenter")<
  CheckoutPresenter,
  {
    readonly checkout: (row: CheckoutRecord, items: ReadonlyArray<CheckoutItemRecord>) => Checkout
    readonly order: (row: OrderRecord, locale: string) => OrderSchema
  }
>() {}

/**
 * An event to record (`recordAll`): the checkout as the change leaves it, its items unless they are to be
 * read, and the order for `order.*`.
 */
interface Recording {
  readonly row: CheckoutRecord
  readonly type: EventType
  readonly items?: ReadonlyArray<CheckoutItemRecord>
  readonly order?: OrderSchema
}

/** What the supplier said of one pending item, for `settleItems`. */
export type ItemOutcome =
  | { readonly _tag: "Placed"; readonly index: number; readonly orderId: string; readonly order: OrderSchema }
  | { readonly _tag: "Failed"; readonly index: number; readonly message: string }

const sameToken = (a: string, b: string) => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

export class Checkouts extends Effect.Service<Checkouts>()("Checkouts", {
  dependencies: [
    AcpWebhooks.Default,
    Addresses.Default,
    AllowancesRepo.Default,
    CheckoutsRepo.Default,
    Events.Default,
    Jobs.Default,
    Notifications.Default,
    Pricing.Default,
    QuotesRepo.Default,
    UcpOrderEvents.Default,
    WebhookDeliveries.Default,
    OutboundHttp.Default
  ],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* CheckoutsRepo
    const quotesRepo = yield* QuotesRepo
    const pricing = yield* Pricing
    const addresses = yield* Addresses
    const events = yield* Events
    const jobs = yield* Jobs
    const notifications = yield* Notifications
    const webhooks = yield* WebhookDeliveries
    const acpWebhooks = yield* AcpWebhooks
    const ucpOrderEvents = yield* UcpOrderEvents
    const outbound = yield* OutboundHttp
    const presenter = yield* CheckoutPresenter
    const allowances = yield* AllowancesRepo

    /**
     * Credits a refund back to the allowance that paid the checkout, if one did (docs/allowances.md), in the
     * refund's transaction.
     */
    const creditAllowance = Effect.fn("Checkouts.creditAllowance")(function* (
      checkoutId: string,
      amount: number,
      reason: string
    ) {
      yield* allowances.credit({ entryId: yield* makeId, checkoutId, amount, reason, at: yield* nowDate })
    })

    const itemRows = Effect.fn("Checkouts.itemRows")((checkoutId: string) => repo.items(checkoutId))

    /** The checkout's row, locked until the transaction ends. */
    const lockRow = (checkoutId: string) =>
      Effect.flatMap(repo.lockById(checkoutId), (row) =>
        Option.isNone(row) ? Effect.dieMessage(`checkout ${checkoutId} vanished`) : Effect.succeed(row.value)
      )

    /**
     * A conditional update in the caller's transaction, as the state machine allows `event`
     * (src/domain/checkout/CheckoutMachine.ts): sets `set` (and `updated_at`) if the checkout's status is one
     * `event` may happen in. The row as it now is, or none when the status was another.
     */
    const transition = Effect.fn("Checkouts.transition")(function* (
      checkoutId: string,
      event: CheckoutEvent,
      set: CheckoutChange = {}
    ) {
      if (set.status !== undefined && !leadsTo(event, set.status)) {
        return yield* Effect.dieMessage(`${event} cannot lead to ${set.status}`)
      }
      return yield* repo.update(checkoutId, checkoutMachine[event].from, set, yield* nowDate)
    })

    /** Moves one item as the item machine allows `event`; whether it moved (a concurrent change may have). */
    const moveItem = Effect.fn("Checkouts.moveItem")(function* (
      checkoutId: string,
      index: number,
      event: ItemEvent,
      set: { readonly orderId?: string; readonly failureReason?: string } = {}
    ) {
      return yield* repo.moveItem(checkoutId, index, itemMachine[event], set)
    })

    /**
     * Appends events in order, in one statement, each carrying its `row` (the checkout as this transaction
     * leaves it at that event) with its items (read unless given), and the order for `order.*`, and queues
     * their callbacks. Call inside the transaction of the change, holding the checkout's row lock (`commit`,
     * `forPayment` or the creating insert): one checkout's events then commit in the order of their ids, so
     * a stream reading "after id n" never misses one that took a lower id but committed later.
     */
    const recordAll = Effect.fn("Checkouts.recordAll")(function* (recordings: ReadonlyArray<Recording>) {
      const built = yield* Effect.forEach(recordings, ({ row, type, items: given, order }) =>
        Effect.gen(function* () {
          const items = given ?? (yield* itemRows(row.id))
          const checkout = presenter.checkout(row, items)
          const encoded = yield* Schema.encode(Checkout)(checkout).pipe(Effect.orDie)
          const data =
            order === undefined
              ? { checkout: encoded }
              : { checkout: encoded, order: Schema.encodeSync(OrderSchema)(order) }
          return { row, items, checkout, type, data }
        })
      )
      const appended = yield* events.append(
        built.map(({ row, type, data }) => ({ type, checkoutId: row.id, userId: row.userId, data }))
      )
      // A session's order events for its agent platform (ACP and UCP order webhooks), in the same transaction.
      const recorded = built.map(({ row, type, items }, n) => ({ id: appended[n]!.id, type, row, items }))
      yield* acpWebhooks.emit(recorded)
      yield* ucpOrderEvents.emit(recorded)
      for (const [n, { row, type, data }] of built.entries()) {
        if (row.callbackUrl === null) continue
        const event = appended[n]!
        yield* webhooks.enqueue({
          url: row.callbackUrl,
          eventId: `evt_${event.id}`,
          eventType: type,
          payload: { id: event.id, type, createdAt: event.createdAt.toISOString(), data }
        })
      }
      return built.map(({ row, items, checkout }) => ({ row, items, checkout }))
    })

    /** One event, as `recordAll` appends it. */
    const record = (row: CheckoutRecord, type: EventType, options: Omit<Recording, "row" | "type"> = {}) =>
      Effect.map(recordAll([{ row, type, ...options }]), ([recorded]) => recorded!)

    /**
     * Runs `change` in a transaction that first locks the checkout's row (every change of a checkout and
     * its items starts there, so changes and their events are serialized per checkout, and locks are always
     * taken checkout first), then wakes the checkout's event streams. `change` gets the locked row.
     */
    const commit = <A, E, R>(checkoutId: string, change: (row: CheckoutRecord) => Effect.Effect<A, E, R>) =>
      sql.withTransaction(Effect.flatMap(lockRow(checkoutId), change)).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.tap(() => events.publish(checkoutId))
      )

    const phone = (path: string, value: string) =>
      addresses.validatePhone(value).pipe(Effect.mapError((e) => InvalidRequest.field(path, e.message)))

    /** The request's own rules, before anything is read: phones, SMS consent, no quote twice, the callback URL. */
    const validateRequest = Effect.fn("Checkouts.validateRequest")(function* (request: CheckoutRequest) {
      const recipientPhone = yield* phone("recipient.phone", request.recipient.phone)
      const smsNumber = request.notify?.sms ?? null
      const sms = smsNumber === null ? null : yield* phone("notify.sms", smsNumber)
      if (sms !== null && request.smsConsent !== true) {
        return yield* new SmsConsentRequired({
          message: "Sending texts needs the user's consent: show them consentText, then retry with smsConsent: true.",
          consentText: SMS_CONSENT_TEXT
        })
      }
      const seen = new Set<string>()
      for (const [index, { quoteId }] of request.items.entries()) {
        if (seen.has(quoteId))
          return yield* InvalidRequest.field(`items[${index}].quoteId`, "The same quote appears twice; use quantity")
        seen.add(quoteId)
      }
      // Last, as it waits on DNS: the rules every delivery applies, where the host resolves included, so a
      // URL no callback could reach is a 400 now rather than a failed delivery later.
      if (request.callbackUrl != null) yield* outbound.screen("callbackUrl", request.callbackUrl)
      return { recipientPhone, sms }
    })

    /**
     * The buyer's quotes in the request's order, unused and unexpired, for one country. A quote that already
     * backs a checkout may back this very request's (a replay): `withIdempotency` looks the key up on the 409.
     */
    const loadQuotes = Effect.fn("Checkouts.loadQuotes")(function* (
      buyer: User,
      request: CheckoutRequest,
      now: number
    ) {
      const quoteIds = request.items.map((item) => item.quoteId)
      const quotes = yield* quotesRepo.findManyForUser(quoteIds, buyer.id)
      const byId = new Map(quotes.map((quote) => [quote.id, quote]))
      const ordered: Array<QuoteRecord> = []
      for (const id of quoteIds) {
        const quote = byId.get(id)
        if (quote === undefined) return yield* new QuoteNotFound({ message: `No quote ${id}.`, quoteId: id })
        ordered.push(quote)
      }
      for (const quote of ordered) {
        if (quote.checkoutId !== null) {
          return yield* new QuoteAlreadyUsed({
            message: `Quote ${quote.id} already backs another checkout; create a new quote.`,
            quoteId: quote.id
          })
        }
        if (quote.expiresAt.getTime() <= now) {
          return yield* new QuoteExpired({
            message: `Quote ${quote.id} expired at ${quote.expiresAt.toISOString()}; create a new quote.`,
            quoteId: quote.id
          })
        }
      }
      const country = ordered[0]!.countryCode
      if (ordered.some((quote) => quote.countryCode !== country) || request.shippingAddress.countryCode !== country) {
        return yield* new CountryMismatch({
          message: `Every quote and shippingAddress.countryCode must be for one country (the quotes are for ${[
            ...new Set(ordered.map((quote) => quote.countryCode))
          ].join(", ")}; the address is in ${request.shippingAddress.countryCode}).`
        })
      }
      return ordered
    })

    /** The address the items ship to: verified when anything ships, the country alone otherwise. */
    const shippingAddressFor = Effect.fn("Checkouts.shippingAddressFor")(function* (
      request: CheckoutRequest,
      shippingRequired: boolean
    ) {
      if (!shippingRequired) return { countryCode: request.shippingAddress.countryCode } as ShippingAddress
      const validation = yield* addresses.validate(request.shippingAddress)
      if (validation.result !== "verified") {
        return yield* new AddressUnverified({ message: validation.message, issues: validation.issues })
      }
      return validation.address
    })

    /** The checkout and its items, as they will be inserted: pure. */
    const build = (
      buyer: User,
      request: CheckoutRequest,
      quotes: ReadonlyArray<QuoteRecord>,
      made: {
        readonly id: string
        readonly now: number
        readonly locale: string
        readonly address: ShippingAddress
        readonly recipientPhone: string
        readonly sms: string | null
        readonly requestHash: string | null
      }
    ) => {
      const items: Array<CheckoutItemRecord> = quotes.map((quote, index) => {
        const quantity = request.items[index]!.quantity ?? 1
        return {
          checkoutId: made.id,
          index,
          quoteId: quote.id,
          variantId: quote.variantId,
          productId: quote.productId,
          productTitle: quote.productTitle,
          variantTitle: quote.variantTitle,
          imageUrl: quote.imageUrl,
          quantity,
          unitAmount: quote.totalAmount,
          amount: quantity * quote.totalAmount,
          itemAmount: quantity * quote.itemAmount,
          shippingAmount: quantity * quote.shippingAmount,
          dutiesAmount: quantity * quote.dutiesAmount,
          serviceFeeAmount: quantity * quote.serviceFeeAmount,
          shippingRequired: quote.shippingRequired,
          status: "pending",
          orderId: null,
          failureReason: null
        }
      })
      const created = new Date(made.now)
      const row: CheckoutRecord = {
        id: made.id,
        userId: buyer.id,
        status: "pending_payment",
        countryCode: quotes[0]!.countryCode,
        currency: quotes[0]!.currency,
        locale: made.locale,
        totalAmount: items.reduce((sum, item) => sum + item.amount, 0),
        refundedAmount: 0,
        shippingRequired: quotes.some((quote) => quote.shippingRequired),
        recipient: { ...request.recipient, phone: made.recipientPhone },
        shippingAddress: made.address,
        // `notify.email` defaults to the buyer's e-mail; null turns e-mail off.
        notifyEmail: request.notify?.email === undefined ? buyer.email : request.notify.email,
        notifySms: made.sms,
        smsConsent: request.smsConsent === true,
        callbackUrl: request.callbackUrl ?? null,
        idempotencyKey: request.idempotencyKey ?? null,
        requestHash: made.requestHash,
        paymentToken: randomBytes(32).toString("base64url"),
        chargeId: null,
        failureReason: null,
        expiresAt: new Date(made.now + CHECKOUT_TTL_MINUTES * 60_000),
        paidAt: null,
        createdAt: created,
        updatedAt: created
      }
      return { row, items }
    }

    /**
     * Inserts the checkout, claims its quotes and queues its expiry, in the caller's transaction. `KeyTaken`
     * when a concurrent request inserted a checkout with the same idempotency key first.
     */
    const insert = Effect.fn("Checkouts.insert")(function* (
      row: CheckoutRecord,
      items: ReadonlyArray<CheckoutItemRecord>
    ) {
      if (!(yield* repo.insert(row))) return yield* new KeyTaken()
      // Claims the quotes; a concurrent checkout that took one first leaves fewer rows claimed.
      const quoteIds = items.map((item) => item.quoteId)
      const used = yield* quotesRepo.claim(quoteIds, row.id, row.createdAt)
      if (used.length !== quoteIds.length) {
        const taken = quoteIds.find((quoteId) => !used.includes(quoteId))!
        return yield* new QuoteAlreadyUsed({
          message: `Quote ${taken} already backs another checkout; create a new quote.`,
          quoteId: taken
        })
      }
      yield* repo.insertItems(items)
      yield* record(row, "checkout.created", { items })
      yield* jobs.enqueue(
        ExpireCheckout,
        { checkoutId: row.id },
        { key: row.id, runAt: DateTime.unsafeFromDate(row.expiresAt) }
      )
    })

    /**
     * Creates a checkout for the user's quotes (spec "Checkout" rules; docs/decisions/0025-quotes-and-checkouts.md,
     * docs/decisions/0035-idempotency.md).
     */
    const create = Effect.fn("Checkouts.create")(function* (buyer: User, request: CheckoutRequest) {
      const { recipientPhone, sms } = yield* validateRequest(request)
      const requestHash = request.idempotencyKey == null ? null : fingerprintOf(request)
      /** The checkout this user already made with the idempotency key, if any. */
      const byKey = Effect.gen(function* () {
        if (request.idempotencyKey == null) return Option.none<CheckoutRecord>()
        return yield* repo.findByKey(buyer.id, request.idempotencyKey)
      })
      const made = yield* withIdempotency(
        {
          scope: buyer.id,
          key: request.idempotencyKey ?? null,
          fingerprint: requestHash ?? "",
          noun: "checkout",
          find: Effect.flatMap(
            byKey,
            Effect.transposeMapOption((existing) =>
              Effect.map(itemRows(existing.id), (items) => ({
                fingerprint: existing.requestHash,
                result: { row: existing, items }
              }))
            )
          )
        },
        (claimKey) =>
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const quotes = yield* loadQuotes(buyer, request, now)
            const shippingRequired = quotes.some((quote) => quote.shippingRequired)
            const address = yield* shippingAddressFor(request, shippingRequired)
            const reference = yield* pricing.reference()
            const locale = reference.country.get(quotes[0]!.countryCode)?.locale ?? "en-US"
            const id = yield* makeId
            const { row, items } = build(buyer, request, quotes, {
              id,
              now,
              locale,
              address,
              recipientPhone,
              sms,
              requestHash
            })
            yield* sql
              .withTransaction(Effect.zipRight(claimKey, insert(row, items)))
              .pipe(Effect.catchTag("SqlError", Effect.die))
            yield* events.publish(id)
            return { row, items }
          })
      )
      return { ...made.result, replayed: made.replayed }
    })

    /** The user's checkout (another user's is not found). */
    const get = Effect.fn("Checkouts.get")(function* (userId: string, checkoutId: string) {
      const row = yield* repo.findById(checkoutId)
      if (Option.isNone(row) || row.value.userId !== userId) {
        return yield* new CheckoutNotFound({ message: `No checkout ${checkoutId}.`, checkoutId })
      }
      return { row: row.value, items: yield* itemRows(checkoutId) }
    })

    /** Cancels an unpaid checkout. */
    const cancel = Effect.fn("Checkouts.cancel")(function* (userId: string, checkoutId: string) {
      yield* get(userId, checkoutId)
      const changed = yield* commit(checkoutId, () =>
        Effect.gen(function* () {
          const cancelled = yield* transition(checkoutId, "cancel", { status: "cancelled" })
          if (Option.isNone(cancelled)) return false
          yield* record(cancelled.value, "checkout.cancelled")
          return true
        })
      )
      if (!changed) {
        // Read again: the status that made the update miss, not the one seen before it.
        const { status } = (yield* get(userId, checkoutId)).row
        return yield* new CheckoutStateConflict({
          message: `A ${status} checkout cannot be cancelled; only one awaiting payment can.`,
          checkoutStatus: status
        })
      }
      return yield* get(userId, checkoutId)
    })

    /** Expires an unpaid checkout whose payment window has passed (the `checkout.expire` job). */
    const expire = Effect.fn("Checkouts.expire")(function* (checkoutId: string) {
      yield* commit(checkoutId, (row) =>
        Effect.gen(function* () {
          if (row.expiresAt.getTime() > (yield* Clock.currentTimeMillis)) return
          const expired = yield* transition(checkoutId, "expire", { status: "expired" })
          if (Option.isSome(expired)) yield* record(expired.value, "checkout.expired")
        })
      )
    })

    /**
     * The checkout a payment-page token opens, locked for update when inside a transaction. None for an
     * unknown checkout or a wrong token (the page never says which).
     */
    const forPayment = Effect.fn("Checkouts.forPayment")(function* (checkoutId: string, token: string) {
      const row = yield* repo.lockById(checkoutId)
      if (Option.isNone(row) || !sameToken(row.value.paymentToken, token)) return Option.none()
      return Option.some({ row: row.value, items: yield* itemRows(checkoutId) })
    })

    /**
     * Records a refused card (the checkout stays `pending_payment`), inside the caller's transaction, on the
     * checkout as `forPayment` locked it; the caller wakes the event streams once it has committed. Every
     * decline is an event: the limit on declined payments (src/domain/checkout/PaymentAttempts.ts) keeps
     * them few, and counts them.
     */
    const paymentDeclined = Effect.fn("Checkouts.paymentDeclined")(function* (locked: {
      readonly row: CheckoutRecord
      readonly items: ReadonlyArray<CheckoutItemRecord>
    }) {
      yield* record(locked.row, "checkout.payment_declined", { items: locked.items })
    })

    /**
     * Marks a checkout paid and queues its placement, if it is still awaiting payment within its window at
     * `now` (the payment's submission, when the page judged the window): the paid checkout and its placement
     * job, or none. Runs inside the caller's transaction, on the checkout as `forPayment` locked it (held
     * while the card is charged).
     */
    const markPaid = Effect.fn("Checkouts.markPaid")(function* (
      locked: { readonly row: CheckoutRecord; readonly items: ReadonlyArray<CheckoutItemRecord> },
      chargeId: string,
      now: Date
    ) {
      const checkoutId = locked.row.id
      const row = yield* repo.markPaid(checkoutId, checkoutMachine.pay.from, chargeId, now)
      if (Option.isNone(row)) return Option.none()
      const paid = yield* record(row.value, "checkout.paid", { items: locked.items })
      yield* notifications.receipt(paid.row, paid.items)
      const placementJob = yield* jobs.enqueue(
        PlaceCheckout,
        { checkoutId },
        { key: checkoutId, delay: placementFallbackDelay }
      )
      return Option.some({ ...paid, placementJob })
    })

    /**
     * Starts placing a paid checkout (`startPlacing`), or resumes one already placing: the checkout and its
     * items, or none when it is neither paid nor placing.
     */
    const startPlacing = Effect.fn("Checkouts.startPlacing")(function* (checkoutId: string) {
      return yield* commit(checkoutId, (row) =>
        Effect.gen(function* () {
          if (row.status === "placing") return Option.some({ row, items: yield* itemRows(checkoutId) })
          const placing = yield* transition(checkoutId, "startPlacing", { status: "placing" })
          if (Option.isNone(placing)) return Option.none()
          return Option.some(yield* record(placing.value, "checkout.placing"))
        })
      )
    })

    /**
     * Records what the supplier said of a placing checkout's items in one transaction: each placed item with
     * its order (and `onPlaced` with the placed orders, in the same transaction), each refused item failed
     * and refunded, an event each; then, when no item is left pending, the final status (`settle`) and its
     * notifications. The events are appended together, in that order. The settled checkout, or none while an
     * item is still pending (or the checkout was not placing).
     */
    const settleItems = Effect.fn("Checkouts.settleItems")(function* (
      checkoutId: string,
      outcomes: ReadonlyArray<ItemOutcome>,
      onPlaced: (orderIds: ReadonlyArray<string>) => Effect.Effect<void>
    ) {
      return yield* commit(checkoutId, (locked) =>
        Effect.gen(function* () {
          if (locked.status !== "placing") return Option.none<CheckoutRecord>()
          let current = locked
          // Read once under the lock; each move returns its item, which replaces the one read.
          let items = yield* itemRows(checkoutId)
          const moved = (item: CheckoutItemRecord) => {
            items = items.map((each) => (each.index === item.index ? item : each))
          }
          const recordings: Array<Recording> = []
          const placedOrders: Array<string> = []
          for (const outcome of outcomes) {
            if (outcome._tag === "Placed") {
              const placed = yield* moveItem(checkoutId, outcome.index, "place", { orderId: outcome.orderId })
              if (Option.isNone(placed)) continue
              moved(placed.value)
              recordings.push({ row: current, type: "checkout.item_placed", items, order: outcome.order })
              placedOrders.push(outcome.orderId)
              continue
            }
            const failed = yield* moveItem(checkoutId, outcome.index, "fail", { failureReason: outcome.message })
            if (Option.isNone(failed)) continue
            moved(failed.value)
            // A failed item is refunded straight away (docs/decisions/0025-quotes-and-checkouts.md).
            const refunded = yield* transition(checkoutId, "refundFailedItem", {
              refundedAmount: current.refundedAmount + failed.value.amount
            })
            current = Option.getOrThrow(refunded)
            yield* creditAllowance(checkoutId, failed.value.amount, "item_failed")
            recordings.push({ row: current, type: "checkout.item_failed", items })
          }
          if (placedOrders.length > 0) yield* onPlaced(placedOrders)
          const status = settledStatus(items)
          if (status !== undefined) {
            const reasons = [
              ...new Set(items.flatMap((item) => (item.failureReason === null ? [] : [item.failureReason])))
            ]
            const final = yield* transition(checkoutId, "settle", {
              status,
              failureReason: reasons.length === 0 ? null : reasons.join(" ")
            })
            recordings.push({ row: Option.getOrThrow(final), type: `checkout.${status}` as EventType, items })
          }
          if (recordings.length === 0) return Option.none<CheckoutRecord>()
          const recorded = yield* recordAll(recordings)
          if (status === undefined) return Option.none<CheckoutRecord>()
          const settled = recorded[recorded.length - 1]!
          yield* notifications.outcome(settled.row, settled.items)
          return Option.some(settled.row)
        })
      )
    })

    /**
     * Cancels a placed order and refunds its item (`refundOrder`), once placement has settled: `cancelOrder`
     * cancels it at the supplier, under the checkout's lock. The checkout is `refunded` once no placed item
     * is left. While the checkout is still placing its item may not be marked placed yet: 409.
     */
    const refundOrder = <E, R>(checkoutId: string, cancelOrder: Effect.Effect<OrderRecord, E, R>) =>
      commit(checkoutId, (checkout) =>
        Effect.gen(function* () {
          if (!canApply("refundOrder", checkout.status)) {
            return yield* new CheckoutStateConflict({
              message: `The checkout is ${checkout.status}: its orders can be cancelled once it is confirmed.`,
              checkoutStatus: checkout.status
            })
          }
          const cancelled = yield* cancelOrder
          const refunded = yield* moveItem(checkoutId, cancelled.itemIndex, "refund")
          if (Option.isNone(refunded)) return yield* Effect.dieMessage(`order ${cancelled.id} has no placed item`)
          // The row is locked, so its status is still the one checked above: these updates cannot miss.
          const withRefund = yield* transition(checkoutId, "refundOrder", {
            refundedAmount: checkout.refundedAmount + refunded.value.amount
          })
          yield* creditAllowance(checkoutId, refunded.value.amount, "order_cancelled")
          const order = presenter.order(cancelled, checkout.locale)
          const { items } = yield* record(Option.getOrThrow(withRefund), "order.cancelled", { order })
          if (items.every((item) => item.status !== "placed")) {
            const allRefunded = yield* transition(checkoutId, "refundAll", { status: "refunded" })
            yield* record(Option.getOrThrow(allRefunded), "checkout.refunded", { items })
          }
          return cancelled
        })
      ).pipe(Effect.withSpan("Checkouts.refundOrder"))

    /** The locales of checkouts, by id (an order's amounts are shown in its checkout's). */
    const localesOf = Effect.fn("Checkouts.localesOf")(function* (checkoutIds: ReadonlyArray<string>) {
      if (checkoutIds.length === 0) return new Map<string, string>()
      return yield* repo.localesOf(checkoutIds)
    })

    return {
      create,
      get,
      cancel,
      expire,
      forPayment,
      paymentDeclined,
      markPaid,
      startPlacing,
      settleItems,
      refundOrder,
      localesOf,
      record,
      commit,
      itemRows
    } as const
  })
}) {}
