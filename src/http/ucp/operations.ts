import { Effect } from "effect"
import type { UcpCheckoutRequest } from "../../domain/checkout/Ucp.js"
import type { User } from "../../domain/identity/Users.js"
import { FieldIssue, InvalidRequest } from "../../domain/platform/Errors.js"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { Pricing } from "../../services/catalog/Pricing.js"
import { AcpSessions, type AcpSessionView } from "../../services/checkout/AcpSessions.js"
import { AcpVaultTokens } from "../../services/checkout/AcpVaultTokens.js"
import { CheckoutPresenter } from "../../services/checkout/Checkouts.js"
import {
  buyerOf,
  countryOf,
  detailsOf,
  itemsOf,
  lineIndexOf,
  paymentDataOf,
  paymentPathOf,
  presentCheckout,
  sessionOf
} from "../../services/checkout/UcpPresent.js"

/**
 * The checkout capability's five operations as UCP sees them, over AcpSessions: the request translated, the answer
 * UCP's checkout (JSON). The REST binding (./UcpLive.ts) and the MCP binding (src/http/mcp/UcpTools.ts) both run
 * these, so the two transports cannot differ but in their envelope.
 */
export const makeUcpCheckouts = Effect.gen(function* () {
  const sessions = yield* AcpSessions
  const vaultTokens = yield* AcpVaultTokens
  const presenter = yield* CheckoutPresenter
  const pricing = yield* Pricing
  const baseUrl = yield* PublicUrl

  /** UCP's checkout of a session: `ready_for_complete` rather than `requires_escalation` when a token would pay it. */
  const checkoutOf = (view: AcpSessionView) =>
    Effect.map(
      view.status === "requires_escalation" && view.checkout !== undefined
        ? vaultTokens.held(view.row.userId, view.row.id, view.checkout.row)
        : Effect.succeed(false),
      (tokenHeld) => presentCheckout(baseUrl, sessionOf(baseUrl, presenter, view), tokenHeld)
    )

  /** An item AcpSessions refuses is named by its UCP line (`line_items[1].item.id`), not its ACP item. */
  const byLine =
    (request: UcpCheckoutRequest) =>
    <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | InvalidRequest, R> =>
      Effect.mapError(self, (failure) => {
        if (!(failure instanceof InvalidRequest)) return failure
        const item = /^line_items\[(\d+)\]\.id$/.exec(failure.errors[0]?.path ?? "")
        if (item === null) return failure
        return InvalidRequest.field(`line_items[${lineIndexOf(request, Number(item[1]))}].item.id`, failure.message)
      })

  /** The currency of the delivery country (the user's own until an address names one), as ACP's create asks. */
  const currencyOf = (user: User, request: UcpCheckoutRequest) =>
    Effect.map(
      pricing.reference(),
      (reference) => reference.country.get(countryOf(request) ?? user.defaultCountry)?.currency ?? "USD"
    )

  /** A refusal of the instrument (its fields, or the token) named by the UCP request's path. */
  const byInstrument = <E extends { readonly message: string; readonly errors: ReadonlyArray<FieldIssue> }>(
    payment: unknown,
    error: E
  ): E => {
    const Refusal = error.constructor as new (fields: object) => E
    return new Refusal({
      message: error.message,
      errors: error.errors.map((issue) =>
        FieldIssue.make({ path: paymentPathOf(payment, issue.path), message: issue.message })
      )
    })
  }

  /** `profileUrl`: the platform's (its `UCP-Agent`), kept on the session for its order events. */
  const create = (user: User, request: UcpCheckoutRequest, profileUrl: string) => {
    const buyer = buyerOf(request.buyer)
    const details = detailsOf(request)
    return Effect.flatMap(currencyOf(user, request), (currency) =>
      sessions.create(
        user,
        {
          line_items: itemsOf(request),
          currency,
          capabilities: {},
          ...(buyer === undefined ? {} : { buyer }),
          ...(details === null ? {} : { fulfillment_details: details })
        },
        null,
        profileUrl
      )
    ).pipe(byLine(request), Effect.flatMap(checkoutOf))
  }

  const get = (user: User, id: string) => Effect.flatMap(sessions.get(user.id, id), checkoutOf)

  /** A PUT replaces the checkout: what it leaves out is cleared. */
  const update = (user: User, id: string, request: UcpCheckoutRequest) =>
    sessions
      .update(user, id, {
        line_items: itemsOf(request),
        buyer: buyerOf(request.buyer) ?? null,
        fulfillment_details: detailsOf(request)
      })
      .pipe(byLine(request), Effect.flatMap(checkoutOf))

  /**
   * Completes with the instrument of `payment` (a token of Ribbon's handler pays the checkout, as ACP's complete
   * does); without one, it succeeds once the person has paid at `continue_url`.
   */
  const complete = (user: User, id: string, payment: unknown) =>
    Effect.flatMap(paymentDataOf(payment), (paymentData) => sessions.complete(user, id, undefined, paymentData)).pipe(
      Effect.catchTags({
        InvalidRequest: (e) => Effect.fail(byInstrument(payment, e)),
        PaymentTokenDeclined: (e) => Effect.fail(byInstrument(payment, e)),
        PaymentTokenExpired: (e) => Effect.fail(byInstrument(payment, e)),
        PaymentTokenExceeded: (e) => Effect.fail(byInstrument(payment, e)),
        PaymentTokenUsed: (e) => Effect.fail(byInstrument(payment, e))
      }),
      Effect.flatMap(checkoutOf)
    )

  const cancel = (user: User, id: string) => Effect.flatMap(sessions.cancel(user.id, id), checkoutOf)

  return { create, get, update, complete, cancel } as const
})
