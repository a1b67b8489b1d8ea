import { Option, type ParseResult } from "effect"
import { recipientNameMaxLength } from "../../domain/checkout/Checkout.js"
import { type GiftMessageKey, giftLanguages, languageNames } from "../../domain/company/GiftLanguages.js"
import { type ThankYouNote, thankYouNoteMaxLength } from "../../domain/company/Gifts.js"
import type { CompanyOrderRecord, ShipmentStatus } from "../../domain/company/Orders.js"
import { plainIssues } from "../../domain/platform/IssueMessages.js"
import type { GiftChoice } from "../../services/company/Gifts.js"
import type { GiftTranslator } from "../../services/company/GiftTranslator.js"
import { escapeHtml, layout } from "../pages/html.js"

/**
 * The gift page (`/g/{token}`, docs/decisions/0048-gift-page-and-claims.md; docs/company-api.md "Gifts (v2)"): plain
 * HTML forms that work without JavaScript, one step per page: the gift and the sender's note, the choices, the chosen
 * product's options with the address, then the claim. No price is ever shown to the recipient. Every word is the
 * reader's language's (docs/decisions/0074-gift-page-languages.md), through the context's translator; the
 * campaign's message, the sender's name and the products' titles are shown as written.
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
    blockquote.note { margin: .6rem 0; overflow-wrap: anywhere; }
    .languages { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; justify-content: flex-end;
                 margin: -1rem 0 1rem; }
    .languages label { display: inline; margin: 0; font-weight: 400; white-space: nowrap; }
    .languages select { width: auto; min-width: 0; padding: .3rem; }
    .languages button { margin: 0; padding: .35rem .8rem; background: #5f5a55; white-space: nowrap; }`

/** What every gift page is written with: the reader's translator, the gift's link token, the page's own address. */
export interface PageFrame {
  readonly tr: GiftTranslator
  readonly nonce: string
  readonly token: string
  /** The page's own path and query: where the language switcher comes back to. */
  readonly here: string
}

/**
 * The language switcher: a form (no script) posting the picked language to `/g/{token}/language`, which keeps it in
 * a cookie and comes back here. Each language is listed by its own name, marked with its `lang`.
 */
const languageSwitcher = (frame: PageFrame) => `
  <form class="languages" method="post" action="/g/${escapeHtml(frame.token)}/language">
    <label for="language">${say(frame.tr, "language.label")}</label>
    <select id="language" name="language">${giftLanguages
      .map(
        (language) =>
          `<option value="${language}" lang="${language}"${language === frame.tr.language ? " selected" : ""}>${escapeHtml(
            languageNames[language]
          )}</option>`
      )
      .join("")}</select>
    <input type="hidden" name="back" value="${escapeHtml(frame.here)}">
    <button type="submit">${say(frame.tr, "language.submit")}</button>
  </form>`

/** A message as HTML: the translator's text, escaped. */
const say = (tr: GiftTranslator, key: GiftMessageKey, values?: Readonly<Record<string, string | number | Date>>) =>
  escapeHtml(tr.t(key, values))

const page = (frame: PageFrame, title: GiftMessageKey, body: string) =>
  layout(frame.tr.t(title), `${languageSwitcher(frame)}${body}`, {
    width: "34rem",
    css,
    nonce: frame.nonce,
    lang: frame.tr.language
  })

/** A gift's page: its frame, and what every step repeats of the gift. */
export interface GiftPageContext extends PageFrame {
  readonly sender: string
  readonly note: string | null
  readonly firstName: string | null
  /** When the gift expires: the page says so while it can be claimed. */
  readonly expiresAt?: Date | undefined
}

const expiryLine = (context: GiftPageContext) =>
  context.expiresAt === undefined
    ? ""
    : `<p id="gift-expiry">${say(context.tr, "greeting.expires", { expiresAt: context.expiresAt })}</p>`

/** The countries a gift can go to, by code, named and sorted in the reader's language, for the select. */
const countrySelect = (tr: GiftTranslator, countries: ReadonlyArray<string>, selected: string) => `
  <label for="country">${say(tr, "country.label")}</label>
  <select id="country" name="country">${countries
    .map((code) => ({ code, name: tr.countryName(code) }))
    .sort((a, b) => tr.compare(a.name, b.name))
    .map(
      (c) =>
        `<option value="${escapeHtml(c.code)}"${c.code === selected ? " selected" : ""}>${escapeHtml(c.name)}</option>`
    )
    .join("")}</select>`

const greeting = (context: GiftPageContext) => `
  <h1>${
    context.firstName === null
      ? say(context.tr, "greeting.anonymous")
      : say(context.tr, "greeting.named", { firstName: context.firstName })
  }</h1>
  <p>${say(context.tr, "greeting.from", { sender: context.sender })}</p>
  ${context.note === null ? "" : `<p class="note">${escapeHtml(context.note)}</p>`}
  ${expiryLine(context)}`

/** Step 1: the gift and the note; where it will be sent decides the choices. */
export const giftLandingPage = (context: GiftPageContext, countries: ReadonlyArray<string>, country: string) =>
  page(
    context,
    "page.yourGift",
    `${greeting(context)}
  <form method="get" action="/g/${escapeHtml(context.token)}/choices">
    ${countrySelect(context.tr, countries, country)}
    <button type="submit">${say(context.tr, "landing.submit")}</button>
  </form>`
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
    context,
    "choices.title",
    `${greeting(context)}
  <h2>${say(context.tr, "choices.title")}</h2>
  ${
    choices.length === 0
      ? `<p>${say(context.tr, "choices.none")}</p>${pickCountryLink(context)}`
      : choices.map((choice) => choiceCard(context, choice, country)).join("")
  }${swappable ? otherGiftsLink(context, country) : ""}`
  )

const pickCountryLink = (context: GiftPageContext) =>
  `<p><a href="/g/${escapeHtml(context.token)}">${say(context.tr, "choices.pickCountry")}</a></p>`

/** A choice's card with its "Choose" button (the same for the campaign's choices, other gifts and digital gifts). */
const choiceCard = (context: GiftPageContext, choice: GiftChoice, country: string) => `
  <div class="choice">
    ${choice.imageUrl === null ? "" : `<img src="${escapeHtml(choice.imageUrl)}" alt="">`}
    <h3>${escapeHtml(choice.title)}</h3>
    ${choice.description === null ? "" : `<p>${escapeHtml(choice.description)}</p>`}
    <form method="get" action="/g/${escapeHtml(context.token)}/choose">
      <input type="hidden" name="productId" value="${escapeHtml(choice.productId)}">
      <input type="hidden" name="country" value="${escapeHtml(country)}">
      <button type="submit" aria-label="${say(context.tr, "choices.chooseNamed", { title: choice.title })}">${say(
        context.tr,
        "choices.choose"
      )}</button>
    </form>
  </div>`

/** The way from a swappable product gift to the other gifts within its budget (docs/gifting.md, "Swap"). */
const otherGiftsLink = (context: GiftPageContext, country: string) => `
  <p><a id="other-gifts" href="/g/${escapeHtml(context.token)}/others?country=${encodeURIComponent(country)}">${say(
    context.tr,
    "choices.otherGifts"
  )}</a></p>`

/**
 * The other gifts a swappable product gift may be exchanged for: other products landed within the same budget in
 * that country, each with "Choose"; the sender's product is one link away. `null` when the gift cannot be swapped.
 */
export const giftOtherChoicesPage = (
  context: GiftPageContext,
  others: ReadonlyArray<GiftChoice> | null,
  country: string
) => {
  const { tr } = context
  const back = `<p><a href="/g/${escapeHtml(context.token)}/choices?country=${encodeURIComponent(country)}">${say(
    tr,
    "nav.backToGift"
  )}</a></p>`
  const body =
    others === null
      ? `<p>${say(tr, "others.notSwappable")}</p>${back}`
      : others.length === 0
        ? `<p>${say(tr, "others.none")}</p>${back}`
        : `<p>${say(tr, "others.intro")}</p>${others.map((choice) => choiceCard(context, choice, country)).join("")}${back}`
  return page(
    context,
    "others.title",
    `${greeting(context)}
  <h2>${say(tr, "others.title")}</h2>
  ${body}`
  )
}

/**
 * Step 2 where nothing the campaign allows can be delivered to the country: the catalog's digital gifts within the
 * same budget, delivered online, each with "Choose".
 */
export const giftDigitalChoicesPage = (context: GiftPageContext, choices: ReadonlyArray<GiftChoice>, country: string) =>
  page(
    context,
    "choices.title",
    `${greeting(context)}
  <h2>${say(context.tr, "choices.title")}</h2>
  <p id="digital-offer">${say(context.tr, "digital.offer", {
    sender: context.sender,
    country: context.tr.countryName(country)
  })}</p>
  ${pickCountryLink(context)}
  ${choices.map((choice) => choiceCard(context, choice, country)).join("")}`
  )

/** Step 2 where nothing at all can reach the country, not even a digital gift: said plainly; the sender is told. */
export const giftUndeliverablePage = (context: GiftPageContext, country: string) =>
  page(
    context,
    "choices.title",
    `${greeting(context)}
  <h2>${say(context.tr, "choices.title")}</h2>
  <p id="undeliverable" role="status">${say(context.tr, "undeliverable.text", {
    sender: context.sender,
    country: context.tr.countryName(country)
  })}</p>
  ${pickCountryLink(context)}
  <p>${say(context.tr, "undeliverable.next", { sender: context.sender })}</p>`
  )

/** The variant's radio buttons when there are several, else the one variant as a hidden input. */
const variantFields = (tr: GiftTranslator, choice: GiftChoice, state: ClaimFormState) =>
  choice.variants.length === 1
    ? `<input type="hidden" name="variantId" value="${escapeHtml(choice.variants[0]!.id)}">`
    : `<fieldset><legend>${say(tr, "field.variantId")}</legend>${choice.variants
        .map(
          (variant, index) => `
      <div><input type="radio" id="variant-${index}" name="variantId" value="${escapeHtml(variant.id)}"${
        (state.values?.variantId ?? choice.variants[0]!.id) === variant.id ? " checked" : ""
      } required>
      <label for="variant-${index}">${escapeHtml(variant.title)}</label></div>`
        )
        .join("")}</fieldset>`

/**
 * What the claim form shows again after a refusal: the values sent, and its problems in words, each naming the
 * form's field it belongs to where it belongs to one (shown beside it, linked from the summary).
 */
export interface ClaimFormState {
  readonly values?: Readonly<Record<string, string>>
  readonly problems?: ReadonlyArray<ClaimProblem>
}

/** One problem of a refused claim: its field's name on the form (none for the claim as a whole) and its words. */
export interface ClaimProblem {
  readonly field?: FormField | undefined
  readonly message: string
}

/**
 * The refused claim's summary, announced (`role="alert"`): each problem, linked to its field where it has one (GOV.UK's
 * error summary pattern).
 */
const problemSummary = (tr: GiftTranslator, state: ClaimFormState) =>
  state.problems === undefined || state.problems.length === 0
    ? ""
    : `
  <div class="error" role="alert" id="claim-problem">
    <p><strong>${say(tr, "claim.problem")}</strong></p>
    <ul>${state.problems
      .map((problem) =>
        problem.field === undefined
          ? `<li>${escapeHtml(problem.message)}</li>`
          : `<li><a href="#${problem.field === "variantId" ? "variant-0" : problem.field}">${say(
              tr,
              `field.${problem.field}`
            )}: ${escapeHtml(problem.message)}</a></li>`
      )
      .join("")}</ul>
  </div>`

/**
 * A labelled input; an optional one says so in its label, since only required ones are checked. A field with a
 * problem is marked invalid and its message, beside it, is what a screen reader reads with it.
 */
const field = (
  tr: GiftTranslator,
  name: Exclude<FormField, "variantId" | "country">,
  state: ClaimFormState,
  type = "text",
  required = true
) => {
  const problem = state.problems?.find((p) => p.field === name)?.message
  return `
    <label for="${name}">${say(tr, `field.${name}`)}${
      required ? "" : ` <span class="optional">${say(tr, "field.optional")}</span>`
    }</label>${
      problem === undefined
        ? ""
        : `\n    <p class="field-error" id="${name}-error">${say(tr, "field.error", { problem })}</p>`
    }
    <input id="${name}" name="${name}" type="${type}" value="${escapeHtml(state.values?.[name] ?? "")}"${required ? " required" : ""}${
      problem === undefined ? "" : ` aria-invalid="true" aria-describedby="${name}-error"`
    }>`
}

/** Who receives the gift: the fields every claim has. */
const recipientFields = (tr: GiftTranslator, state: ClaimFormState) => `
    ${field(tr, "firstName", state)}
    ${field(tr, "lastName", state)}
    ${field(tr, "email", state, "email")}
    ${field(tr, "phone", state, "tel")}`

/**
 * Step 3 for a digital gift: its options, and who receives it: name, e-mail (where it is delivered) and phone (the
 * order's contact, as every order has). No address: the country is the one chosen, shown and sent along.
 */
export const giftDigitalClaimPage = (
  context: GiftPageContext,
  choice: GiftChoice,
  country: string,
  state: ClaimFormState = {}
) => {
  const { tr } = context
  return page(
    context,
    "claim.title",
    `${greeting(context)}
  <h2>${escapeHtml(choice.title)}</h2>
  <p>${say(tr, "claim.digitalIntro")}</p>${problemSummary(tr, state)}
  <form method="post" action="/g/${escapeHtml(context.token)}/claim">
    ${variantFields(tr, choice, state)}
    <input type="hidden" name="productId" value="${escapeHtml(choice.productId)}">
    <input type="hidden" name="country" value="${escapeHtml(country)}">${recipientFields(tr, state)}
    <p>${say(tr, "claim.countryIs", { country: tr.countryName(country) })}</p>
    <button type="submit">${say(tr, "claim.submit")}</button>
  </form>`
  )
}

/** Step 3: the product's options (labelled radio buttons when there are several) and the address. */
export const giftClaimPage = (
  context: GiftPageContext,
  choice: GiftChoice,
  countries: ReadonlyArray<string>,
  country: string,
  state: ClaimFormState = {}
) => {
  const { tr } = context
  return page(
    context,
    "claim.title",
    `${greeting(context)}
  <h2>${escapeHtml(choice.title)}</h2>${problemSummary(tr, state)}
  <form method="post" action="/g/${escapeHtml(context.token)}/claim">
    ${variantFields(tr, choice, state)}
    <input type="hidden" name="productId" value="${escapeHtml(choice.productId)}">${recipientFields(tr, state)}
    ${field(tr, "address1", state)}
    ${field(tr, "address2", state, "text", false)}
    ${field(tr, "city", state)}
    ${field(tr, "state", state, "text", false)}
    ${field(tr, "zipcode", state, "text", false)}
    ${countrySelect(tr, countries, state.values?.country ?? country)}
    <button type="submit">${say(tr, "claim.submit")}</button>
  </form>`
  )
}

/** What a claimed gift's page repeats of the claim: the item chosen, and the address lines it goes to. */
export interface ClaimSummary {
  readonly item: string
  readonly address: ReadonlyArray<string>
}

const summaryList = (tr: GiftTranslator, summary: ClaimSummary | null) =>
  summary === null
    ? ""
    : `
  <dl>
    <dt>${say(tr, "claimed.item")}</dt>
    <dd id="claimed-item">${escapeHtml(summary.item)}</dd>
    <dt>${say(tr, "claimed.sentTo")}</dt>
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

/**
 * The thank-you note's section of the claimed page (docs/decisions/0070-gift-thank-you-notes.md): the note as written
 * and when (in UTC, said so), and while it may be written or changed, its form: a labelled textarea with its hint,
 * posted without JavaScript to `/g/{token}/thank-you`. A refused note comes back with an error summary
 * (`role="alert"`, linking to the field) and the field marked `aria-invalid`, its message named by `aria-describedby`.
 */
const thankYouSection = (context: GiftPageContext, state: ThankYouState) => {
  const { tr } = context
  const { note, error } = state
  const fieldError = error?.kind === "field" ? error.message : undefined
  const summary =
    error === undefined
      ? ""
      : `
    <div class="error" role="alert" id="thank-you-problem">
      <p><strong>${say(tr, "note.notSent")}</strong></p>
      <ul><li>${
        error.kind === "field"
          ? `<a href="#thank-you-message">${escapeHtml(error.message)}</a>`
          : escapeHtml(error.message)
      }</li></ul>
    </div>`
  const sent =
    state.sent === true && error === undefined
      ? `\n    <p class="saved" role="status">${say(tr, "note.sent", { sender: context.sender })}</p>`
      : ""
  const written =
    note === null
      ? ""
      : `
    <p>${
      note.updatedAt.getTime() === note.createdAt.getTime()
        ? say(tr, "note.written", { sender: context.sender, createdAt: note.createdAt })
        : say(tr, "note.writtenChanged", {
            sender: context.sender,
            createdAt: note.createdAt,
            updatedAt: note.updatedAt
          })
    }</p>
    <blockquote class="note" id="thank-you-note">${escapeHtml(note.message)}</blockquote>`
  const describedBy = fieldError === undefined ? "thank-you-hint" : "thank-you-hint thank-you-error"
  const form = !state.editable
    ? note === null
      ? ""
      : `
    <p>${say(tr, "note.locked")}</p>`
    : `
    <form method="post" action="/g/${escapeHtml(context.token)}/thank-you">
      <label for="thank-you-message">${say(tr, note === null ? "note.labelNew" : "note.labelChange", {
        sender: context.sender
      })}</label>
      <p class="hint" id="thank-you-hint">${say(tr, "note.hint", { max: thankYouNoteMaxLength })}</p>${
        fieldError === undefined
          ? ""
          : `\n      <p class="field-error" id="thank-you-error">${say(tr, "field.error", { problem: fieldError })}</p>`
      }
      <textarea id="thank-you-message" name="message" rows="5" maxlength="${thankYouNoteMaxLength}" required aria-describedby="${describedBy}"${
        fieldError === undefined ? "" : ' aria-invalid="true"'
      }>${escapeHtml(state.draft ?? note?.message ?? "")}</textarea>
      <button type="submit">${say(tr, note === null ? "note.send" : "note.save")}</button>
    </form>`
  return `
  <section aria-labelledby="thank-you" id="thank-you-section">
    <h2 id="thank-you">${say(tr, "note.heading")}</h2>${summary}${sent}${written}${form}
  </section>`
}

/**
 * After the claim: the gift is claimed, what was chosen and where it goes (when the order can be read),
 * and where its order stands, followed live: a script asks `/g/{token}/status` every 10 seconds until the
 * delivery is final (its label in the reader's language: the request carries the cookie and `Accept-Language`).
 * Without JavaScript the recipient follows it with the page's Refresh link: a page that reloads itself on a timer
 * (a `<meta http-equiv="refresh">`) takes the reader's place away from them (WCAG 2.2.1).
 */
export const giftClaimedPage = (
  context: GiftPageContext,
  delivery: Delivery,
  summary: ClaimSummary | null,
  thankYou: ThankYouState = { note: null, editable: false }
) => {
  const { tr } = context
  const token = escapeHtml(context.token)
  const follow = delivery.final
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
  return page(
    context,
    "claimed.title",
    `<h1>${say(tr, "claimed.title")}</h1>
  <p>${say(tr, "claimed.thanks", { sender: context.sender })}</p>${summaryList(tr, summary)}
  <p>${say(tr, "claimed.status")} <span class="status" id="order-status" aria-live="polite">${escapeHtml(
    delivery.label
  )}</span></p>
  <p><a href="/g/${token}">${say(tr, "claimed.refresh")}</a></p>${thankYouSection(context, thankYou)}${follow}`
  )
}

/** A thank-you note posted for a gift that is not claimed: nothing is written. */
export const giftNoteRefusedPage = (frame: PageFrame) =>
  page(
    frame,
    "note.refusedTitle",
    `<h1>${say(frame.tr, "note.notSent")}</h1>
  <p role="alert">${say(frame.tr, "note.notClaimed")}</p>
  <p><a href="/g/${escapeHtml(frame.token)}">${say(frame.tr, "nav.backToGift")}</a></p>`
  )

/** What an expired gift's page says of it: when it expired, and whom to ask. */
export interface GoneGift {
  readonly expiredAt: Date
  readonly sender: string
}

const expiredLine = (tr: GiftTranslator, gone: GoneGift | undefined) =>
  gone === undefined
    ? say(tr, "gone.expired")
    : `${say(tr, "gone.expiredOn", { expiredAt: gone.expiredAt })}${
        gone.sender === "" ? "" : ` ${say(tr, "gone.ask", { sender: gone.sender })}`
      }`

/** An unknown, expired or cancelled gift. */
export const giftGonePage = (frame: PageFrame, reason: "unknown" | "expired" | "cancelled", gone?: GoneGift) =>
  page(
    frame,
    "gone.title",
    `<h1>${say(frame.tr, "gone.heading")}</h1>
  <p>${
    reason === "unknown"
      ? say(frame.tr, "gone.unknown")
      : reason === "expired"
        ? expiredLine(frame.tr, gone)
        : say(frame.tr, "gone.cancelled")
  }</p>`
  )

/** Where nothing more happens to a delivery. */
const finalShipments: ReadonlyArray<ShipmentStatus> = ["delivered", "failed", "cancelled"]

/** Where a claimed gift's order stands, and its words for the reader. */
export interface Delivery {
  readonly shipmentStatus: ShipmentStatus
  readonly label: string
  readonly final: boolean
}

/** Where a claimed gift's order stands (received while it is not placed), for the page and its live status. */
export const deliveryOf = (order: Option.Option<CompanyOrderRecord>, tr: GiftTranslator): Delivery => {
  const shipmentStatus = Option.match(order, {
    onNone: (): ShipmentStatus => "orderReceived",
    onSome: (o) => o.shipmentStatus
  })
  return {
    shipmentStatus,
    label: tr.t(`status.${shipmentStatus}`),
    final: finalShipments.includes(shipmentStatus)
  }
}

/** The claimed gift's item and address, as the recipient gave them, the country named in the reader's language. */
export const claimSummaryOf = (order: CompanyOrderRecord, tr: GiftTranslator): ClaimSummary => ({
  item: order.title,
  address: [
    `${order.recipientFirstName} ${order.recipientLastName}`,
    // A digital gift has no address: it goes to the e-mail.
    order.address1 ?? order.recipientEmail,
    order.address2,
    [order.city, order.provinceCode, order.postalCode].filter((part) => part !== null && part !== "").join(" "),
    tr.countryName(order.countryCode)
  ].filter((line): line is string => line !== null && line !== "")
})

/** The claim form's fields, by their names on the form. */
export type FormField =
  | "variantId"
  | "firstName"
  | "lastName"
  | "email"
  | "phone"
  | "address1"
  | "address2"
  | "city"
  | "state"
  | "zipcode"
  | "country"

/**
 * The form's field a claim's property (a decoded claim's, or an address check's) is entered in: the claim names some
 * differently (`addressLine1`), the address check by the order's words (`postalCode`).
 */
const formFieldOf: Readonly<Record<string, FormField>> = {
  variantId: "variantId",
  firstName: "firstName",
  lastName: "lastName",
  email: "email",
  phone: "phone",
  addressLine1: "address1",
  address1: "address1",
  addressLine2: "address2",
  address2: "address2",
  city: "city",
  state: "state",
  provinceCode: "state",
  zipcode: "zipcode",
  postalCode: "zipcode",
  country: "country",
  countryCode: "country"
}

/**
 * The problem of each field in trouble, in the reader's words: what the field needs (its rule's detail in English,
 * from the schema or the address check, is the API's; the page says what to enter).
 */
const fieldProblem = (tr: GiftTranslator, field: FormField): ClaimProblem => ({
  field,
  message: tr.t(`problem.${field}`, { max: recipientNameMaxLength })
})

/** The fields named by a list of property paths, once each, in the form's order. */
const problemsAt = (tr: GiftTranslator, paths: ReadonlyArray<string>): ReadonlyArray<ClaimProblem> => {
  const fields = new Set(paths.map((path) => formFieldOf[path.split(".").at(-1) ?? ""]))
  return (Object.keys(fieldOrder) as Array<FormField>)
    .filter((field) => fields.has(field))
    .map((field) => fieldProblem(tr, field))
}

const fieldOrder: Readonly<Record<FormField, true>> = {
  variantId: true,
  firstName: true,
  lastName: true,
  email: true,
  phone: true,
  address1: true,
  address2: true,
  city: true,
  state: true,
  zipcode: true,
  country: true
}

/** A claim the form's schema refused: each field in trouble, in the form's order. */
export const formProblems = (tr: GiftTranslator, error: ParseResult.ParseError): ReadonlyArray<ClaimProblem> =>
  problemsAt(
    tr,
    plainIssues(error.issue).map((issue) => String(issue.path.at(-1)))
  )

/**
 * A claim the service refused, in the reader's words: an address or a field it judged (tied to their fields), the
 * option gone, the country out of reach, the choice no longer offered; anything else (the sender's funds, a closed
 * campaign) as the claim not possible now, with whom to ask.
 */
export const refusalProblems = (
  tr: GiftTranslator,
  refusal: { readonly _tag: string },
  context: { readonly sender: string; readonly country: string }
): ReadonlyArray<ClaimProblem> => {
  const fields =
    "issues" in refusal && Array.isArray(refusal.issues)
      ? problemsAt(
          tr,
          refusal.issues.map((issue: { readonly field: string }) => issue.field)
        )
      : "errors" in refusal && Array.isArray(refusal.errors)
        ? problemsAt(
            tr,
            refusal.errors.map((issue: { readonly path: string }) => issue.path)
          )
        : []
  if (fields.length > 0) return fields
  switch (refusal._tag) {
    case "VariantUnavailable":
    case "VariantNotFound":
      return [{ field: "variantId", message: tr.t("refusal.variantUnavailable") }]
    case "NotShippableToCountry":
      return [{ field: "country", message: tr.t("refusal.notShippable", { country: tr.countryName(context.country) }) }]
    case "GiftChoiceRefused":
      return [{ message: tr.t("refusal.choice") }]
    default:
      return [{ message: tr.t("refusal.other", { sender: context.sender }) }]
  }
}
