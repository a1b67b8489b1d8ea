import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { type AllowanceLimit, allowanceStatus, spentInPeriod } from "../../domain/checkout/Allowances.js"
import { AllowanceExceeded, AllowanceUnavailable } from "../../domain/checkout/Errors.js"
import type { CheckoutItemRecord, CheckoutRecord } from "../../domain/checkout/Records.js"
import { makeId } from "../../domain/platform/Ids.js"
import { Catalog } from "../catalog/Catalog.js"
import { formatMoney } from "../catalog/Pricing.js"
import { nowDate } from "../platform/Time.js"
import { AllowancesRepo } from "./AllowancesRepo.js"
import { CheckoutPresenter, Checkouts } from "./Checkouts.js"
import { Events } from "./Events.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { Placement } from "./Placement.js"

const periodWords = { day: "today", week: "this week", month: "this month" } as const

/**
 * Pays a new checkout from the client's allowance (`payWith: "allowance"`; docs/allowances.md): the rules that
 * need no sum first (currency, amount per checkout, countries, recipients, categories), then one transaction that
 * locks the checkout, takes the amount from the allowance in one conditional statement
 * (`AllowancesRepo.take`), charges the saved card and marks the checkout paid (its receipt goes out), and
 * placement starts at once as after a payment on the page (`Placement.payThenPlace`). A refusal leaves the
 * checkout awaiting payment and names the rule; a declined card rolls the take back.
 */
export class AllowancePayments extends Effect.Service<AllowancePayments>()("AllowancePayments", {
  dependencies: [AllowancesRepo.Default, Catalog.Default, Checkouts.Default, Events.Default, Placement.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* AllowancesRepo
    const catalog = yield* Catalog
    const checkouts = yield* Checkouts
    const events = yield* Events
    const placement = yield* Placement
    const payments = yield* PaymentProvider
    const presenter = yield* CheckoutPresenter

    const pay = Effect.fn("AllowancePayments.pay")(function* (
      clientId: string,
      made: { readonly row: CheckoutRecord; readonly items: ReadonlyArray<CheckoutItemRecord> }
    ) {
      const { row, items } = made
      yield* Effect.annotateCurrentSpan({ "checkout.id": row.id })
      const paymentUrl = presenter.checkout(row, items).paymentUrl
      const money = (amount: number, currency = row.currency) => formatMoney(amount, currency, row.locale).display
      const unavailable = (message: string) => new AllowanceUnavailable({ message, checkoutId: row.id, paymentUrl })
      const exceeded = (limit: AllowanceLimit, message: string) =>
        new AllowanceExceeded({
          message: `${message} The user can pay at paymentUrl.`,
          limit,
          checkoutId: row.id,
          paymentUrl
        })

      const now = yield* nowDate
      const found = yield* repo.liveFor(row.userId, clientId)
      if (Option.isNone(found) || allowanceStatus(found.value, now) !== "active") {
        return yield* unavailable(
          "The user has no active allowance for this client (none was made, or it expired or was revoked). The user can pay at paymentUrl, or make an allowance."
        )
      }
      const allowance = found.value
      if (allowance.currency !== row.currency) {
        return yield* exceeded(
          "currency",
          `The allowance is in ${allowance.currency}; this checkout is in ${row.currency}.`
        )
      }
      if (row.totalAmount > allowance.perCheckoutLimit) {
        return yield* exceeded(
          "perCheckout",
          `This checkout (${money(row.totalAmount)}) is over the allowance's limit per checkout (${money(allowance.perCheckoutLimit)}).`
        )
      }
      if (allowance.allowedCountries !== null && !allowance.allowedCountries.includes(row.countryCode)) {
        return yield* exceeded(
          "countries",
          `The allowance does not cover deliveries to ${row.countryCode} (only ${allowance.allowedCountries.join(", ")}).`
        )
      }
      if (
        allowance.allowedRecipients !== null &&
        !allowance.allowedRecipients.includes(row.recipient.email.toLowerCase())
      ) {
        return yield* exceeded("recipients", `The allowance does not cover gifts to ${row.recipient.email}.`)
      }
      if (allowance.allowedCategories !== null) {
        const allowed = new Set(allowance.allowedCategories.map((name) => name.toLowerCase()))
        const categories = yield* catalog.categoriesOf([...new Set(items.map((item) => item.productId))])
        const outside = items.find((item) => !allowed.has((categories.get(item.productId) ?? "").toLowerCase()))
        if (outside !== undefined) {
          return yield* exceeded(
            "categories",
            `The allowance does not cover ${outside.productTitle} (category ${categories.get(outside.productId) ?? "unknown"}; allowed: ${allowance.allowedCategories.join(", ")}).`
          )
        }
      }

      /** Which limit refused a take, from the allowance as the takes before it left it. */
      const refusal = Effect.gen(function* () {
        const current = Option.getOrUndefined(yield* repo.findById(allowance.id))
        if (current === undefined || allowanceStatus(current, now) !== "active") {
          return unavailable("The allowance was revoked or has expired. The user can pay at paymentUrl.")
        }
        const totalLeft = current.totalLimit - current.spentTotal
        if (row.totalAmount > totalLeft) {
          return exceeded(
            "total",
            `This checkout (${money(row.totalAmount)}) is more than the allowance has left in total (${money(totalLeft)} of ${money(current.totalLimit)}).`
          )
        }
        const periodLeft = current.periodLimit - spentInPeriod(current, now)
        return exceeded(
          "period",
          `This checkout (${money(row.totalAmount)}) is more than the allowance has left ${periodWords[current.period]} (${money(periodLeft)} of ${money(current.periodLimit)}).`
        )
      })

      const payment = sql
        .withTransaction(
          Effect.gen(function* () {
            const locked = yield* checkouts.forPayment(row.id, row.paymentToken)
            if (Option.isNone(locked)) return yield* Effect.dieMessage(`checkout ${row.id} vanished`)
            if (locked.value.row.status !== "pending_payment" || locked.value.row.expiresAt <= now) {
              return yield* unavailable(`The checkout is ${locked.value.row.status}; it can no longer be paid.`)
            }
            const taken = yield* repo.take({
              entryId: yield* makeId,
              allowanceId: allowance.id,
              checkoutId: row.id,
              amount: row.totalAmount,
              at: now
            })
            if (Option.isNone(taken)) return yield* Effect.flip(refusal)
            // A declined card fails the transaction, so the take is rolled back with it.
            const charged = yield* payments
              .chargeSaved({
                paymentMethod: allowance.paymentMethod,
                amount: row.totalAmount,
                currency: row.currency,
                reference: row.id
              })
              .pipe(
                Effect.mapError((declined) =>
                  unavailable(
                    `The allowance's saved card was declined (${declined.message}) The user can pay at paymentUrl.`
                  )
                )
              )
            const paid = yield* checkouts.markPaid(locked.value, charged.chargeId, now)
            if (Option.isNone(paid)) return yield* Effect.dieMessage(`checkout ${row.id} changed under its lock`)
            return paid.value
          })
        )
        .pipe(Effect.catchTag("SqlError", Effect.die))
      const paid = yield* placement.payThenPlace(payment, (done) => Option.some(done.placementJob))
      yield* events.publish(row.id)
      return { row: paid.row, items: paid.items }
    })

    return { pay } as const
  })
}) {}
