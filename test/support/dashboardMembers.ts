import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import type { AccountsAccess } from "../../src/domain/company/Company.js"
import type { Role } from "../../src/domain/company/Members.js"
import { Members } from "../../src/services/company/Members.js"
import { csrfOf, DashboardBrowser, newEmail, strongPassword } from "./dashboard.js"
import { invitationPathFor } from "./invitations.js"

/**
 * People of a company in the dashboard, for tests running a server in-process (`RealPortServer`): who signed up
 * and what that made, members of another role added to a company and switched into it, and new people who join
 * by an invitation's link.
 */

/** What signing up made for an e-mail: the user, the company, its test account and that account's default method. */
export const signedUpIdsOf = (email: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ userId: string; companyId: string; accountId: string; methodId: string }>`SELECT u.id AS user_id,
          m.company_id, a.id AS account_id, b.id AS method_id
        FROM users u JOIN company_members m ON m.user_id = u.id
          JOIN accounts a ON a.company_id = m.company_id AND a.is_default AND a.environment = 'test'
          JOIN billing_methods b ON b.account_id = a.id AND b.is_default
        WHERE u.email = ${email} ORDER BY m.created_at LIMIT 1`,
      (rows) => rows[0]!
    )
  ).pipe(Effect.orDie)

/** A new company's owner, signed in. */
export const ownerOf = (baseUrl: string, companyName: string) =>
  Effect.gen(function* () {
    const browser = new DashboardBrowser(baseUrl)
    const { email } = yield* Effect.promise(() => browser.signUp(companyName))
    const ids = yield* signedUpIdsOf(email)
    return { browser, email, ...ids }
  })

/** Adds a signed-in `person` to `companyId` as `role`, and switches their browser to that company. */
export const asMemberOf = (
  person: { readonly browser: DashboardBrowser; readonly userId: string },
  companyId: string,
  role: Role,
  accountsAccess?: AccountsAccess
) =>
  Effect.gen(function* () {
    yield* Effect.flatMap(Members, (members) =>
      members.add({
        companyId,
        userId: person.userId,
        role,
        ...(accountsAccess === undefined ? {} : { accountsAccess })
      })
    )
    const home = yield* Effect.promise(() => person.browser.get("/dashboard"))
    const switched = yield* Effect.promise(() =>
      person.browser.post("/dashboard/switch-company", {
        csrf: csrfOf(home.text, "/dashboard/switch-company"),
        companyId
      })
    )
    if (switched.status !== 303) return yield* Effect.die(new Error(`Switching company answered ${switched.status}`))
    return person.browser
  })

/** A person of `role` in `companyId` (with its own company from signing up), signed in and switched to it. */
export const memberOf = (baseUrl: string, companyId: string, role: Role, accountsAccess?: AccountsAccess) =>
  Effect.flatMap(ownerOf(baseUrl, `${role}'s own`), (person) => asMemberOf(person, companyId, role, accountsAccess))

/**
 * A new person invited by `owner` (a signed-in browser) as `role` with every account, who opens the link of the
 * invitation's e-mail and joins with a password: their signed-in browser, e-mail and user id.
 */
export const joinedMemberOf = (owner: DashboardBrowser, role: string) =>
  Effect.gen(function* () {
    const email = newEmail(role)
    const invited = yield* Effect.promise(() =>
      owner.submit("/dashboard/members", { email, role, accounts: "all" }, "/dashboard/members/invitations")
    )
    expect(invited.status, invited.text.slice(0, 2000)).toBe(303)
    const path = yield* invitationPathFor(email)
    const browser = new DashboardBrowser(owner.baseUrl)
    const page = yield* Effect.promise(() => browser.get(path))
    const joined = yield* Effect.promise(() =>
      browser.post(`${path}/join`, { csrf: csrfOf(page.text, `${path}/join`), newPassword: strongPassword })
    )
    expect(joined.status, joined.text.slice(0, 2000)).toBe(303)
    const { userId } = yield* signedUpIdsOf(email)
    return { browser, email, userId }
  })
