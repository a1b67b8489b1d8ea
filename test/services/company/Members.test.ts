import { createHash } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import type { AccountsAccess } from "../../../src/domain/company/Company.js"
import { principalOf, type Role } from "../../../src/domain/company/Members.js"
import { PublicUrl } from "../../../src/services/catalog/Catalog.js"
import { Companies } from "../../../src/services/company/Companies.js"
import { MemberSessionsRevoker, Members } from "../../../src/services/company/Members.js"
import { CompanyPolicy } from "../../../src/services/company/Policy.js"
import { Users } from "../../../src/services/identity/Users.js"
import { CompanyServicesLive, createCompany, insertAccount } from "../../support/company.js"
import { TestDatabase } from "../../support/database.js"

/**
 * Company members on a real database, the clock driven by TestClock: invitations through the notifications
 * outbox, accepted once by the person invited within seven days; the subset rule (a member gives only what it
 * holds); the last owner; each refusal leaving the members, invitations and outbox as they were.
 */

/** Whose sessions the members service ended (the dashboard's `DashboardSessions.revokeAllFor` in the server). */
const sessionsEnded: Array<{ userId: string; companyId: string }> = []

const TestLayer = Layer.mergeAll(
  Members.Default.pipe(
    Layer.provide(
      Layer.succeed(MemberSessionsRevoker, {
        revokeAllFor: (userId, companyId) => Effect.sync(() => void sessionsEnded.push({ userId, companyId }))
      })
    )
  ),
  Users.Default,
  CompanyServicesLive
).pipe(Layer.provide(Layer.succeed(PublicUrl, "https://ribbon.example/")), Layer.provideMerge(TestDatabase))

const dayMillis = 24 * 60 * 60 * 1000
const allAccountsAccess: AccountsAccess = { scope: "all-accounts", ids: [] }
let people = 0

/** A person who may sign in (the identity context's user). */
const person = (name: string) =>
  Effect.flatMap(Users, (users) =>
    users.create({
      email: `${name}.${++people}.${Math.random().toString(36).slice(2, 8)}@example.com`,
      password: "violet-harbour-lantern-42",
      displayName: `${name[0]!.toUpperCase()}${name.slice(1)}`
    })
  ).pipe(Effect.orDie)

/** A company with its first owner, as sign-up makes them. */
const companyWithOwner = Effect.gen(function* () {
  const company = yield* createCompany()
  const owner = yield* person("olivia")
  const members = yield* Members
  yield* members.add({ companyId: company.companyId, userId: owner.id, role: "owner" })
  return { ...company, owner: yield* members.get(company.companyId, owner.id) }
})

/** The invitation message in the outbox and the token its link carries. */
const messageOf = (invitationId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ kind: string; channel: string; recipient: string; subject: string; body: string }>`
      SELECT kind, channel, recipient, subject, body FROM notifications WHERE invitation_id = ${invitationId}`
    expect(rows).toHaveLength(1)
    const token = /https:\/\/ribbon\.example\/dashboard\/invitations\/([A-Za-z0-9_-]{43})\b/.exec(rows[0]!.body)?.[1]
    expect(token).toBeDefined()
    return { ...rows[0]!, token: token! }
  })

/** Invites a new person and has them accept: the member. */
const join = (
  company: { companyId: string; owner: { userId: string } },
  role: Role,
  accountsAccess?: AccountsAccess,
  by: { userId: string } = company.owner
) =>
  Effect.gen(function* () {
    const members = yield* Members
    const invitee = yield* person(role)
    const { invitation } = yield* members.invite({
      companyId: company.companyId,
      by,
      email: invitee.email,
      role,
      ...(accountsAccess === undefined ? {} : { accountsAccess })
    })
    const { token } = yield* messageOf(invitation.id)
    return yield* members.accept(token, invitee.id)
  })

/** The company's members, invitations and invitation messages, to compare before and after a refusal. */
const tablesOf = (companyId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT
        (SELECT coalesce(json_agg(m ORDER BY m.user_id), '[]') FROM company_members m
          WHERE m.company_id = ${companyId}) AS members,
        (SELECT coalesce(json_agg(i ORDER BY i.id), '[]') FROM member_invitations i
          WHERE i.company_id = ${companyId}) AS invitations,
        (SELECT count(*)::int FROM notifications n
          JOIN member_invitations i ON i.id = n.invitation_id WHERE i.company_id = ${companyId}) AS messages`.pipe(
      Effect.orDie
    )
  )

/** The refusal of `effect`, checking that it changed nothing of the company's members. */
const refused = <A, E, R>(companyId: string, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const before = yield* tablesOf(companyId)
    const error = yield* Effect.flip(effect)
    expect(yield* tablesOf(companyId)).toEqual(before)
    return error
  })

describe("Members", () => {
  it.layer(TestLayer, { timeout: 180_000 })((it) => {
    it.effect("an invitation goes out by e-mail with a link; the person invited accepts it once", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const members = yield* Members
        const company = yield* companyWithOwner
        const invitee = yield* person("dana")

        const { invitation, link } = yield* members.invite({
          companyId: company.companyId,
          by: company.owner,
          email: `  ${invitee.email.toUpperCase()} `,
          role: "developer"
        })
        expect(invitation).toMatchObject({
          companyId: company.companyId,
          email: invitee.email.toUpperCase(),
          role: "developer",
          accountsAccess: { scope: "all-accounts", ids: [] },
          invitedBy: company.owner.userId,
          acceptedAt: null,
          revokedAt: null
        })
        expect(invitation.expiresAt.getTime() - invitation.createdAt.getTime()).toBe(7 * dayMillis)

        const message = yield* messageOf(invitation.id)
        expect(link).toBe(`https://ribbon.example/dashboard/invitations/${message.token}`)
        expect(message).toMatchObject({ kind: "invitation", channel: "email", recipient: invitee.email.toUpperCase() })
        const companyName = Option.getOrThrow(yield* (yield* Companies).name(company.companyId))
        expect(message.subject).toBe(`Olivia invites you to ${companyName} on Ribbon`)
        expect(message.body).toContain("as developer")
        // Only the token's hash is kept.
        const [stored] = yield* sql<{ tokenHash: string }>`SELECT token_hash FROM member_invitations
          WHERE id = ${invitation.id}`
        expect(stored!.tokenHash).toBe(createHash("sha256").update(message.token).digest("hex"))

        expect(yield* members.invitation(message.token)).toMatchObject({
          id: invitation.id,
          companyName,
          inviterName: "Olivia",
          role: "developer"
        })
        expect((yield* members.list(company.companyId)).invitations.map((i) => i.id)).toEqual([invitation.id])

        yield* TestClock.adjust("1 hour")
        const member = yield* members.accept(message.token, invitee.id)
        expect(member).toMatchObject({
          companyId: company.companyId,
          userId: invitee.id,
          email: invitee.email,
          displayName: "Dana",
          role: "developer"
        })
        const listed = yield* members.list(company.companyId)
        expect(listed.members.map((m) => [m.userId, m.role])).toEqual([
          [company.owner.userId, "owner"],
          [invitee.id, "developer"]
        ])
        expect(listed.invitations).toEqual([])
        expect(yield* members.membershipsOf(invitee.id)).toEqual([
          { companyId: company.companyId, companyName, role: "developer" }
        ])

        const twice = yield* refused(company.companyId, members.accept(message.token, invitee.id))
        expect(twice._tag).toBe("InvitationAlreadyAccepted")
        expect((yield* Effect.flip(members.invitation(message.token)))._tag).toBe("InvitationAlreadyAccepted")
      })
    )

    it.effect("a new person signs up and accepts in one transaction: a refused acceptance keeps no user", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const members = yield* Members
        const users = yield* Users
        const company = yield* companyWithOwner
        const email = `newcomer.${Math.random().toString(36).slice(2, 8)}@example.com`
        const { invitation } = yield* members.invite({
          companyId: company.companyId,
          by: company.owner,
          email,
          role: "sender"
        })
        const { token } = yield* messageOf(invitation.id)
        const signUpAndAccept = (address: string) =>
          sql.withTransaction(
            Effect.gen(function* () {
              const user = yield* users.create({ email: address, password: "violet-harbour-lantern-42" })
              return yield* members.accept(token, user.id)
            })
          )
        const usersNamed = (address: string) =>
          Effect.map(sql`SELECT id FROM users WHERE lower(email) = lower(${address})`, (rows) => rows.length)

        const wrong = yield* refused(company.companyId, signUpAndAccept(`other.${email}`))
        expect(wrong._tag).toBe("InvitationEmailMismatch")
        expect(yield* usersNamed(`other.${email}`)).toBe(0)

        const member = yield* signUpAndAccept(email)
        expect(member).toMatchObject({ email, role: "sender", companyId: company.companyId })
        expect(yield* usersNamed(email)).toBe(1)
      })
    )

    it.effect("only the person invited accepts; a bad, replaced, withdrawn or expired link is refused", () =>
      Effect.gen(function* () {
        const members = yield* Members
        const company = yield* companyWithOwner
        const invitee = yield* person("erin")
        const stranger = yield* person("mallory")
        const invite = members.invite({
          companyId: company.companyId,
          by: company.owner,
          email: invitee.email,
          role: "viewer"
        })

        const first = yield* invite
        const { token: firstToken } = yield* messageOf(first.invitation.id)
        const mismatch = yield* refused(company.companyId, members.accept(firstToken, stranger.id))
        expect(mismatch).toMatchObject({
          _tag: "InvitationEmailMismatch",
          message: `This invitation was sent to another e-mail address; sign in as ${invitee.email} to accept it.`
        })
        for (const token of ["not-a-token", "A".repeat(43)]) {
          const unknown = yield* refused(company.companyId, members.accept(token, invitee.id))
          expect(unknown._tag).toBe("InvitationNotFound")
        }

        // Inviting the same e-mail again replaces the invitation: the first link stops working.
        const second = yield* invite
        const replaced = yield* refused(company.companyId, members.accept(firstToken, invitee.id))
        expect(replaced._tag).toBe("InvitationRevoked")
        expect((yield* members.list(company.companyId)).invitations.map((i) => i.id)).toEqual([second.invitation.id])

        // Withdrawn.
        const { token: secondToken } = yield* messageOf(second.invitation.id)
        yield* members.revokeInvitation({
          companyId: company.companyId,
          by: company.owner,
          invitationId: second.invitation.id
        })
        expect((yield* Effect.flip(members.invitation(secondToken)))._tag).toBe("InvitationRevoked")
        expect((yield* members.list(company.companyId)).invitations).toEqual([])

        // Valid seven days to the second, then expired.
        const third = yield* invite
        const { token } = yield* messageOf(third.invitation.id)
        yield* TestClock.adjust(7 * dayMillis - 1000)
        expect((yield* members.invitation(token)).id).toBe(third.invitation.id)
        yield* TestClock.adjust(2000)
        const expired = yield* refused(company.companyId, members.accept(token, invitee.id))
        expect(expired).toMatchObject({ _tag: "InvitationExpired" })
        expect((yield* members.list(company.companyId)).invitations).toEqual([])
        expect(Option.isNone(yield* Effect.option(members.get(company.companyId, invitee.id)))).toBe(true)
      })
    )

    it.effect("a member gives only what it holds: rights, role and accounts; a member is not invited twice", () =>
      Effect.gen(function* () {
        const members = yield* Members
        const company = yield* companyWithOwner
        const acct1 = company.accountId
        const acct2 = "a2a2a2a2a2a2a2a2a2a2a2a2"
        yield* insertAccount(company.companyId, "test", acct2)
        const other = yield* createCompany()

        const developer = yield* join(company, "developer")
        const viewer = yield* join(company, "viewer")
        const admin = yield* join(company, "admin")
        const limitedAdmin = yield* join(company, "admin", { scope: "selected-accounts", ids: [acct2.toUpperCase()] })
        expect(limitedAdmin.accountsAccess).toEqual({ scope: "selected-accounts", ids: [acct2] })
        const invite = (by: { userId: string }, role: Role, accountsAccess?: AccountsAccess) =>
          refused(
            company.companyId,
            members.invite({
              companyId: company.companyId,
              by,
              email: "newcomer@example.com",
              role,
              ...(accountsAccess === undefined ? {} : { accountsAccess })
            })
          )

        expect(yield* invite(developer, "admin")).toMatchObject({
          _tag: "PermissionDenied",
          permission: "members:manage",
          message: "You lack the members:manage right: your role is developer."
        })
        expect(yield* invite(viewer, "viewer")).toMatchObject({
          _tag: "PermissionDenied",
          permission: "members:manage"
        })
        expect(yield* invite(admin, "owner")).toMatchObject({
          _tag: "PermissionDenied",
          permission: "company:manage",
          message: "You cannot invite an owner: only an owner can."
        })
        expect(yield* invite(limitedAdmin, "viewer")).toMatchObject({
          _tag: "AccountsAccessDenied",
          message: "You cannot invite a viewer: that reaches all accounts, and you reach only selected ones."
        })
        expect(yield* invite(limitedAdmin, "viewer", { scope: "selected-accounts", ids: [acct1] })).toMatchObject({
          _tag: "AccountsAccessDenied",
          message: `You cannot invite a viewer: that reaches account ${acct1}, which you do not reach.`
        })
        expect(
          yield* invite(company.owner, "viewer", { scope: "selected-accounts", ids: [other.accountId] })
        ).toMatchObject({ _tag: "InvalidRequest", errors: [{ path: "accountsAccess.ids[0]" }] })
        expect(yield* invite(company.owner, "owner", { scope: "selected-accounts", ids: [acct1] })).toMatchObject({
          _tag: "InvalidRequest",
          errors: [{ path: "accountsAccess", message: "An owner reaches every account." }]
        })
        const within = yield* members.invite({
          companyId: company.companyId,
          by: limitedAdmin,
          email: "within@example.com",
          role: "sender",
          accountsAccess: { scope: "selected-accounts", ids: [acct2] }
        })
        expect(within.invitation.accountsAccess).toEqual({ scope: "selected-accounts", ids: [acct2] })

        const already = yield* refused(
          company.companyId,
          members.invite({
            companyId: company.companyId,
            by: company.owner,
            email: developer.email.toUpperCase(),
            role: "viewer"
          })
        )
        expect(already).toMatchObject({
          _tag: "AlreadyMember",
          message: `${developer.email.toUpperCase()} is already a member of this company.`
        })
        expect(yield* invite(company.owner, "superuser" as Role)).toMatchObject({
          _tag: "InvalidRequest",
          errors: [{ path: "role", message: "Expected one of owner, admin, developer, sender, viewer" }]
        })
        const badEmail = yield* refused(
          company.companyId,
          members.invite({ companyId: company.companyId, by: company.owner, email: "nobody", role: "viewer" })
        )
        expect(badEmail).toMatchObject({ _tag: "InvalidRequest", errors: [{ path: "email" }] })

        // A member of another company invites nobody here.
        const outsider = yield* companyWithOwner
        const foreign = yield* refused(
          company.companyId,
          members.invite({ companyId: company.companyId, by: outsider.owner, email: "x@example.com", role: "viewer" })
        )
        expect(foreign._tag).toBe("NotFound")
      })
    )

    it.effect("the last owner cannot leave, be removed or demoted; ownership is transferred by an owner", () =>
      Effect.gen(function* () {
        const members = yield* Members
        const company = yield* companyWithOwner
        const { companyId, owner } = company
        const admin = yield* join(company, "admin")

        const leave = yield* refused(companyId, members.remove({ companyId, by: owner, userId: owner.userId }))
        expect(leave).toMatchObject({
          _tag: "LastOwner",
          message: "The company's last owner cannot leave; make another member owner first."
        })
        const demote = yield* refused(
          companyId,
          members.changeRole({ companyId, by: owner, userId: owner.userId, role: "admin" })
        )
        expect(demote._tag).toBe("LastOwner")
        // An admin touches no owner, nor makes one.
        const removeOwner = yield* refused(companyId, members.remove({ companyId, by: admin, userId: owner.userId }))
        expect(removeOwner).toMatchObject({
          _tag: "PermissionDenied",
          message: "You cannot remove Olivia: only an owner can."
        })
        const promote = yield* refused(
          companyId,
          members.changeRole({ companyId, by: admin, userId: admin.userId, role: "owner" })
        )
        expect(promote).toMatchObject({ _tag: "PermissionDenied", permission: "company:manage" })
        const takeOver = yield* refused(
          companyId,
          members.transferOwnership({ companyId, by: admin, to: admin.userId })
        )
        expect(takeOver).toMatchObject({
          _tag: "PermissionDenied",
          message: "You lack the company:manage right: your role is admin."
        })
        const unknown = yield* refused(
          companyId,
          members.transferOwnership({ companyId, by: owner, to: "ffffffffffffffffffffffff" })
        )
        expect(unknown._tag).toBe("MemberNotFound")

        yield* members.transferOwnership({ companyId, by: owner, to: admin.userId })
        expect((yield* members.get(companyId, admin.userId)).role).toBe("owner")
        expect((yield* members.get(companyId, owner.userId)).role).toBe("admin")
        const back = yield* refused(companyId, members.transferOwnership({ companyId, by: owner, to: owner.userId }))
        expect(back._tag).toBe("PermissionDenied")

        // With two owners, one may step down and then leave; the last one still cannot.
        yield* members.changeRole({ companyId, by: admin, userId: owner.userId, role: "owner" })
        const stepDown = yield* members.changeRole({ companyId, by: owner, userId: owner.userId, role: "viewer" })
        expect(stepDown.role).toBe("viewer")
        sessionsEnded.length = 0
        yield* members.remove({ companyId, by: owner, userId: owner.userId })
        expect(sessionsEnded).toEqual([{ userId: owner.userId, companyId }])
        expect((yield* members.list(companyId)).members.map((m) => [m.userId, m.role])).toEqual([
          [admin.userId, "owner"]
        ])
        const last = yield* refused(companyId, members.remove({ companyId, by: admin, userId: admin.userId }))
        expect(last._tag).toBe("LastOwner")
      })
    )

    it.effect("roles change, members leave or are removed, within the actor's reach", () =>
      Effect.gen(function* () {
        const members = yield* Members
        const company = yield* companyWithOwner
        const { companyId } = company
        const admin = yield* join(company, "admin")
        const developer = yield* join(company, "developer")
        const viewer = yield* join(company, "viewer")

        const byDeveloper = yield* refused(
          companyId,
          members.changeRole({ companyId, by: developer, userId: viewer.userId, role: "sender" })
        )
        expect(byDeveloper).toMatchObject({ _tag: "PermissionDenied", permission: "members:manage" })
        const changed = yield* members.changeRole({ companyId, by: admin, userId: developer.userId, role: "sender" })
        expect(changed).toMatchObject({ userId: developer.userId, role: "sender" })

        // A viewer leaves on its own; removing another takes the right.
        const removeOther = yield* refused(
          companyId,
          members.remove({ companyId, by: viewer, userId: developer.userId })
        )
        expect(removeOther).toMatchObject({ _tag: "PermissionDenied", permission: "members:manage" })
        sessionsEnded.length = 0
        yield* members.remove({ companyId, by: viewer, userId: viewer.userId })
        yield* members.remove({ companyId, by: admin, userId: developer.userId })
        expect(sessionsEnded).toEqual([
          { userId: viewer.userId, companyId },
          { userId: developer.userId, companyId }
        ])
        const gone = yield* refused(companyId, members.remove({ companyId, by: admin, userId: viewer.userId }))
        expect(gone).toMatchObject({ _tag: "MemberNotFound", userId: viewer.userId })
        // A removed member acts no more.
        const removed = yield* refused(
          companyId,
          members.invite({ companyId, by: viewer, email: "again@example.com", role: "viewer" })
        )
        expect(removed._tag).toBe("NotFound")
      })
    )

    it.effect("a member limited to some accounts works in those only, with the same Policy as a key", () =>
      Effect.gen(function* () {
        const members = yield* Members
        const policy = yield* CompanyPolicy
        const company = yield* companyWithOwner
        const { companyId } = company
        const acct2 = "b2b2b2b2b2b2b2b2b2b2b2b2"
        yield* insertAccount(companyId, "test", acct2)
        const other = yield* createCompany()
        const sender = yield* join(company, "sender")

        const foreign = yield* refused(
          companyId,
          members.limitAccounts({
            companyId,
            by: company.owner,
            userId: sender.userId,
            accountsAccess: { scope: "selected-accounts", ids: [acct2, other.accountId] }
          })
        )
        expect(foreign).toMatchObject({ _tag: "InvalidRequest", errors: [{ path: "accountsAccess.ids[1]" }] })
        const limitOwner = yield* refused(
          companyId,
          members.limitAccounts({
            companyId,
            by: company.owner,
            userId: company.owner.userId,
            accountsAccess: { scope: "selected-accounts", ids: [acct2] }
          })
        )
        expect(limitOwner._tag).toBe("InvalidRequest")
        const limited = yield* members.limitAccounts({
          companyId,
          by: company.owner,
          userId: sender.userId,
          accountsAccess: { scope: "selected-accounts", ids: [acct2] }
        })
        expect(limited.accountsAccess).toEqual({ scope: "selected-accounts", ids: [acct2] })

        // The scope the services take, as a key's would be.
        expect(yield* policy.scopeForMember(limited, "test")).toMatchObject({
          companyId,
          environment: "test",
          accountIds: [acct2]
        })
        expect(yield* policy.scopeForMember(limited, "test", acct2)).toMatchObject({ accountIds: [acct2] })
        expect(yield* Effect.flip(policy.scopeForMember(limited, "test", company.accountId))).toMatchObject({
          _tag: "AccountNotFound",
          message: `No account ${company.accountId} is reachable for you.`
        })
        expect(yield* policy.scopeForMember(company.owner, "live")).toMatchObject({ accountIds: "all" })

        const principal = principalOf(limited, "test")
        yield* policy.canPerform(principal, "gifts:create")
        expect(yield* Effect.flip(policy.canPerform(principal, "recipients:delete"))).toMatchObject({
          _tag: "PermissionDenied",
          message: "You lack the recipients:delete permission."
        })
        const viewer = principalOf(yield* join(company, "viewer"), "test")
        expect(yield* Effect.flip(policy.canPerform(viewer, "orders:create"))).toMatchObject({
          message: "You lack the orders:create permission."
        })
        expect(
          yield* Effect.flip(
            policy.canManageKey(
              principal,
              { permissions: ["gifts:create"], accountsAccess: allAccountsAccess },
              "create"
            )
          )
        ).toMatchObject({
          _tag: "AccountsAccessDenied",
          message: "You reach only selected accounts; you cannot create a key reaching all accounts."
        })
      })
    )

    it.effect("activating a company makes its live default account once, with an invoice method", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const companies = yield* Companies
        const company = yield* createCompany()
        expect(yield* companies.isLive(company.companyId)).toBe(false)

        const [first, again] = yield* Effect.all(
          [companies.activate(company.companyId), companies.activate(company.companyId)],
          { concurrency: "unbounded" }
        )
        expect([first.created, again.created].sort()).toEqual([false, true])
        expect(again.accountId).toBe(first.accountId)
        expect(yield* companies.isLive(company.companyId)).toBe(true)
        const accounts = yield* sql<{ id: string; environment: string; isDefault: boolean; type: string }>`
          SELECT a.id, a.environment, a.is_default, m.type FROM accounts a
            JOIN billing_methods m ON m.account_id = a.id AND m.is_default
          WHERE a.company_id = ${company.companyId} ORDER BY a.environment`
        expect(accounts).toEqual([
          { id: first.accountId, environment: "live", isDefault: true, type: "invoice" },
          { id: company.accountId, environment: "test", isDefault: true, type: "prepaid" }
        ])

        const missing = yield* Effect.flip(companies.activate("nosuchcompany1"))
        expect(missing._tag).toBe("CompanyNotFound")
      })
    )
  })
})
