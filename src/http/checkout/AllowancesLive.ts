import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import {
  Allowance,
  AllowanceList,
  type AllowanceRecord,
  allowanceStatus,
  nextPeriodStart,
  periodStartOf,
  spentInPeriod
} from "../../domain/checkout/Allowances.js"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { Allowances } from "../../services/checkout/Allowances.js"
import { nowDate } from "../../services/platform/Time.js"
import { Api } from "../Api.js"
import { CurrentUser } from "../identity/Agent.js"

/** The Allowance resource of a stored allowance at `now`: what is spent, and what one checkout may still cost. */
export const allowanceV1 = (row: AllowanceRecord, now: Date): Allowance => {
  const status = allowanceStatus(row, now)
  const inPeriod = spentInPeriod(row, now)
  const remaining =
    status === "active"
      ? Math.max(0, Math.min(row.perCheckoutLimit, row.periodLimit - inPeriod, row.totalLimit - row.spentTotal))
      : 0
  return Allowance.make({
    id: row.id,
    clientId: row.clientId,
    status,
    currency: row.currency,
    perCheckoutLimit: row.perCheckoutLimit,
    period: row.period,
    periodLimit: row.periodLimit,
    totalLimit: row.totalLimit,
    spentInPeriod: inPeriod,
    spentTotal: row.spentTotal,
    remainingInPeriod: remaining,
    periodResetsAt: nextPeriodStart(row.period, periodStartOf(row.period, now)).toISOString(),
    allowedCountries: row.allowedCountries,
    allowedRecipients: row.allowedRecipients,
    allowedCategories: row.allowedCategories,
    card: { brand: row.cardBrand, last4: row.cardLast4 },
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt === null ? null : row.revokedAt.toISOString()
  })
}

export const AllowancesLive = HttpApiBuilder.group(Api, "allowances", (handlers) =>
  Effect.gen(function* () {
    const allowances = yield* Allowances
    const publicUrl = yield* PublicUrl
    return handlers
      .handle("listAllowances", () =>
        Effect.gen(function* () {
          const { user, clientId } = yield* CurrentUser
          const rows = yield* allowances.listForUser(user.id)
          const now = yield* nowDate
          // The client sees its own allowances only, not what the person allowed other clients.
          return AllowanceList.make({
            allowances: rows.filter((row) => row.clientId === clientId).map((row) => allowanceV1(row, now)),
            setupUrl: `${publicUrl}/allowances/new?client_id=${encodeURIComponent(clientId)}`
          })
        })
      )
      .handle("revokeAllowance", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user, clientId }) => allowances.revoke(user.id, path.allowanceId, clientId))
      )
  })
)
