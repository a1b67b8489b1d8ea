import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Schema } from "effect"
import { Checkout, OrderPage } from "../../domain/checkout/Checkout.js"
import type { CheckoutItemRecord, CheckoutRecord } from "../../domain/checkout/Records.js"
import { InsufficientScope } from "../../domain/identity/Errors.js"
import { AgentOrders, type LocalizedOrder } from "../../services/checkout/AgentOrders.js"
import { AllowancePayments } from "../../services/checkout/AllowancePayments.js"
import { CheckoutPresenter, Checkouts } from "../../services/checkout/Checkouts.js"
import { Quotes, toQuote } from "../../services/checkout/Quotes.js"
import { Bearers } from "../../services/identity/Bearers.js"
import { Api } from "../Api.js"
import { CurrentUser } from "../identity/Agent.js"
import { checkoutEvents } from "./Sse.js"

const QuotesLive = HttpApiBuilder.group(Api, "quotes", (handlers) =>
  Effect.gen(function* () {
    const quotes = yield* Quotes
    return handlers
      .handle("createQuote", ({ payload }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          quotes.create(user.id, payload.variantId, payload.countryCode ?? user.defaultCountry)
        )
      )
      .handle("getQuote", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => Effect.map(quotes.get(user.id, path.quoteId), toQuote))
      )
  })
)

const CheckoutsGroupLive = HttpApiBuilder.group(Api, "checkouts", (handlers) =>
  Effect.gen(function* () {
    const checkouts = yield* Checkouts
    const allowancePayments = yield* AllowancePayments
    const bearers = yield* Bearers
    const presenter = yield* CheckoutPresenter
    const present = ({ row, items }: { row: CheckoutRecord; items: ReadonlyArray<CheckoutItemRecord> }) =>
      presenter.checkout(row, items)
    return handlers
      .handle("createCheckout", ({ payload }) =>
        Effect.gen(function* () {
          const { user, scopes, clientId } = yield* CurrentUser
          const fromAllowance = payload.payWith === "allowance"
          // Paying from an allowance needs its own scope besides orders:write, checked before anything is made.
          if (fromAllowance && !scopes.includes("payments:allowance")) {
            return yield* new InsufficientScope({
              message: "Paying from an allowance needs the payments:allowance scope.",
              scope: "payments:allowance",
              resourceMetadata: bearers.resourceMetadataUrl
            })
          }
          const made = yield* checkouts.create(user, payload)
          // A replay (same idempotencyKey and body) is the stored checkout, marked as such
          // (docs/decisions/0035-idempotency.md); it is not paid again.
          if (made.replayed) {
            return HttpServerResponse.unsafeJson(Schema.encodeSync(Checkout)(present(made)), {
              status: 201,
              headers: { "idempotent-replayed": "true" }
            })
          }
          return present(fromAllowance ? yield* allowancePayments.pay(clientId, made) : made)
        })
      )
      .handle("getCheckout", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => Effect.map(checkouts.get(user.id, path.checkoutId), present))
      )
      .handle("checkoutEvents", ({ path, headers }) =>
        Effect.gen(function* () {
          const { user } = yield* CurrentUser
          const { row } = yield* checkouts.get(user.id, path.checkoutId)
          return yield* checkoutEvents(row.id, row.status, headers["last-event-id"] ?? "0")
        })
      )
      .handle("cancelCheckout", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => Effect.map(checkouts.cancel(user.id, path.checkoutId), present))
      )
  })
)

const OrdersLive = HttpApiBuilder.group(Api, "orders", (handlers) =>
  Effect.gen(function* () {
    const orders = yield* AgentOrders
    const presenter = yield* CheckoutPresenter
    const present = ({ row, locale }: LocalizedOrder) => presenter.order(row, locale)
    return handlers
      .handle("listOrders", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          Effect.map(
            orders.list(user.id, {
              limit: urlParams.limit ?? 20,
              ...(urlParams.cursor === undefined ? {} : { cursor: urlParams.cursor })
            }),
            (page) => OrderPage.make({ orders: page.orders.map(present), nextCursor: page.nextCursor })
          )
        )
      )
      .handle("getOrder", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => Effect.map(orders.get(user.id, path.orderId), present))
      )
      .handle("cancelOrder", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => Effect.map(orders.cancel(user.id, path.orderId), present))
      )
  })
)

/** The quotes, checkouts and orders groups. */
export const CheckoutsLive = Layer.mergeAll(QuotesLive, CheckoutsGroupLive, OrdersLive)
