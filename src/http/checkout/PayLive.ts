import { randomBytes } from "node:crypto"
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Option } from "effect"
import { parsePhoneNumber } from "libphonenumber-js/min"
import { eventTypes } from "../../domain/checkout/Checkout.js"
import { formatMoney } from "../../services/catalog/Pricing.js"
import { type CheckoutItemRow, type CheckoutRow, Checkouts } from "../../services/checkout/Checkouts.js"
import { Events } from "../../services/checkout/Events.js"
import { Placement } from "../../services/checkout/Placement.js"
import { Payments, validateCard } from "../../services/simulators/Payments.js"
import { Api } from "../Api.js"
import { htmlResponse } from "../pages/html.js"
import {
  type PayFormState,
  type PayPageView,
  type PayProblemKind,
  paymentStatusPage,
  payPage,
  payPageCsp,
  payProblemPage,
  payProblems
} from "./payPage.js"
import { checkoutEvents } from "./Sse.js"

/** An HTML page with a fresh CSP nonce (the URL carries the payment token: nothing is cached or referred). */
const page = (render: (nonce: string) => string, status = 200) => {
  const nonce = randomBytes(16).toString("base64")
  return htmlResponse(render(nonce), { status, csp: payPageCsp(nonce) })
}

const problem = (kind: PayProblemKind) => page((nonce) => payProblemPage(kind, { nonce }), payProblems[kind].status)

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
const viewOf = (row: CheckoutRow, items: ReadonlyArray<CheckoutItemRow>, token: string): PayPageView => {
  const money = (amount: number) => formatMoney(amount, row.currency, row.locale).display
  const sum = (pick: (item: CheckoutItemRow) => number) => money(items.reduce((total, item) => total + pick(item), 0))
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
    const sql = yield* SqlClient.SqlClient
    const checkouts = yield* Checkouts
    const payments = yield* Payments
    const placement = yield* Placement
    const events = yield* Events

    const statusPage = (row: CheckoutRow, items: ReadonlyArray<CheckoutItemRow>, token: string, status = 200) =>
      page(
        (nonce) =>
          paymentStatusPage(viewOf(row, items, token), {
            nonce,
            status: row.status,
            eventsUrl: `/pay/${row.id}/events?t=${encodeURIComponent(token)}`,
            eventTypes
          }),
        status
      )

    /** What the page shows for a checkout that cannot take a payment now; none when it can. */
    const closed = (row: CheckoutRow, now: number): Option.Option<PayProblemKind> => {
      if (row.status === "cancelled") return Option.some("cancelled")
      if (row.status === "expired" || (row.status === "pending_payment" && row.expiresAt.getTime() <= now)) {
        return Option.some("expired")
      }
      return row.status === "pending_payment" ? Option.none() : Option.some("already_paid")
    }

    return handlers
      .handle("payPage", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const found = yield* checkouts.forPayment(path.checkoutId, urlParams.t)
          if (Option.isNone(found)) return problem("not_found")
          const { row, items } = found.value
          const reason = closed(row, yield* Clock.currentTimeMillis)
          if (Option.isNone(reason)) return page((nonce) => payPage(viewOf(row, items, urlParams.t), {}, { nonce }))
          // Once paid, the link shows the live status rather than an error.
          return reason.value === "already_paid" ? statusPage(row, items, urlParams.t) : problem(reason.value)
        })
      )
      .handle("pay", ({ path, payload }) =>
        Effect.gen(function* () {
          const { checkoutId } = path
          // The payment window is judged at submission, not after waiting for a slot (payThenPlace).
          const submittedAt = yield* Clock.currentTimeMillis
          // The row stays locked while the card is charged, so two submissions cannot both pay.
          const payment = sql
            .withTransaction(
              Effect.gen(function* () {
                const found = yield* checkouts.forPayment(checkoutId, payload.t)
                if (Option.isNone(found)) return { kind: "problem", problem: "not_found" } as const
                const { row, items } = found.value
                const reason = closed(row, submittedAt)
                if (Option.isSome(reason)) return { kind: "problem", problem: reason.value } as const
                const view = viewOf(row, items, payload.t)
                const values = { name: payload.name, expiry: payload.expiry }
                const card = validateCard(
                  { number: payload.number, expiry: payload.expiry, cvc: payload.cvc, name: payload.name },
                  new Date(submittedAt)
                )
                if (Either.isLeft(card)) {
                  return { kind: "form", view, state: { values, fieldErrors: card.left } as PayFormState } as const
                }
                const charged = yield* payments
                  .charge({ card: card.right, amount: row.totalAmount, currency: row.currency, reference: row.id })
                  .pipe(Effect.either)
                if (Either.isLeft(charged)) {
                  return { kind: "declined", view, state: { values, declineMessage: charged.left.message } } as const
                }
                // Paid as of the submission, the instant the window was judged at.
                const paid = yield* checkouts.markPaid(found.value, charged.right.chargeId, new Date(submittedAt))
                if (Option.isNone(paid))
                  return yield* Effect.dieMessage(`checkout ${checkoutId} changed under its lock`)
                const { row: paidRow, items: paidItems, placementJob } = paid.value
                return { kind: "paid", row: paidRow, items: paidItems, placementJob } as const
              })
            )
            .pipe(Effect.orDie)
          // Once paid, the checkout is placed at once on this instance (docs/checkout.md "Placement").
          const outcome = yield* placement.payThenPlace(payment, (paid) =>
            paid.kind === "paid" ? Option.some(paid.placementJob) : Option.none()
          )
          switch (outcome.kind) {
            case "problem":
              return problem(outcome.problem)
            case "form":
              return page((nonce) => payPage(outcome.view, outcome.state, { nonce }), 422)
            case "declined":
              yield* checkouts.paymentDeclined(checkoutId)
              return page((nonce) => payPage(outcome.view, outcome.state, { nonce }), 402)
            case "paid":
              yield* events.publish(checkoutId)
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
