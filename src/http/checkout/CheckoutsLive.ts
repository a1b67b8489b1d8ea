import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Schema } from "effect"
import { Checkout } from "../../domain/checkout/Checkout.js"
import { Checkouts } from "../../services/checkout/Checkouts.js"
import { Orders } from "../../services/checkout/Orders.js"
import { Quotes, toQuote } from "../../services/checkout/Quotes.js"
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
    return handlers
      .handle("createCheckout", ({ payload }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          Effect.map(checkouts.create(user, payload), ({ checkout, replayed }) =>
            // A replay (same idempotencyKey and body) is the stored checkout, marked as such (DESIGN.md §4.8).
            replayed
              ? HttpServerResponse.unsafeJson(Schema.encodeSync(Checkout)(checkout), {
                  status: 201,
                  headers: { "idempotent-replayed": "true" }
                })
              : checkout
          )
        )
      )
      .handle("getCheckout", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => checkouts.get(user.id, path.checkoutId))
      )
      .handle("checkoutEvents", ({ path, headers }) =>
        Effect.gen(function* () {
          const { user } = yield* CurrentUser
          const checkout = yield* checkouts.get(user.id, path.checkoutId)
          return yield* checkoutEvents(checkout.id, checkout.status, headers["last-event-id"] ?? "0")
        })
      )
      .handle("cancelCheckout", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => checkouts.cancel(user.id, path.checkoutId))
      )
  })
)

const OrdersLive = HttpApiBuilder.group(Api, "orders", (handlers) =>
  Effect.gen(function* () {
    const orders = yield* Orders
    return handlers
      .handle("listOrders", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          orders.list(user.id, {
            limit: urlParams.limit ?? 20,
            ...(urlParams.cursor === undefined ? {} : { cursor: urlParams.cursor })
          })
        )
      )
      .handle("getOrder", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => orders.get(user.id, path.orderId)))
      .handle("cancelOrder", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => orders.cancel(user.id, path.orderId))
      )
  })
)

/** The quotes, checkouts and orders groups. */
export const CheckoutsLive = Layer.mergeAll(QuotesLive, CheckoutsGroupLive, OrdersLive)
