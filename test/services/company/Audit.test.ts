import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, TestClock } from "effect"
import type { AccountScope } from "../../../src/domain/company/Company.js"
import { Audit, withActor } from "../../../src/services/company/Audit.js"
import { CompanyServicesLive, createCompany } from "../../support/company.js"
import { TestDatabase } from "../../support/database.js"

/**
 * The Audit service on a real database (docs/decisions/0057-audit-log.md): a row as the fiber's actor (the operator
 * without one, a dashboard member with `withActor`), and a row that rolls back with its change.
 */

const scopeOf = (companyId: string) =>
  ({ companyId, environment: "test", accountIds: "all" }) as unknown as AccountScope

const firstPage = { filters: {}, include: [], fields: [], sort: [], page: { number: 1, size: 50, cursor: undefined } }

describe("Audit", () => {
  it.layer(Layer.mergeAll(Audit.Default, CompanyServicesLive).pipe(Layer.provideMerge(TestDatabase)), {
    timeout: 120_000
  })((it) => {
    it.effect(
      "records as the fiber's actor: a member with withActor, the operator without; rolls back with its change",
      () =>
        Effect.gen(function* () {
          const audit = yield* Audit
          const sql = yield* SqlClient.SqlClient
          const company = yield* createCompany()
          const change = {
            companyId: company.companyId,
            environment: "test",
            accountId: company.accountId,
            action: "campaign.created",
            target: "0123456789abcdef01234567"
          } as const
          const member = {
            type: "member",
            id: "aaaaaaaaaaaaaaaaaaaaaaaa",
            name: "Grace",
            sourceAddress: "203.0.113.7",
            requestId: "req-1"
          } as const
          // A second after the company's first key, so the list's order is the changes' order.
          yield* TestClock.adjust("1 second")
          yield* audit.record(change).pipe(withActor(member))
          // A change that fails takes its row with it.
          const failed = yield* Effect.either(
            sql.withTransaction(
              Effect.zipRight(audit.record({ ...change, action: "campaign.updated" }), Effect.fail("no"))
            )
          )
          expect(Either.isLeft(failed)).toBe(true)

          const { rows } = yield* audit.page(scopeOf(company.companyId), firstPage)
          expect(rows.map((row) => [row.action, row.actorType, row.actorId, row.actorName])).toEqual([
            ["campaign.created", "member", member.id, "Grace"],
            ["api_key.created", "operator", null, "operator"]
          ])
          expect(rows[0]).toMatchObject({
            targetType: "campaign",
            targetId: change.target,
            accountId: company.accountId,
            sourceAddress: "203.0.113.7",
            requestId: "req-1"
          })
          // Another company's scope reads none of them.
          const other = yield* createCompany()
          const theirs = yield* audit.page(scopeOf(other.companyId), firstPage)
          expect(theirs.rows.map((row) => row.targetId)).toEqual([other.apiKeyId])
        })
    )
  })
})
