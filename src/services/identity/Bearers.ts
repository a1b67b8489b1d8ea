import { Cache, Effect, Option } from "effect"
import { InsufficientScope, InvalidToken } from "../../domain/identity/Errors.js"
import type { BearerContext } from "../../domain/identity/OAuth.js"
import type { User } from "../../domain/identity/Users.js"
import { PublicUrl } from "../catalog/Catalog.js"
import { forgetWhere, foundFor, lookupIn } from "../platform/Caches.js"
import { nowDate } from "../platform/Time.js"
import { challengeScope, sha256, splitScopes } from "./OAuthRules.js"
import { type BearerRow, OAuthTokensRepo } from "./OAuthTokensRepo.js"
import { toUser } from "./UsersRepo.js"

/** A token as `authenticate` keeps it: its row, and the user made from it once rather than per request. */
type CachedBearer = BearerRow & { readonly user: User }

/** How long a token found by `Bearers.authenticate` is reused without a query (see there). */
export const bearerCacheMillis = 1000

const maxCachedBearers = 10_000

/**
 * The bearer check of the resource server (docs/oauth.md): the access token of every `/v1` request and of
 * `/mcp`, with the tokens found kept for `bearerCacheMillis`.
 */
export class Bearers extends Effect.Service<Bearers>()("Bearers", {
  dependencies: [OAuthTokensRepo.Default],
  effect: Effect.gen(function* () {
    const tokens = yield* OAuthTokensRepo
    // The issuer is the public base URL, which is also the one resource tokens are for.
    const issuer = yield* PublicUrl
    const resourceMetadataUrl = `${issuer}/.well-known/oauth-protected-resource`

    /**
     * Tokens with their users by hash, for `bearerCacheMillis`: without it every `/v1` request pays one more
     * query than its operation needs. A hash no token has is not kept. Revocation and profile changes made
     * here evict at once; made by another instance, they take effect within `bearerCacheMillis` (the
     * propagation delay RFC 7009 §2.2 allows). Expiry is checked on every request.
     */
    const bearerCache = yield* Cache.makeWith({
      capacity: maxCachedBearers,
      lookup: (hash: string) =>
        Effect.map(tokens.findBearer(hash), (row) =>
          Option.map(row, (found): CachedBearer => ({ ...found, user: toUser(found) }))
        ),
      timeToLive: foundFor(bearerCacheMillis)
    })
    const forgetBearers = (match: (row: CachedBearer) => boolean) => forgetWhere(bearerCache, match)

    /** Drops the user's cached tokens: their profile changed, and the next request reads it again. */
    const forgetUser = Effect.fn("Bearers.forgetUser")((userId: string) => forgetBearers((row) => row.id === userId))

    /** Drops the family's cached tokens: they were revoked. */
    const forgetFamily = Effect.fn("Bearers.forgetFamily")((familyId: string) =>
      forgetBearers((row) => row.familyId === familyId)
    )

    /**
     * The user and scopes of a `/v1` access token: known, unexpired, unrevoked, and for this resource. The
     * token by its hash, joined with its user, kept for `bearerCacheMillis` once found (`bearerCache`).
     */
    const authenticate = Effect.fn("Bearers.authenticate")(function* (value: string) {
      const fail = (message: string) =>
        Effect.fail(new InvalidToken({ message, resourceMetadata: resourceMetadataUrl }))
      if (value === "") return yield* fail("An access token is required (Authorization: Bearer …).")
      const found = Option.getOrUndefined(yield* lookupIn(bearerCache, sha256(value)))
      if (found === undefined || found.kind !== "access") return yield* fail("The access token is not valid.")
      if (found.revokedAt !== null) return yield* fail("The access token was revoked.")
      if (new Date(found.expiresAt) <= (yield* nowDate)) return yield* fail("The access token expired.")
      if (found.audience !== issuer) return yield* fail("The access token is for another resource.")
      return { user: found.user, scopes: splitScopes(found.scope), clientId: found.clientId } satisfies BearerContext
    })

    /**
     * `authenticate`, and the token must carry `scope`; otherwise the step-up challenge naming the token's scopes with
     * the one needed (docs/decisions/0077-step-up-scope-challenges.md).
     */
    const authenticateFor = Effect.fn("Bearers.authenticateFor")(function* (value: string, scope: string) {
      const context = yield* authenticate(value)
      if (!context.scopes.includes(scope)) {
        return yield* new InsufficientScope({
          message: `This operation needs the ${scope} scope.`,
          scope: challengeScope(context.scopes, [scope]),
          resourceMetadata: resourceMetadataUrl
        })
      }
      return context
    })

    return { resourceMetadataUrl, authenticate, authenticateFor, forgetUser, forgetFamily } as const
  })
}) {}
