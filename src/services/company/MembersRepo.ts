import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AccountsAccess } from "../../domain/company/Company.js"
import { Member, Role } from "../../domain/company/Members.js"

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

/**
 * The `company_members` and `member_invitations` tables (docs/decisions/0054-company-members-and-roles.md).
 * Statements run in the caller's transaction; unexpected database errors are defects.
 */
export class MembersRepo extends Effect.Service<MembersRepo>()("MembersRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const memberColumns = sql`m.company_id, m.user_id, u.email, u.display_name, m.role, m.accounts_access, m.created_at`

    const insert = SqlSchema.void({
      Request: NewMember,
      execute: (member) => sql`INSERT INTO company_members (company_id, user_id, role, accounts_access, created_at)
        VALUES (${member.companyId}, ${member.userId}, ${member.role},
                ${JSON.stringify(member.accountsAccess)}::jsonb, ${member.at})`
    })

    const find = SqlSchema.findOne({
      Request: Schema.Struct({ companyId: Schema.String, userId: Schema.String }),
      Result: Member,
      execute: ({ companyId, userId }) => sql`SELECT ${memberColumns}
        FROM company_members m JOIN users u ON u.id = m.user_id
        WHERE m.company_id = ${companyId} AND m.user_id = ${userId}`
    })

    const membershipsOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: Membership,
      execute: (userId) => sql`SELECT m.company_id, c.name AS company_name, m.role
        FROM company_members m JOIN companies c ON c.id = m.company_id
        WHERE m.user_id = ${userId} ORDER BY m.created_at, m.company_id`
    })

    return {
      insert: (member: NewMember) => Effect.orDie(insert(member)),
      find: (companyId: string, userId: string) => Effect.orDie(find({ companyId, userId })),
      membershipsOf: (userId: string) => Effect.orDie(membershipsOf(userId))
    }
  })
}) {}
