import { createHash } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Option, Schema } from "effect"
import { type AuditAction, memberActorName } from "../../domain/company/Audit.js"
import { type AccountsAccess, allAccounts } from "../../domain/company/Company.js"
import {
  AlreadyMember,
  InvitationAlreadyAccepted,
  InvitationEmailMismatch,
  InvitationExpired,
  InvitationNotFound,
  InvitationRevoked,
  LastOwner,
  MemberNotFound
} from "../../domain/company/Errors.js"
import {
  grantOf,
  type Invitation,
  invitationLifetimeDays,
  type Member,
  type MemberGrant,
  Role,
  roles
} from "../../domain/company/Members.js"
import { InvalidRequest, NotFound } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { PublicUrl } from "../catalog/Catalog.js"
import { Notifications } from "../checkout/Notifications.js"
import { EMAIL, Users } from "../identity/Users.js"
import { Audit, type AuditedChange } from "./Audit.js"
import { CompaniesRepo } from "./CompaniesRepo.js"
import { type InvitationDetails, MembersRepo } from "./MembersRepo.js"
import { CompanyPolicy } from "./Policy.js"

export type { InvitationDetails }
export { grantOf, type MemberGrant }

/**
 * What ends a removed member's dashboard sessions (`DashboardSessions.revokeAllFor`). Optional, so that the
 * members service does not depend on the sessions (which find members here): the server provides it.
 */
export class MemberSessionsRevoker extends Context.Tag("MemberSessionsRevoker")<
  MemberSessionsRevoker,
  { readonly revokeAllFor: (userId: string, companyId: string) => Effect.Effect<void> }
>() {}

const dayMillis = 24 * 60 * 60 * 1000

/** 32 random bytes, base64url: an invitation's token, sent only in its link. */
const newToken = () => Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(32))).toString("base64url")

const tokenPattern = /^[A-Za-z0-9_-]{43}$/

const sha256 = (value: string) => createHash("sha256").update(value).digest("hex")

const nameOf = (member: Pick<Member, "displayName" | "email">) => member.displayName ?? member.email

const isRole = Schema.is(Role)

/** A role the caller passed from a form: one of the five, or a 400 naming `path`. */
const knownRole = (role: string, path: string) =>
  isRole(role) ? Effect.void : InvalidRequest.field(path, `Expected one of ${roles.join(", ")}`)

const aRole = (role: Role) => `${role === "owner" || role === "admin" ? "an" : "a"} ${role}`

/** Account ids lower-cased and without repeats; none for all accounts. */
const normalized = (access: AccountsAccess): AccountsAccess =>
  access.scope === "all-accounts"
    ? allAccounts
    : { scope: "selected-accounts", ids: [...new Set(access.ids.map((id) => id.toLowerCase()))] }

/** The pending invitation a token names, or why it cannot be used. */
const usable = (invitation: Option.Option<InvitationDetails>, now: number) =>
  Effect.gen(function* () {
    if (Option.isNone(invitation)) {
      return yield* new InvitationNotFound({ message: "This invitation link is not valid." })
    }
    const found = invitation.value
    if (found.acceptedAt !== null) {
      return yield* new InvitationAlreadyAccepted({ message: "This invitation has already been accepted." })
    }
    if (found.revokedAt !== null) {
      return yield* new InvitationRevoked({
        message: "This invitation was withdrawn or replaced by a newer one; ask for a new invitation."
      })
    }
    if (found.expiresAt.getTime() <= now) {
      return yield* new InvitationExpired({
        message: `This invitation has expired (links are valid ${invitationLifetimeDays} days); ask for a new one.`
      })
    }
    return found
  })

/**
 * The people of a company (docs/decisions/0054-company-members-and-roles.md). Sign-up makes its person the first
 * owner; the dashboard finds the member behind a session here, and manages members through the operations below,
 * judged by the company Policy. Each operation that changes members runs in one transaction holding the company
 * row's lock, so the count of owners cannot go stale and invitations change one at a time.
 */
export class Members extends Effect.Service<Members>()("Members", {
  dependencies: [
    MembersRepo.Default,
    CompaniesRepo.Default,
    CompanyPolicy.Default,
    Notifications.Default,
    Users.Default,
    Audit.Default
  ],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* MembersRepo
    const companies = yield* CompaniesRepo
    const policy = yield* CompanyPolicy
    const notifications = yield* Notifications
    const users = yield* Users
    const audit = yield* Audit
    const sessions = yield* Effect.serviceOption(MemberSessionsRevoker)
    const publicUrl = (yield* PublicUrl).replace(/\/$/, "")

    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))

    /** The audit row of a change to the company's people: of no environment and no account. */
    const recorded = (companyId: string, action: AuditAction, target: string, as?: AuditedChange["as"]) =>
      audit.record({
        companyId,
        environment: null,
        accountId: null,
        action,
        target,
        ...(as === undefined ? {} : { as })
      })

    /** Adds a person to a company; runs in the caller's transaction (sign-up's, an invitation's acceptance). */
    const add = Effect.fn("Members.add")(function* (input: {
      readonly companyId: string
      readonly userId: string
      readonly role: Role
      readonly accountsAccess?: AccountsAccess
    }) {
      const at = new Date(yield* Clock.currentTimeMillis)
      yield* repo.insert({
        companyId: input.companyId,
        userId: input.userId,
        role: input.role,
        accountsAccess: input.accountsAccess ?? allAccounts,
        at
      })
    })

    /** The member a person is in a company, or NotFound when the person is not one. */
    const get = Effect.fn("Members.get")(function* (companyId: string, userId: string) {
      const member = yield* repo.find(companyId, userId)
      return yield* Option.match(member, {
        onNone: () => Effect.fail(new NotFound({ message: "You are not a member of this company." })),
        onSome: Effect.succeed
      })
    })

    /** The companies a person belongs to, oldest membership first. */
    const membershipsOf = Effect.fn("Members.membershipsOf")((userId: string) => repo.membershipsOf(userId))

    /** The company's members (name, e-mail, role, accounts), oldest first, and its pending invitations. */
    const list = Effect.fn("Members.list")(function* (companyId: string) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const members = yield* repo.list(companyId)
      const invitations = yield* repo.pendingInvitations(companyId, now)
      return { members, invitations }
    })

    /**
     * Inside a transaction: locks the company and reads the acting member afresh (its role may have changed
     * since its session read it).
     */
    const actingIn = (companyId: string, by: Pick<Member, "userId">) =>
      Effect.gen(function* () {
        if (!(yield* companies.lock(companyId))) {
          return yield* new NotFound({ message: "No such company." })
        }
        const actor = yield* repo.find(companyId, by.userId)
        if (Option.isNone(actor)) return yield* new NotFound({ message: "You are not a member of this company." })
        return actor.value
      })

    const memberIn = (companyId: string, userId: string) =>
      Effect.flatMap(repo.find(companyId, userId), (member) =>
        Option.match(member, {
          onNone: () => Effect.fail(new MemberNotFound({ message: "No such member in this company.", userId })),
          onSome: Effect.succeed
        })
      )

    /** The accounts a member is given: every id an account of the company (either environment); an owner reaches all. */
    const checkedAccess = (companyId: string, role: Role, access: AccountsAccess, path: string) =>
      Effect.gen(function* () {
        const wanted = normalized(access)
        if (wanted.scope === "all-accounts") return wanted
        if (role === "owner") return yield* InvalidRequest.field(path, "An owner reaches every account.")
        if (wanted.ids.length === 0) return wanted
        const test = yield* companies.accountIdsOf(companyId, "test", wanted.ids)
        const live = yield* companies.accountIdsOf(companyId, "live", wanted.ids)
        const index = wanted.ids.findIndex((id) => !test.has(id) && !live.has(id))
        if (index >= 0) return yield* InvalidRequest.field(`${path}.ids[${index}]`, "No such account in this company.")
        return wanted
      })

    /** Refuses a change that would leave the company without an owner. */
    const keepsAnOwner = (companyId: string, target: Member, message: string) =>
      Effect.gen(function* () {
        if (target.role !== "owner") return
        if ((yield* repo.countOwners(companyId)) <= 1) return yield* new LastOwner({ message })
      })

    /**
     * Invites a person by e-mail, in a role and to some accounts the inviter may give (its own reach, rights
     * included). The e-mail, with a link valid seven days, goes through the notifications outbox; inviting a
     * pending e-mail again replaces its invitation. The link is returned too, for the inviter to pass on.
     */
    const invite = Effect.fn("Members.invite")(function* (input: {
      readonly companyId: string
      readonly by: Pick<Member, "userId">
      readonly email: string
      readonly role: Role
      readonly accountsAccess?: AccountsAccess
    }) {
      yield* knownRole(input.role, "role")
      const email = input.email.trim()
      if (!EMAIL.test(email) || email.length > 254) {
        return yield* InvalidRequest.field("email", "Expected an e-mail address")
      }
      const now = yield* Clock.currentTimeMillis
      const token = newToken()
      const link = `${publicUrl}/dashboard/invitations/${token}`
      const invitation = yield* transaction(
        Effect.gen(function* () {
          const actor = yield* actingIn(input.companyId, input.by)
          yield* policy.canExercise(actor, "members:manage")
          const accountsAccess = yield* checkedAccess(
            input.companyId,
            input.role,
            input.accountsAccess ?? allAccounts,
            "accountsAccess"
          )
          yield* policy.canManageMember(actor, { role: input.role, accountsAccess }, `invite ${aRole(input.role)}`)
          if (Option.isSome(yield* repo.findByEmail(input.companyId, email))) {
            return yield* new AlreadyMember({ message: `${email} is already a member of this company.`, email })
          }
          const createdAt = new Date(now)
          yield* repo.revokeOpenInvitations(input.companyId, email, createdAt)
          const invitation: Invitation = {
            id: yield* makeId,
            companyId: input.companyId,
            email,
            role: input.role,
            accountsAccess,
            invitedBy: actor.userId,
            createdAt,
            expiresAt: new Date(now + invitationLifetimeDays * dayMillis),
            acceptedAt: null,
            revokedAt: null
          }
          yield* repo.insertInvitation({ ...invitation, tokenHash: sha256(token) })
          yield* recorded(input.companyId, "member.invited", invitation.id)
          const companyName = yield* companies.nameOf(input.companyId)
          yield* notifications.invitation({
            invitationId: invitation.id,
            email,
            companyName: Option.getOrElse(companyName, () => input.companyId),
            inviterName: nameOf(actor),
            role: input.role,
            link,
            expiresAt: invitation.expiresAt
          })
          return invitation
        })
      )
      return { invitation, link }
    })

    /**
     * The pending invitation a link's token names, with its company's name and its inviter's: what the
     * invitation page shows (the e-mail to sign in or sign up with), or why it cannot be used.
     */
    const invitation = Effect.fn("Members.invitation")(function* (token: string) {
      const found = tokenPattern.test(token) ? yield* repo.invitationByTokenHash(sha256(token)) : Option.none()
      return yield* usable(found, yield* Clock.currentTimeMillis)
    })

    /**
     * Accepts an invitation for the signed-in person, whose e-mail must be the invitation's: the membership and
     * the invitation's acceptance in one transaction (the caller's, when it has one: the dashboard creates a
     * new person with `Users.create` and accepts in the same transaction).
     */
    const accept = Effect.fn("Members.accept")(function* (token: string, userId: string) {
      const tokenHash = tokenPattern.test(token) ? sha256(token) : undefined
      return yield* transaction(
        Effect.gen(function* () {
          const first = tokenHash === undefined ? Option.none() : yield* repo.invitationByTokenHash(tokenHash)
          const { companyId } = yield* usable(first, yield* Clock.currentTimeMillis)
          // Every change to invitations holds the company's lock: read again under it.
          yield* companies.lock(companyId)
          const invitation = yield* usable(
            yield* repo.invitationByTokenHash(tokenHash ?? ""),
            yield* Clock.currentTimeMillis
          )
          const user = yield* users.get(userId)
          if (Option.isNone(user)) return yield* new NotFound({ message: "No such user." })
          if (user.value.email.toLowerCase() !== invitation.email.toLowerCase()) {
            return yield* new InvitationEmailMismatch({
              message: `This invitation was sent to another e-mail address; sign in as ${invitation.email} to accept it.`
            })
          }
          if (Option.isSome(yield* repo.find(companyId, userId))) {
            return yield* new AlreadyMember({
              message: `${invitation.email} is already a member of this company.`,
              email: invitation.email
            })
          }
          yield* add({ companyId, userId, role: invitation.role, accountsAccess: invitation.accountsAccess })
          yield* repo.markAccepted(invitation.id, new Date(yield* Clock.currentTimeMillis))
          // The person joining acts, signed in or not yet.
          yield* recorded(companyId, "member.joined", userId, {
            type: "member",
            id: userId,
            name: memberActorName(user.value.displayName)
          })
          return yield* memberIn(companyId, userId)
        })
      )
    })

    /** Withdraws a pending invitation (one within the member's reach); its link stops working at once. */
    const revokeInvitation = Effect.fn("Members.revokeInvitation")(function* (input: {
      readonly companyId: string
      readonly by: Pick<Member, "userId">
      readonly invitationId: string
    }) {
      yield* transaction(
        Effect.gen(function* () {
          const actor = yield* actingIn(input.companyId, input.by)
          yield* policy.canExercise(actor, "members:manage")
          const found = yield* repo.invitation(input.companyId, input.invitationId.toLowerCase())
          if (Option.isNone(found)) return yield* new InvitationNotFound({ message: "No such invitation." })
          const invitation = found.value
          if (invitation.acceptedAt !== null) {
            return yield* new InvitationAlreadyAccepted({ message: "This invitation has already been accepted." })
          }
          if (invitation.revokedAt !== null) return
          yield* policy.canManageMember(actor, invitation, `withdraw an invitation for ${aRole(invitation.role)}`)
          yield* repo.markRevoked(invitation.id, new Date(yield* Clock.currentTimeMillis))
          yield* recorded(input.companyId, "invitation.revoked", invitation.id)
        })
      )
    })

    /**
     * Gives a member another role: both the member as it is and as it would be within the acting member's reach
     * (so only an owner makes or demotes an owner); the last owner keeps its role. An owner reaches every account.
     */
    const changeRole = Effect.fn("Members.changeRole")(function* (input: {
      readonly companyId: string
      readonly by: Pick<Member, "userId">
      readonly userId: string
      readonly role: Role
    }) {
      yield* knownRole(input.role, "role")
      return yield* transaction(
        Effect.gen(function* () {
          const actor = yield* actingIn(input.companyId, input.by)
          yield* policy.canExercise(actor, "members:manage")
          const target = yield* memberIn(input.companyId, input.userId)
          const accountsAccess = input.role === "owner" ? allAccounts : target.accountsAccess
          yield* policy.canManageMember(actor, target, `change the role of ${nameOf(target)}`)
          yield* policy.canManageMember(
            actor,
            { role: input.role, accountsAccess },
            `make ${nameOf(target)} ${aRole(input.role)}`
          )
          if (input.role === target.role) return target
          yield* keepsAnOwner(
            input.companyId,
            target,
            "The company's last owner cannot be given another role; make another member owner first."
          )
          yield* repo.update(input.companyId, target.userId, input.role, accountsAccess)
          yield* recorded(input.companyId, "member.role_changed", target.userId)
          return yield* memberIn(input.companyId, target.userId)
        })
      )
    })

    /**
     * Removes a member, or lets a member leave (removing itself needs no right); never the last owner. The
     * member's dashboard sessions end with it.
     */
    const remove = Effect.fn("Members.remove")(function* (input: {
      readonly companyId: string
      readonly by: Pick<Member, "userId">
      readonly userId: string
    }) {
      yield* transaction(
        Effect.gen(function* () {
          const actor = yield* actingIn(input.companyId, input.by)
          const target = yield* memberIn(input.companyId, input.userId)
          const leaving = target.userId === actor.userId
          if (!leaving) {
            yield* policy.canExercise(actor, "members:manage")
            yield* policy.canManageMember(actor, target, `remove ${nameOf(target)}`)
          }
          yield* keepsAnOwner(
            input.companyId,
            target,
            leaving
              ? "The company's last owner cannot leave; make another member owner first."
              : "The company's last owner cannot be removed; make another member owner first."
          )
          yield* repo.remove(input.companyId, target.userId)
          yield* recorded(input.companyId, "member.removed", target.userId)
          // Signed out of this company at once, in the same transaction (DashboardSessions.revokeAllFor).
          if (Option.isSome(sessions)) yield* sessions.value.revokeAllFor(target.userId, input.companyId)
        })
      )
    })

    /** An owner hands ownership to another member, who becomes owner (every account); the former owner becomes admin. */
    const transferOwnership = Effect.fn("Members.transferOwnership")(function* (input: {
      readonly companyId: string
      readonly by: Pick<Member, "userId">
      readonly to: string
    }) {
      yield* transaction(
        Effect.gen(function* () {
          const actor = yield* actingIn(input.companyId, input.by)
          yield* policy.canExercise(actor, "company:manage")
          const target = yield* memberIn(input.companyId, input.to)
          if (target.userId === actor.userId) return yield* InvalidRequest.field("to", "You already own the company.")
          yield* repo.update(input.companyId, target.userId, "owner", allAccounts)
          yield* repo.update(input.companyId, actor.userId, "admin", allAccounts)
          yield* recorded(input.companyId, "ownership.transferred", target.userId)
        })
      )
    })

    /** Limits a member to some accounts of the company (or gives it all), as a key is limited, within the actor's reach. */
    const limitAccounts = Effect.fn("Members.limitAccounts")(function* (input: {
      readonly companyId: string
      readonly by: Pick<Member, "userId">
      readonly userId: string
      readonly accountsAccess: AccountsAccess
    }) {
      return yield* transaction(
        Effect.gen(function* () {
          const actor = yield* actingIn(input.companyId, input.by)
          yield* policy.canExercise(actor, "members:manage")
          const target = yield* memberIn(input.companyId, input.userId)
          const accountsAccess = yield* checkedAccess(
            input.companyId,
            target.role,
            input.accountsAccess,
            "accountsAccess"
          )
          const action = `change the accounts of ${nameOf(target)}`
          yield* policy.canManageMember(actor, target, action)
          yield* policy.canManageMember(actor, { role: target.role, accountsAccess }, action)
          yield* repo.update(input.companyId, target.userId, target.role, accountsAccess)
          yield* recorded(input.companyId, "member.accounts_limited", target.userId)
          return yield* memberIn(input.companyId, target.userId)
        })
      )
    })

    return {
      add,
      get,
      membershipsOf,
      list,
      invite,
      invitation,
      accept,
      revokeInvitation,
      changeRole,
      remove,
      transferOwnership,
      limitAccounts
    } as const
  })
}) {}
