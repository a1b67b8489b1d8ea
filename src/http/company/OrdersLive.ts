import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CompanyOrders } from "../../services/company/CompanyOrders.js"
import { Api } from "../Api.js"
import { CurrentCaller } from "./ApiKeyAuth.js"
import { ordersV3Query } from "./OrdersApi.js"
import { numberedList, orderV3 } from "./v3.js"

export const OrdersV3Live = HttpApiBuilder.group(Api, "ordersV3", (handlers) =>
  Effect.gen(function* () {
    const orders = yield* CompanyOrders
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const { result, replayed } = yield* orders.place(
            { scope: caller.scope, account: caller.account, source: caller.requestSource },
            { ...payload, metadata: payload.metadata ?? null }
          )
          // Placing needs `orders:create` only; the order it answers with is masked unless the key reads unmasked.
          const body = { data: orderV3(result, caller.readModes.orders) }
          const response = HttpServerResponse.unsafeJson(body, { status: 201 })
          return replayed ? HttpServerResponse.setHeader(response, "idempotent-replayed", "true") : response
        })
      )
      .handle("list", () =>
        Effect.flatMap(CurrentCaller, (caller) =>
          numberedList(
            ordersV3Query,
            (query) => orders.page(caller.scope, query),
            (order) => orderV3(order, caller.readModes.orders)
          )
        )
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return { data: orderV3(yield* orders.get(caller.scope, path.orderId), caller.readModes.orders) }
        })
      )
      .handle("cancel", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return {
            data: orderV3(yield* orders.cancel(caller.scope, path.orderId, payload.reason), caller.readModes.orders)
          }
        })
      )
      .handle("simulate", ({ path, payload }) =>
        Effect.gen(function* () {
          // For test keys only: the middleware answers a live key (the operation's `testKeysOnly`).
          const caller = yield* CurrentCaller
          const moved = yield* orders.simulate(caller.scope, path.orderId, payload.fulfillmentStatus)
          return { data: orderV3(moved, caller.readModes.orders) }
        })
      )
  })
)
