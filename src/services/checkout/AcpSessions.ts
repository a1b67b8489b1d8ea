import { Clock, Effect, Either, Option, Schema } from "effect"
import {
  type AcpBuyer,
  type AcpCreateRequest,
  type AcpFulfillmentDetails,
  type AcpGift,
  type AcpIssue,
  type AcpItem,
  type AcpLineRecord,
  type AcpSessionRecord,
  type AcpSessionStatus,
  type AcpUpdateRequest,
  asksForGift,
  DIGITAL_OPTION_ID,
  SHIPPING_OPTION_ID
} from "../../domain/checkout/Acp.js"
import { hasAcpOrder } from "../../domain/checkout/AcpOrders.js"
import { CARD_HANDLER_ID } from "../../domain/checkout/AcpPayments.js"
import { CheckoutRequest } from "../../domain/checkout/Checkout.js"
import {
  CheckoutSessionClosed,
  CheckoutSessionNotFound,
  CheckoutSessionNotPaid,
  OrderNotFound,
  type QuoteNotFound
} from "../../domain/checkout/Errors.js"
import type { CheckoutItemRecord, CheckoutRecord, QuoteRecord } from "../../domain/checkout/Records.js"
import type { OrderRecord } from "../../domain/fulfillment/Orders.js"
import type { User } from "../../domain/identity/Users.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { formatPath, plainIssues } from "../../domain/platform/IssueMessages.js"
import { Catalog } from "../catalog/Catalog.js"
import { Fulfillment } from "../fulfillment/Fulfillment.js"
import { AcpSessionsRepo } from "./AcpSessionsRepo.js"
import { AcpVaultTokens } from "./AcpVaultTokens.js"
import { Checkouts } from "./Checkouts.js"
import { Quotes } from "./Quotes.js"
import { QuotesRepo } from "./QuotesRepo.js"

/**
 * Agentic Commerce Protocol checkout sessions (docs/decisions/0078-agentic-commerce-protocol.md, docs/agent-protocols.md),
 * over the agent API's quotes and checkouts. A session keeps what the agent asked for: its lines (variant ids and
 * quantities), buyer and fulfillment details. Each line is priced by a Ribbon quote for the delivery country; once
 * nothing is missing, the session gets a Ribbon checkout for those quotes, which the person pays on Ribbon's hosted
 * page (the session's `continue_url`), and which is then placed one order per line as any checkout. A change to
 * what the checkout covers cancels it and makes another; the session's status is read off its checkout.
 *
 * A session that is otherwise ready is `requires_escalation`: the person may pay on the page, or the agent may pay
 * with a vault token from delegated payment (AcpVaultTokens, docs/decisions/0079-acp-delegated-payment.md).
 */

/**
 * A session as it now is: its row, the quote of each line (when priced) and its checkout, with the Ribbon orders
 * placed for it once it was paid.
 */
export interface AcpSessionView {
  readonly row: AcpSessionRecord
  readonly quotes: ReadonlyArray<QuoteRecord | undefined>
  readonly checkout:
    | {
        readonly row: CheckoutRecord
        readonly items: ReadonlyArray<CheckoutItemRecord>
        readonly orders: ReadonlyArray<OrderRecord>
      }
    | undefined
  readonly status: AcpSessionStatus
}

/** A session's status, read off its checkout (when it has one) at `now`. */
export const statusOf = (
  row: AcpSessionRecord,
  checkout: CheckoutRecord | undefined,
  now: number
): AcpSessionStatus => {
  if (checkout === undefined) return row.canceledAt === null ? "not_ready_for_payment" : "canceled"
  switch (checkout.status) {
    case "pending_payment":
      if (row.canceledAt !== null) return "canceled"
      return checkout.expiresAt.getTime() > now ? "requires_escalation" : "expired"
    case "paid":
    case "placing":
      return "complete_in_progress"
    case "confirmed":
    case "partially_confirmed":
    case "refunded":
      return "completed"
    case "expired":
      return row.canceledAt === null ? "expired" : "canceled"
    case "failed":
    case "cancelled":
      return "canceled"
  }
}

/** Statuses an update or a cancellation may start from. */
const open: ReadonlySet<AcpSessionStatus> = new Set(["not_ready_for_payment", "requires_escalation", "expired"])

/** The lines of a request: one per variant, repeated items counted (the protocol's Item has no quantity). */
const linesOf = (items: ReadonlyArray<AcpItem>): Array<{ variantId: string; quantity: number; index: number }> => {
  const lines: Array<{ variantId: string; quantity: number; index: number }> = []
  for (const [index, item] of items.entries()) {
    const line = lines.find((each) => each.variantId === item.id)
    if (line === undefined) lines.push({ variantId: item.id, quantity: 1, index })
    else line.quantity += 1
  }
  return lines
}

/** The recipient's fields of a Ribbon request as ACP JSONPaths into the gift extension's recipient. */
const giftRecipientFields: Record<string, string> = {
  "recipient.firstName": "$.gift.recipient.first_name",
  "recipient.lastName": "$.gift.recipient.last_name",
  "recipient.email": "$.gift.recipient.email",
  "recipient.phone": "$.gift.recipient.phone_number"
}

/**
 * A Ribbon request path as an ACP JSONPath into the session's fulfillment details, or into its gift's recipient
 * when that is who the checkout is for.
 */
const paramOf = (path: string, gift: AcpGift | null = null): string => {
  if (gift?.recipient !== undefined && giftRecipientFields[path] !== undefined) return giftRecipientFields[path]
  const fields: Record<string, string> = {
    "recipient.firstName": "$.fulfillment_details.name",
    "recipient.lastName": "$.fulfillment_details.name",
    "recipient.email": "$.fulfillment_details.email",
    "recipient.phone": "$.fulfillment_details.phone_number",
    "shippingAddress.countryCode": "$.fulfillment_details.address.country",
    "shippingAddress.address1": "$.fulfillment_details.address.line_one",
    "shippingAddress.address2": "$.fulfillment_details.address.line_two",
    "shippingAddress.city": "$.fulfillment_details.address.city",
    "shippingAddress.provinceCode": "$.fulfillment_details.address.state",
    "shippingAddress.postalCode": "$.fulfillment_details.address.postal_code",
    address1: "$.fulfillment_details.address.line_one",
    address2: "$.fulfillment_details.address.line_two",
    city: "$.fulfillment_details.address.city",
    provinceCode: "$.fulfillment_details.address.state",
    postalCode: "$.fulfillment_details.address.postal_code",
    countryCode: "$.fulfillment_details.address.country"
  }
  return fields[path] ?? "$.fulfillment_details"
}

/** What the fulfillment details still lack for a checkout: the address only, when the gift names its recipient. */
const missingOf = (details: AcpFulfillmentDetails | null, gift: AcpGift | null): Array<AcpIssue> => {
  const missing = (param: string, what: string): AcpIssue => ({
    code: "missing",
    param,
    content: `Add ${what} to fulfillment_details.`
  })
  if (gift?.recipient !== undefined) {
    return details?.address === undefined ? [missing("$.fulfillment_details.address", "the delivery address")] : []
  }
  if (details === null)
    return [missing("$.fulfillment_details", "the recipient's name, phone number, e-mail and address")]
  const issues: Array<AcpIssue> = []
  if (details.name === undefined || details.name.trim() === "")
    issues.push(missing("$.fulfillment_details.name", "the recipient's name"))
  if (details.phone_number === undefined)
    issues.push(missing("$.fulfillment_details.phone_number", "the recipient's phone number"))
  if (details.email === undefined) issues.push(missing("$.fulfillment_details.email", "the recipient's e-mail"))
  if (details.address === undefined) issues.push(missing("$.fulfillment_details.address", "the delivery address"))
  return issues
}

/**
 * The vault token of `payment_data` (the protocol's `{handler_id, instrument: {type, credential: {type, token}}}`),
 * when it names Ribbon's card handler; none when it carries no instrument (a purchase order number alone).
 */
const vaultTokenOf = (
  paymentData: Readonly<Record<string, unknown>>
): Either.Either<string | undefined, InvalidRequest> => {
  const { handler_id: handlerId, instrument } = paymentData as { handler_id?: unknown; instrument?: unknown }
  if (handlerId === undefined && instrument === undefined) return Either.right(undefined)
  if (handlerId !== CARD_HANDLER_ID) {
    return Either.left(
      InvalidRequest.field("payment_data.handler_id", `The payment handler is ${CARD_HANDLER_ID}, the only one offered`)
    )
  }
  const credential = (instrument as { credential?: { type?: unknown; token?: unknown } } | undefined)?.credential
  if (
    credential?.type !== "spt" ||
    typeof credential.token !== "string" ||
    !/^vt_[A-Za-z0-9]+$/.test(credential.token)
  ) {
    return Either.left(
      InvalidRequest.field(
        "payment_data.instrument.credential",
        "The credential is a vault token from delegate_payment: {type: spt, token: vt_…}"
      )
    )
  }
  return Either.right(credential.token)
}

/** The recipient's first and last name from one full name (the last word is the last name). */
const splitName = (name: string) => {
  const words = name.trim().split(/\s+/)
  return words.length === 1
    ? { firstName: words[0]!, lastName: words[0]! }
    : { firstName: words.slice(0, -1).join(" "), lastName: words.at(-1)! }
}

/** What a checkout is made of: when this changes, the session needs another checkout. */
const checkoutInputs = (row: AcpSessionRecord) =>
  JSON.stringify([
    row.lines.map(({ variantId, quantity }) => [variantId, quantity]),
    row.fulfillmentDetails,
    row.buyer?.email,
    row.gift?.recipient
  ])

export class AcpSessions extends Effect.Service<AcpSessions>()("AcpSessions", {
  dependencies: [
    AcpSessionsRepo.Default,
    AcpVaultTokens.Default,
    Catalog.Default,
    Checkouts.Default,
    Fulfillment.Default,
    Quotes.Default,
    QuotesRepo.Default
  ],
  effect: Effect.gen(function* () {
    const repo = yield* AcpSessionsRepo
    const quotes = yield* Quotes
    const quotesRepo = yield* QuotesRepo
    const checkouts = yield* Checkouts
    const catalog = yield* Catalog
    const vaultTokens = yield* AcpVaultTokens
    const fulfillment = yield* Fulfillment

    /** The session's view: its quotes and checkout read, its status derived. */
    const viewOf = Effect.fn("AcpSessions.viewOf")(function* (row: AcpSessionRecord) {
      const ids = row.lines.flatMap((line) => (line.quoteId === null ? [] : [line.quoteId]))
      const found = ids.length === 0 ? [] : yield* quotesRepo.findManyForUser(ids, row.userId)
      const byId = new Map(found.map((quote) => [quote.id, quote]))
      const paying =
        row.checkoutId === null ? undefined : yield* Effect.orDie(checkouts.get(row.userId, row.checkoutId))
      const checkout =
        paying === undefined
          ? undefined
          : {
              ...paying,
              orders: hasAcpOrder(paying.row.status) ? yield* fulfillment.forCheckout(paying.row.id) : []
            }
      const now = yield* Clock.currentTimeMillis
      return {
        row,
        quotes: row.lines.map((line) => (line.quoteId === null ? undefined : byId.get(line.quoteId))),
        checkout,
        status: statusOf(row, checkout?.row, now)
      } satisfies AcpSessionView
    })

    /**
     * Prices the lines for the delivery country: a line keeps its quote while that is unused, unexpired and for
     * that country; otherwise it gets a new one. An unknown variant is the request's 400; one out of stock or not
     * delivered there is an issue of the session. `given` is a quote the agent made itself (`quote_id`).
     */
    const price = Effect.fn("AcpSessions.price")(function* (
      user: User,
      wanted: ReadonlyArray<{ variantId: string; quantity: number; index: number }>,
      previous: ReadonlyArray<AcpLineRecord>,
      country: string,
      given: QuoteRecord | undefined
    ) {
      const now = yield* Clock.currentTimeMillis
      const kept = previous.flatMap((line) => (line.quoteId === null ? [] : [line.quoteId]))
      const reusable = new Map(
        (kept.length === 0 ? [] : yield* quotesRepo.findManyForUser(kept, user.id))
          .concat(given === undefined ? [] : [given])
          .filter(
            (quote) =>
              quote.checkoutId === null && quote.countryCode === country && quote.expiresAt.getTime() > now + 60_000
          )
          .map((quote) => [quote.variantId, quote])
      )
      // Every item is known before any is quoted, so an unknown one leaves no quote behind.
      for (const { variantId, index } of wanted) {
        if (Option.isNone(yield* catalog.variantLabel(variantId))) {
          return yield* InvalidRequest.field(`line_items[${index}].id`, `No item ${variantId}`)
        }
      }
      const lines: Array<AcpLineRecord> = []
      const issues: Array<AcpIssue> = []
      for (const { variantId, quantity, index } of wanted) {
        const reused = reusable.get(variantId)
        if (reused !== undefined) {
          lines.push({ variantId, quantity, quoteId: reused.id })
          continue
        }
        const quoted = yield* quotes.create(user.id, variantId, country).pipe(
          Effect.map((quote) => Either.right(quote.id)),
          Effect.catchTags({
            VariantNotFound: () => Effect.fail(InvalidRequest.field(`line_items[${index}].id`, `No item ${variantId}`)),
            VariantOutOfStock: (e) =>
              Effect.succeed(
                Either.left<AcpIssue>({ code: "out_of_stock", param: `$.line_items[${index}]`, content: e.message })
              ),
            VariantNotShippable: (e) =>
              Effect.succeed(
                Either.left<AcpIssue>({
                  code: "region_restricted",
                  param: `$.line_items[${index}]`,
                  content: e.message
                })
              ),
            InvalidRequest: (e) =>
              Effect.succeed(
                Either.left<AcpIssue>({
                  code: "invalid",
                  param: "$.fulfillment_details.address.country",
                  content: e.message
                })
              )
          })
        )
        if (Either.isLeft(quoted)) issues.push(quoted.left)
        lines.push({ variantId, quantity, quoteId: Either.getOrNull(quoted) })
      }
      // One issue per country, however many lines it stopped.
      const unique = issues.filter(
        (issue, n) => issue.code !== "invalid" || issues.findIndex((other) => other.param === issue.param) === n
      )
      return { lines, issues: unique }
    })

    /**
     * The checkout for the session as it now is, when nothing is missing: made through Checkouts as `/v1` makes
     * one (its rules, the address validation included, apply); a refusal becomes an issue of the session.
     */
    const makeCheckout = Effect.fn("AcpSessions.makeCheckout")(function* (user: User, row: AcpSessionRecord) {
      const details = row.fulfillmentDetails!
      const address = details.address!
      // The gift's recipient when it names one (the buyer stays the person notified); else the fulfillment contact.
      const recipient = row.gift?.recipient
      const decoded = Schema.decodeUnknownEither(CheckoutRequest)({
        items: row.lines.map((line) => ({ quoteId: line.quoteId!, quantity: line.quantity })),
        recipient:
          recipient === undefined
            ? { ...splitName(details.name!), email: details.email, phone: details.phone_number }
            : {
                firstName: recipient.first_name,
                lastName: recipient.last_name,
                email: recipient.email,
                phone: recipient.phone_number
              },
        shippingAddress: {
          countryCode: address.country.toUpperCase(),
          address1: address.line_one,
          ...(address.line_two === undefined || address.line_two === "" ? {} : { address2: address.line_two }),
          city: address.city,
          ...(address.state === "" ? {} : { provinceCode: address.state }),
          postalCode: address.postal_code
        },
        ...(row.buyer === null ? {} : { notify: { email: row.buyer.email } })
      })
      if (Either.isLeft(decoded)) {
        return Either.left(
          plainIssues(decoded.left.issue).map(
            ({ path, message }): AcpIssue => ({
              code: "invalid",
              param: paramOf(formatPath(path), row.gift),
              content: message
            })
          )
        )
      }
      return yield* checkouts.create(user, decoded.right).pipe(
        Effect.map(({ row: checkout }) => Either.right<string>(checkout.id)),
        Effect.catchTags({
          AddressUnverified: (e) =>
            Effect.succeed(
              Either.left<ReadonlyArray<AcpIssue>>(
                e.issues.length === 0
                  ? [{ code: "invalid", param: "$.fulfillment_details.address", content: e.message }]
                  : e.issues.map((issue) => ({
                      code: "invalid",
                      param: paramOf(issue.field, row.gift),
                      content: issue.message
                    }))
              )
            ),
          InvalidRequest: (e) =>
            Effect.succeed(
              Either.left<ReadonlyArray<AcpIssue>>(
                e.errors.map((issue) => ({
                  code: "invalid",
                  param: paramOf(issue.path, row.gift),
                  content: issue.message
                }))
              )
            ),
          // Refusals the session's own checks rule out; a concurrent change of the session can still meet them.
          CountryMismatch: (e) => Effect.fail(InvalidRequest.field("fulfillment_details.address.country", e.message)),
          QuoteExpired: (e) => Effect.fail(InvalidRequest.field("line_items", e.message)),
          QuoteAlreadyUsed: (e) => Effect.fail(InvalidRequest.field("line_items", e.message)),
          QuoteNotFound: (e) => Effect.fail(InvalidRequest.field("line_items", e.message)),
          SmsConsentRequired: (e) => Effect.fail(InvalidRequest.field("", e.message)),
          IdempotencyKeyReused: Effect.die,
          IdempotencyInFlight: Effect.die
        })
      )
    })

    /**
     * Prices `draft` and, when nothing is missing, gives it a checkout: the row to store. `previous` is the
     * session as it was (its quotes may be kept, its pending checkout is cancelled when what it covers changed).
     */
    const settle = Effect.fn("AcpSessions.settle")(function* (
      user: User,
      draft: AcpSessionRecord,
      wanted: ReadonlyArray<{ variantId: string; quantity: number; index: number }>,
      previous: AcpSessionView | undefined,
      given: QuoteRecord | undefined
    ) {
      const kept = previous?.checkout
      if (
        previous !== undefined &&
        kept !== undefined &&
        previous.status === "requires_escalation" &&
        checkoutInputs(previous.row) === checkoutInputs(draft)
      ) {
        return { ...draft, lines: previous.row.lines, issues: [], checkoutId: kept.row.id }
      }
      // What the old checkout covered changed: it can no longer be paid (a payment meanwhile wins: 405).
      if (kept !== undefined && kept.row.status === "pending_payment") {
        yield* checkouts.cancel(user.id, kept.row.id).pipe(
          Effect.catchTags({
            CheckoutStateConflict: () => new CheckoutSessionClosed({ message: "The session was paid meanwhile." }),
            CheckoutNotFound: Effect.die
          })
        )
      }
      const country = draft.fulfillmentDetails?.address?.country.toUpperCase() ?? user.defaultCountry
      const priced = yield* price(user, wanted, previous?.row.lines ?? [], country, given)
      const issues = [...priced.issues, ...missingOf(draft.fulfillmentDetails, draft.gift)]
      const row = { ...draft, lines: priced.lines, issues, checkoutId: null }
      if (issues.length > 0) return row
      const made = yield* makeCheckout(user, row)
      return Either.isRight(made) ? { ...row, checkoutId: made.right } : { ...row, issues: made.left }
    })

    /**
     * Creates a session (`POST /checkout_sessions`); `clientId` is the OAuth client creating it over ACP, whose order
     * webhook endpoints will get its order's events (none over UCP).
     */
    const create = Effect.fn("AcpSessions.create")(function* (
      user: User,
      request: AcpCreateRequest,
      clientId: string | null,
      /** Over UCP, the `UCP-Agent` profile URL of the platform, which is told of the order's events. */
      ucpProfileUrl: string | null = null
    ) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const given =
        request.quote_id === undefined
          ? undefined
          : yield* quotes
              .get(user.id, request.quote_id)
              .pipe(
                Effect.catchTag("QuoteNotFound", (e: QuoteNotFound) =>
                  Effect.fail(InvalidRequest.field("quote_id", e.message))
                )
              )
      const wanted = linesOf(request.line_items)
      if (given !== undefined && !wanted.some((line) => line.variantId === given.variantId)) {
        return yield* InvalidRequest.field("quote_id", `Quote ${given.id} is for an item not in line_items`)
      }
      const draft: AcpSessionRecord = {
        id: yield* makeId,
        userId: user.id,
        clientId,
        ucpProfileUrl,
        currency: request.currency.toLowerCase(),
        locale: request.locale ?? null,
        buyer: request.buyer ?? null,
        fulfillmentDetails: request.fulfillment_details ?? null,
        lines: [],
        issues: [],
        capabilities: request.capabilities,
        orderNotes: request.order_notes ?? null,
        metadata: request.metadata ?? null,
        // The gift extension's fields count only when the agent declared it; otherwise, as any unknown field, none.
        gift: asksForGift(request.capabilities) ? (request.gift ?? null) : null,
        checkoutId: null,
        canceledAt: null,
        createdAt: now,
        updatedAt: now
      }
      const row = yield* settle(user, draft, wanted, undefined, given)
      yield* repo.insert(row)
      return yield* viewOf(row)
    })

    /** The user's session (another user's is not found). */
    const get = Effect.fn("AcpSessions.get")(function* (userId: string, sessionId: string) {
      const row = yield* repo.findForUser(sessionId, userId)
      if (Option.isNone(row)) {
        return yield* new CheckoutSessionNotFound({ message: `No checkout session ${sessionId}.` })
      }
      return yield* viewOf(row.value)
    })

    /**
     * The user's paid session whose Ribbon checkout is `checkoutId`: the order a session's `order.id` names (UCP's
     * `GET /orders/{id}`). A checkout not paid, another user's, or one no session made is not found.
     */
    const order = Effect.fn("AcpSessions.order")(function* (userId: string, checkoutId: string) {
      const notFound = new OrderNotFound({ message: `No order ${checkoutId}.`, orderId: checkoutId })
      const row = yield* repo.findForUserByCheckout(checkoutId, userId)
      if (Option.isNone(row)) return yield* notFound
      const view = yield* viewOf(row.value)
      if (view.status !== "complete_in_progress" && view.status !== "completed") return yield* notFound
      return view
    })

    const closed = (view: AcpSessionView) =>
      new CheckoutSessionClosed({
        message: `The checkout session is ${view.status}: it can no longer be changed.`
      })

    /** Applies an update (`POST /checkout_sessions/{id}`): absent fields stay, `null` clears. */
    const update = Effect.fn("AcpSessions.update")(function* (
      user: User,
      sessionId: string,
      request: AcpUpdateRequest
    ) {
      // Ribbon offers one option per kind of delivery, always selected: a selection may only name them.
      for (const [index, selection] of (request.selected_fulfillment_options ?? []).entries()) {
        if (selection.option_id !== SHIPPING_OPTION_ID && selection.option_id !== DIGITAL_OPTION_ID) {
          return yield* InvalidRequest.field(
            `selected_fulfillment_options[${index}].option_id`,
            `No fulfillment option ${selection.option_id}; the options are ${SHIPPING_OPTION_ID} and ${DIGITAL_OPTION_ID}`
          )
        }
      }
      const view = yield* get(user.id, sessionId)
      if (!open.has(view.status)) return yield* closed(view)
      const { row } = view
      const draft: AcpSessionRecord = {
        ...row,
        buyer: request.buyer === undefined ? row.buyer : request.buyer,
        fulfillmentDetails:
          request.fulfillment_details === undefined ? row.fulfillmentDetails : request.fulfillment_details,
        orderNotes: request.order_notes === undefined ? row.orderNotes : request.order_notes,
        gift: request.gift === undefined || !asksForGift(row.capabilities) ? row.gift : request.gift,
        lines:
          request.line_items === undefined
            ? row.lines
            : linesOf(request.line_items).map(({ variantId, quantity }) => ({ variantId, quantity, quoteId: null })),
        updatedAt: new Date(yield* Clock.currentTimeMillis)
      }
      const wanted =
        request.line_items === undefined
          ? row.lines.map(({ variantId, quantity }, index) => ({ variantId, quantity, index }))
          : linesOf(request.line_items)
      const settled = yield* settle(user, draft, wanted, view, undefined)
      yield* repo.save(settled)
      return yield* viewOf(settled)
    })

    /**
     * Completes a session (`POST /checkout_sessions/{id}/complete`): with a vault token in `payment_data`, pays the
     * session's checkout with it; otherwise the person pays on the hosted page. Succeeds once paid either way (the
     * session is `complete_in_progress` or `completed`, with its order).
     */
    const complete = Effect.fn("AcpSessions.complete")(function* (
      user: User,
      sessionId: string,
      buyer: AcpBuyer | undefined,
      paymentData: Readonly<Record<string, unknown>>
    ) {
      const token = vaultTokenOf(paymentData)
      if (Either.isLeft(token)) return yield* token.left
      let view = yield* get(user.id, sessionId)
      // A spent token is refused even when its session is paid, rather than taken for a replay.
      if (token.right !== undefined) yield* vaultTokens.check(user.id, sessionId, token.right)
      if (token.right !== undefined && view.status === "requires_escalation" && view.checkout !== undefined) {
        yield* vaultTokens.pay(user.id, sessionId, view.checkout, token.right)
        view = yield* viewOf(view.row)
      }
      if (view.status === "complete_in_progress" || view.status === "completed") {
        if (buyer === undefined) return view
        const row = { ...view.row, buyer, updatedAt: new Date(yield* Clock.currentTimeMillis) }
        yield* repo.save(row)
        return { ...view, row }
      }
      if (view.status === "canceled") return yield* closed(view)
      return yield* new CheckoutSessionNotPaid({
        message:
          view.status === "requires_escalation"
            ? "The person pays on Ribbon's hosted page: give them continue_url. Once they have paid, complete succeeds."
            : `The checkout session is ${view.status}: resolve its messages first; the person then pays at continue_url.`
      })
    })

    /** Cancels a session (`POST /checkout_sessions/{id}/cancel`) and its unpaid checkout. */
    const cancel = Effect.fn("AcpSessions.cancel")(function* (userId: string, sessionId: string) {
      const view = yield* get(userId, sessionId)
      if (!open.has(view.status)) return yield* closed(view)
      if (view.checkout !== undefined && view.checkout.row.status === "pending_payment") {
        yield* checkouts.cancel(userId, view.checkout.row.id).pipe(
          Effect.catchTags({
            CheckoutStateConflict: () => closed({ ...view, status: "complete_in_progress" }),
            CheckoutNotFound: Effect.die
          })
        )
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      const row = { ...view.row, canceledAt: now, updatedAt: now }
      yield* repo.save(row)
      return yield* viewOf(row)
    })

    return { create, get, order, update, complete, cancel } as const
  })
}) {}
