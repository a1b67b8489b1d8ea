import { SqlClient } from "@effect/sql"
import { Data, DateTime, Effect, Either, Option } from "effect"
import {
  type AllowanceRecord,
  type AllowanceTerms,
  allowanceStatus,
  periodStartOf
} from "../../domain/checkout/Allowances.js"
import { type CardFieldError, type CardInput, validateCard } from "../../domain/checkout/Cards.js"
import { AllowanceNotFound } from "../../domain/checkout/Errors.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { nowDate } from "../platform/Time.js"
import { AllowancesRepo } from "./AllowancesRepo.js"
import { PaymentProvider } from "./PaymentProvider.js"

/** The card of a new allowance was refused: invalid details (by field), or the processor would not keep it. */
export class AllowanceCardRefused extends Data.TaggedError("AllowanceCardRefused")<{
  readonly fieldErrors: ReadonlyArray<CardFieldError>
  readonly message: string
}> {}

/**
 * Spending allowances (docs/decisions/0082-spending-allowances.md; docs/allowances.md): made by the person on the
 * hosted page for one client, seen and revoked by the person and by that client, revoked with the client's grant.
 * A new allowance for a client replaces the one before it. Payments from an allowance are
 * src/services/checkout/AllowancePayments.ts.
 */
export class Allowances extends Effect.Service<Allowances>()("Allowances", {
  dependencies: [AllowancesRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* AllowancesRepo
    const payments = yield* PaymentProvider

    /**
     * Saves the card with the payment provider (the number goes no further), then stores the allowance,
     * revoking the client's one before it in the same transaction.
     */
    const create = Effect.fn("Allowances.create")(function* (input: {
      readonly userId: string
      readonly clientId: string
      readonly terms: AllowanceTerms
      readonly card: CardInput
    }) {
      const { terms } = input
      if (terms.perCheckoutLimit > Math.min(terms.periodLimit, terms.totalLimit)) {
        return yield* InvalidRequest.field(
          "perCheckoutLimit",
          "The limit per checkout may not be more than the limit per period or the total limit"
        )
      }
      const now = yield* nowDate
      const card = validateCard(input.card, now)
      if (Either.isLeft(card)) {
        return yield* new AllowanceCardRefused({ fieldErrors: card.left, message: "Check your card details." })
      }
      const saved = yield* payments
        .saveCard(card.right)
        .pipe(Effect.mapError((declined) => new AllowanceCardRefused({ fieldErrors: [], message: declined.message })))
      const row: AllowanceRecord = {
        id: yield* makeId,
        userId: input.userId,
        clientId: input.clientId,
        currency: terms.currency,
        perCheckoutLimit: terms.perCheckoutLimit,
        period: terms.period,
        periodLimit: terms.periodLimit,
        totalLimit: terms.totalLimit,
        allowedCountries: terms.allowedCountries,
        allowedRecipients: terms.allowedRecipients?.map((email) => email.toLowerCase()) ?? null,
        allowedCategories: terms.allowedCategories,
        paymentMethod: saved.paymentMethod,
        cardBrand: saved.brand,
        cardLast4: saved.last4,
        spentTotal: 0,
        periodStart: periodStartOf(terms.period, now),
        periodSpent: 0,
        expiresAt: DateTime.toDate(DateTime.add(DateTime.unsafeFromDate(now), { days: terms.expiresInDays })),
        createdAt: now,
        revokedAt: null
      }
      yield* sql
        .withTransaction(
          Effect.zipRight(repo.revoke(input.userId, { clientId: input.clientId }, now), repo.insert(row))
        )
        .pipe(Effect.catchTag("SqlError", Effect.die))
      return row
    })

    /** The client's unrevoked allowance for the person, expired or not. */
    const forClient = Effect.fn("Allowances.forClient")((userId: string, clientId: string) =>
      repo.liveFor(userId, clientId)
    )

    /** Every allowance of the person, newest first, revoked and expired ones too. */
    const listForUser = Effect.fn("Allowances.listForUser")((userId: string) => repo.listForUser(userId))

    /** The person's allowance, for their history page; another person's is not found. */
    const get = Effect.fn("Allowances.get")(function* (userId: string, allowanceId: string) {
      const row = yield* repo.findById(allowanceId)
      if (Option.isNone(row) || row.value.userId !== userId) {
        return yield* new AllowanceNotFound({ message: `No allowance ${allowanceId}.`, allowanceId })
      }
      return { row: row.value, ledger: yield* repo.ledger(allowanceId) }
    })

    /**
     * Revokes one allowance of the person, effective at once (the next take finds it revoked); `clientId` limits it
     * to that client's (the agent API). Revoking a revoked one again is a no-op; an unknown one is not found.
     */
    const revoke = Effect.fn("Allowances.revoke")(function* (userId: string, allowanceId: string, clientId?: string) {
      const row = yield* repo.findById(allowanceId)
      if (
        Option.isNone(row) ||
        row.value.userId !== userId ||
        (clientId !== undefined && row.value.clientId !== clientId)
      ) {
        return yield* new AllowanceNotFound({ message: `No allowance ${allowanceId}.`, allowanceId })
      }
      yield* repo.revoke(userId, { id: allowanceId }, yield* nowDate)
    })

    /** Revokes the client's allowance for the person: its OAuth grant was revoked. */
    const revokeForClient = Effect.fn("Allowances.revokeForClient")(function* (userId: string, clientId: string) {
      yield* repo.revoke(userId, { clientId }, yield* nowDate)
    })

    return { create, forClient, listForUser, get, revoke, revokeForClient, status: allowanceStatus } as const
  })
}) {}
