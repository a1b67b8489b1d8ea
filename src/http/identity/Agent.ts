import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Schema } from "effect"
import { InsufficientScope, InvalidToken } from "../../domain/identity/Errors.js"
import type { BearerContext, Scope, ToolClass } from "../../domain/identity/OAuth.js"
import type { Bearers } from "../../services/identity/Bearers.js"
import { challengeScope } from "../../services/identity/OAuthRules.js"
import { lineError } from "../ErrorLines.js"

/**
 * What an agent operation declares once, on its endpoint (or its group): the scope it requires and its tool
 * class. The bearer middleware enforces the scope and the connector manifest publishes both, so the two
 * cannot drift apart (docs/oauth.md).
 */
export class RequiredScope extends Context.Tag("ribbon/RequiredScope")<RequiredScope, Scope>() {}
export class OperationClass extends Context.Tag("ribbon/OperationClass")<OperationClass, ToolClass>() {}

/** Both annotations at once: `.annotateContext(agentOperation("catalog:read", "read"))`. */
export const agentOperation = (scope: Scope, toolClass: ToolClass) =>
  Context.make(RequiredScope, scope).pipe(Context.add(OperationClass, toolClass))

/** The signed-in user, the token's scopes and its client, for handlers behind `Bearer`. */
export class CurrentUser extends Context.Tag("ribbon/CurrentUser")<CurrentUser, BearerContext>() {}

/**
 * The `/v1` bearer middleware: a valid access token with the endpoint's `RequiredScope`. Implemented in
 * src/http/identity/BearerLive.ts; 401 and 403 carry the RFC 6750/9728 challenge.
 */
export class Bearer extends HttpApiMiddleware.Tag<Bearer>()("ribbon/Bearer", {
  provides: CurrentUser,
  security: { bearer: HttpApiSecurity.bearer },
  failure: Schema.Union(lineError("v1", InvalidToken), lineError("v1", InsufficientScope))
}) {}

/**
 * The signed-in person's access token from `Authorization: Bearer …` (scheme in any case), which must carry `scope`;
 * otherwise the step-up challenge naming the token's scopes with the one needed (docs/decisions/0077).
 */
export const bearerWithScope = (bearers: Bearers, scope: string) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = /^bearer +([^\s]+) *$/i.exec(request.headers.authorization ?? "")?.[1] ?? ""
    const context = yield* bearers.authenticate(token)
    if (!context.scopes.includes(scope)) {
      return yield* new InsufficientScope({
        message: `This operation needs the ${scope} scope.`,
        scope: challengeScope(context.scopes, [scope]),
        resourceMetadata: bearers.resourceMetadataUrl
      })
    }
    return context
  })
