import type { CheckoutItemStatus, CheckoutStatus } from "./Checkout.js"

/**
 * The checkout's state machine (docs/checkout.md), in one table: for each thing that happens to a checkout,
 * the statuses it may happen in and the statuses it may lead to. The Checkouts service applies a change as a
 * conditional update (`WHERE status IN from`) on the locked row, so a change that the table forbids, or that
 * a concurrent change made stale, updates nothing.
 */
export const checkoutMachine = {
  /** The person paid on the hosted page, within the payment window. */
  pay: { from: ["pending_payment"], to: ["paid"] },
  /** The agent cancelled before payment. */
  cancel: { from: ["pending_payment"], to: ["cancelled"] },
  /** The payment window passed. */
  expire: { from: ["pending_payment"], to: ["expired"] },
  /** Placement starts: one order per item goes to the supplier. */
  startPlacing: { from: ["paid"], to: ["placing"] },
  /** An item the supplier refused is refunded at once; the checkout goes on placing. */
  refundFailedItem: { from: ["placing"], to: ["placing"] },
  /** No item is left pending: every one placed, some, or none. */
  settle: { from: ["placing"], to: ["confirmed", "partially_confirmed", "failed"] },
  /** A placed order is cancelled before it ships, and its item refunded. */
  refundOrder: { from: ["confirmed", "partially_confirmed"], to: ["confirmed", "partially_confirmed"] },
  /** The last placed order was cancelled. */
  refundAll: { from: ["confirmed", "partially_confirmed"], to: ["refunded"] }
} as const satisfies Record<
  string,
  { readonly from: ReadonlyArray<CheckoutStatus>; readonly to: ReadonlyArray<CheckoutStatus> }
>

export type CheckoutEvent = keyof typeof checkoutMachine

/** Each item of a checkout: pending until the supplier places or refuses it; a placed one may be refunded. */
export const itemMachine = {
  place: { from: "pending", to: "placed" },
  fail: { from: "pending", to: "failed" },
  refund: { from: "placed", to: "refunded" }
} as const satisfies Record<string, { readonly from: CheckoutItemStatus; readonly to: CheckoutItemStatus }>

export type ItemEvent = keyof typeof itemMachine

/** Whether `event` may happen to a checkout in `status`. */
export const canApply = (event: CheckoutEvent, status: CheckoutStatus): boolean =>
  (checkoutMachine[event].from as ReadonlyArray<CheckoutStatus>).includes(status)

/** Whether `event` may lead to `status`. */
export const leadsTo = (event: CheckoutEvent, status: CheckoutStatus): boolean =>
  (checkoutMachine[event].to as ReadonlyArray<CheckoutStatus>).includes(status)

/** The status placement settles on once no item is pending; none while one still is. */
export const settledStatus = (
  items: ReadonlyArray<{ readonly status: CheckoutItemStatus }>
): CheckoutStatus | undefined => {
  if (items.some((item) => item.status === "pending")) return undefined
  const placed = items.filter((item) => item.status === "placed").length
  return placed === items.length ? "confirmed" : placed === 0 ? "failed" : "partially_confirmed"
}

/** Why a checkout cannot take a payment at `now`, or none when it can (the payment page's problems). */
export const paymentClosed = (
  checkout: { readonly status: CheckoutStatus; readonly expiresAt: Date },
  now: number
): "cancelled" | "expired" | "already_paid" | undefined => {
  if (checkout.status === "cancelled") return "cancelled"
  if (checkout.status === "expired" || (checkout.status === "pending_payment" && checkout.expiresAt.getTime() <= now))
    return "expired"
  return canApply("pay", checkout.status) ? undefined : "already_paid"
}
