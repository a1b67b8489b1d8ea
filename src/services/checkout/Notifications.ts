import { Clock, Context, Effect, Option } from "effect"
import type { CheckoutItemStatus, CheckoutStatus, Order } from "../../domain/checkout/Checkout.js"
import { NotificationRow } from "../../domain/checkout/Notifications.js"
import { makeId } from "../../domain/platform/Ids.js"
import { formatMoney } from "../catalog/Pricing.js"
import { Users } from "../identity/Users.js"
import { type GiftMessage, NotificationsRepo } from "./NotificationsRepo.js"

/**
 * The notifications outbox (docs/decisions/0028-next-step-and-notifications.md; docs/checkout.md): receipts,
 * confirmations and shipping updates, written in the transaction of the change they announce; a mailer would send from
 * here.
 *
 * Channels: e-mail to the checkout's `notify.email` (default: the buyer's e-mail; null turns it off) and
 * SMS to `notify.sms` (only with consent). The payment receipt follows the buyer's `receiptPreference`
 * (`email`, `sms`, `both` or `none`) among those channels; confirmations and shipping updates go to every
 * channel the checkout has. A message is written once per checkout, kind and channel.
 */

export interface NotifyTargets {
  readonly id: string
  readonly userId: string
  readonly notifyEmail: string | null
  readonly notifySms: string | null
}

/** What a message says about a checkout (a checkout row with its items fits). */
export interface CheckoutSummary {
  readonly id: string
  readonly status: CheckoutStatus
  readonly currency: string
  readonly locale: string
  readonly totalAmount: number
  readonly refundedAmount: number
}

export interface ItemSummary {
  readonly quantity: number
  readonly productTitle: string
  readonly variantTitle: string
  readonly amount: number
  readonly status: CheckoutItemStatus
}

export { NotificationRow }

/**
 * Whether this server runs in production (NODE_ENV): there the dashboard's outbox shows only for sandbox companies.
 * Provided from AppConfig at start; elsewhere (tests) not production.
 */
export class ProductionServer extends Context.Reference<ProductionServer>()("ProductionServer", {
  defaultValue: () => false
}) {}

/** Whether a company's outbox may be shown: a sandbox company, or any company outside production. */
export const outboxShown = (company: { readonly live: boolean }, production: boolean) => !company.live || !production

const money = (checkout: CheckoutSummary, amount: number) =>
  formatMoney(amount, checkout.currency, checkout.locale).display

const itemLines = (checkout: CheckoutSummary, items: ReadonlyArray<ItemSummary>) =>
  items.map(
    (item) => `- ${item.quantity} × ${item.productTitle} (${item.variantTitle}): ${money(checkout, item.amount)}`
  )

export class Notifications extends Effect.Service<Notifications>()("Notifications", {
  dependencies: [Users.Default, NotificationsRepo.Default],
  effect: Effect.gen(function* () {
    const repo = yield* NotificationsRepo
    const users = yield* Users

    const write = Effect.fn("Notifications.write")(function* (
      target: NotifyTargets,
      kind: string,
      channels: ReadonlyArray<"email" | "sms">,
      subject: string,
      body: string
    ) {
      const createdAt = new Date(yield* Clock.currentTimeMillis)
      for (const channel of channels) {
        const recipient = channel === "email" ? target.notifyEmail : target.notifySms
        if (recipient === null) continue
        yield* repo.insert({
          id: yield* makeId,
          userId: target.userId,
          checkoutId: target.id,
          kind,
          channel,
          recipient,
          subject,
          body: channel === "sms" ? subject : body,
          createdAt
        })
      }
    })

    /** The payment receipt, on the channels the buyer's `receiptPreference` picks. */
    const receipt = Effect.fn("Notifications.receipt")(function* (
      checkout: NotifyTargets & CheckoutSummary,
      items: ReadonlyArray<ItemSummary>
    ) {
      const preference = Option.getOrElse(yield* users.receiptPreference(checkout.userId), () => "email" as const)
      const channels = preference === "both" ? (["email", "sms"] as const) : preference === "none" ? [] : [preference]
      const total = money(checkout, checkout.totalAmount)
      yield* write(
        checkout,
        "receipt",
        channels as ReadonlyArray<"email" | "sms">,
        `Ribbon receipt: ${total} paid`,
        [`You paid ${total} for:`, ...itemLines(checkout, items), `Checkout ${checkout.id}`].join("\n")
      )
    })

    /** The outcome of placement: confirmed, partially confirmed or failed. */
    const outcome = Effect.fn("Notifications.outcome")(function* (
      checkout: NotifyTargets & CheckoutSummary,
      items: ReadonlyArray<ItemSummary>
    ) {
      const subject =
        checkout.status === "confirmed"
          ? "Your Ribbon order is confirmed"
          : checkout.status === "partially_confirmed"
            ? "Part of your Ribbon order is confirmed"
            : "Your Ribbon order could not be placed"
      const refund = checkout.refundedAmount > 0 ? [`Refunded: ${money(checkout, checkout.refundedAmount)}`] : []
      yield* write(
        checkout,
        "confirmation",
        ["email", "sms"],
        subject,
        [
          subject,
          ...itemLines(
            checkout,
            items.filter((item) => item.status === "placed")
          ),
          ...refund
        ].join("\n")
      )
    })

    /** An order shipped, with its tracking. */
    const shipped = Effect.fn("Notifications.shipped")(function* (target: NotifyTargets, order: Order) {
      yield* write(
        target,
        `shipped:${order.id}`,
        ["email", "sms"],
        `${order.productTitle} has shipped`,
        `${order.productTitle} shipped with ${order.carrier ?? "the carrier"}: ${order.trackingUrl ?? ""}`
      )
    })

    /**
     * A gift message (`gift.sent`, `gift.reminder`, `gift.resent`) to the gift's recipient on `channel`: the company
     * context's gifts write theirs to the same outbox, once per gift and kind, but for `gift.resent` (each time).
     */
    const gift = Effect.fn("Notifications.gift")(function* (message: GiftMessage) {
      yield* repo.insertGift(message, yield* makeId, new Date(yield* Clock.currentTimeMillis))
    })

    /**
     * An invitation to join a company, by e-mail, with its link: who invites, to which company, in which role,
     * until when. Written in the transaction that creates the invitation.
     */
    const invitation = Effect.fn("Notifications.invitation")(function* (invitation: {
      readonly invitationId: string
      readonly email: string
      readonly companyName: string
      readonly inviterName: string
      readonly role: string
      readonly link: string
      readonly expiresAt: Date
    }) {
      const subject = `${invitation.inviterName} invites you to ${invitation.companyName} on Ribbon`
      const body = [
        `${invitation.inviterName} invites you to join ${invitation.companyName} on Ribbon as ${invitation.role}.`,
        `Accept the invitation: ${invitation.link}`,
        `The link is valid until ${invitation.expiresAt.toISOString()}. If you did not expect it, ignore this e-mail.`
      ].join("\n")
      yield* repo.insertInvitation(
        { invitationId: invitation.invitationId, recipient: invitation.email, subject, body },
        yield* makeId,
        new Date(yield* Clock.currentTimeMillis)
      )
    })

    /** The notifications of a checkout, oldest first (tests and support read the outbox). */
    const forCheckout = Effect.fn("Notifications.forCheckout")(function* (checkoutId: string) {
      return yield* repo.forCheckout(checkoutId)
    })

    /**
     * A page (from 1) of the messages that concern a company (invitations to it, its gifts' messages), newest
     * first: the dashboard's outbox (docs/dashboard.md "Outbox").
     */
    const forCompany = Effect.fn("Notifications.forCompany")(function* (companyId: string, page: number, size: number) {
      return yield* repo.forCompany(companyId, page, size)
    })

    /**
     * The newest `limit` messages of the whole outbox, newest first: checkouts' receipts, confirmations and shipping
     * updates with the companies' messages (`ribbon outbox`, docs/dashboard.md "Outbox").
     */
    const newest = Effect.fn("Notifications.newest")(function* (limit: number) {
      return yield* repo.newest(limit)
    })

    /** The messages of a gift, oldest first: what its recipient was sent, and when (the dashboard's gift page). */
    const forGift = Effect.fn("Notifications.forGift")(function* (giftId: string) {
      return yield* repo.forGift(giftId)
    })

    return { receipt, outcome, shipped, gift, invitation, forCheckout, forCompany, newest, forGift } as const
  })
}) {}
