import { Effect, Option } from "effect"
import { nowDate } from "../platform/Time.js"
import { BrowserSessionsRepo } from "./BrowserSessionsRepo.js"
import { later, lifetimes, secret, sha256 } from "./OAuthRules.js"
import { Users } from "./Users.js"

/**
 * The sessions of the authorize pages (docs/oauth.md): made when a user signs in, kept in a cookie, live for
 * `lifetimes.sessionSeconds`. Only the cookie's hash is stored.
 */
export class BrowserSessions extends Effect.Service<BrowserSessions>()("BrowserSessions", {
  dependencies: [BrowserSessionsRepo.Default, Users.Default],
  effect: Effect.gen(function* () {
    const repo = yield* BrowserSessionsRepo
    const users = yield* Users

    /** A session for a user who just signed in; returns the cookie value. */
    const create = Effect.fn("BrowserSessions.create")(function* (userId: string) {
      const token = secret("rss")
      const at = yield* nowDate
      yield* repo.insert({
        idHash: sha256(token),
        userId,
        authenticatedAt: at,
        expiresAt: later(at, lifetimes.sessionSeconds)
      })
      return token
    })

    /** The user of a live session cookie. */
    const user = Effect.fn("BrowserSessions.user")(function* (token: string) {
      const row = yield* repo.findLiveUser(sha256(token), yield* nowDate)
      return Option.isNone(row) ? Option.none() : yield* users.get(row.value.userId)
    })

    /** Deletes the sessions expired before `at`; returns how many went. */
    const purgeExpired = Effect.fn("BrowserSessions.purgeExpired")((at: Date) => repo.deleteExpired(at))

    return { create, user, purgeExpired } as const
  })
}) {}
