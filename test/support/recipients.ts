import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { allAccounts } from "../../src/domain/company/Company.js"
import { CompanyPolicy } from "../../src/services/company/Policy.js"
import { Recipients } from "../../src/services/company/Recipients.js"

/** Recipients for tests running a server in-process (`RealPortServer`): made through the service the API calls. */

export interface Person {
  readonly firstName: string
  readonly lastName: string
  readonly email: string
  readonly phone: string | null
  readonly externalId: string | null
}

/** Recipients of the company's test environment, made through the service, the first one the newest. */
export const seedRecipients = (companyId: string, userId: string, people: ReadonlyArray<Person>) =>
  Effect.gen(function* () {
    const recipients = yield* Recipients
    const policy = yield* CompanyPolicy
    const sql = yield* SqlClient.SqlClient
    const scope = yield* policy.scopeForMember(
      {
        companyId,
        userId,
        email: "seed@example.com",
        displayName: null,
        role: "owner",
        accountsAccess: allAccounts,
        createdAt: new Date()
      },
      "test"
    )
    const ids: Array<string> = []
    for (const [index, person] of people.entries()) {
      const made = yield* recipients.create(
        { scope, account: Option.none(), source: null },
        {
          firstName: person.firstName,
          lastName: person.lastName,
          email: person.email,
          mobilePhone: person.phone,
          country: "US",
          externalId: person.externalId,
          accountIds: []
        }
      )
      yield* sql`UPDATE recipients SET created_at = TIMESTAMPTZ '2026-03-01T12:00:00Z' - ${index} * INTERVAL '1 minute'
        WHERE id = ${made.id}`
      ids.push(made.id)
    }
    return ids
  }).pipe(Effect.orDie)

export const grace: Person = {
  firstName: "Grace",
  lastName: "Hopper",
  email: "grace.hopper@navy.example",
  phone: "+14155552671",
  externalId: "crm-1"
}
export const alan: Person = {
  firstName: "Alan",
  lastName: "Turing",
  email: "alan@bletchley.example",
  phone: null,
  externalId: null
}
