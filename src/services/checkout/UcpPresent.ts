import { Either } from "effect"
import type { AcpCheckoutSession, AcpCreateRequest, AcpFulfillmentDetails, AcpItem } from "../../domain/checkout/Acp.js"
import { CARD_HANDLER_ID, cardHandler } from "../../domain/checkout/AcpPayments.js"
import {
  UCP_CHECKOUT,
  UCP_FULFILLMENT,
  UCP_ORDER,
  UCP_VERSION,
  type UcpBuyer,
  type UcpCheckout,
  type UcpCheckoutRequest,
  type UcpCheckoutStatus,
  type UcpOrder
} from "../../domain/checkout/Ucp.js"
import type { OrderRecord } from "../../domain/fulfillment/Orders.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { presentSession } from "./AcpPresent.js"
import type { AcpSessionView } from "./AcpSessions.js"
import type { CheckoutPresenter } from "./Checkouts.js"

/**
 * UCP over the ACP sessions (docs/decisions/0080-universal-commerce-protocol.md): a UCP request becomes the ACP
 * request AcpSessions takes, and the ACP session `/acp` would show becomes UCP's checkout. Nothing else differs
 * between the two protocols here, so the mapping onto quotes and checkouts stays in one place.
 */

/**
 * Ribbon's payment handler (docs/decisions/0086-ucp-idempotency-payment-and-mcp.md), a processor tokenizer: Ribbon
 * tokenizes the card itself (`POST /agentic_commerce/delegate_payment`, its allowance bound to the checkout's id)
 * and charges it through its simulator PSP; `complete` carries the token as a `card` instrument of handler
 * `ribbon_card` with credential `{type: "token", token}`. Named under the business's own domain, as the protocol's
 * namespaces ask (`ribbon.test` → `test.ribbon.delegated_card`).
 */
export const paymentHandlersOf = (baseUrl: string) => {
  const labels = new URL(baseUrl).hostname
    .toLowerCase()
    .split(".")
    .reverse()
    .map((label) => label.replace(/[^a-z0-9_]/g, "_").replace(/^(?![a-z])/, "x"))
  return {
    [[...labels, "delegated_card"].join(".")]: [
      {
        id: CARD_HANDLER_ID,
        version: UCP_VERSION,
        spec: `${baseUrl}/docs`,
        available_instruments: [{ type: "card", constraints: { brands: [...cardHandler.config.accepted_brands] } }],
        config: {
          environment: cardHandler.config.environment,
          business_id: cardHandler.config.merchant_id,
          psp: cardHandler.config.psp,
          tokenization_url: `${baseUrl}/agentic_commerce/delegate_payment`,
          credential_type: TOKEN_CREDENTIAL
        }
      }
    ]
  }
}

/** The credential type of the handler's instruments: the vault token from delegated payment. */
const TOKEN_CREDENTIAL = "token"

/** The `ucp` metadata a checkout response is answered with: its capabilities and the payment handler. */
export const responseMetaOf = (baseUrl: string) => ({
  version: UCP_VERSION,
  capabilities: {
    [UCP_CHECKOUT]: [{ version: UCP_VERSION }],
    [UCP_FULFILLMENT]: [{ version: UCP_VERSION, extends: UCP_CHECKOUT }]
  },
  payment_handlers: paymentHandlersOf(baseUrl)
})

/**
 * ACP's `payment_data` (what AcpSessions.complete takes) of a UCP `complete`'s `payment`: its selected instrument
 * (or its only one) as `{handler_id, instrument: {type, credential: {type: "spt", token}}}`; none (`{}`) when it
 * carries no instrument, so that the session completes only once the person has paid at `continue_url`.
 */
export const paymentDataOf = (payment: unknown): Either.Either<Record<string, unknown>, InvalidRequest> => {
  const instruments = (payment as { instruments?: unknown } | undefined)?.instruments
  if (instruments === undefined || (Array.isArray(instruments) && instruments.length === 0)) return Either.right({})
  if (!Array.isArray(instruments)) {
    return Either.left(InvalidRequest.field("payment.instruments", "The payment's instruments are an array"))
  }
  const selected = instruments.findIndex((each) => (each as { selected?: unknown })?.selected === true)
  const index = selected === -1 ? 0 : selected
  const instrument = (instruments[index] ?? {}) as { handler_id?: unknown; type?: unknown; credential?: unknown }
  const where = `payment.instruments[${index}]`
  if (instrument.handler_id !== CARD_HANDLER_ID) {
    return Either.left(
      InvalidRequest.field(`${where}.handler_id`, `The payment handler is ${CARD_HANDLER_ID}, the only one offered`)
    )
  }
  const credential = instrument.credential as { type?: unknown; token?: unknown } | undefined
  if (credential?.type !== TOKEN_CREDENTIAL) {
    return Either.left(
      InvalidRequest.field(
        `${where}.credential`,
        "The credential is the token from delegate_payment: {type: token, token: vt_…}"
      )
    )
  }
  return Either.right({
    handler_id: CARD_HANDLER_ID,
    instrument: { type: instrument.type, credential: { type: "spt", token: credential.token } }
  })
}

/** An ACP `payment_data` path (of a refusal of the instrument) as the UCP request's. */
export const paymentPathOf = (payment: unknown, path: string): string => {
  if (!path.startsWith("payment_data.instrument") && path !== "payment_data.handler_id") return path
  const instruments = (payment as { instruments?: ReadonlyArray<{ selected?: unknown }> } | undefined)?.instruments
  const index = Math.max(0, instruments?.findIndex((each) => each?.selected === true) ?? 0)
  return path
    .replace("payment_data.instrument", `payment.instruments[${index}]`)
    .replace("payment_data.handler_id", `payment.instruments[${index}].handler_id`)
}

const DESTINATION = "$.fulfillment.methods[0].destinations[0]"

/** An ACP JSONPath (from a session's issue) as the UCP request's. */
const pathOf = (param: string | undefined): string | undefined => {
  if (param === undefined) return undefined
  const fields: Record<string, string> = {
    "$.fulfillment_details": DESTINATION,
    "$.fulfillment_details.name": `${DESTINATION}.first_name`,
    "$.fulfillment_details.phone_number": `${DESTINATION}.phone_number`,
    "$.fulfillment_details.email": "$.buyer.email",
    "$.fulfillment_details.address": DESTINATION,
    "$.fulfillment_details.address.line_one": `${DESTINATION}.street_address`,
    "$.fulfillment_details.address.line_two": `${DESTINATION}.extended_address`,
    "$.fulfillment_details.address.city": `${DESTINATION}.address_locality`,
    "$.fulfillment_details.address.state": `${DESTINATION}.address_region`,
    "$.fulfillment_details.address.country": `${DESTINATION}.address_country`,
    "$.fulfillment_details.address.postal_code": `${DESTINATION}.postal_code`
  }
  return fields[param] ?? param
}

/** The ACP items of a UCP request: its item repeated `quantity` times (ACP's items carry no quantity). */
export const itemsOf = (request: UcpCheckoutRequest): Array<AcpItem> =>
  request.line_items.flatMap((line) => Array.from({ length: line.quantity }, () => ({ id: line.item.id })))

/** The index of the UCP line an ACP item index (as AcpSessions names it in an error) came from. */
export const lineIndexOf = (request: UcpCheckoutRequest, itemIndex: number): number => {
  let seen = 0
  for (const [index, line] of request.line_items.entries()) {
    seen += line.quantity
    if (itemIndex < seen) return index
  }
  return itemIndex
}

/** The shipping destination of a request: the selected (or first) destination of its shipping method. */
const destinationOf = (request: UcpCheckoutRequest) => {
  const method = request.fulfillment?.methods?.find((each) => each.type === undefined || each.type === "shipping")
  const destinations = method?.destinations ?? []
  return (
    destinations.find((each) => each.id !== undefined && each.id === method?.selected_destination_id) ?? destinations[0]
  )
}

/** The country a request delivers to, when it names one. */
export const countryOf = (request: UcpCheckoutRequest): string | undefined =>
  destinationOf(request)?.address_country?.toUpperCase()

/** ACP's fulfillment details of a UCP request: the destination's recipient and address, the buyer's e-mail. */
export const detailsOf = (request: UcpCheckoutRequest): AcpFulfillmentDetails | null => {
  const destination = destinationOf(request)
  const buyer = request.buyer
  const full = (first?: string, last?: string) => [first, last].filter((each) => each !== undefined).join(" ")
  const name = full(destination?.first_name, destination?.last_name) || full(buyer?.first_name, buyer?.last_name)
  const phone = destination?.phone_number ?? buyer?.phone_number
  if (destination === undefined && buyer === undefined) return null
  return {
    ...(name === "" ? {} : { name }),
    ...(phone === undefined ? {} : { phone_number: phone }),
    ...(buyer?.email === undefined ? {} : { email: buyer.email }),
    ...(destination === undefined
      ? {}
      : {
          address: {
            name,
            line_one: destination.street_address ?? "",
            ...(destination.extended_address === undefined ? {} : { line_two: destination.extended_address }),
            city: destination.address_locality ?? "",
            state: destination.address_region ?? "",
            country: destination.address_country ?? "",
            postal_code: destination.postal_code ?? ""
          }
        })
  }
}

/** ACP's buyer of a UCP request (ACP's needs an e-mail; without one the session has none). */
export const buyerOf = (buyer: UcpBuyer | undefined): AcpCreateRequest["buyer"] =>
  buyer?.email === undefined ? undefined : { ...buyer, email: buyer.email }

/**
 * UCP's status of an ACP session's: a session ready for payment is `ready_for_complete` when the platform holds a
 * token that would pay it (`tokenHeld`), and otherwise `requires_escalation`, the person paying at `continue_url`.
 */
const statusOf = (status: AcpCheckoutSession["status"], tokenHeld: boolean): UcpCheckoutStatus => {
  switch (status) {
    case "requires_escalation":
      return tokenHeld ? "ready_for_complete" : "requires_escalation"
    case "complete_in_progress":
    case "completed":
    case "canceled":
      return status
    default:
      // Not ready, or its payment window passed (the session is priced again on its next update).
      return "incomplete"
  }
}

/** Why a checkout ready for payment is `requires_escalation`: the platform holds no token to pay it with. */
const escalation: Record<string, unknown> = {
  type: "error",
  code: "payment_required",
  severity: "requires_buyer_input",
  content:
    `The person pays on Ribbon's secure payment page: give them continue_url; complete then succeeds. Or tokenize ` +
    `their card with the ${CARD_HANDLER_ID} payment handler (delegate_payment, its allowance bound to this ` +
    "checkout's id): the checkout is then ready_for_complete, and complete pays it with the token."
}

const SHIPPING_METHOD = "ribbon_shipping_method"
const DESTINATION_ID = "ribbon_destination"

/** The session's delivery address as UCP's destination (a postal address with the recipient's name and phone). */
const destinationOfSession = (session: AcpCheckoutSession) => {
  const details = session.fulfillment_details
  const [first, ...rest] = (details?.address?.name ?? details?.name ?? "").trim().split(/\s+/)
  return details?.address === undefined
    ? undefined
    : {
        id: DESTINATION_ID,
        street_address: details.address.line_one,
        ...(details.address.line_two === undefined ? {} : { extended_address: details.address.line_two }),
        address_locality: details.address.city,
        address_region: details.address.state,
        address_country: details.address.country,
        postal_code: details.address.postal_code,
        ...(first === undefined || first === "" ? {} : { first_name: first }),
        ...(rest.length === 0 ? {} : { last_name: rest.join(" ") }),
        ...(details.phone_number === undefined ? {} : { phone_number: details.phone_number })
      }
}

/** The session as `/acp` shows it, with its checkout's hosted payment page: what UCP's objects are made from. */
export const sessionOf = (baseUrl: string, presenter: CheckoutPresenter["Type"], view: AcpSessionView) =>
  presentSession(
    baseUrl,
    view,
    view.checkout === undefined ? null : presenter.checkout(view.checkout.row, view.checkout.items).paymentUrl
  )

/**
 * UCP's checkout of the ACP session `session` (as src/services/checkout/AcpPresent.ts shows it); `tokenHeld`: whether the
 * platform holds a token of the payment handler that would pay it (AcpVaultTokens.held).
 */
export const presentCheckout = (baseUrl: string, session: AcpCheckoutSession, tokenHeld: boolean): UcpCheckout => {
  const status = statusOf(session.status, tokenHeld)
  const shipping = session.fulfillment_options.find((option) => option.type === "shipping")
  const shipped = session.selected_fulfillment_options.find((selection) => selection.type === "shipping")
  const shippedLines = (shipped?.item_ids ?? []).map((variantId) => `li_${variantId}`)
  const destination = destinationOfSession(session)
  const buyer = session.buyer
  const amount = (totals: ReadonlyArray<{ type: string; amount: number }>, type: string) =>
    totals.find((total) => total.type === type)?.amount ?? 0
  return {
    ucp: { ...responseMetaOf(baseUrl), status: "success" },
    id: session.id,
    status,
    currency: session.currency.toUpperCase(),
    ...(buyer === undefined
      ? {}
      : {
          buyer: {
            ...(buyer.first_name === undefined ? {} : { first_name: buyer.first_name }),
            ...(buyer.last_name === undefined ? {} : { last_name: buyer.last_name }),
            email: buyer.email,
            ...(buyer.phone_number === undefined ? {} : { phone_number: buyer.phone_number })
          }
        }),
    line_items: session.line_items.map((line) => ({
      id: line.id,
      item: {
        id: line.item.id,
        title: line.name ?? line.item.id,
        price: line.unit_amount ?? 0,
        ...(line.images?.[0] === undefined ? {} : { image_url: line.images[0] })
      },
      quantity: line.quantity,
      totals: line.totals
        .filter((total) => ["subtotal", "tax", "total"].includes(total.type))
        .map(({ type, display_text, amount }) => ({ type, display_text, amount }))
    })),
    ...(shipping === undefined
      ? {}
      : {
          fulfillment: {
            methods: [
              {
                id: SHIPPING_METHOD,
                type: "shipping",
                line_item_ids: shippedLines,
                destinations: destination === undefined ? [] : [destination],
                selected_destination_id: destination === undefined ? null : DESTINATION_ID,
                groups: [
                  {
                    id: shipping.id,
                    line_item_ids: shippedLines,
                    options: [
                      {
                        id: shipping.id,
                        title: shipping.title,
                        ...(shipping.description === undefined ? {} : { description: shipping.description }),
                        totals: [{ type: "total", amount: amount(shipping.totals, "total") }]
                      }
                    ],
                    selected_option_id: shipping.id
                  }
                ]
              }
            ]
          }
        }),
    totals: session.totals
      .filter((total) => ["subtotal", "fulfillment", "tax", "fee", "total"].includes(total.type))
      .map(({ type, display_text, amount }) => ({ type, display_text, amount })),
    messages: session.messages.flatMap((message): Array<Record<string, unknown>> => {
      // ACP's note that the person pays on the page: UCP's escalation, which must be an error the buyer resolves.
      if (message.type === "info" && message.resolution === "requires_buyer_input") {
        return status === "requires_escalation" ? [escalation] : []
      }
      const path = pathOf(message.param)
      return [
        message.type === "error"
          ? {
              type: "error",
              code: message.code,
              ...(path === undefined ? {} : { path }),
              content: message.content,
              severity: message.resolution === "requires_buyer_input" ? "requires_buyer_input" : "recoverable"
            }
          : { type: "info", ...(path === undefined ? {} : { path }), content: message.content }
      ]
    }),
    links: [],
    ...(session.expires_at === undefined ? {} : { expires_at: session.expires_at }),
    ...(session.continue_url === undefined ? {} : { continue_url: session.continue_url }),
    ...(session.order === undefined
      ? {}
      : { order: { id: session.order.id, permalink_url: session.order.permalink_url } })
  }
}

/** The quantity an order's line still has (cancelled orders removed) and has shipped, and its derived status. */
const lineProgress = (original: number, orders: ReadonlyArray<OrderRecord>) => {
  const sum = (picked: ReadonlyArray<OrderRecord>) => picked.reduce((total, order) => total + order.quantity, 0)
  const total = original - sum(orders.filter((order) => order.status === "cancelled"))
  const fulfilled = sum(orders.filter((order) => order.status === "shipped" || order.status === "delivered"))
  const status =
    total <= 0 ? "removed" : fulfilled >= total ? "fulfilled" : fulfilled > 0 ? "partial" : ("processing" as const)
  return { quantity: { original, total: Math.max(total, 0), fulfilled }, status } as const
}

/**
 * UCP's order (order.md) of a paid session: `session` as `/acp` shows it, and the Ribbon orders its checkout placed
 * (one per item; none yet while it is being placed). A line's quantity falls as its orders are cancelled and is
 * fulfilled as they ship; each shipment, delivery and cancellation is an event.
 */
export const presentOrder = (
  baseUrl: string,
  session: AcpCheckoutSession,
  orders: ReadonlyArray<OrderRecord>
): UcpOrder => {
  // A paid checkout: whether a token would pay it no longer matters to its order.
  const checkout = presentCheckout(baseUrl, session, false)
  const lines = checkout.line_items.map((line) => ({
    ...line,
    ...lineProgress(
      line.quantity,
      orders.filter((order) => `li_${order.variantId}` === line.id)
    )
  }))
  const destination = destinationOfSession(session)
  const ref = (order: OrderRecord) => [{ id: `li_${order.variantId}`, quantity: order.quantity }]
  const events = orders
    .flatMap((order) => [
      ...(order.shippedAt === null
        ? []
        : [
            {
              id: `${order.id}_shipped`,
              occurred_at: order.shippedAt.toISOString(),
              type: "shipped",
              line_items: ref(order),
              ...(order.trackingNumber === null ? {} : { tracking_number: order.trackingNumber }),
              ...(order.trackingUrl === null ? {} : { tracking_url: order.trackingUrl }),
              ...(order.carrier === null ? {} : { carrier: order.carrier })
            }
          ]),
      ...(order.deliveredAt === null
        ? []
        : [
            {
              id: `${order.id}_delivered`,
              occurred_at: order.deliveredAt.toISOString(),
              type: "delivered",
              line_items: ref(order)
            }
          ]),
      ...(order.cancelledAt === null
        ? []
        : [
            {
              id: `${order.id}_canceled`,
              occurred_at: order.cancelledAt.toISOString(),
              type: "canceled",
              line_items: ref(order)
            }
          ])
    ])
    .sort((a, b) => a.occurred_at.localeCompare(b.occurred_at))
  const active = lines.filter((line) => line.quantity.total > 0)
  return {
    ucp: { version: UCP_VERSION, capabilities: { [UCP_ORDER]: [{ version: UCP_VERSION }] } },
    id: checkout.order!.id,
    checkout_id: checkout.id,
    permalink_url: checkout.order!.permalink_url,
    currency: checkout.currency,
    line_items: lines,
    fulfillment: {
      expectations:
        destination === undefined || active.length === 0
          ? []
          : [
              {
                id: SHIPPING_METHOD,
                line_items: active.map((line) => ({ id: line.id, quantity: line.quantity.total })),
                method_type: "shipping",
                destination
              }
            ],
      events
    },
    totals: checkout.totals
  }
}
