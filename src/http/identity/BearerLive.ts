import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { InsufficientScope } from "../../domain/identity/Errors.js"
import { Bearers } from "../../services/identity/Bearers.js"
import { challengeScope } from "../../services/identity/OAuthRules.js"
import { operationByRoute } from "../Operations.js"
import { Bearer } from "./Agent.js"

/**
 * The `/v1` bearer middleware: the access token from `Authorization: Bearer …` (scheme in any case), then
 * the scope the matched endpoint declares (src/http/Operations.ts).
 */
export const BearerLive = Layer.effect(
  Bearer,
  Effect.gen(function* () {
    const bearers = yield* Bearers
    return {
      bearer: () =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const { route } = yield* HttpRouter.RouteContext
          const token = /^bearer +([^\s]+) *$/i.exec(request.headers.authorization ?? "")?.[1] ?? ""
          const context = yield* bearers.authenticate(token)
          const operation = operationByRoute.get(`${route.method} ${route.path}`)
          if (operation === undefined) return yield* Effect.dieMessage(`No operation for ${route.method} ${route.path}`)
          if (!context.scopes.includes(operation.scope)) {
            return yield* new InsufficientScope({
              message: `This operation needs the ${operation.scope} scope.`,
              scope: challengeScope(context.scopes, [operation.scope]),
              resourceMetadata: bearers.resourceMetadataUrl
            })
          }
          return context
        })
    }
  })
)
