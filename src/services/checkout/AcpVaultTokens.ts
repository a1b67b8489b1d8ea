import { randomBytes } from "node:crypto"
import { SqlClient, SqlSchema } from "@effect/sql"
import { DateTime, Effect, Either, Option, Redacted, Schema } from "effect"
import { type DelegatePaymentRequest, VaultTokenRecord } from "../../domain/checkout/AcpPayments.js"
import { validateCard } from "../../domain/checkout/Cards.js"
import {
  CheckoutSessionNotPaid,
  InvalidCard,
  PaymentTokenDeclined,
  PaymentTokenExceeded,
  PaymentTokenExpired,
  PaymentTokenUsed
} from "../../domain/checkout/Errors.js"
import type { CheckoutItemRecord, CheckoutRecord } from "../../domain/checkout/Records.js"
import type { User } from "../../domain/identity/Users.js"
import { FieldIssue } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { sha256 } from "../identity/OAuthRules.js"
import { nowDate } from "../platform/Time.js"
import { Checkouts } from "./Checkouts.js"
import { Events } from "./Events.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { Placement } from "./Placement.js"

/** Where the token sits in a `complete` request: every refusal of it names this field. */
const TOKEN_PARAM = "payment_data.instrument.credential.token"

/**
 * The `acp_vault_tokens` table: the vault tokens `delegate_payment` made, by the SHA-256 of the token. Only
 * AcpVaultTokens uses it. Unexpected database errors are defects.
 */
export class AcpVaultTokensRepo extends Effect.Service<AcpVaultTokensRepo>()("AcpVaultTokensRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: VaultTokenRecord,
      execute: (row) => sql`INSERT INTO acp_vault_tokens ${sql.insert(row)}`
    })

    /** The token of `userId` with this hash, locked for update when inside a transaction. */
    const lockByHash = SqlSchema.findOne({
      Request: Schema.Struct({ tokenHash: Schema.String, userId: Schema.String }),
      Result: VaultTokenRecord,
      execute: ({ tokenHash, userId }) =>
        sql`SELECT * FROM acp_vault_tokens WHERE token_hash = ${tokenHash} AND user_id = ${userId} FOR UPDATE`
    })

    const markUsed = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, checkoutId: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ id, checkoutId, at }) =>
        sql`UPDATE acp_vault_tokens SET used_at = ${at}, checkout_id = ${checkoutId} WHERE id = ${id} AND used_at IS NULL`
    })

    /** Whether `userId` holds an unused token for the session that would pay `amount` in `currency` at `now`. */
    const anyUsable = SqlSchema.findAll({
      Request: Schema.Struct({
        userId: Schema.String,
        sessionId: Schema.String,
        currency: Schema.String,
        amount: Schema.Int,
        now: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ userId, sessionId, currency, amount, now }) => sql`
        SELECT id FROM acp_vault_tokens
        WHERE user_id = ${userId} AND checkout_session_id = ${sessionId} AND used_at IS NULL
          AND expires_at > ${now} AND currency = ${currency} AND max_amount >= ${amount}
        LIMIT 1`
    })

    return {
      insert: (row: VaultTokenRecord) => Effect.orDie(insert(row)),
      anyUsable: (request: typeof anyUsable extends (r: infer R) => any ? R : never) =>
        Effect.map(Effect.orDie(anyUsable(request)), (rows) => rows.length > 0),
      lockByHash: (tokenHash: string, userId: string) => Effect.orDie(lockByHash({ tokenHash, userId })),
      markUsed: (id: string, checkoutId: string, at: Date) => Effect.orDie(markUsed({ id, checkoutId, at }))
    } as const
  })
}) {}

const refusal = (
  Refusal:
    | typeof PaymentTokenDeclined
    | typeof PaymentTokenExpired
    | typeof PaymentTokenExceeded
    | typeof PaymentTokenUsed,
  message: string
) => new Refusal({ message, errors: [FieldIssue.make({ path: TOKEN_PARAM, message })] })

/**
 * Delegated payment, Ribbon as the PSP (docs/decisions/0079-acp-delegated-payment.md): `delegate` saves the card with
 * the payment provider (the test-mode simulator) and hands out a vault token bound by the allowance; `pay` pays a
 * session's checkout with it as the hosted page would, once. The card number goes no further than the provider: the
 * table keeps the provider's token of the saved card, and the vault token only as its SHA-256.
 */
export class AcpVaultTokens extends Effect.Service<AcpVaultTokens>()("AcpVaultTokens", {
  dependencies: [AcpVaultTokensRepo.Default, Checkouts.Default, Events.Default, Placement.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* AcpVaultTokensRepo
    const checkouts = yield* Checkouts
    const events = yield* Events
    const placement = yield* Placement
    const payments = yield* PaymentProvider

    /** Tokenizes the card (`POST /agentic_commerce/delegate_payment`): the response body, its `id` the vault token. */
    const delegate = Effect.fn("AcpVaultTokens.delegate")(function* (
      user: User,
      request: DelegatePaymentRequest,
      idempotencyKey: string
    ) {
      const now = yield* nowDate
      const card = request.payment_method
      const month = card.exp_month ?? ""
      const year = card.exp_year ?? ""
      const checked = validateCard(
        {
          number: Redacted.value(card.number),
          expiry: /^\d{1,2}$/.test(month) && /^\d{4}$/.test(year) ? `${month.padStart(2, "0")}/${year.slice(2)}` : "",
          cvc: card.cvc === undefined ? "" : Redacted.value(card.cvc),
          name: card.name ?? ""
        },
        now
      )
      const fields = { number: "number", expiry: "exp_month", cvc: "cvc", name: "name" } as const
      if (Either.isLeft(checked)) {
        return yield* new InvalidCard({
          message: checked.left.map((issue) => `payment_method.${fields[issue.field]}: ${issue.message}`).join(" "),
          errors: checked.left.map((issue) =>
            FieldIssue.make({ path: `payment_method.${fields[issue.field]}`, message: issue.message })
          )
        })
      }
      const saved = yield* payments.saveCard(checked.right).pipe(
        Effect.mapError(
          (declined) =>
            new InvalidCard({
              message: declined.message,
              errors: [FieldIssue.make({ path: "payment_method.number", message: declined.message })]
            })
        )
      )
      // Letters and digits only: the protocol's SPT credential pattern is `^vt_[a-zA-Z0-9]+$`.
      const token = `vt_${randomBytes(24).toString("hex")}`
      const { allowance } = request
      yield* repo.insert({
        id: yield* makeId,
        tokenHash: sha256(token),
        userId: user.id,
        paymentMethod: saved.paymentMethod,
        cardBrand: saved.brand,
        cardLast4: saved.last4,
        maxAmount: allowance.max_amount,
        currency: allowance.currency,
        checkoutSessionId: allowance.checkout_session_id,
        merchantId: allowance.merchant_id,
        expiresAt: DateTime.toDateUtc(allowance.expires_at),
        usedAt: null,
        checkoutId: null,
        createdAt: now
      })
      return {
        id: token,
        created: now.toISOString(),
        metadata: { ...request.metadata, merchant_id: allowance.merchant_id, idempotency_key: idempotencyKey }
      }
    })

    /**
     * The refusals that need no lock, so that a `complete` with a spent token is refused even once its session
     * is paid: an unknown token, a used one, or one for another session.
     */
    const check = Effect.fn("AcpVaultTokens.check")(function* (userId: string, sessionId: string, token: string) {
      const found = yield* repo.lockByHash(sha256(token), userId)
      if (Option.isNone(found)) return yield* refusal(PaymentTokenDeclined, "No such vault token.")
      if (found.value.usedAt !== null) {
        return yield* refusal(PaymentTokenUsed, "This vault token was already used: its allowance is one_time.")
      }
      if (found.value.checkoutSessionId !== sessionId) {
        return yield* refusal(
          PaymentTokenDeclined,
          `This vault token is for checkout session ${found.value.checkoutSessionId}, not ${sessionId}.`
        )
      }
    })

    /**
     * Pays the session's checkout with the token, as the hosted page pays it: one transaction locks the checkout
     * and the token, checks the allowance, marks the token used, charges the saved card and marks the checkout
     * paid (its receipt goes out); placement starts at once. A refusal or a declined card leaves both as they were.
     */
    const pay = Effect.fn("AcpVaultTokens.pay")(function* (
      userId: string,
      sessionId: string,
      checkout: { readonly row: CheckoutRecord; readonly items: ReadonlyArray<CheckoutItemRecord> },
      token: string
    ) {
      const { row } = checkout
      yield* Effect.annotateCurrentSpan({ "checkout.id": row.id })
      const now = yield* nowDate
      const payment = sql
        .withTransaction(
          Effect.gen(function* () {
            const locked = yield* checkouts.forPayment(row.id, row.paymentToken)
            if (Option.isNone(locked)) return yield* Effect.dieMessage(`checkout ${row.id} vanished`)
            if (locked.value.row.status !== "pending_payment" || locked.value.row.expiresAt <= now) {
              return yield* new CheckoutSessionNotPaid({
                message: `The session's checkout is ${locked.value.row.status}; it can no longer be paid with a token.`
              })
            }
            yield* check(userId, sessionId, token)
            const found = Option.getOrThrow(yield* repo.lockByHash(sha256(token), userId))
            if (found.expiresAt <= now) {
              return yield* refusal(
                PaymentTokenExpired,
                `This vault token expired at ${found.expiresAt.toISOString()}.`
              )
            }
            if (found.currency !== row.currency.toLowerCase()) {
              return yield* refusal(
                PaymentTokenDeclined,
                `This vault token is for ${found.currency}; the session is in ${row.currency.toLowerCase()}.`
              )
            }
            if (row.totalAmount > found.maxAmount) {
              return yield* refusal(
                PaymentTokenExceeded,
                `The session's total (${row.totalAmount}) is more than the vault token's max_amount (${found.maxAmount}).`
              )
            }
            yield* repo.markUsed(found.id, row.id, now)
            // A declined card fails the transaction, so the token is unused again.
            const charged = yield* payments
              .chargeSaved({
                paymentMethod: found.paymentMethod,
                amount: row.totalAmount,
                currency: row.currency,
                reference: row.id
              })
              .pipe(Effect.mapError((declined) => refusal(PaymentTokenDeclined, declined.message)))
            const paid = yield* checkouts.markPaid(locked.value, charged.chargeId, now)
            if (Option.isNone(paid)) return yield* Effect.dieMessage(`checkout ${row.id} changed under its lock`)
            return paid.value
          })
        )
        .pipe(Effect.catchTag("SqlError", Effect.die))
      yield* placement.payThenPlace(payment, (done) => Option.some(done.placementJob))
      yield* events.publish(row.id)
    })

    /**
     * Whether the person holds a token that would pay the session's checkout now: unused, bound to the session,
     * unexpired, in its currency and within its total (UCP's `ready_for_complete`; decision 0086).
     */
    const held = Effect.fn("AcpVaultTokens.held")(function* (
      userId: string,
      sessionId: string,
      checkout: CheckoutRecord
    ) {
      return yield* repo.anyUsable({
        userId,
        sessionId,
        currency: checkout.currency.toLowerCase(),
        amount: checkout.totalAmount,
        now: yield* nowDate
      })
    })

    return { delegate, check, pay, held } as const
  })
}) {}
