import { Effect, Layer } from "effect"
import { Checkout, CheckoutItem, type CheckoutStatus, Order } from "../../domain/checkout/Checkout.js"
import type { CheckoutItemRecord, CheckoutRecord } from "../../domain/checkout/Records.js"
import type { OrderRecord } from "../../domain/fulfillment/Orders.js"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { formatMoney } from "../../services/catalog/Pricing.js"
import { CheckoutPresenter } from "../../services/checkout/Checkouts.js"

/**
 * The agent API's (`/v1`) shapes of the checkout context's records: the Checkout and Order resources, which
 * its responses, events and callbacks all carry (`CheckoutPresenterV1`). A stored order can be presented on
 * another line (v3) by another presenter.
 */

/** What the agent should do next, in plain words, per status. */
export const nextStepFor = (status: CheckoutStatus): string => {
  switch (status) {
    case "pending_payment":
      return "Give paymentUrl to the user to pay on Ribbon's hosted page; then poll statusUrl or stream eventsUrl."
    case "paid":
    case "placing":
      return "Payment received; the orders are being placed. Keep polling statusUrl or streaming eventsUrl."
    case "confirmed":
      return "Every item is ordered. Tell the user; track each order with GET /v1/orders/{orderId}."
    case "partially_confirmed":
      return "Some items are ordered; the failed ones were refunded (refundedAmount). Tell the user which."
    case "failed":
      return "No item could be ordered and the payment was refunded. Tell the user; a new quote may work later."
    case "refunded":
      return "Every order was cancelled and refunded. Nothing else to do."
    case "expired":
      return "The payment window passed. Create new quotes and a new checkout if the user still wants to buy."
    case "cancelled":
      return "The checkout was cancelled before payment. Nothing was charged."
  }
}

const money = (row: CheckoutRecord, amount: number) => formatMoney(amount, row.currency, row.locale).display

/** The Checkout resource of a stored checkout and its items, with links under `baseUrl`. */
export const checkoutV1 = (baseUrl: string, row: CheckoutRecord, items: ReadonlyArray<CheckoutItemRecord>): Checkout =>
  Checkout.make({
    id: row.id,
    status: row.status,
    items: items.map((item) =>
      CheckoutItem.make({
        index: item.index,
        quoteId: item.quoteId,
        variantId: item.variantId,
        productTitle: item.productTitle,
        variantTitle: item.variantTitle,
        imageUrl: item.imageUrl,
        amount: item.amount,
        amountDisplay: money(row, item.amount),
        status: item.status,
        orderId: item.orderId,
        failureReason: item.failureReason
      })
    ),
    paymentUrl: row.status === "pending_payment" ? `${baseUrl}/pay/${row.id}?t=${row.paymentToken}` : null,
    expiresAt: row.expiresAt.toISOString(),
    totalAmount: row.totalAmount,
    currency: row.currency,
    totalDisplay: money(row, row.totalAmount),
    refundedAmount: row.refundedAmount,
    orderIds: items.flatMap((item) => (item.orderId === null ? [] : [item.orderId])),
    failureReason: row.failureReason,
    statusUrl: `${baseUrl}/v1/checkouts/${row.id}`,
    eventsUrl: `${baseUrl}/v1/checkouts/${row.id}/events`,
    nextStep: nextStepFor(row.status),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString()
  })

/** The Order resource of a booked row, its amount shown in `locale` (its checkout's). */
export const orderV1 = (row: OrderRecord, locale: string): Order =>
  Order.make({
    id: row.id,
    checkoutId: row.checkoutId,
    itemIndex: row.itemIndex,
    status: row.status,
    productId: row.productId,
    productTitle: row.productTitle,
    variantId: row.variantId,
    variantTitle: row.variantTitle,
    quantity: row.quantity,
    amount: row.amount,
    currency: row.currency,
    amountDisplay: formatMoney(row.amount, row.currency, locale).display,
    carrier: row.carrier,
    trackingNumber: row.trackingNumber,
    trackingUrl: row.trackingUrl,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString()
  })

/** Checkouts and orders as `/v1` shows them (responses, events, callbacks), links under the public URL. */
export const CheckoutPresenterV1 = Layer.effect(
  CheckoutPresenter,
  Effect.map(PublicUrl, (baseUrl) => ({
    checkout: (row: CheckoutRecord, items: ReadonlyArray<CheckoutItemRecord>) => checkoutV1(baseUrl, row, items),
    order: orderV1
  }))
)
