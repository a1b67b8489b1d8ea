import { SqlClient } from "@effect/sql"
import { Data, Effect, Either, Option } from "effect"
import { type CardFieldError, type CardInput, validateCard } from "../../domain/checkout/Cards.js"
import { paymentClosed } from "../../domain/checkout/CheckoutMachine.js"
import { paymentsResumeAt } from "../../domain/checkout/PaymentAttempts.js"
import type { CheckoutItemRecord, CheckoutRecord } from "../../domain/checkout/Records.js"
import { Checkouts } from "./Checkouts.js"
import { Events } from "./Events.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { Placement } from "./Placement.js"

/** Why the payment page cannot take a payment: an unknown checkout or wrong token, or its status. */
export type PaymentProblem = "not_found" | "cancelled" | "expired" | "already_paid"

/** What became of a payment submitted on the hosted page; the page renders each. */
export type PaymentOutcome = Data.TaggedEnum<{
  Closed: { readonly problem: PaymentProblem }
  InvalidCard: {
    readonly row: CheckoutRecord
    readonly items: ReadonlyArray<CheckoutItemRecord>
    readonly fieldErrors: ReadonlyArray<CardFieldError>
  }
  Declined: {
    readonly row: CheckoutRecord
    readonly items: ReadonlyArray<CheckoutItemRecord>
    readonly message: string
    /** When this decline was one too many: the checkout takes payments again at this instant. */
    readonly resumesAt: Option.Option<Date>
  }
  /** Too many declined payments: this one was refused before the card was tried. */
  Paused: {
    readonly row: CheckoutRecord
    readonly items: ReadonlyArray<CheckoutItemRecord>
    readonly resumesAt: Date
  }
  Paid: { readonly row: CheckoutRecord; readonly items: ReadonlyArray<CheckoutItemRecord> }
}>
export const PaymentOutcome = Data.taggedEnum<PaymentOutcome>()

export interface PaymentRequest {
  readonly checkoutId: string
  /** The payment token of the page's link. */
  readonly token: string
  readonly card: CardInput
  /** When the form was submitted: the payment window is judged at this instant, not after a wait for a slot. */
  readonly submittedAt: number
}

/**
 * Payments on the hosted page (docs/decisions/0026-hosted-payment-page.md; docs/checkout.md "Placement"): the
 * checkout's row stays locked while the card is charged by the payment provider (`PaymentProvider`, a port), so
 * two submissions cannot both pay; a paid checkout is then placed at once on this instance
 * (`Placement.payThenPlace`), which also bounds the payments in flight. A declined card is recorded in the same
 * transaction, and after too many declines the card is not tried until a wait has
 * passed (src/domain/checkout/PaymentAttempts.ts): the declines are counted under the lock, so concurrent
 * submissions cannot slip past the limit.
 */
export class CheckoutPayments extends Effect.Service<CheckoutPayments>()("CheckoutPayments", {
  dependencies: [Checkouts.Default, Events.Default, Placement.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const checkouts = yield* Checkouts
    const events = yield* Events
    const payments = yield* PaymentProvider
    const placement = yield* Placement

    /** One transaction: the locked checkout, the card checked and charged, the checkout marked paid. */
    const charge = (request: PaymentRequest) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const found = yield* checkouts.forPayment(request.checkoutId, request.token)
          if (Option.isNone(found)) return { outcome: PaymentOutcome.Closed({ problem: "not_found" }) }
          const { row, items } = found.value
          const problem = paymentClosed(row, request.submittedAt)
          if (problem !== undefined) return { outcome: PaymentOutcome.Closed({ problem }) }
          const declines = () => events.countOf(row.id, "checkout.payment_declined")
          const paused = Option.filter(
            paymentsResumeAt(yield* declines()),
            (resumesAt) => resumesAt.getTime() > request.submittedAt
          )
          if (Option.isSome(paused)) return { outcome: PaymentOutcome.Paused({ row, items, resumesAt: paused.value }) }
          const card = validateCard(request.card, new Date(request.submittedAt))
          if (Either.isLeft(card))
            return { outcome: PaymentOutcome.InvalidCard({ row, items, fieldErrors: card.left }) }
          const charged = yield* payments
            .charge({ card: card.right, amount: row.totalAmount, currency: row.currency, reference: row.id })
            .pipe(Effect.either)
          if (Either.isLeft(charged)) {
            yield* checkouts.paymentDeclined(found.value)
            const resumesAt = paymentsResumeAt(yield* declines())
            return { outcome: PaymentOutcome.Declined({ row, items, message: charged.left.message, resumesAt }) }
          }
          // Paid as of the submission, the instant the window was judged at.
          const paid = yield* checkouts.markPaid(found.value, charged.right.chargeId, new Date(request.submittedAt))
          if (Option.isNone(paid)) return yield* Effect.dieMessage(`checkout ${row.id} changed under its lock`)
          return {
            outcome: PaymentOutcome.Paid({ row: paid.value.row, items: paid.value.items }),
            placementJob: Option.some(paid.value.placementJob)
          }
        })
      )

    const pay = Effect.fn("CheckoutPayments.pay")(function* (request: PaymentRequest) {
      const { outcome } = yield* placement.payThenPlace(
        charge(request).pipe(Effect.orDie),
        (charged) => charged.placementJob ?? Option.none()
      )
      if (outcome._tag === "Declined" || outcome._tag === "Paid") yield* events.publish(request.checkoutId)
      return outcome
    })

    return { pay } as const
  })
}) {}
