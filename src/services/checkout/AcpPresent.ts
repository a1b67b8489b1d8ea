import {
  ACP_VERSION,
  type AcpCheckoutSession,
  type AcpExtensionDeclaration,
  type AcpFulfillmentOption,
  type AcpLineItem,
  type AcpMessage,
  type AcpSelectedFulfillmentOption,
  type AcpTotal,
  asksForGift,
  DIGITAL_OPTION_ID,
  GIFT_EXTENDS,
  GIFT_EXTENSION_NAME,
  GIFT_SCHEMA_PATH,
  SHIPPING_OPTION_ID
} from "../../domain/checkout/Acp.js"
import { acpOrderOf, hasAcpOrder } from "../../domain/checkout/AcpOrders.js"
import { cardHandler } from "../../domain/checkout/AcpPayments.js"
import type { QuoteRecord } from "../../domain/checkout/Records.js"
import type { AcpSessionView } from "./AcpSessions.js"

/**
 * How `/acp` shows a session (docs/decisions/0078-agentic-commerce-protocol.md): the protocol's CheckoutSession, its
 * amounts those of the lines' quotes (each line's item price and duties; the session's shipping and service fee),
 * so the session's total is what the hosted page charges.
 */

const lineId = (variantId: string) => `li_${variantId}`

interface Priced {
  readonly variantId: string
  readonly quantity: number
  readonly quote: QuoteRecord
}

const sum = (priced: ReadonlyArray<Priced>, amount: (quote: QuoteRecord) => number) =>
  priced.reduce((total, { quantity, quote }) => total + quantity * amount(quote), 0)

/** Ribbon's gift extension as a session that declares it shows it active (the discovery document names it too). */
export const giftExtension = (baseUrl: string): AcpExtensionDeclaration => ({
  name: GIFT_EXTENSION_NAME,
  extends: [...GIFT_EXTENDS],
  schema: `${baseUrl}${GIFT_SCHEMA_PATH}`
})

/** The protocol's session object of `view`; `paymentUrl` is the checkout's hosted payment page. */
export const presentSession = (
  baseUrl: string,
  view: AcpSessionView,
  paymentUrl: string | null
): AcpCheckoutSession => {
  const { row, checkout, status } = view
  const priced: Array<Priced> = row.lines.flatMap((line, index) => {
    const quote = view.quotes[index]
    return quote === undefined ? [] : [{ variantId: line.variantId, quantity: line.quantity, quote }]
  })
  const currency = (priced[0]?.quote.currency ?? row.currency).toLowerCase()
  const lineItems: Array<AcpLineItem> = row.lines.map((line, index) => {
    const quote = view.quotes[index]
    const outOfStock = row.issues.some(
      (issue) => issue.code === "out_of_stock" && issue.param === `$.line_items[${index}]`
    )
    if (quote === undefined) {
      return {
        id: lineId(line.variantId),
        item: { id: line.variantId },
        quantity: line.quantity,
        variant_id: line.variantId,
        ...(outOfStock ? { availability_status: "out_of_stock" as const } : {}),
        totals: []
      }
    }
    const base = line.quantity * quote.itemAmount
    const tax = line.quantity * quote.dutiesAmount
    return {
      id: lineId(line.variantId),
      item: { id: line.variantId },
      quantity: line.quantity,
      name: `${quote.productTitle} (${quote.variantTitle})`,
      ...(quote.imageUrl?.startsWith("http") === true ? { images: [quote.imageUrl] } : {}),
      unit_amount: quote.itemAmount,
      product_id: quote.productId,
      variant_id: quote.variantId,
      availability_status: "in_stock" as const,
      totals: [
        { type: "items_base_amount", display_text: "Item(s)", amount: base },
        { type: "subtotal", display_text: "Subtotal", amount: base },
        { type: "tax", display_text: "Duties and taxes", amount: tax },
        { type: "total", display_text: "Total", amount: base + tax }
      ]
    }
  })
  const items = sum(priced, (quote) => quote.itemAmount)
  const shipping = sum(priced, (quote) => quote.shippingAmount)
  const duties = sum(priced, (quote) => quote.dutiesAmount)
  const fee = sum(priced, (quote) => quote.serviceFeeAmount)
  const totals: Array<AcpTotal> = [
    { type: "items_base_amount", display_text: "Item(s) total", amount: items },
    { type: "subtotal", display_text: "Subtotal", amount: items },
    { type: "fulfillment", display_text: "Shipping", amount: shipping },
    { type: "tax", display_text: "Duties and taxes", amount: duties },
    { type: "fee", display_text: "Service fee", amount: fee },
    { type: "total", display_text: "Total", amount: sum(priced, (quote) => quote.totalAmount) }
  ]
  const shipped = priced.filter(({ quote }) => quote.shippingRequired)
  const digital = priced.filter(({ quote }) => !quote.shippingRequired)
  const options: Array<AcpFulfillmentOption> = []
  const selected: Array<AcpSelectedFulfillmentOption> = []
  if (shipped.length > 0) {
    options.push({
      type: "shipping",
      id: SHIPPING_OPTION_ID,
      title: "Tracked delivery",
      description: "Shipped by Ribbon's fulfillment partner, with tracking",
      totals: [{ type: "total", display_text: "Shipping", amount: shipping }]
    })
    selected.push({ type: "shipping", option_id: SHIPPING_OPTION_ID, item_ids: shipped.map((each) => each.variantId) })
  }
  if (digital.length > 0) {
    options.push({
      type: "digital",
      id: DIGITAL_OPTION_ID,
      title: "Digital delivery",
      description: "Sent to the recipient by e-mail",
      totals: [{ type: "total", display_text: "Digital delivery", amount: 0 }]
    })
    selected.push({ type: "digital", option_id: DIGITAL_OPTION_ID, item_ids: digital.map((each) => each.variantId) })
  }
  const messages: Array<AcpMessage> = []
  // Issues matter only while the session can still change; the status says the rest.
  if (status === "not_ready_for_payment") {
    for (const issue of row.issues) {
      messages.push({
        type: "error",
        code: issue.code,
        resolution: issue.code === "missing" ? "requires_buyer_input" : "recoverable",
        param: issue.param,
        content_type: "plain",
        content: issue.content
      })
    }
  }
  if (priced.length > 0 && currency !== row.currency) {
    messages.push({
      type: "info",
      content_type: "plain",
      content: `Prices are in ${currency.toUpperCase()}, the currency of the delivery country.`
    })
  }
  if (status === "requires_escalation") {
    messages.push({
      type: "info",
      resolution: "requires_buyer_input",
      content_type: "plain",
      content:
        "The person pays on Ribbon's secure payment page: give them continue_url. Complete succeeds once they have paid."
    })
  }
  if (status === "expired") {
    messages.push({
      type: "error",
      code: "expired",
      resolution: "recoverable",
      content_type: "plain",
      content: "The payment window passed. Update the session to price it again."
    })
  }
  const expiries = priced.map(({ quote }) => quote.expiresAt.getTime())
  const bounding = priced.find(({ quote }) => quote.expiresAt.getTime() === Math.min(...expiries))?.quote
  const paid = checkout !== undefined && hasAcpOrder(checkout.row.status)
  const expiresAt = checkout?.row.expiresAt ?? (bounding === undefined ? undefined : bounding.expiresAt)
  return {
    id: row.id,
    protocol: { version: ACP_VERSION },
    capabilities: {
      payment: { handlers: [cardHandler] },
      ...(asksForGift(row.capabilities) ? { extensions: [giftExtension(baseUrl)] } : {})
    },
    ...(row.buyer === null ? {} : { buyer: row.buyer }),
    status,
    currency,
    ...(row.locale === null && checkout === undefined ? {} : { locale: row.locale ?? checkout!.row.locale }),
    line_items: lineItems,
    ...(row.fulfillmentDetails === null ? {} : { fulfillment_details: row.fulfillmentDetails }),
    fulfillment_options: options,
    selected_fulfillment_options: selected,
    totals,
    messages,
    links: [],
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    ...(expiresAt === undefined || paid ? {} : { expires_at: expiresAt.toISOString() }),
    ...(status === "requires_escalation" && paymentUrl !== null ? { continue_url: paymentUrl } : {}),
    ...(row.metadata === null ? {} : { metadata: row.metadata }),
    ...(bounding === undefined ? {} : { quote_id: bounding.id, quote_expires_at: bounding.expiresAt.toISOString() }),
    ...(paid
      ? {
          order: acpOrderOf({
            baseUrl,
            sessionId: row.id,
            checkout: checkout!.row,
            items: checkout!.items,
            orders: checkout!.orders
          })
        }
      : {}),
    ...(row.gift === null ? {} : { gift: row.gift })
  }
}
