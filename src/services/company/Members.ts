import { Clock, Effect, Option } from "effect"
import { type AccountsAccess, type ApiKeyRecord, allAccounts } from "../../domain/company/Company.js"
import { type Member, type MemberRight, type Role, rolePermissions, roleRights } from "../../domain/company/Members.js"
import { NotFound } from "../../domain/platform/Errors.js"
import { MembersRepo } from "./MembersRepo.js"

/** What a member may do: the API permissions and accounts of its role, as a key would hold them, and its rights. */
export interface MemberGrant {
  readonly permissions: ApiKeyRecord["permissions"]
  readonly accountsAccess: AccountsAccess
  readonly rights: ReadonlyArray<MemberRight>
}

export const grantOf = (member: Pick<Member, "role" | "accountsAccess">): MemberGrant => ({
  permissions: rolePermissions[member.role],
  accountsAccess: member.accountsAccess,
  rights: roleRights[member.role]
})

/**
 * The people of a company (docs/decisions/0054-company-members-and-roles.md). Sign-up makes its person the first
 * owner; the dashboard finds the member behind a session here.
 */
export class Members extends Effect.Service<Members>()("Members", {
  dependencies: [MembersRepo.Default],
  effect: Effect.gen(function* () {
    const repo = yield* MembersRepo

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

    return { add, get, membershipsOf }
  })
}) {}
