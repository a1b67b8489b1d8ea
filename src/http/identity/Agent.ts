import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Schema } from "effect"
import { InsufficientScope, InvalidToken } from "../../domain/identity/Errors.js"
import type { BearerContext, Scope, ToolClass } from "../../domain/identity/OAuth.js"
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

/** The access token of `Authorization: Bearer …` (the scheme in any case); empty when there is none. */
export const bearerTokenOf = (authorization: string | undefined) =>
  /^bearer +([^\s]+) *$/i.exec(authorization ?? "")?.[1] ?? ""
