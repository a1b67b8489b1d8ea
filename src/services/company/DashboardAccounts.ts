import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { companyNameLength } from "../../domain/company/Dashboard.js"
import { FieldIssue, InvalidRequest } from "../../domain/platform/Errors.js"
import { Users } from "../identity/Users.js"
import { Companies } from "./Companies.js"
import { Members } from "./Members.js"

/** What the dashboard's sign-up form sends. */
export interface SignUp {
  readonly email: string
  readonly password: string
  readonly companyName: string
}

/**
 * Self-serve sign-up on the company dashboard (docs/decisions/0056-dashboard-sessions-and-sign-up.md): a person, a
 * company in the test environment (its default account with funded sandbox money) and the person as its owner,
 * in one transaction, so a refusal at any step leaves nothing behind. The person is a user of the identity
 * context, with the OAuth sign-up's password rules; no API key is made.
 */
export class DashboardAccounts extends Effect.Service<DashboardAccounts>()("DashboardAccounts", {
  dependencies: [Users.Default, Companies.Default, Members.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const users = yield* Users
    const companies = yield* Companies
    const members = yield* Members

    const nameIssue = (name: string) =>
      name.length < companyNameLength.min || name.length > companyNameLength.max
        ? [
            FieldIssue.make({
              path: "companyName",
              message: `Expected ${companyNameLength.min} to ${companyNameLength.max} characters`
            })
          ]
        : []

    /**
     * Signs a person up: every field checked first (all problems reported together), the password hashed
     * outside the transaction, then the user, the company and the membership written together. An e-mail
     * already registered is `EmailTaken`.
     */
    const signUp = Effect.fn("DashboardAccounts.signUp")(function* (input: SignUp) {
      const companyName = input.companyName.trim()
      const prepared = yield* Effect.either(users.prepare({ email: input.email, password: input.password }))
      const issues = [...(Either.isLeft(prepared) ? prepared.left.errors : []), ...nameIssue(companyName)]
      if (Either.isLeft(prepared) || issues.length > 0) {
        return yield* new InvalidRequest({
          message: issues.map((issue) => `${issue.path}: ${issue.message}`).join("; "),
          errors: issues
        })
      }
      return yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const user = yield* users.register(prepared.right)
            const company = yield* companies.createWithoutKey({ name: companyName, environment: "test" })
            yield* members.add({ companyId: company.companyId, userId: user.id, role: "owner" })
            return { user, companyId: company.companyId, accountId: company.accountId }
          })
        )
        .pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * A new person joining by an invitation's link: the password (and an optional name) checked and hashed
     * first, then the user, made with the invitation's e-mail, and the membership written in one transaction,
     * so a refused acceptance (expired, withdrawn meanwhile) leaves no user behind. An e-mail already
     * registered is `EmailTaken`: that person signs in to accept.
     */
    const joinByInvitation = Effect.fn("DashboardAccounts.joinByInvitation")(function* (input: {
      readonly token: string
      readonly password: string
      readonly displayName?: string | undefined
    }) {
      const invitation = yield* members.invitation(input.token)
      const prepared = yield* users.prepare({
        email: invitation.email,
        password: input.password,
        displayName: input.displayName
      })
      return yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const user = yield* users.register(prepared)
            const member = yield* members.accept(input.token, user.id)
            return { user, member }
          })
        )
        .pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { signUp, joinByInvitation } as const
  })
}) {}
