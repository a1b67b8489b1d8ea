import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { NotFound } from "../../domain/platform/Errors.js"
import { CompanyOrders } from "../../services/company/CompanyOrders.js"
import { readMode } from "../../services/company/Masking.js"
import { Api } from "../Api.js"
import { type Caller, CurrentCaller } from "./ApiKeyAuth.js"
import { ordersV3Query } from "./OrdersApi.js"
import { numberedList, orderV3 } from "./v3.js"

/** How the caller reads recipients: the operation let it in with `:read:masked` or `:read:unmasked`. */
const modeOf = (caller: Caller) => (readMode(caller.key.permissions, "orders") === "unmasked" ? "unmasked" : "masked")

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
          const body = { data: orderV3(result, modeOf(caller)) }
          const response = HttpServerResponse.unsafeJson(body, { status: 201 })
          return replayed ? HttpServerResponse.setHeader(response, "idempotent-replayed", "true") : response
        })
      )
      .handle("list", () =>
        Effect.flatMap(CurrentCaller, (caller) =>
          numberedList(
            ordersV3Query,
            (query) => orders.page(caller.scope, query),
            (order) => orderV3(order, modeOf(caller))
          )
        )
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return { data: orderV3(yield* orders.get(caller.scope, path.orderId), modeOf(caller)) }
        })
      )
      .handle("cancel", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return { data: orderV3(yield* orders.cancel(caller.scope, path.orderId, payload.reason), modeOf(caller)) }
        })
      )
      .handle("simulate", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          if (caller.key.environment !== "test") {
            return yield* new NotFound({ message: "The sandbox control is for test keys only." })
          }
          const moved = yield* orders.simulate(caller.scope, path.orderId, payload.fulfillmentStatus)
          return { data: orderV3(moved, modeOf(caller)) }
        })
      )
  })
)
