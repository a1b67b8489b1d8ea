import { Effect, Layer, Option } from "effect"
import { type DashboardSession, dashboardSessionLifetimes } from "../../domain/company/Dashboard.js"
import { NotFound } from "../../domain/platform/Errors.js"
import { secret, sha256 } from "../identity/OAuthRules.js"
import { nowDate } from "../platform/Time.js"
import { DashboardSessionsRepo } from "./DashboardSessionsRepo.js"
import { MemberSessionsRevoker } from "./Members.js"
import { MembersRepo } from "./MembersRepo.js"

const hours = (n: number) => n * 60 * 60 * 1000
const { idleHours, absoluteHours, touchSeconds } = dashboardSessionLifetimes

/** More live sessions than a person keeps in practice; a list stops there. */
const listLimit = 100

/**
 * The company dashboard's sessions (docs/decisions/0056-dashboard-sessions-and-sign-up.md): server-side rows, so
 * that signing out, or being removed from the company, ends them at once. The browser holds a random secret;
 * only its SHA-256 is stored. Time comes from `Clock`.
 */
export class DashboardSessions extends Effect.Service<DashboardSessions>()("DashboardSessions", {
  // The members' rows, not the Members service: that service ends a removed member's sessions through this one.
  dependencies: [DashboardSessionsRepo.Default, MembersRepo.Default],
  effect: Effect.gen(function* () {
    const repo = yield* DashboardSessionsRepo
    const members = yield* MembersRepo

    /** A session for a person who just signed in to `companyId`; returns the cookie's secret. */
    const create = Effect.fn("DashboardSessions.create")(function* (input: {
      readonly userId: string
      readonly companyId: string
      readonly sourceAddress: string
    }) {
      const cookie = secret("rds")
      const at = yield* nowDate
      yield* repo.insert({
        idHash: sha256(cookie),
        userId: input.userId,
        companyId: input.companyId,
        at,
        expiresAt: new Date(at.getTime() + hours(absoluteHours)),
        sourceAddress: input.sourceAddress
      })
      return cookie
    })

    /**
     * The live session behind a cookie's secret: none when unknown, revoked, past its absolute end, or idle
     * for `idleHours`. Its last use is written only when a minute or more has passed since the one recorded.
     */
    const resolve = Effect.fn("DashboardSessions.resolve")(function* (cookie: string) {
      const at = yield* nowDate
      const idHash = sha256(cookie)
      const found = yield* repo.findLive(idHash, at, new Date(at.getTime() - hours(idleHours)))
      if (Option.isSome(found) && at.getTime() - found.value.lastSeenAt.getTime() >= touchSeconds * 1000) {
        yield* repo.touch(idHash, at)
        return Option.some<DashboardSession>({ ...found.value, lastSeenAt: at })
      }
      return found
    })

    /** Ends the session behind a cookie's secret (sign-out); nothing for an unknown or ended one. */
    const revoke = Effect.fn("DashboardSessions.revoke")(function* (cookie: string) {
      yield* repo.revoke(sha256(cookie), yield* nowDate)
    })

    /** Ends every session a person has in a company (removed from it); returns how many were live. */
    const revokeAllFor = Effect.fn("DashboardSessions.revokeAllFor")(function* (userId: string, companyId: string) {
      return yield* repo.revokeAll(userId, companyId, yield* nowDate)
    })

    /** A person's live sessions in every company, the most recently used first (at most `listLimit`). */
    const listFor = Effect.fn("DashboardSessions.listFor")(function* (userId: string) {
      const at = yield* nowDate
      return yield* repo.findLiveFor(userId, at, new Date(at.getTime() - hours(idleHours)), listLimit)
    })

    /** Ends every other session of the session's person, in every company ("sign out other sessions"): how many. */
    const revokeOthers = Effect.fn("DashboardSessions.revokeOthers")(function* (session: DashboardSession) {
      return yield* repo.revokeAllBut(session.userId, session.idHash, yield* nowDate)
    })

    /** Moves a session to another company its person is a member of (NotFound otherwise, and nothing changes). */
    const switchCompany = Effect.fn("DashboardSessions.switchCompany")(function* (
      session: DashboardSession,
      companyId: string
    ) {
      const member = yield* members.find(companyId, session.userId)
      if (Option.isNone(member)) return yield* new NotFound({ message: "You are not a member of this company." })
      yield* repo.moveTo(session.idHash, member.value.companyId)
      return member.value
    })

    return { create, resolve, revoke, revokeAllFor, listFor, revokeOthers, switchCompany } as const
  })
}) {}

/** What the Members service calls to sign a removed member out of the company: `revokeAllFor`. */
export const MemberSessionsRevokerLive = Layer.effect(
  MemberSessionsRevoker,
  Effect.map(DashboardSessions, (sessions) =>
    MemberSessionsRevoker.of({
      revokeAllFor: (userId, companyId) => Effect.asVoid(sessions.revokeAllFor(userId, companyId))
    })
  )
).pipe(Layer.provide(DashboardSessions.Default))
