import type { CardFieldError } from "../../domain/checkout/Cards.js"
import { escapeHtml, layout as htmlLayout } from "../pages/html.js"
import { cardAlerts, cardCss, cardFields } from "./payPage.js"

/**
 * The hosted allowance pages (docs/allowances.md): `/allowances/new?client_id=…`, where the person lets one client
 * pay for them within limits, saving a card through the payment page's card form (`cardFields`) and confirming
 * with their password; and `/allowances`, where they see each allowance with its history and revoke it. Pure
 * functions from a view to a full HTML document; every value is HTML-escaped, and the card number and CVC are never
 * written back.
 */

const css = `${cardCss}
    select, textarea { width: 100%; box-sizing: border-box; padding: .55rem; font-size: 1rem; border: 1px solid #bbb;
                       border-radius: 6px; background: #fff; }
    textarea { min-height: 3.2rem; }
    fieldset { border: 1px solid #ddd; border-radius: 6px; margin: 1rem 0; padding: .2rem .9rem .9rem; }
    legend { font-weight: 600; padding: 0 .3rem; }
    .hint { color: #666; font-size: .9rem; margin: .2rem 0 0; }
    table { width: 100%; border-collapse: collapse; font-size: .95rem; }
    th, td { text-align: left; padding: .3rem .4rem; border-bottom: 1px solid #eee; }
    td.amount { text-align: right; white-space: nowrap; }
    section.allowance { border: 1px solid #ddd; border-radius: 6px; padding: .2rem .9rem .9rem; margin: 1rem 0; }
    /* The box already sets each allowance apart: no rule and gap above its heading, as between a page's sections. */
    section.allowance > h2 { margin-top: .8rem; border-top: 0; padding-top: 0; }
    .badge { display: inline-block; padding: .1rem .5rem; border-radius: 1rem; background: #f1efe9; font-size: .85rem; }`

const head = `
  <meta name="referrer" content="no-referrer">
  <meta name="robots" content="noindex, nofollow">
  <link rel="icon" href="data:,">`

const layout = (title: string, body: string, nonce: string | undefined) =>
  htmlLayout(title, body, { width: "36rem", css, head, nonce })

// ---------------------------------------------------------------------------------------------------------
// Creation

/** What the creation form posts, as typed (amounts in major units, lists comma- or line-separated). */
export interface AllowanceFormValues {
  readonly currency?: string | undefined
  readonly perCheckout?: string | undefined
  readonly period?: string | undefined
  readonly periodLimit?: string | undefined
  readonly total?: string | undefined
  readonly countries?: string | undefined
  readonly recipients?: string | undefined
  readonly categories?: string | undefined
  readonly days?: string | undefined
  readonly email?: string | undefined
  readonly name?: string | undefined
  readonly expiry?: string | undefined
}

export interface AllowanceFormState {
  readonly values?: AllowanceFormValues | undefined
  /** Problems with the terms or the confirmation, by form field name (`""`: the whole form). */
  readonly problems?: ReadonlyArray<{ readonly field: string; readonly message: string }> | undefined
  readonly cardErrors?: ReadonlyArray<CardFieldError> | undefined
  /** The processor would not keep the card. */
  readonly cardMessage?: string | undefined
}

export interface AllowanceFormView {
  readonly clientId: string
  readonly clientName: string
  readonly postUrl: string
  readonly maxDays: number
}

const input = (
  id: string,
  label: string,
  value: string | undefined,
  attributes: string,
  problems: ReadonlyArray<{ field: string; message: string }>,
  hint?: string
) => {
  const messages = problems.filter((p) => p.field === id).map((p) => p.message)
  const invalid = messages.length > 0 ? ` aria-invalid="true" aria-describedby="${id}-error"` : ""
  const error =
    messages.length > 0 ? `<p class="field-error" id="${id}-error">${escapeHtml(messages.join(" "))}</p>` : ""
  const hintHtml = hint === undefined ? "" : `<p class="hint">${escapeHtml(hint)}</p>`
  const valueAttr = value === undefined ? "" : ` value="${escapeHtml(value)}"`
  return `<div>
      <label for="${id}">${escapeHtml(label)}</label>
      <input id="${id}" name="${id}" ${attributes}${valueAttr}${invalid}>${hintHtml}${error}
    </div>`
}

const textarea = (
  id: string,
  label: string,
  value: string | undefined,
  problems: ReadonlyArray<{ field: string; message: string }>,
  hint: string
) => {
  const messages = problems.filter((p) => p.field === id).map((p) => p.message)
  const invalid = messages.length > 0 ? ` aria-invalid="true" aria-describedby="${id}-error"` : ""
  const error =
    messages.length > 0 ? `<p class="field-error" id="${id}-error">${escapeHtml(messages.join(" "))}</p>` : ""
  return `<div>
      <label for="${id}">${escapeHtml(label)}</label>
      <textarea id="${id}" name="${id}" maxlength="4000" spellcheck="false"${invalid}>${escapeHtml(value ?? "")}</textarea>
      <p class="hint">${escapeHtml(hint)}</p>${error}
    </div>`
}

const periodOptions = [
  ["day", "Per day"],
  ["week", "Per week (from Monday)"],
  ["month", "Per month"]
] as const

/** The creation page: the limits, the optional lists, the expiry, the card, and the password to confirm. */
export const allowanceFormPage = (view: AllowanceFormView, state: AllowanceFormState = {}, nonce?: string) => {
  const values = state.values ?? {}
  const problems = state.problems ?? []
  const summary =
    problems.length > 0
      ? `<div class="error" role="alert" id="allowance-errors"><p>Check the form:</p><ul>${problems
          .map(
            (p) =>
              `<li>${p.field === "" ? escapeHtml(p.message) : `<a href="#${escapeHtml(p.field)}">${escapeHtml(p.message)}</a>`}</li>`
          )
          .join("")}</ul></div>`
      : ""
  const cardState = {
    values: { name: values.name, expiry: values.expiry },
    fieldErrors: state.cardErrors,
    declineMessage: state.cardMessage
  }
  const period = values.period ?? "week"
  const amount = `type="text" inputmode="decimal" maxlength="12" required spellcheck="false"`
  return layout(
    `Set up an allowance for ${view.clientName} · Ribbon`,
    `  <h1>Let ${escapeHtml(view.clientName)} pay for you</h1>
  <p>${escapeHtml(view.clientName)} will be able to pay for gifts from the card below without asking you each time, but only within these limits. You can revoke it at any time on <a href="/allowances">your allowances page</a>.</p>
  ${summary}
  ${cardAlerts({ fieldErrors: state.cardErrors, declineMessage: state.cardMessage })}
  <form method="post" action="${escapeHtml(view.postUrl)}" novalidate>
    <input type="hidden" name="client_id" value="${escapeHtml(view.clientId)}">
    <fieldset>
      <legend>Limits</legend>
      ${input("currency", "Currency", values.currency ?? "GBP", `type="text" maxlength="3" required spellcheck="false" autocomplete="off"`, problems, "Three letters, e.g. GBP, EUR or USD. Checkouts in another currency are refused.")}
      ${input("perCheckout", "Most per checkout", values.perCheckout, amount, problems)}
      <div>
        <label for="period">Period</label>
        <select id="period" name="period">${periodOptions
          .map(([value, label]) => `<option value="${value}"${value === period ? " selected" : ""}>${label}</option>`)
          .join("")}</select>
      </div>
      ${input("periodLimit", "Most per period", values.periodLimit, amount, problems, "Periods follow the calendar in UTC.")}
      ${input("total", "Most in total", values.total, amount, problems)}
      ${input("days", "Ends after (days)", values.days ?? "30", `type="text" inputmode="numeric" maxlength="3" required`, problems, `At most ${view.maxDays} days.`)}
    </fieldset>
    <fieldset>
      <legend>Only for (optional)</legend>
      ${textarea("countries", "Delivery countries", values.countries, problems, "Two-letter codes such as GB, FR. Empty: any country.")}
      ${textarea("recipients", "Recipients' e-mail addresses", values.recipients, problems, "One per line or separated by commas. Empty: anyone.")}
      ${textarea("categories", "Categories", values.categories, problems, "As the catalog names them. Empty: any category.")}
    </fieldset>
    <fieldset>
      <legend>Card</legend>
      <p class="note">Test mode: no real card is charged. Use the test card <strong>4242 4242 4242 4242</strong>, any future expiry date and any 3-digit CVC.</p>
      ${cardFields(cardState)}
    </fieldset>
    <fieldset>
      <legend>Confirm it is you</legend>
      ${input("email", "E-mail", values.email, `type="email" autocomplete="username" maxlength="254" required`, problems)}
      ${input("password", "Password", undefined, `type="password" autocomplete="current-password" maxlength="256" required`, problems)}
      ${input("code", "Authentication code", undefined, `type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="32"`, problems, "Only if you use two-factor sign-in.")}
    </fieldset>
    <button type="submit" class="pay">Allow ${escapeHtml(view.clientName)} to pay</button>
  </form>`,
    nonce
  )
}

// ---------------------------------------------------------------------------------------------------------
// The person's allowances

export interface AllowanceHistoryEntry {
  readonly at: string
  readonly kind: "charge" | "credit"
  readonly checkoutId: string
  readonly amountDisplay: string
  readonly reason: string | null
}

export interface AllowanceView {
  readonly id: string
  readonly clientName: string
  readonly status: "active" | "expired" | "revoked"
  readonly limits: string
  readonly spent: string
  readonly only: ReadonlyArray<string>
  readonly card: string
  readonly expiresAt: string
  readonly history: ReadonlyArray<AllowanceHistoryEntry>
}

const utcFormat = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" })
const when = (iso: string) =>
  `<time datetime="${escapeHtml(iso)}">${escapeHtml(utcFormat.format(new Date(iso)))} UTC</time>`

const reasonWords: Record<string, string> = {
  item_failed: "an item could not be ordered",
  order_cancelled: "an order was cancelled"
}

const allowanceSection = (view: AllowanceView, csrf: string) => {
  const history =
    view.history.length === 0
      ? `<p class="muted">Not used yet.</p>`
      : `<table><thead><tr><th>When</th><th>What</th><th>Checkout</th><th class="amount">Amount</th></tr></thead><tbody>${view.history
          .map(
            (entry) =>
              `<tr><td>${when(entry.at)}</td><td>${entry.kind === "charge" ? "Paid" : `Refunded${entry.reason === null ? "" : ` (${escapeHtml(reasonWords[entry.reason] ?? entry.reason)})`}`}</td><td><code>${escapeHtml(entry.checkoutId)}</code></td><td class="amount">${escapeHtml(entry.amountDisplay)}</td></tr>`
          )
          .join("")}</tbody></table>`
  const revoke =
    view.status === "active"
      ? `<form method="post" action="/allowances/${escapeHtml(view.id)}/revoke">
      <input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
      <button type="submit">Revoke</button>
    </form>`
      : ""
  return `<section class="allowance" id="allowance-${escapeHtml(view.id)}">
    <h2>${escapeHtml(view.clientName)} <span class="badge">${escapeHtml(view.status)}</span></h2>
    <p>${escapeHtml(view.limits)}<br>${escapeHtml(view.spent)}</p>
    ${view.only.length === 0 ? "" : `<p>${view.only.map(escapeHtml).join("<br>")}</p>`}
    <p class="muted">${escapeHtml(view.card)} · ${view.status === "revoked" ? "revoked" : `ends ${when(view.expiresAt)}`}</p>
    <h3>History</h3>
    ${history}
    ${revoke}
  </section>`
}

/** The person's allowances, newest first, each with its history and, while active, a revoke button. */
export const allowancesPage = (
  allowances: ReadonlyArray<AllowanceView>,
  csrf: string,
  options: { readonly notice?: string | undefined; readonly nonce?: string | undefined } = {}
) =>
  layout(
    "Your allowances · Ribbon",
    `  <h1>Your allowances</h1>
  ${options.notice === undefined ? "" : `<p class="status" role="status">${escapeHtml(options.notice)}</p>`}
  <p>What you let assistants and apps pay for you without asking. Revoking one takes effect at once.</p>
  ${allowances.length === 0 ? "<p>You have no allowances.</p>" : allowances.map((view) => allowanceSection(view, csrf)).join("\n  ")}`,
    options.nonce
  )

/** Sign-in for the allowances page. */
export const allowancesSignInPage = (
  state: { readonly email?: string | undefined; readonly message?: string | undefined } = {},
  nonce?: string
) =>
  layout(
    "Sign in · Your allowances · Ribbon",
    `  <h1>Your allowances</h1>
  <p>Sign in to see and revoke what you let assistants and apps pay for you.</p>
  ${state.message === undefined ? "" : `<div class="error" role="alert"><p>${escapeHtml(state.message)}</p></div>`}
  <form method="post" action="/allowances/sign-in" novalidate>
    ${input("email", "E-mail", state.email, `type="email" autocomplete="username" maxlength="254" required`, [])}
    ${input("password", "Password", undefined, `type="password" autocomplete="current-password" maxlength="256" required`, [])}
    ${input("code", "Authentication code", undefined, `type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="32"`, [], "Only if you use two-factor sign-in.")}
    <button type="submit">Sign in</button>
  </form>`,
    nonce
  )

/** After creation: what was allowed. */
export const allowanceCreatedPage = (view: AllowanceView, nonce?: string) =>
  layout(
    "Allowance set up · Ribbon",
    `  <h1>Allowance set up</h1>
  <p role="status">${escapeHtml(view.clientName)} can now pay for you within these limits. You can close this page.</p>
  <p>${escapeHtml(view.limits)}</p>
  ${view.only.length === 0 ? "" : `<p>${view.only.map(escapeHtml).join("<br>")}</p>`}
  <p class="muted">${escapeHtml(view.card)} · ends ${when(view.expiresAt)}</p>
  <p><a href="/allowances">See and revoke your allowances</a></p>`,
    nonce
  )

/** An unknown client, or a link without one. */
export const allowanceProblemPage = (heading: string, next: string, nonce?: string) =>
  layout(heading, `  <h1>${escapeHtml(heading)}</h1>\n  <p>${escapeHtml(next)}</p>`, nonce)
