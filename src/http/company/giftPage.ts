import { Option, type ParseResult } from "effect"
import { type ThankYouNote, thankYouNoteMaxLength } from "../../domain/company/Gifts.js"
import type { CompanyOrderRecord, ShipmentStatus } from "../../domain/company/Orders.js"
import { plainIssues } from "../../domain/platform/IssueMessages.js"
import type { GiftChoice } from "../../services/company/Gifts.js"
import { escapeHtml, layout } from "../pages/html.js"

/**
 * The gift page (`/g/{token}`, docs/decisions/0048-gift-page-and-claims.md; docs/company-api.md "Gifts (v2)"): plain
 * HTML forms that work without JavaScript, one step per page: the gift and the sender's note, the choices, the chosen
 * product's options with the address, then the claim. No price is ever shown to the recipient. Labels and
 * buttons are the ones docs/decisions/0048-gift-page-and-claims.md names.
 */

const css = `
    .note { background: #f6f4f1; border-left: 4px solid #b3261e; padding: .8rem 1rem; white-space: pre-wrap; }
    .choice { border: 1px solid #e5e1dc; border-radius: 10px; padding: 1rem; margin: 1rem 0; }
    .choice img { max-width: 100%; border-radius: 6px; }
    fieldset { border: 1px solid #e5e1dc; border-radius: 8px; margin-top: 1rem; }
    fieldset label { display: inline; font-weight: 400; }
    fieldset input { width: auto; }
    select { width: 100%; padding: .55rem; font-size: 1rem; }
    .status { font-size: 1.1rem; font-weight: 600; }
    .optional { font-weight: 400; color: #5f5a55; }
    dd { margin: 0 0 .8rem; }
    textarea { width: 100%; box-sizing: border-box; padding: .55rem; font: inherit; font-size: 1rem;
               border: 1px solid #767676; border-radius: 6px; }
    textarea[aria-invalid="true"] { border: 2px solid #b3261e; }
    .hint { color: #5f5a55; margin: 0 0 .4rem; }
    .field-error { color: #8c1d18; font-weight: 600; margin: 0 0 .4rem; }
    .error ul { margin: .4rem 0 0; padding-left: 1.2rem; }
    .error a { color: #8c1d18; }
    .saved { background: #e6f4ea; color: #1e4620; padding: .6rem .8rem; border-radius: 6px; }
    blockquote.note { margin: .6rem 0; overflow-wrap: anywhere; }`

const page = (title: string, body: string, nonce: string) => layout(title, body, { width: "34rem", css, nonce })

export interface GiftPageContext {
  readonly token: string
  readonly sender: string
  readonly note: string | null
  readonly firstName: string | null
  readonly nonce: string
  /** When the gift expires: the page says so while it can be claimed. */
  readonly expiresAt?: Date | undefined
}

/** A date as the gift page writes it: in English for now, in UTC (the day the gift's expiry falls on there). */
export const pageDate = (date: Date) =>
  new Intl.DateTimeFormat("en", { dateStyle: "long", timeZone: "UTC" }).format(date)

const expiryLine = (context: GiftPageContext) =>
  context.expiresAt === undefined
    ? ""
    : `<p id="gift-expiry">This gift expires on ${escapeHtml(pageDate(context.expiresAt))}.</p>`

/** The countries the recipient may pick, by code, with their English names. */
export type CountryOptions = ReadonlyArray<{ readonly code: string; readonly name: string }>

const countrySelect = (countries: CountryOptions, selected: string) => `
  <label for="country">Country</label>
  <select id="country" name="country">${countries
    .map(
      (c) =>
        `<option value="${escapeHtml(c.code)}"${c.code === selected ? " selected" : ""}>${escapeHtml(c.name)}</option>`
    )
    .join("")}</select>`

const greeting = (context: GiftPageContext) => `
  <h1>${escapeHtml(context.firstName === null ? "You have a gift" : `${context.firstName}, you have a gift`)}</h1>
  <p>From ${escapeHtml(context.sender)}.</p>
  ${context.note === null ? "" : `<p class="note">${escapeHtml(context.note)}</p>`}
  ${expiryLine(context)}`

/** Step 1: the gift and the note; where it will be sent decides the choices. */
export const giftLandingPage = (context: GiftPageContext, countries: CountryOptions, country: string) =>
  page(
    "Your gift",
    `${greeting(context)}
  <form method="get" action="/g/${escapeHtml(context.token)}/choices">
    ${countrySelect(countries, country)}
    <button type="submit">See your gift options</button>
  </form>`,
    context.nonce
  )

/**
 * Step 2: what the campaign allows within the budget in that country, each with "Choose"; when the gift may be
 * swapped (`swappable`), the sender's product is followed by "See other gifts" (`otherGiftsLink`).
 */
export const giftChoicesPage = (
  context: GiftPageContext,
  choices: ReadonlyArray<GiftChoice>,
  country: string,
  swappable = false
) =>
  page(
    "Choose your gift",
    `${greeting(context)}
  <h2>Choose your gift</h2>
  ${
    choices.length === 0
      ? `<p>Nothing can be delivered to this country within this gift. <a href="/g/${escapeHtml(context.token)}">Pick another country</a>.</p>`
      : choices.map((choice) => choiceCard(context, choice, country)).join("")
  }${swappable ? otherGiftsLink(context, country) : ""}`,
    context.nonce
  )

/** A choice's card with its "Choose" button (the same for the campaign's choices, other gifts and digital gifts). */
const choiceCard = (context: GiftPageContext, choice: GiftChoice, country: string) => `
  <div class="choice">
    ${choice.imageUrl === null ? "" : `<img src="${escapeHtml(choice.imageUrl)}" alt="">`}
    <h3>${escapeHtml(choice.title)}</h3>
    ${choice.description === null ? "" : `<p>${escapeHtml(choice.description)}</p>`}
    <form method="get" action="/g/${escapeHtml(context.token)}/choose">
      <input type="hidden" name="productId" value="${escapeHtml(choice.productId)}">
      <input type="hidden" name="country" value="${escapeHtml(country)}">
      <button type="submit" aria-label="Choose ${escapeHtml(choice.title)}">Choose</button>
    </form>
  </div>`

/** The way from a swappable product gift to the other gifts within its budget (docs/gifting.md, "Swap"). */
const otherGiftsLink = (context: GiftPageContext, country: string) => `
  <p><a id="other-gifts" href="/g/${escapeHtml(context.token)}/others?country=${encodeURIComponent(country)}">See other gifts</a></p>`

/**
 * The other gifts a swappable product gift may be exchanged for: other products landed within the same budget in
 * that country, each with "Choose"; the sender's product is one link away. `null` when the gift cannot be swapped.
 */
export const giftOtherChoicesPage = (
  context: GiftPageContext,
  others: ReadonlyArray<GiftChoice> | null,
  country: string
) => {
  const token = escapeHtml(context.token)
  const back = `<p><a href="/g/${token}/choices?country=${encodeURIComponent(country)}">Back to your gift</a></p>`
  const body =
    others === null
      ? `<p>This gift cannot be exchanged for another.</p>${back}`
      : others.length === 0
        ? `<p>No other gift can be delivered to this country within this gift.</p>${back}`
        : `<p>Instead of the gift chosen for you, you may take one of these.</p>${others
            .map((choice) => choiceCard(context, choice, country))
            .join("")}${back}`
  return page(
    "Other gifts",
    `${greeting(context)}
  <h2>Other gifts</h2>
  ${body}`,
    context.nonce
  )
}

const countryName = (code: string) => regionNames.of(code) ?? code

/**
 * Step 2 where nothing the campaign allows can be delivered to the country: the catalog's digital gifts within the
 * same budget, delivered online, each with "Choose".
 */
export const giftDigitalChoicesPage = (context: GiftPageContext, choices: ReadonlyArray<GiftChoice>, country: string) =>
  page(
    "Choose your gift",
    `${greeting(context)}
  <h2>Choose your gift</h2>
  <p id="digital-offer">The gifts ${escapeHtml(context.sender)} chose cannot be shipped to ${escapeHtml(
    countryName(country)
  )}, so you can choose one of these instead: they are delivered online, by email. <a href="/g/${escapeHtml(
    context.token
  )}">Pick another country</a>.</p>
  ${choices.map((choice) => choiceCard(context, choice, country)).join("")}`,
    context.nonce
  )

/** Step 2 where nothing at all can reach the country, not even a digital gift: said plainly; the sender is told. */
export const giftUndeliverablePage = (context: GiftPageContext, country: string) =>
  page(
    "Choose your gift",
    `${greeting(context)}
  <h2>Choose your gift</h2>
  <p id="undeliverable" role="status">This gift cannot be delivered to ${escapeHtml(
    countryName(country)
  )}: nothing in it can be shipped there, and no gift delivered online fits it either. We have let ${escapeHtml(
    context.sender
  )} know. You can <a href="/g/${escapeHtml(context.token)}">pick another country</a>, or wait to hear from ${escapeHtml(
    context.sender
  )}.</p>`,
    context.nonce
  )

/** The variant's radio buttons when there are several, else the one variant as a hidden input. */
const variantFields = (choice: GiftChoice, state: ClaimFormState) =>
  choice.variants.length === 1
    ? `<input type="hidden" name="variantId" value="${escapeHtml(choice.variants[0]!.id)}">`
    : `<fieldset><legend>Options</legend>${choice.variants
        .map(
          (variant, index) => `
      <div><input type="radio" id="variant-${index}" name="variantId" value="${escapeHtml(variant.id)}"${
        (state.values?.variantId ?? choice.variants[0]!.id) === variant.id ? " checked" : ""
      } required>
      <label for="variant-${index}">${escapeHtml(variant.title)}</label></div>`
        )
        .join("")}</fieldset>`

/**
 * Step 3 for a digital gift: its options, and who receives it: name, e-mail (where it is delivered) and phone (the
 * order's contact, as every order has). No address: the country is the one chosen, shown and sent along.
 */
export const giftDigitalClaimPage = (
  context: GiftPageContext,
  choice: GiftChoice,
  country: string,
  state: ClaimFormState = {}
) =>
  page(
    "Claim your gift",
    `${greeting(context)}
  <h2>${escapeHtml(choice.title)}</h2>
  <p>Delivered online: it is sent to the email address below. Nothing is shipped.</p>
  ${state.error === undefined ? "" : `<p class="error" role="alert">${escapeHtml(state.error)}</p>`}
  <form method="post" action="/g/${escapeHtml(context.token)}/claim">
    ${variantFields(choice, state)}
    <input type="hidden" name="productId" value="${escapeHtml(choice.productId)}">
    <input type="hidden" name="country" value="${escapeHtml(country)}">
    ${field("firstName", "First name", state)}
    ${field("lastName", "Last name", state)}
    ${field("email", "Email", state, "email")}
    ${field("phone", "Phone", state, "tel")}
    <p>Country: ${escapeHtml(countryName(country))}</p>
    <button type="submit">Claim gift</button>
  </form>`,
    context.nonce
  )

/**
 * What the claim form shows again after a refusal: the values sent, the problem in words (announced), and each
 * field's own problem by the field's name (shown beside it).
 */
export interface ClaimFormState {
  readonly values?: Readonly<Record<string, string>>
  readonly error?: string
  readonly fieldErrors?: Readonly<Record<string, string>>
}

/**
 * A labelled input; an optional one says so in its label, since only required ones are checked. A field with a
 * problem is marked invalid and its message, beside it, is what a screen reader reads with it.
 */
const field = (name: string, label: string, state: ClaimFormState, type = "text", required = true) => {
  const problem = state.fieldErrors?.[name]
  return `
    <label for="${name}">${label}${required ? "" : ' <span class="optional">(optional)</span>'}</label>${
      problem === undefined ? "" : `\n    <p class="field-error" id="${name}-error">Error: ${escapeHtml(problem)}</p>`
    }
    <input id="${name}" name="${name}" type="${type}" value="${escapeHtml(state.values?.[name] ?? "")}"${required ? " required" : ""}${
      problem === undefined ? "" : ` aria-invalid="true" aria-describedby="${name}-error"`
    }>`
}

/** Step 3: the product's options (labelled radio buttons when there are several) and the address. */
export const giftClaimPage = (
  context: GiftPageContext,
  choice: GiftChoice,
  countries: CountryOptions,
  country: string,
  state: ClaimFormState = {}
) =>
  page(
    "Claim your gift",
    `${greeting(context)}
  <h2>${escapeHtml(choice.title)}</h2>
  ${state.error === undefined ? "" : `<p class="error" role="alert">${escapeHtml(state.error)}</p>`}
  <form method="post" action="/g/${escapeHtml(context.token)}/claim">
    ${variantFields(choice, state)}
    <input type="hidden" name="productId" value="${escapeHtml(choice.productId)}">
    ${field("firstName", "First name", state)}
    ${field("lastName", "Last name", state)}
    ${field("email", "Email", state, "email")}
    ${field("phone", "Phone", state, "tel")}
    ${field("address1", "Address line 1", state)}
    ${field("address2", "Address line 2", state, "text", false)}
    ${field("city", "City", state)}
    ${field("state", "State or province", state, "text", false)}
    ${field("zipcode", "Postal code", state, "text", false)}
    ${countrySelect(countries, state.values?.country ?? country)}
    <button type="submit">Claim gift</button>
  </form>`,
    context.nonce
  )

/** What a claimed gift's page repeats of the claim: the item chosen, and the address lines it goes to. */
export interface ClaimSummary {
  readonly item: string
  readonly address: ReadonlyArray<string>
}

const summaryList = (summary: ClaimSummary | null) =>
  summary === null
    ? ""
    : `
  <dl>
    <dt>Your gift</dt>
    <dd id="claimed-item">${escapeHtml(summary.item)}</dd>
    <dt>Sent to</dt>
    <dd id="claimed-address">${summary.address.map(escapeHtml).join("<br>")}</dd>
  </dl>`

/** What the claimed page shows of the thank-you note, and whether (and how) its form is offered. */
export interface ThankYouState {
  /** The note as written, or null. */
  readonly note: ThankYouNote | null
  /** Whether the form is shown: the gift is claimed and the note is new or within its 24 hours. */
  readonly editable: boolean
  /** The text to put back in the form after a refusal (the note's own otherwise). */
  readonly draft?: string | undefined
  /** Why the last POST was refused: its field's problem, or the window's end. */
  readonly error?: { readonly kind: "field" | "closed"; readonly message: string } | undefined
  /** Shown once, after the redirect that follows a written note. */
  readonly sent?: boolean | undefined
}

const utcTime = new Intl.DateTimeFormat("en-GB", { dateStyle: "long", timeStyle: "short", timeZone: "UTC" })

/** A time as the recipient reads it (UTC, said so), machine-readable in `datetime`. */
const timeOf = (at: Date) => `<time datetime="${at.toISOString()}">${escapeHtml(utcTime.format(at))} UTC</time>`

/**
 * The thank-you note's section of the claimed page (docs/decisions/0070-gift-thank-you-notes.md): the note as written
 * and when, and while it may be written or changed, its form: a labelled textarea with its hint, posted without
 * JavaScript to `/g/{token}/thank-you`. A refused note comes back with an error summary (`role="alert"`, linking to
 * the field) and the field marked `aria-invalid`, its message named by `aria-describedby`.
 */
const thankYouSection = (context: GiftPageContext, state: ThankYouState) => {
  const { note, error } = state
  const fieldError = error?.kind === "field" ? error.message : undefined
  const summary =
    error === undefined
      ? ""
      : `
    <div class="error" role="alert" id="thank-you-problem">
      <p><strong>Your note was not sent.</strong></p>
      <ul><li>${
        error.kind === "field"
          ? `<a href="#thank-you-message">${escapeHtml(error.message)}</a>`
          : escapeHtml(error.message)
      }</li></ul>
    </div>`
  const sent =
    state.sent === true && error === undefined
      ? `\n    <p class="saved" role="status">Your note was sent to ${escapeHtml(context.sender)}.</p>`
      : ""
  const written =
    note === null
      ? ""
      : `
    <p>Your note to ${escapeHtml(context.sender)}, written ${timeOf(note.createdAt)}${
      note.updatedAt.getTime() === note.createdAt.getTime() ? "" : ` (changed ${timeOf(note.updatedAt)})`
    }:</p>
    <blockquote class="note" id="thank-you-note">${escapeHtml(note.message)}</blockquote>`
  const describedBy = fieldError === undefined ? "thank-you-hint" : "thank-you-hint thank-you-error"
  const form = !state.editable
    ? note === null
      ? ""
      : `
    <p>This note can no longer be changed: a note may be changed for 24 hours after it is first written.</p>`
    : `
    <form method="post" action="/g/${escapeHtml(context.token)}/thank-you">
      <label for="thank-you-message">${note === null ? "Your note" : "Change your note"} to ${escapeHtml(context.sender)}</label>
      <p class="hint" id="thank-you-hint">Plain text, up to ${thankYouNoteMaxLength} characters. You can change it for 24 hours after you first send it.</p>${
        fieldError === undefined
          ? ""
          : `\n      <p class="field-error" id="thank-you-error">Error: ${escapeHtml(fieldError)}</p>`
      }
      <textarea id="thank-you-message" name="message" rows="5" maxlength="${thankYouNoteMaxLength}" required aria-describedby="${describedBy}"${
        fieldError === undefined ? "" : ' aria-invalid="true"'
      }>${escapeHtml(state.draft ?? note?.message ?? "")}</textarea>
      <button type="submit">${note === null ? "Send note" : "Save changes"}</button>
    </form>`
  return `
  <section aria-labelledby="thank-you" id="thank-you-section">
    <h2 id="thank-you">Say thank you</h2>${summary}${sent}${written}${form}
  </section>`
}

/**
 * After the claim: the gift is claimed, what was chosen and where it goes (when the order can be read),
 * and where its order stands, followed live: a script asks `/g/{token}/status` every 10 seconds until the
 * delivery is final. Without JavaScript the recipient follows it with the page's Refresh link: a page that reloads
 * itself on a timer (a `<meta http-equiv="refresh">`) takes the reader's place away from them (WCAG 2.2.1).
 */
export const giftClaimedPage = (
  context: GiftPageContext,
  orderStatus: string,
  final: boolean,
  summary: ClaimSummary | null,
  thankYou: ThankYouState = { note: null, editable: false }
) => {
  const token = escapeHtml(context.token)
  const follow = final
    ? ""
    : `
  <script nonce="${escapeHtml(context.nonce)}">
    const shown = document.getElementById("order-status")
    const ask = async () => {
      const answer = await fetch("/g/${token}/status", { headers: { accept: "application/json" } })
      if (!answer.ok) return
      const delivery = await answer.json()
      shown.textContent = delivery.label
      if (!delivery.final) setTimeout(ask, 10000)
    }
    setTimeout(ask, 10000)
  </script>`
  return layout(
    "Your gift is claimed",
    `<h1>Your gift is claimed</h1>
  <p>Thank you! ${escapeHtml(context.sender)}'s gift is on its way.</p>${summaryList(summary)}
  <p>Order status: <span class="status" id="order-status" aria-live="polite">${escapeHtml(orderStatus)}</span></p>
  <p><a href="/g/${token}">Refresh</a></p>${thankYouSection(context, thankYou)}${follow}`,
    { width: "34rem", css, nonce: context.nonce }
  )
}

/** A thank-you note posted for a gift that is not claimed: nothing is written. */
export const giftNoteRefusedPage = (nonce: string, token: string, message: string) =>
  page(
    "Thank-you note not sent",
    `<h1>Your note was not sent</h1>
  <p role="alert">${escapeHtml(message)}</p>
  <p><a href="/g/${escapeHtml(token)}">Back to your gift</a></p>`,
    nonce
  )

/** What an expired gift's page says of it: when it expired, and whom to ask. */
export interface GoneGift {
  readonly expiredAt: Date
  readonly sender: string
}

const expiredLine = (gone: GoneGift | undefined) =>
  gone === undefined
    ? "This gift has expired."
    : `This gift expired on ${escapeHtml(pageDate(gone.expiredAt))}.${
        gone.sender === "" ? "" : ` If you think it should not have, ask ${escapeHtml(gone.sender)}, who sent it.`
      }`

/** An unknown, expired or cancelled gift. */
export const giftGonePage = (nonce: string, reason: "unknown" | "expired" | "cancelled", gone?: GoneGift) =>
  page(
    "Gift unavailable",
    `<h1>This gift is not available</h1>
  <p>${
    reason === "unknown"
      ? "This link is not valid. Check that you copied all of it."
      : reason === "expired"
        ? expiredLine(gone)
        : "This gift was cancelled by its sender."
  }</p>`,
    nonce
  )

/** The order's shipment, as the recipient reads it. */
const shipmentLabels: Record<ShipmentStatus, string> = {
  orderReceived: "Order received",
  processing: "Being prepared",
  inTransit: "On its way",
  outForDelivery: "Out for delivery",
  delivered: "Delivered",
  failed: "Could not be delivered",
  cancelled: "Cancelled"
}

/** Where nothing more happens to a delivery. */
const finalShipments: ReadonlyArray<ShipmentStatus> = ["delivered", "failed", "cancelled"]

export const regionNames = new Intl.DisplayNames(["en"], { type: "region", fallback: "code" })

/** Where a claimed gift's order stands (received while it is not placed), for the page and its live status. */
export const deliveryOf = (order: Option.Option<CompanyOrderRecord>) => {
  const shipmentStatus = Option.match(order, {
    onNone: (): ShipmentStatus => "orderReceived",
    onSome: (o) => o.shipmentStatus
  })
  return {
    shipmentStatus,
    label: shipmentLabels[shipmentStatus],
    final: finalShipments.includes(shipmentStatus)
  }
}

/** The countries a gift can go to, by English name, for the select. */
export const countryOptionsOf = (supported: ReadonlyArray<string>): CountryOptions =>
  supported.map((code) => ({ code, name: regionNames.of(code) ?? code })).sort((a, b) => a.name.localeCompare(b.name))

/** The claimed gift's item and address, as the recipient gave them. */
export const claimSummaryOf = (order: CompanyOrderRecord): ClaimSummary => ({
  item: order.title,
  address: [
    `${order.recipientFirstName} ${order.recipientLastName}`,
    // A digital gift has no address: it goes to the e-mail.
    order.address1 === "" ? order.recipientEmail : order.address1,
    order.address2,
    [order.city, order.provinceCode, order.postalCode].filter((part) => part !== null && part !== "").join(" "),
    regionNames.of(order.countryCode) ?? order.countryCode
  ].filter((line): line is string => line !== null && line !== "")
})

/** The form's problems, each naming its field as the page labels it. */
export const formIssues = (error: ParseResult.ParseError) =>
  plainIssues(error.issue)
    .map((issue) => `${fieldLabels[String(issue.path.at(-1))] ?? "The form"}: ${issue.message}`)
    .join("; ")

/** The form's fields by the claim's property names where the two differ. */
const formFieldOf: Record<string, string> = { addressLine1: "address1", addressLine2: "address2" }

/** A refused claim's problems by the name of the form's field each belongs to (the first problem of each). */
export const formFieldIssues = (error: ParseResult.ParseError): Readonly<Record<string, string>> => {
  const byField: Record<string, string> = {}
  for (const issue of plainIssues(error.issue)) {
    const property = String(issue.path.at(-1))
    const name = formFieldOf[property] ?? property
    byField[name] ??= issue.message
  }
  return byField
}

const fieldLabels: Record<string, string> = {
  variantId: "Options",
  firstName: "First name",
  lastName: "Last name",
  email: "Email",
  phone: "Phone",
  addressLine1: "Address line 1",
  addressLine2: "Address line 2",
  city: "City",
  state: "State or province",
  zipcode: "Postal code",
  country: "Country"
}
