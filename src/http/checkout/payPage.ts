import type { CardField, CardFieldError } from "../../domain/checkout/Cards.js"
import { type CheckoutStatus, terminalStatuses } from "../../domain/checkout/Checkout.js"
import { escapeHtml, layout as htmlLayout, nonceAttr } from "../pages/html.js"

/**
 * The hosted payment page (docs/decisions/0026-hosted-payment-page.md): `/pay/{checkoutId}?t={token}`. Pure functions
 * from a view to a full HTML document. Every value from a checkout is HTML-escaped; the card number and CVC are never
 * written back into the page. The page reads like the authorize pages (src/http/identity/authorizePage.ts).
 *
 * The URL carries the payment token, so every page sets `<meta name="referrer" content="no-referrer">`:
 * product images (which may live elsewhere) must not receive it in a Referer header.
 */

/** JSON for inside a `<script>`: `<` is escaped, so no value can close the element. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029")

const css = `
    input[aria-invalid="true"] { border: 2px solid #b3261e; }
    button.pay { width: 100%; font-weight: 600; }
    a { color: #8c1d18; }
    div.error { margin: 1rem 0; }
    div.error p { margin: 0; }
    .error ul { margin: .3rem 0 0; padding-left: 1.2rem; }
    .field-error { color: #8c1d18; margin: .3rem 0 0; font-size: .95rem; }
    .note { background: #f1efe9; padding: .6rem .8rem; border-radius: 6px; font-size: .95rem; }
    .note strong { white-space: nowrap; }
    .row { display: flex; gap: .6rem; }
    .row > div { flex: 1; }
    ul.items { list-style: none; padding: 0; margin: 0; }
    ul.items li { display: flex; gap: .8rem; align-items: center; padding: .5rem 0; }
    ul.items img { width: 56px; height: 56px; border-radius: 6px; object-fit: cover; flex: none; }
    ul.items .what { flex: 1; }
    ul.items .variant, .muted { color: #666; font-size: .9rem; }
    dl.breakdown { display: grid; grid-template-columns: 1fr auto; row-gap: .3rem; margin: 1rem 0 0; }
    dl.breakdown dd { margin: 0; padding-left: 1rem; text-align: right; }
    dl.breakdown .total { font-weight: 700; border-top: 1px solid #eee; padding-top: .4rem; }
    address { font-style: normal; line-height: 1.5; }
    .status { font-size: 1.1rem; font-weight: 600; background: #f1efe9; padding: .8rem; border-radius: 6px; }`

const head = `
  <meta name="referrer" content="no-referrer">
  <meta name="robots" content="noindex, nofollow">
  <link rel="icon" href="data:,">`

const layout = (title: string, body: string, nonce: string | undefined) =>
  htmlLayout(title, body, { width: "34rem", css, head, nonce })

// ---------------------------------------------------------------------------------------------------------
// The view

export interface PayItemView {
  readonly productTitle: string
  readonly variantTitle: string
  readonly imageUrl: string | null
  readonly quantity: number
  /** The line's all-in amount (quantity × the quote's total), formatted. */
  readonly amountDisplay: string
}

/** The checkout's all-in totals, each already formatted in the checkout's currency and locale. */
export interface PayBreakdownView {
  readonly item: string
  readonly shipping: string
  readonly duties: string
  readonly serviceFee: string
  readonly total: string
}

export interface PayRecipientView {
  readonly firstName: string
  readonly lastName: string
  readonly email: string
  readonly phone: string
}

export interface PayAddressView {
  readonly address1: string | null
  readonly address2: string | null
  readonly city: string | null
  readonly provinceCode: string | null
  readonly postalCode: string | null
  readonly countryCode: string
  /** The country's name in English; the code is shown when absent. */
  readonly countryName?: string | undefined
}

export interface PayPageView {
  readonly checkoutId: string
  /** The payment token from `?t=`; posted back as the hidden field `t`. */
  readonly token: string
  /** Where the form posts, e.g. `/pay/{checkoutId}`. */
  readonly postUrl: string
  readonly totalDisplay: string
  readonly currency: string
  readonly items: ReadonlyArray<PayItemView>
  readonly breakdown: PayBreakdownView
  readonly recipient: PayRecipientView
  readonly address: PayAddressView
  readonly shippingRequired: boolean
  /** ISO 8601: when the payment window closes. */
  readonly expiresAt: string
  /** Shows the test-card notice; the simulated processor is always in test mode, so it defaults to true. */
  readonly testMode?: boolean | undefined
}

/** What the form shows again after a failed attempt. The card number and CVC are never echoed. */
export interface PayFormState {
  readonly values?: { readonly name?: string | undefined; readonly expiry?: string | undefined } | undefined
  readonly fieldErrors?: ReadonlyArray<CardFieldError> | undefined
  /** `PaymentDeclined.message`. */
  readonly declineMessage?: string | undefined
  /**
   * The checkout takes no payment for a while after too many declines: until when (ISO 8601), and how many
   * minutes from now (rounded up). Without `declineMessage`, this submission was refused untried.
   */
  readonly paused?: { readonly until: string; readonly minutes: number } | undefined
}

// ---------------------------------------------------------------------------------------------------------
// Shared fragments

/** Only http(s) and same-origin paths become an `src`; anything else is dropped rather than escaped. */
const safeImageUrl = (url: string | null): string | undefined =>
  url !== null && (/^https?:\/\//i.test(url) || /^\/(?!\/)/.test(url)) ? url : undefined

const itemList = (items: ReadonlyArray<PayItemView>) =>
  `<ul class="items">
    ${items
      .map((item) => {
        const src = safeImageUrl(item.imageUrl)
        const image =
          src === undefined
            ? ""
            : `<img src="${escapeHtml(src)}" alt="${escapeHtml(item.productTitle)}" width="56" height="56">`
        return `<li>${image}<span class="what"><strong>${escapeHtml(item.productTitle)}</strong><br><span class="variant">${escapeHtml(item.variantTitle)} · Quantity ${item.quantity}</span></span><span class="amount">${escapeHtml(item.amountDisplay)}</span></li>`
      })
      .join("\n    ")}
  </ul>`

const breakdownList = (b: PayBreakdownView) =>
  `<dl class="breakdown">
    <dt>Items</dt><dd>${escapeHtml(b.item)}</dd>
    <dt>Shipping</dt><dd>${escapeHtml(b.shipping)}</dd>
    <dt>Duties and taxes</dt><dd>${escapeHtml(b.duties)}</dd>
    <dt>Service fee</dt><dd>${escapeHtml(b.serviceFee)}</dd>
    <dt class="total">Total</dt><dd class="total">${escapeHtml(b.total)}</dd>
  </dl>`

const deliverySection = (view: PayPageView) => {
  const r = view.recipient
  const recipient = `<p>${escapeHtml(`${r.firstName} ${r.lastName}`)}<br>
    <span class="muted">${escapeHtml(r.email)} · ${escapeHtml(r.phone)}</span></p>`
  if (!view.shippingRequired) return `${recipient}\n  <p>Digital delivery — no shipping</p>`
  const a = view.address
  const locality = [a.city, a.provinceCode, a.postalCode].filter((part) => part !== null && part !== "").join(" ")
  const lines = [a.address1, a.address2, locality, a.countryName ?? a.countryCode].filter(
    (line): line is string => line !== null && line !== ""
  )
  return `${recipient}\n  <address>${lines.map(escapeHtml).join("<br>")}</address>`
}

const utcFormat = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" })

/** `<time>` with the instant in UTC words, or the string as given when it is not a date. */
const timeElement = (iso: string) => {
  const date = new Date(iso)
  const text = Number.isNaN(date.getTime()) ? iso : `${utcFormat.format(date)} UTC`
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(text)}</time>`
}

// ---------------------------------------------------------------------------------------------------------
// The payment form

interface FieldSpec {
  readonly field: CardField
  readonly id: string
  readonly label: string
  readonly attributes: string
}

const fields: ReadonlyArray<FieldSpec> = [
  {
    field: "number",
    id: "card-number",
    label: "Card number",
    attributes: `type="text" inputmode="numeric" autocomplete="cc-number" maxlength="26" spellcheck="false"`
  },
  {
    field: "expiry",
    id: "card-expiry",
    label: "Expiry (MM/YY)",
    attributes: `type="text" inputmode="numeric" autocomplete="cc-exp" maxlength="7" spellcheck="false"`
  },
  {
    field: "cvc",
    id: "card-cvc",
    label: "CVC",
    attributes: `type="text" inputmode="numeric" autocomplete="cc-csc" maxlength="4" spellcheck="false"`
  },
  {
    field: "name",
    id: "card-name",
    label: "Name on card",
    attributes: `type="text" autocomplete="cc-name" maxlength="100" spellcheck="false"`
  }
]

const fieldHtml = (spec: FieldSpec, state: PayFormState) => {
  const messages = (state.fieldErrors ?? []).filter((e) => e.field === spec.field).map((e) => e.message)
  // Only the name and expiry are written back; the card number and CVC always start empty.
  const value = spec.field === "name" ? state.values?.name : spec.field === "expiry" ? state.values?.expiry : undefined
  const errorId = `${spec.id}-error`
  const invalid = messages.length > 0 ? ` aria-invalid="true" aria-describedby="${errorId}"` : ""
  const valueAttr = value === undefined ? "" : ` value="${escapeHtml(value)}"`
  const error =
    messages.length > 0 ? `\n      <p class="field-error" id="${errorId}">${escapeHtml(messages.join(" "))}</p>` : ""
  return `<div>
      <label for="${spec.id}">${spec.label}</label>
      <input id="${spec.id}" name="${spec.field}" ${spec.attributes} required${valueAttr}${invalid}>${error}
    </div>`
}

const fieldById = (field: CardField) => fields.find((f) => f.field === field)!

const pauseParagraphs = (paused: NonNullable<PayFormState["paused"]>, tried: boolean) => {
  const minutes = `${paused.minutes} ${paused.minutes === 1 ? "minute" : "minutes"}`
  const wait = `<p>Too many payments were declined for this checkout. You can try again in ${minutes}, after ${timeElement(paused.until)}.</p>`
  return tried ? wait : `${wait}<p>This payment was not attempted: your card was not charged.</p>`
}

const alerts = (state: PayFormState) => {
  const parts: Array<string> = []
  if (state.declineMessage !== undefined || state.paused !== undefined) {
    const declined = state.declineMessage === undefined ? "" : `<p>${escapeHtml(state.declineMessage)}</p>`
    const paused = state.paused === undefined ? "" : pauseParagraphs(state.paused, state.declineMessage !== undefined)
    parts.push(`<div class="error" role="alert" id="pay-decline">${declined}${paused}</div>`)
  }
  const errors = state.fieldErrors ?? []
  if (errors.length > 0) {
    parts.push(`<div class="error" role="alert" id="pay-errors">
    <p>Check your card details:</p>
    <ul>${errors.map((e) => `<li><a href="#${fieldById(e.field).id}">${escapeHtml(e.message)}</a></li>`).join("")}</ul>
  </div>`)
  }
  return parts.join("\n  ")
}

export interface PageOptions {
  /** Put on the inline style (and script) when a nonce-based CSP is sent (see `noncedPageCsp`). */
  readonly nonce?: string | undefined
}

/**
 * The card fields (number, expiry, CVC, name), with their errors, as the payment page shows them; the allowance
 * page (src/http/checkout/allowancePage.ts) saves a card through the same form. Needs `cardCss`.
 */
export const cardFields = (state: PayFormState = {}): string => {
  const [numberField, expiryField, cvcField, nameField] = fields.map((spec) => fieldHtml(spec, state))
  return `${numberField}
    <div class="row">
    ${expiryField}
    ${cvcField}
    </div>
    ${nameField}`
}

/** The styles `cardFields` and its alerts rely on. */
export const cardCss = css

/** The card form's alerts: a declined card, a pause, the invalid fields. */
export const cardAlerts = (state: PayFormState): string => alerts(state)

/** The payment page: what is being bought, for whom, the all-in total, and the card form. */
export const payPage = (view: PayPageView, state: PayFormState = {}, options: PageOptions = {}): string => {
  const testNotice =
    view.testMode === false
      ? ""
      : `<p class="note">Test mode: no real card is charged. Pay with the test card <strong>4242 4242 4242 4242</strong>, any future expiry date and any 3-digit CVC.</p>`
  return layout(
    `Pay ${view.totalDisplay} · Ribbon`,
    `  <h1>Pay for your gift</h1>
  ${alerts(state)}
  <h2>Items</h2>
  ${itemList(view.items)}
  ${breakdownList(view.breakdown)}
  <h2>Recipient</h2>
  ${deliverySection(view)}
  <h2>Card details</h2>
  <p>This payment link works until ${timeElement(view.expiresAt)}.</p>
  ${testNotice}
  <form method="post" action="${escapeHtml(view.postUrl)}" novalidate>
    <input type="hidden" name="t" value="${escapeHtml(view.token)}">
    ${cardFields(state)}
    <button type="submit" class="pay">Pay ${escapeHtml(view.totalDisplay)}</button>
  </form>`,
    options.nonce
  )
}

// ---------------------------------------------------------------------------------------------------------
// After payment: live status

/** Every checkout status in plain words, as the person who paid reads it. */
export const checkoutStatusLabels = {
  pending_payment: "Waiting for payment",
  paid: "Paid — your order will be placed shortly",
  placing: "Placing your order",
  confirmed: "Confirmed — everything has been ordered",
  partially_confirmed: "Partly confirmed — some items could not be ordered and have been refunded",
  failed: "Failed — nothing could be ordered and your payment has been refunded",
  refunded: "Refunded — the order was cancelled and your payment refunded",
  expired: "Expired — the payment window closed before payment",
  cancelled: "Cancelled — nothing was charged"
} as const satisfies Record<CheckoutStatus, string>

export interface PaymentStatusOptions extends PageOptions {
  /** The checkout's status when the page is rendered. */
  readonly status: CheckoutStatus
  /** A same-origin SSE stream of this checkout's events that this page may open (EventSource sends no bearer). */
  readonly eventsUrl: string
  /** Every SSE `event:` name the stream may send; each one's `data` carries `data.checkout.status`. */
  readonly eventTypes: ReadonlyArray<string>
}

/**
 * The status script: it reads the stream's URL and the current status from the region's data attributes,
 * so the only data embedded in it are the labels, the event names and the terminal statuses.
 */
const statusScript = (eventTypes: ReadonlyArray<string>) => `(function () {
  var region = document.getElementById("checkout-status");
  var labels = ${scriptJson(checkoutStatusLabels)};
  var terminal = ${scriptJson([...terminalStatuses])};
  var types = ${scriptJson(eventTypes)};
  if (!region || typeof EventSource === "undefined" || terminal.indexOf(region.getAttribute("data-status")) >= 0) return;
  var source = new EventSource(region.getAttribute("data-events-url"));
  var update = function (event) {
    var status;
    try { status = JSON.parse(event.data).data.checkout.status; } catch (e) { return; }
    if (typeof status !== "string") return;
    if (status !== region.getAttribute("data-status")) {
      region.setAttribute("data-status", status);
      region.textContent = Object.prototype.hasOwnProperty.call(labels, status) ? labels[status] : status;
    }
    if (terminal.indexOf(status) >= 0) source.close();
  };
  for (var i = 0; i < types.length; i++) source.addEventListener(types[i], update);
})();`

/** The page after a successful payment: the status updates live from the checkout's events. */
export const paymentStatusPage = (view: PayPageView, options: PaymentStatusOptions): string =>
  layout(
    "Payment received · Ribbon",
    `  <h1>Payment received</h1>
  <p>Thank you. You paid <strong>${escapeHtml(view.totalDisplay)}</strong>. Reference <code>${escapeHtml(view.checkoutId)}</code>.</p>
  <h2 id="checkout-status-heading">Order status</h2>
  <p id="checkout-status" class="status" role="status" aria-live="polite" aria-atomic="true" aria-labelledby="checkout-status-heading" data-status="${escapeHtml(options.status)}" data-events-url="${escapeHtml(options.eventsUrl)}">${escapeHtml(checkoutStatusLabels[options.status] ?? options.status)}</p>
  <noscript><p>Reload this page to see the latest status.</p></noscript>
  <p class="muted">You can close this page; the order goes ahead either way.</p>
  <h2>Items</h2>
  ${itemList(view.items)}
  ${breakdownList(view.breakdown)}
  <h2>Recipient</h2>
  ${deliverySection(view)}
  <script${nonceAttr(options.nonce)}>
${statusScript(options.eventTypes)}
  </script>`,
    options.nonce
  )

// ---------------------------------------------------------------------------------------------------------
// Links that cannot be paid

export type PayProblemKind = "already_paid" | "expired" | "cancelled" | "not_found"

/**
 * Each problem's suggested HTTP status, heading and next step. `not_found` covers an unknown checkout and a
 * wrong token alike, so the page never says which.
 */
export const payProblems = {
  already_paid: {
    status: 409,
    heading: "This checkout is already paid",
    next: "There is nothing more to pay; the order status is on the assistant or app you came from."
  },
  expired: {
    status: 410,
    heading: "This payment link has expired",
    next: "Nothing was charged; ask the assistant or app you came from to start a new checkout."
  },
  cancelled: {
    status: 410,
    heading: "This checkout was cancelled",
    next: "Nothing was charged; ask the assistant or app you came from to start a new checkout if you still want to send this gift."
  },
  not_found: {
    status: 404,
    heading: "This payment link is not valid",
    next: "Check that you opened the whole link you were given, or ask the assistant or app you came from for a new one."
  }
} as const satisfies Record<PayProblemKind, { status: number; heading: string; next: string }>

export interface PayProblemOptions extends PageOptions {
  /** For `already_paid`: a link to this checkout's status page, when the caller can offer one. */
  readonly statusUrl?: string | undefined
}

export const payProblemPage = (kind: PayProblemKind, options: PayProblemOptions = {}): string => {
  const problem = payProblems[kind]
  const link =
    kind === "already_paid" && options.statusUrl !== undefined
      ? `\n  <p><a href="${escapeHtml(options.statusUrl)}">See the order status</a></p>`
      : ""
  return layout(
    problem.heading,
    `  <h1>${escapeHtml(problem.heading)}</h1>
  <p>${escapeHtml(problem.next)}</p>${link}`,
    options.nonce
  )
}
