import { Context, Data, type Effect } from "effect"
import type { CardBrand, ValidCard } from "../../domain/checkout/Cards.js"

/**
 * The payment provider: the card processor that charges a checkout's total on the hosted payment page
 * (docs/operations.md, "Payment and fulfillment providers"). A port: `CheckoutPayments` calls it while it
 * holds the checkout's lock; an adapter implements it for one processor. The one shipped is the test-mode
 * simulator (`src/services/simulators/PaymentSimulator.ts`), chosen in src/layers by `PAYMENT_PROVIDER`.
 */

export type DeclineReason = "card_declined" | "insufficient_funds"

/** The processor refused the card. Rendered on the payment page only; the checkout stays `pending_payment`. */
export class PaymentDeclined extends Data.TaggedError("PaymentDeclined")<{
  readonly reason: DeclineReason
  /** One sentence for the person paying. */
  readonly message: string
}> {}

/** A successful charge: what may be kept once the card number is gone. */
export interface Charge {
  /** The processor's id of the charge (the simulator's: `ch_` and 24 hex characters). */
  readonly chargeId: string
  readonly brand: CardBrand
  readonly last4: string
}

export interface ChargeRequest {
  readonly card: ValidCard
  /** Minor units of `currency`; a positive integer. */
  readonly amount: number
  /** ISO 4217, upper case. */
  readonly currency: string
  /** The merchant's reference: the checkout id. */
  readonly reference: string
}

/** A card the processor keeps for later charges (an allowance's): its token, never the number. */
export interface SavedCard {
  /** The processor's token of the saved card (the simulator's: `pm_test_` and an outcome). */
  readonly paymentMethod: string
  readonly brand: CardBrand
  readonly last4: string
}

export interface SavedCardChargeRequest {
  readonly paymentMethod: string
  readonly amount: number
  readonly currency: string
  readonly reference: string
}

export interface PaymentProviderShape {
  /**
   * Charges the card: the charge, or `PaymentDeclined` with a sentence for the person paying. Called once per
   * submitted payment, under the checkout's lock; a checkout is charged at most once (it is then paid).
   * Anything else (the processor unreachable) is a defect: the payment page answers 500 and nothing is paid.
   */
  readonly charge: (request: ChargeRequest) => Effect.Effect<Charge, PaymentDeclined>
  /**
   * Saves a card for later charges without charging it (an allowance's card, src/services/checkout/Allowances.ts):
   * its token, or `PaymentDeclined` when the processor will not keep it. The number goes no further.
   */
  readonly saveCard: (card: ValidCard) => Effect.Effect<SavedCard, PaymentDeclined>
  /** Charges a saved card, as `charge` charges one typed in; called under the checkout's lock. */
  readonly chargeSaved: (request: SavedCardChargeRequest) => Effect.Effect<Charge, PaymentDeclined>
}

export class PaymentProvider extends Context.Tag("PaymentProvider")<PaymentProvider, PaymentProviderShape>() {}
