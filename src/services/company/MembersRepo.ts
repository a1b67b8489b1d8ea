import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AccountsAccess } from "../../domain/company/Company.js"
import { Invitation, Member, Role } from "../../domain/company/Members.js"

/** A membership as the person sees it: the company, its name, the role held there. */
export const Membership = Schema.Struct({ companyId: Schema.String, companyName: Schema.String, role: Role })
export type Membership = typeof Membership.Type

export const NewMember = Schema.Struct({
  companyId: Schema.String,
  userId: Schema.String,
  role: Role,
  accountsAccess: AccountsAccess,
  at: Schema.DateFromSelf
})
export type NewMember = typeof NewMember.Type

/** An invitation with what its page shows: the company's name and who sent it. */
export const InvitationDetails = Schema.Struct({
  ...Invitation.fields,
  companyName: Schema.String,
  inviterName: Schema.String
})
export type InvitationDetails = typeof InvitationDetails.Type

export const NewInvitation = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  email: Schema.String,
  role: Role,
  accountsAccess: AccountsAccess,
  tokenHash: Schema.String,
  invitedBy: Schema.String,
  createdAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf
})
export type NewInvitation = typeof NewInvitation.Type

const CompanyAndUser = Schema.Struct({ companyId: Schema.String, userId: Schema.String })

/**
 * The `company_members` and `member_invitations` tables (docs/decisions/0054-company-members-and-roles.md).
 * Statements run in the caller's transaction; unexpected database errors are defects.
 */
export class MembersRepo extends Effect.Service<MembersRepo>()("MembersRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const memberColumns = sql`m.company_id, m.user_id, u.email, u.display_name, m.role, m.accounts_access, m.created_at`
    const invitationColumns = sql`i.id, i.company_id, i.email, i.role, i.accounts_access, i.invited_by, i.created_at,
      i.expires_at, i.accepted_at, i.revoked_at`

    const insert = SqlSchema.void({
      Request: NewMember,
      execute: (member) => sql`INSERT INTO company_members (company_id, user_id, role, accounts_access, created_at)
        VALUES (${member.companyId}, ${member.userId}, ${member.role},
                ${JSON.stringify(member.accountsAccess)}::jsonb, ${member.at})`
    })

    const find = SqlSchema.findOne({
      Request: CompanyAndUser,
      Result: Member,
      execute: ({ companyId, userId }) => sql`SELECT ${memberColumns}
        FROM company_members m JOIN users u ON u.id = m.user_id
        WHERE m.company_id = ${companyId} AND m.user_id = ${userId}`
    })

    const findByEmail = SqlSchema.findOne({
      Request: Schema.Struct({ companyId: Schema.String, email: Schema.String }),
      Result: Member,
      execute: ({ companyId, email }) => sql`SELECT ${memberColumns}
        FROM company_members m JOIN users u ON u.id = m.user_id
        WHERE m.company_id = ${companyId} AND lower(u.email) = lower(${email})`
    })

    const findAll = SqlSchema.findAll({
      Request: Schema.String,
      Result: Member,
      execute: (companyId) => sql`SELECT ${memberColumns}
        FROM company_members m JOIN users u ON u.id = m.user_id
        WHERE m.company_id = ${companyId} ORDER BY m.created_at, m.user_id`
    })

    const membershipsOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: Membership,
      execute: (userId) => sql`SELECT m.company_id, c.name AS company_name, m.role
        FROM company_members m JOIN companies c ON c.id = m.company_id
        WHERE m.user_id = ${userId} ORDER BY m.created_at, m.company_id`
    })

    const countOwners = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ owners: Schema.Number }),
      execute: (companyId) => sql`SELECT count(*)::int AS owners FROM company_members
        WHERE company_id = ${companyId} AND role = 'owner'`
    })

    const update = SqlSchema.void({
      Request: Schema.Struct({ ...CompanyAndUser.fields, role: Role, accountsAccess: AccountsAccess }),
      execute: ({ companyId, userId, role, accountsAccess }) => sql`UPDATE company_members
        SET role = ${role}, accounts_access = ${JSON.stringify(accountsAccess)}::jsonb
        WHERE company_id = ${companyId} AND user_id = ${userId}`
    })

    const remove = SqlSchema.void({
      Request: CompanyAndUser,
      execute: ({ companyId, userId }) =>
        sql`DELETE FROM company_members WHERE company_id = ${companyId} AND user_id = ${userId}`
    })

    const insertInvitation = SqlSchema.void({
      Request: NewInvitation,
      execute: (invitation) => sql`INSERT INTO member_invitations
          (id, company_id, email, role, accounts_access, token_hash, invited_by, created_at, expires_at)
        VALUES (${invitation.id}, ${invitation.companyId}, ${invitation.email}, ${invitation.role},
          ${JSON.stringify(invitation.accountsAccess)}::jsonb, ${invitation.tokenHash}, ${invitation.invitedBy},
          ${invitation.createdAt}, ${invitation.expiresAt})`
    })

    const revokeOpen = SqlSchema.void({
      Request: Schema.Struct({ companyId: Schema.String, email: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ companyId, email, at }) => sql`UPDATE member_invitations SET revoked_at = ${at}
        WHERE company_id = ${companyId} AND lower(email) = lower(${email})
          AND accepted_at IS NULL AND revoked_at IS NULL`
    })

    const findByTokenHash = SqlSchema.findOne({
      Request: Schema.String,
      Result: InvitationDetails,
      execute: (tokenHash) => sql`SELECT ${invitationColumns}, c.name AS company_name,
          coalesce(u.display_name, u.email) AS inviter_name
        FROM member_invitations i JOIN companies c ON c.id = i.company_id JOIN users u ON u.id = i.invited_by
        WHERE i.token_hash = ${tokenHash}`
    })

    const findInvitation = SqlSchema.findOne({
      Request: Schema.Struct({ companyId: Schema.String, id: Schema.String }),
      Result: Invitation,
      execute: ({ companyId, id }) => sql`SELECT ${invitationColumns} FROM member_invitations i
        WHERE i.company_id = ${companyId} AND i.id = ${id}`
    })

    const findPending = SqlSchema.findAll({
      Request: Schema.Struct({ companyId: Schema.String, at: Schema.DateFromSelf }),
      Result: Invitation,
      execute: ({ companyId, at }) => sql`SELECT ${invitationColumns} FROM member_invitations i
        WHERE i.company_id = ${companyId} AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > ${at}
        ORDER BY i.created_at DESC, i.id`
    })

    const close = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        at: Schema.DateFromSelf,
        how: Schema.Literal("accepted", "revoked")
      }),
      execute: ({ id, at, how }) =>
        how === "accepted"
          ? sql`UPDATE member_invitations SET accepted_at = ${at} WHERE id = ${id}`
          : sql`UPDATE member_invitations SET revoked_at = ${at} WHERE id = ${id}`
    })

    return {
      insert: (member: NewMember) => Effect.orDie(insert(member)),
      find: (companyId: string, userId: string) => Effect.orDie(find({ companyId, userId })),
      /** The member whose e-mail this is (case-insensitively), if the person is one. */
      findByEmail: (companyId: string, email: string) => Effect.orDie(findByEmail({ companyId, email })),
      /** The company's members, oldest first. */
      list: (companyId: string) => Effect.orDie(findAll(companyId)),
      membershipsOf: (userId: string) => Effect.orDie(membershipsOf(userId)),
      countOwners: (companyId: string) => Effect.map(Effect.orDie(countOwners(companyId)), (row) => row.owners),
      /** Sets a member's role and accounts. */
      update: (companyId: string, userId: string, role: Role, accountsAccess: AccountsAccess) =>
        Effect.orDie(update({ companyId, userId, role, accountsAccess })),
      remove: (companyId: string, userId: string) => Effect.orDie(remove({ companyId, userId })),
      insertInvitation: (invitation: NewInvitation) => Effect.orDie(insertInvitation(invitation)),
      /** Revokes the open invitations to an e-mail (case-insensitively): a new one replaces them. */
      revokeOpenInvitations: (companyId: string, email: string, at: Date) =>
        Effect.orDie(revokeOpen({ companyId, email, at })),
      /** The invitation with that token hash, with its company's and inviter's names. (Whoever changes invitations holds the company's lock.) */
      invitationByTokenHash: (tokenHash: string) => Effect.orDie(findByTokenHash(tokenHash)),
      /** One invitation of the company. */
      invitation: (companyId: string, id: string) => Effect.orDie(findInvitation({ companyId, id })),
      /** The company's invitations neither accepted, revoked nor expired at `at`, newest first. */
      pendingInvitations: (companyId: string, at: Date) => Effect.orDie(findPending({ companyId, at })),
      markAccepted: (id: string, at: Date) => Effect.orDie(close({ id, at, how: "accepted" })),
      markRevoked: (id: string, at: Date) => Effect.orDie(close({ id, at, how: "revoked" }))
    }
  })
}) {}
