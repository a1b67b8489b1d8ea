import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import type { Actor } from "../../../src/domain/company/Audit.js"
import type { AccountScope, Environment } from "../../../src/domain/company/Company.js"
import { PublicUrl } from "../../../src/services/catalog/Catalog.js"
import { Audit, withActor } from "../../../src/services/company/Audit.js"
import { Companies } from "../../../src/services/company/Companies.js"
import { Members } from "../../../src/services/company/Members.js"
import { Users } from "../../../src/services/identity/Users.js"
import { CompanyServicesLive, createCompany, insertAccount } from "../../support/company.js"
import { TestDatabase } from "../../support/database.js"

/**
 * The audit rows of changes to a company as a whole, on a real database (docs/decisions/0057-audit-log.md): each
 * operation on its members, invitations, ownership and settings writes one row of no environment and no account, as
 * the fiber's actor (the person joining acts as themselves); a refused one writes none; and every scope of the company,
 * in either environment and on any accounts, reads them.
 */

const TestLayer = Layer.mergeAll(Members.Default, Audit.Default, Users.Default, CompanyServicesLive).pipe(
  Layer.provide(Layer.succeed(PublicUrl, "https://ribbon.example/")),
  Layer.provideMerge(TestDatabase)
)

let people = 0

const person = (name: string, displayName: string | undefined) =>
  Effect.flatMap(Users, (users) =>
    users.create({
      email: `${name}.${++people}.${Math.random().toString(36).slice(2, 8)}@example.com`,
      password: "violet-harbour-lantern-42",
      displayName
    })
  ).pipe(Effect.orDie)

/** The token in an invitation's e-mail. */
const tokenOf = (invitationId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ body: string }>`SELECT body FROM notifications WHERE invitation_id = ${invitationId}`
    return /\/dashboard\/invitations\/([A-Za-z0-9_-]{43})\b/.exec(row!.body)![1]!
  })

interface Row {
  readonly action: string
  readonly actorType: string
  readonly actorId: string | null
  readonly actorName: string
  readonly targetType: string
  readonly targetId: string
  readonly accountId: string | null
  readonly environment: string | null
  readonly sourceAddress: string | null
  readonly requestId: string | null
}

/** The company's rows but its first key's, oldest first. */
const rowsOf = (companyId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Row>`SELECT action, actor_type, actor_id, actor_name, target_type, target_id, account_id, environment,
        source_address, request_id
      FROM audit_events WHERE company_id = ${companyId} AND action <> 'api_key.created' ORDER BY occurred_at, id`.pipe(
      Effect.orDie
    )
  )

const scope = (companyId: string, environment: Environment, accountIds: "all" | ReadonlyArray<string>) =>
  ({ companyId, environment, accountIds }) as unknown as AccountScope

const everything = { filters: {}, include: [], fields: [], sort: [], page: { number: 1, size: 100, cursor: undefined } }

describe("audit rows of a company's members and settings", () => {
  it.layer(TestLayer, { timeout: 180_000 })((it) => {
    it.effect("each member operation writes one company-wide row as its actor; a refused one none", () =>
      Effect.gen(function* () {
        const members = yield* Members
        const audit = yield* Audit
        const company = yield* createCompany()
        const { companyId } = company
        const ownerUser = yield* person("olivia", "Olivia")
        yield* members.add({ companyId, userId: ownerUser.id, role: "owner" })
        const owner = yield* members.get(companyId, ownerUser.id)
        const asOwner: Actor = {
          type: "member",
          id: owner.userId,
          name: "Olivia",
          sourceAddress: "203.0.113.9",
          requestId: "req-owner"
        }
        // Each change a second after the last, so the rows' order is the changes' order.
        const step = <A, E, R>(change: Effect.Effect<A, E, R>) =>
          Effect.zipRight(TestClock.adjust("1 second"), withActor(asOwner)(change))

        // Invited, withdrawn, invited again and accepted by a person who gave no name, with no session.
        const dana = yield* person("dana", undefined)
        const first = yield* step(members.invite({ companyId, by: owner, email: dana.email, role: "developer" }))
        yield* step(members.revokeInvitation({ companyId, by: owner, invitationId: first.invitation.id }))
        const second = yield* step(members.invite({ companyId, by: owner, email: dana.email, role: "developer" }))
        yield* TestClock.adjust("1 second")
        yield* members.accept(yield* tokenOf(second.invitation.id), dana.id)
        // Accepted by a signed-in person: the request's source and id are kept, the actor is the person joining.
        const erin = yield* person("erin", "Erin")
        const third = yield* step(members.invite({ companyId, by: owner, email: erin.email, role: "viewer" }))
        yield* step(members.accept(yield* tokenOf(third.invitation.id), erin.id))

        const account = "abcdefabcdefabcdefabcdef"
        yield* insertAccount(companyId, "test", account)
        yield* step(members.changeRole({ companyId, by: owner, userId: dana.id, role: "sender" }))
        // The same role again changes nothing: no row.
        yield* step(members.changeRole({ companyId, by: owner, userId: dana.id, role: "sender" }))
        yield* step(
          members.limitAccounts({
            companyId,
            by: owner,
            userId: dana.id,
            accountsAccess: { scope: "selected-accounts", ids: [account] }
          })
        )
        yield* step(members.transferOwnership({ companyId, by: owner, to: erin.id }))
        yield* step(members.remove({ companyId, by: owner, userId: dana.id }))

        // Refusals write nothing: a developer's invitation, a last owner's removal by an admin.
        const before = (yield* rowsOf(companyId)).length
        const refusals: ReadonlyArray<Effect.Effect<unknown, unknown>> = [
          members.invite({ companyId, by: { userId: dana.id }, email: "x@example.com", role: "viewer" }),
          members.remove({ companyId, by: owner, userId: erin.id }),
          members.changeRole({ companyId, by: owner, userId: "ffffffffffffffffffffffff", role: "viewer" })
        ]
        for (const refusal of refusals) yield* Effect.flip(step(refusal))
        expect((yield* rowsOf(companyId)).length).toBe(before)

        const ownerRow = { actorType: "member", actorId: owner.userId, actorName: "Olivia" }
        const request = { sourceAddress: "203.0.113.9", requestId: "req-owner" }
        const companyWide = { accountId: null, environment: null }
        expect(yield* rowsOf(companyId)).toEqual([
          {
            action: "member.invited",
            targetType: "invitation",
            targetId: first.invitation.id,
            ...ownerRow,
            ...request,
            ...companyWide
          },
          {
            action: "invitation.revoked",
            targetType: "invitation",
            targetId: first.invitation.id,
            ...ownerRow,
            ...request,
            ...companyWide
          },
          {
            action: "member.invited",
            targetType: "invitation",
            targetId: second.invitation.id,
            ...ownerRow,
            ...request,
            ...companyWide
          },
          // Named by the name they gave, never by their e-mail; no request behind the fiber.
          {
            action: "member.joined",
            targetType: "member",
            targetId: dana.id,
            actorType: "member",
            actorId: dana.id,
            actorName: "Member",
            sourceAddress: null,
            requestId: null,
            ...companyWide
          },
          {
            action: "member.invited",
            targetType: "invitation",
            targetId: third.invitation.id,
            ...ownerRow,
            ...request,
            ...companyWide
          },
          {
            action: "member.joined",
            targetType: "member",
            targetId: erin.id,
            actorType: "member",
            actorId: erin.id,
            actorName: "Erin",
            ...request,
            ...companyWide
          },
          {
            action: "member.role_changed",
            targetType: "member",
            targetId: dana.id,
            ...ownerRow,
            ...request,
            ...companyWide
          },
          {
            action: "member.accounts_limited",
            targetType: "member",
            targetId: dana.id,
            ...ownerRow,
            ...request,
            ...companyWide
          },
          {
            action: "ownership.transferred",
            targetType: "member",
            targetId: erin.id,
            ...ownerRow,
            ...request,
            ...companyWide
          },
          { action: "member.removed", targetType: "member", targetId: dana.id, ...ownerRow, ...request, ...companyWide }
        ])

        // Every scope of the company reads them: either environment, all accounts or some; another company's none.
        const actions = (read: AccountScope) =>
          Effect.map(audit.page(read, everything), (page) => page.rows.filter((row) => row.environment === null).length)
        expect(yield* actions(scope(companyId, "test", "all"))).toBe(10)
        expect(yield* actions(scope(companyId, "live", "all"))).toBe(10)
        expect(yield* actions(scope(companyId, "test", [account]))).toBe(10)
        expect(yield* actions(scope(companyId, "test", []))).toBe(10)
        const other = yield* createCompany()
        expect(yield* actions(scope(other.companyId, "test", "all"))).toBe(0)
        // No e-mail in any row.
        const dump = JSON.stringify(yield* rowsOf(companyId))
        for (const email of [dana.email, erin.email, ownerUser.email]) expect(dump).not.toContain(email)
      })
    )

    it.effect("the two-factor requirement and activation are the company's rows; a second activation none", () =>
      Effect.gen(function* () {
        const companies = yield* Companies
        const company = yield* createCompany()
        const { companyId } = company
        const asOwner: Actor = {
          type: "member",
          id: "aaaaaaaaaaaaaaaaaaaaaaaa",
          name: "Olivia",
          sourceAddress: "203.0.113.9",
          requestId: "req-2fa"
        }
        yield* TestClock.adjust("1 second")
        yield* withActor(asOwner)(companies.requireTwoFactor(companyId, true))
        yield* TestClock.adjust("1 second")
        yield* withActor(asOwner)(companies.requireTwoFactor(companyId, false))
        // The operator's, from the command line: no actor on the fiber.
        yield* TestClock.adjust("1 second")
        yield* companies.activate(companyId)
        yield* TestClock.adjust("1 second")
        yield* companies.activate(companyId)
        const unknown = yield* Effect.flip(companies.requireTwoFactor("ffffffffffffffffffffffff", true))
        expect(unknown._tag).toBe("CompanyNotFound")

        const byOwner = { actorType: "member", actorId: asOwner.id, actorName: "Olivia", requestId: "req-2fa" }
        const ofCompany = { targetType: "company", targetId: companyId, accountId: null, environment: null }
        expect(yield* rowsOf(companyId)).toEqual([
          { action: "company.two_factor_required", ...byOwner, sourceAddress: "203.0.113.9", ...ofCompany },
          { action: "company.two_factor_not_required", ...byOwner, sourceAddress: "203.0.113.9", ...ofCompany },
          {
            action: "company.activated",
            actorType: "operator",
            actorId: null,
            actorName: "operator",
            sourceAddress: null,
            requestId: null,
            ...ofCompany
          }
        ])
        expect(yield* rowsOf("ffffffffffffffffffffffff")).toEqual([])
      })
    )
  })
})
