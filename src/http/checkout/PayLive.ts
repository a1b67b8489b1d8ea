import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Option } from "effect"
import { parsePhoneNumber } from "libphonenumber-js/min"
import { eventTypes } from "../../domain/checkout/Checkout.js"
import { paymentClosed } from "../../domain/checkout/CheckoutMachine.js"
import type { CheckoutItemRecord, CheckoutRecord } from "../../domain/checkout/Records.js"
import { formatMoney } from "../../services/catalog/Pricing.js"
import { CheckoutPayments } from "../../services/checkout/CheckoutPayments.js"
import { Checkouts } from "../../services/checkout/Checkouts.js"
import { Api } from "../Api.js"
import { noncedPage } from "../pages/html.js"
import {
  type PayPageView,
  type PayProblemKind,
  paymentStatusPage,
  payPage,
  payProblemPage,
  payProblems
} from "./payPage.js"
import { checkoutEvents } from "./Sse.js"

const problem = (kind: PayProblemKind) =>
  noncedPage((nonce) => payProblemPage(kind, { nonce }), payProblems[kind].status)

/** The page's words for a pause in payments after too many declines (`PayFormState.paused`). */
const pauseOf = (resumesAt: Date, now: number) => ({
  until: resumesAt.toISOString(),
  minutes: Math.max(1, Math.ceil((resumesAt.getTime() - now) / 60_000))
})

const regionNames = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" })

/** The English name of a country code, or undefined (the page then shows the code). */
const countryName = (code: string): string | undefined => {
  try {
    return regionNames.of(code)
  } catch {
    return undefined
  }
}

/** The page's view of a checkout: the sums of its lines, in its currency and locale. */
const viewOf = (row: CheckoutRecord, items: ReadonlyArray<CheckoutItemRecord>, token: string): PayPageView => {
  const money = (amount: number) => formatMoney(amount, row.currency, row.locale).display
  const sum = (pick: (item: CheckoutItemRecord) => number) =>
    money(items.reduce((total, item) => total + pick(item), 0))
  const address = row.shippingAddress
  return {
    checkoutId: row.id,
    token,
    postUrl: `/pay/${row.id}`,
    totalDisplay: money(row.totalAmount),
    currency: row.currency,
    items: items.map((item) => ({
      productTitle: item.productTitle,
      variantTitle: item.variantTitle,
      imageUrl: item.imageUrl,
      quantity: item.quantity,
      amountDisplay: money(item.amount)
    })),
    breakdown: {
      item: sum((item) => item.itemAmount),
      shipping: sum((item) => item.shippingAmount),
      duties: sum((item) => item.dutiesAmount),
      serviceFee: sum((item) => item.serviceFeeAmount),
      total: money(row.totalAmount)
    },
    // Stored in E.164; shown as people write it ("+44 20 7946 0958").
    recipient: { ...row.recipient, phone: parsePhoneNumber(row.recipient.phone).formatInternational() },
    address: {
      address1: address.address1 ?? null,
      address2: address.address2 ?? null,
      city: address.city ?? null,
      provinceCode: address.provinceCode ?? null,
      postalCode: address.postalCode ?? null,
      countryCode: address.countryCode,
      countryName: countryName(address.countryCode)
    },
    shippingRequired: row.shippingRequired,
    expiresAt: row.expiresAt.toISOString()
  }
}

export const PayLive = HttpApiBuilder.group(Api, "pay", (handlers) =>
  Effect.gen(function* () {
    const checkouts = yield* Checkouts
    const checkoutPayments = yield* CheckoutPayments

    const statusPage = (row: CheckoutRecord, items: ReadonlyArray<CheckoutItemRecord>, token: string, status = 200) =>
      noncedPage(
        (nonce) =>
          paymentStatusPage(viewOf(row, items, token), {
            nonce,
            status: row.status,
            eventsUrl: `/pay/${row.id}/events?t=${encodeURIComponent(token)}`,
            eventTypes
          }),
        status
      )

    return handlers
      .handle("payPage", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const found = yield* checkouts.forPayment(path.checkoutId, urlParams.t)
          if (Option.isNone(found)) return problem("not_found")
          const { row, items } = found.value
          const reason = paymentClosed(row, yield* Clock.currentTimeMillis)
          if (reason === undefined)
            return noncedPage((nonce) => payPage(viewOf(row, items, urlParams.t), {}, { nonce }))
          // Once paid, the link shows the live status rather than an error.
          return reason === "already_paid" ? statusPage(row, items, urlParams.t) : problem(reason)
        })
      )
      .handle("pay", ({ path, payload }) =>
        Effect.gen(function* () {
          const outcome = yield* checkoutPayments.pay({
            checkoutId: path.checkoutId,
            token: payload.t,
            card: { number: payload.number, expiry: payload.expiry, cvc: payload.cvc, name: payload.name },
            submittedAt: yield* Clock.currentTimeMillis
          })
          const values = { name: payload.name, expiry: payload.expiry }
          switch (outcome._tag) {
            case "Closed":
              return problem(outcome.problem)
            case "InvalidCard": {
              const view = viewOf(outcome.row, outcome.items, payload.t)
              return noncedPage((nonce) => payPage(view, { values, fieldErrors: outcome.fieldErrors }, { nonce }), 422)
            }
            case "Declined": {
              const view = viewOf(outcome.row, outcome.items, payload.t)
              const now = yield* Clock.currentTimeMillis
              const paused = Option.getOrUndefined(Option.map(outcome.resumesAt, (at) => pauseOf(at, now)))
              return noncedPage(
                (nonce) => payPage(view, { values, declineMessage: outcome.message, paused }, { nonce }),
                402
              )
            }
            case "Paused": {
              const view = viewOf(outcome.row, outcome.items, payload.t)
              const now = yield* Clock.currentTimeMillis
              const paused = pauseOf(outcome.resumesAt, now)
              return HttpServerResponse.setHeader(
                noncedPage((nonce) => payPage(view, { values, paused }, { nonce }), 429),
                "retry-after",
                String(Math.max(1, Math.ceil((outcome.resumesAt.getTime() - now) / 1000)))
              )
            }
            case "Paid":
              return statusPage(outcome.row, outcome.items, payload.t)
          }
        })
      )
      .handle("payEvents", ({ headers, path, urlParams }) =>
        Effect.gen(function* () {
          const found = yield* checkouts.forPayment(path.checkoutId, urlParams.t)
          if (Option.isNone(found)) return problem("not_found")
          return yield* checkoutEvents(path.checkoutId, found.value.row.status, headers["last-event-id"] ?? "0")
        })
      )
  })
)
