import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Bearers } from "../../services/identity/Bearers.js"
import { operationByRoute } from "../Operations.js"
import { Bearer, bearerTokenOf } from "./Agent.js"

/** The `/v1` bearer middleware: the token, with the scope the matched endpoint declares (src/http/Operations.ts). */
export const BearerLive = Layer.effect(
  Bearer,
  Effect.gen(function* () {
    const bearers = yield* Bearers
    return {
      bearer: () =>
        Effect.gen(function* () {
          const { route } = yield* HttpRouter.RouteContext
          const operation = operationByRoute.get(`${route.method} ${route.path}`)
          if (operation === undefined) return yield* Effect.dieMessage(`No operation for ${route.method} ${route.path}`)
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* bearers.authenticateFor(bearerTokenOf(request.headers.authorization), operation.scope)
        })
    }
  })
)
