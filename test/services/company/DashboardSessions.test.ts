import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, TestClock } from "effect"
import { PublicUrl } from "../../../src/services/catalog/Catalog.js"
import { DashboardAccounts } from "../../../src/services/company/DashboardAccounts.js"
import { DashboardSessions } from "../../../src/services/company/DashboardSessions.js"
import { Members } from "../../../src/services/company/Members.js"
import { sha256 } from "../../../src/services/identity/OAuthRules.js"
import { TestDatabase } from "../../support/database.js"

/**
 * The dashboard's sessions on a real database, on TestClock: 12 hours idle ends one, 7 days ends one however
 * busy, the last use is written at most once a minute, sign-out and removal revoke, and a session moves only
 * to a company its person belongs to.
 */

let people = 0

/** A person and their new sandbox company, through the sign-up service. */
const signUp = (companyName = "Acme") =>
  Effect.flatMap(DashboardAccounts, (accounts) =>
    accounts.signUp({
      email: `person${++people}-${Date.now()}@example.com`,
      password: "tulip-brass-canyon",
      companyName
    })
  ).pipe(Effect.orDie)

const lastSeen = (cookie: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ lastSeenAt: Date }>`SELECT last_seen_at FROM dashboard_sessions WHERE id_hash = ${sha256(cookie)}`,
      (rows) => rows[0]!.lastSeenAt.getTime()
    )
  ).pipe(Effect.orDie)

const live = (cookie: string) =>
  Effect.map(
    Effect.flatMap(DashboardSessions, (s) => s.resolve(cookie)),
    Option.isSome
  )

describe("DashboardSessions", () => {
  it.layer(
    Layer.mergeAll(DashboardSessions.Default, DashboardAccounts.Default, Members.Default).pipe(
      Layer.provide(Layer.succeed(PublicUrl, "http://ribbon.test")),
      Layer.provideMerge(TestDatabase)
    ),
    {
      timeout: 120_000
    }
  )((it) => {
    it.effect("a session idle for 12 hours ends; each use within them keeps it", () =>
      Effect.gen(function* () {
        const sessions = yield* DashboardSessions
        const person = yield* signUp()
        const cookie = yield* sessions.create({
          userId: person.user.id,
          companyId: person.companyId,
          sourceAddress: "127.0.0.1"
        })
        expect(cookie).toMatch(/^rds_[A-Za-z0-9_-]{43}$/)
        const session = yield* sessions.resolve(cookie)
        expect(Option.getOrThrow(session)).toMatchObject({ userId: person.user.id, companyId: person.companyId })

        yield* TestClock.adjust("11 hours")
        expect(yield* live(cookie)).toBe(true)
        yield* TestClock.adjust("11 hours")
        expect(yield* live(cookie)).toBe(true)
        yield* TestClock.adjust("12 hours")
        expect(yield* live(cookie)).toBe(false)
      })
    )

    it.effect("a session ends 7 days after sign-in, however busy", () =>
      Effect.gen(function* () {
        const sessions = yield* DashboardSessions
        const person = yield* signUp()
        const cookie = yield* sessions.create({
          userId: person.user.id,
          companyId: person.companyId,
          sourceAddress: "127.0.0.1"
        })
        // Used every 10 hours: never idle, still ended at 168 hours.
        for (let hour = 10; hour < 168; hour += 10) {
          yield* TestClock.adjust("10 hours")
          expect(yield* live(cookie), `at ${hour} h`).toBe(true)
        }
        yield* TestClock.adjust("8 hours")
        expect(yield* live(cookie)).toBe(false)
      })
    )

    it.effect("the last use is written at most once a minute", () =>
      Effect.gen(function* () {
        const sessions = yield* DashboardSessions
        const person = yield* signUp()
        const cookie = yield* sessions.create({
          userId: person.user.id,
          companyId: person.companyId,
          sourceAddress: "127.0.0.1"
        })
        const created = yield* lastSeen(cookie)
        yield* TestClock.adjust("59 seconds")
        expect(yield* live(cookie)).toBe(true)
        expect(yield* lastSeen(cookie)).toBe(created)
        yield* TestClock.adjust("1 second")
        expect(yield* live(cookie)).toBe(true)
        expect(yield* lastSeen(cookie)).toBe(created + 60_000)
      })
    )

    it.effect("sign-out revokes one session; removal from a company revokes the person's sessions there only", () =>
      Effect.gen(function* () {
        const sessions = yield* DashboardSessions
        const members = yield* Members
        const person = yield* signUp("First")
        const other = yield* signUp("Second")
        yield* members.add({ companyId: other.companyId, userId: person.user.id, role: "viewer" })
        const open = (companyId: string) => sessions.create({ userId: person.user.id, companyId, sourceAddress: "::1" })
        const [a, b, c] = [yield* open(person.companyId), yield* open(person.companyId), yield* open(other.companyId)]

        yield* sessions.revoke(a)
        expect([yield* live(a), yield* live(b), yield* live(c)]).toEqual([false, true, true])
        yield* sessions.revoke(a)
        yield* sessions.revoke("rds_unknown")

        expect(yield* sessions.revokeAllFor(person.user.id, other.companyId)).toBe(1)
        expect([yield* live(b), yield* live(c)]).toEqual([true, false])
        expect(yield* sessions.revokeAllFor(person.user.id, person.companyId)).toBe(1)
        expect(yield* live(b)).toBe(false)
      })
    )

    it.effect("a session moves only to a company its person is a member of", () =>
      Effect.gen(function* () {
        const sessions = yield* DashboardSessions
        const members = yield* Members
        const person = yield* signUp("Mine")
        const stranger = yield* signUp("Theirs")
        const shared = yield* signUp("Shared")
        yield* members.add({ companyId: shared.companyId, userId: person.user.id, role: "developer" })
        const cookie = yield* sessions.create({
          userId: person.user.id,
          companyId: person.companyId,
          sourceAddress: "127.0.0.1"
        })
        const session = Option.getOrThrow(yield* sessions.resolve(cookie))

        const refused = yield* Effect.either(sessions.switchCompany(session, stranger.companyId))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("NotFound")
        expect(Option.getOrThrow(yield* sessions.resolve(cookie)).companyId).toBe(person.companyId)

        const member = yield* sessions.switchCompany(session, shared.companyId)
        expect(member.role).toBe("developer")
        expect(Option.getOrThrow(yield* sessions.resolve(cookie)).companyId).toBe(shared.companyId)
      })
    )
  })
})
