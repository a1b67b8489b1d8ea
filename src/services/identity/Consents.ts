import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { nowDate } from "../platform/Time.js"
import { ConsentsRepo } from "./ConsentsRepo.js"
import { formatScopes, splitScopes } from "./OAuthRules.js"

/** The consent users gave clients on the authorize pages, remembered per user and client (docs/oauth.md). */
export class Consents extends Effect.Service<Consents>()("Consents", {
  dependencies: [ConsentsRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ConsentsRepo

    /** Whether the user already allowed this client every one of these scopes. */
    const has = Effect.fn("Consents.has")(function* (userId: string, clientId: string, scopes: ReadonlyArray<string>) {
      const row = yield* repo.findScope(userId, clientId)
      if (Option.isNone(row)) return false
      const granted = new Set(splitScopes(row.value.scope))
      return scopes.every((s) => granted.has(s))
    })

    /** Remembers consent; a later grant adds to what was granted before. */
    const grant = Effect.fn("Consents.grant")(function* (
      userId: string,
      clientId: string,
      scopes: ReadonlyArray<string>
    ) {
      const at = yield* nowDate
      yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const row = yield* repo.lockScope(userId, clientId)
            const before = Option.match(row, { onNone: () => "", onSome: (found) => found.scope })
            yield* repo.upsert(userId, clientId, formatScopes([...splitScopes(before), ...scopes]), at)
          })
        )
        .pipe(Effect.orDie)
    })

    return { has, grant } as const
  })
}) {}
